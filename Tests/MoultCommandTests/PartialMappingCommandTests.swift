import Foundation
import MoultTestSupport
import Testing

/// Partial mappings end to end (issue 41, item 4): `plan` names each entity mapping given or
/// inferred, a rest that cannot be inferred is refused (66), and `moult test` runs a partial step by
/// every path, staged included, each result verified.
@Suite struct PartialMappingCommandTests {
    static let model = MigrateCommandTests.model

    /// People v4 → v5 giving only `entityMappings` of the whole hand-written mapping
    /// (`Datasets/People/BuiltinPolicy/v4-to-v5.json`), the rest inferred.
    static func partialV4ToV5(giving names: Set<String>, in directory: TemporaryDirectory) throws -> String {
        let whole = Fixtures.datasets.appending(path: "People/BuiltinPolicy/v4-to-v5.json")
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: whole)) as? [String: Any])
        let mappings = try #require(root["entityMappings"] as? [[String: Any]])
        root["entityMappings"] = mappings.filter { names.contains($0["name"] as? String ?? "") }.map { $0.filter { $0.key != "order" } }
        root["inferRest"] = true
        let url = directory.appending("partial-v4-to-v5.json")
        try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]).write(to: url)
        return url.path
    }

    @Test func planNamesEachEntityMappingGivenOrInferred() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 60, in: directory)
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany"], in: directory)

        let text = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", partial])
        #expect(text.exitCode == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("step 1: v4 -> v5 (\(partial))"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("\n  given: AdultToCompany\n"), "\(text.standardOutput)")
        #expect(
            text.standardOutput.contains("\n  inferred: AddressToAddress, AdultToAdult, ChildToChild, PersonToPerson, NoneToSchool\n"),
            "\(text.standardOutput)")

        let json = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", partial, "--json"])
        #expect(json.exitCode == 0, "\(json.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let step = try #require((root["steps"] as? [[String: Any]])?.first)
        #expect(step["inferred"] as? Bool == false)
        let entityMappings = try #require(step["entityMappings"] as? [[String: Any]])
        let origins = Dictionary(uniqueKeysWithValues: entityMappings.map { ($0["name"] as? String ?? "", $0["inferred"] as? Bool) })
        #expect(origins == [
            "AddressToAddress": true, "AdultToAdult": true, "ChildToChild": true, "AdultToCompany": false, "PersonToPerson": true,
            "NoneToSchool": true,
        ])
        let school = try #require(entityMappings.first { $0["name"] as? String == "NoneToSchool" })
        #expect(school["source"] is NSNull && school["destination"] as? String == "School")
    }

    /// v3 → v4 with only Address given: Person becomes abstract, which inference cannot carry.
    @Test func aRestThatCannotBeInferredIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("3", persons: 20, in: directory)
        let partial = directory.appending("partial.json")
        try Data(
            #"""
            {"format": "moult-mapping/1", "source": {"name": "v3"}, "destination": {"name": "v4"}, "inferRest": true,
             "entityMappings": [{"name": "AddressToAddress", "type": "copy", "source": "Address", "destination": "Address"}]}
            """#.utf8
        ).write(to: partial)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v4", "--mapping", partial.path, "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardOutput) \(result.standardError)")
        #expect(result.standardError.contains(partial.path) && result.standardError.contains("partial mapping"), "\(result.standardError)")
        #expect(result.standardError.contains("entity Person"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// `moult test`: into a new store, in place, stopped and resumed; then staged and staged resumed.
    /// Every path verified and agreeing.
    @Test func moultTestRunsAPartialStepByEveryPath() throws {
        let directory = try TemporaryDirectory("moult-test-partial")
        defer { directory.remove() }
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany", "ChildToSchool"], in: directory)
        let paths = try MoultProcess.run(["test", Self.model, "--to", "v5", "--version", "v4", "--mapping", partial, "--objects", "80"])
        #expect(paths.exitCode == 0, "\(paths.standardOutput)\(paths.standardError)")
        #expect(paths.standardOutput.contains("1 store, 3 paths: all passed"), "\(paths.standardOutput)")

        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"custom": {"from": "v4", "to": "v5", "mapping": "\#(partial)"}}]}"#.utf8).write(to: stages)
        let staged = try MoultProcess.run([
            "test", Self.model, "--to", "v5", "--version", "v4", "--mapping", partial, "--stages", stages.path, "--objects", "80",
        ])
        #expect(staged.exitCode == 0, "\(staged.standardOutput)\(staged.standardError)")
        #expect(staged.standardOutput.contains("1 store, 2 paths: all passed"), "\(staged.standardOutput)")
    }
}
