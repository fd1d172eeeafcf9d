import Crypto
import Foundation
import MoultTestSupport
import Testing

/// `moult migrate` end to end: the destination's version, refusals and their exit codes, validation
/// failures, missing policies; the source never changes.
@Suite struct MigrateCommandTests {
    static let model = Fixtures.peopleModel.path
    static func mapping(_ name: String) -> String { Fixtures.peopleMapping(name).path }

    /// `moult-people generate` into `directory`.
    static func generate(_ version: String, persons: Int, in directory: TemporaryDirectory, name: String = "source.sqlite") throws -> URL {
        let store = directory.appending(name)
        let result = try GeneratedStores.generate(["--model-version", version, "--objects", String(persons), "--seed", "3", "--model", model], at: store)
        #expect(result.exitCode == 0, "\(result.standardError)")
        return store
    }

    static func digest(_ url: URL) throws -> String {
        SHA256.hash(data: try Data(contentsOf: url)).map { String(format: "%02x", $0) }.joined()
    }

    /// Runs sqlite3 on a file (to break a rule in a copy of a source).
    static func sqlite3(_ url: URL, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", url.path, sql]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
    }

    // MARK: - Success

    @Test func migrateThenInspectNamesTheDestinationVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("1", persons: 300, in: directory)
        let before = try Self.digest(source)
        let output = directory.appending("v4.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v4", "--mapping", Self.mapping("v2-to-v3"), "--mapping",
            Self.mapping("v3-to-v4"), "--output", output.path, "--chunk-size", "50", "--json",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(json["from"] as? String == "v1")
        #expect(json["to"] as? String == "v4")
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.map { $0["to"] as? String } == ["v2", "v3", "v4"])
        #expect(steps.map { $0["inferred"] as? Bool } == [true, false, false])
        let entities = try #require(json["entities"] as? [String: Int])
        #expect((entities["Adult"] ?? 0) + (entities["Child"] ?? 0) == 300)
        #expect(entities["Address"] == 0)

        let inspect = try MoultProcess.run(["inspect", output.path, "--model", Self.model, "--json"])
        #expect(inspect.exitCode == 0, "\(inspect.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(inspect.standardOutput.utf8)) as? [String: Any])
        #expect(object["matchingVersion"] as? String == "v4")
        let counts = try #require(object["entities"] as? [String: [String: Int]])
        #expect(counts["Adult"]?["count"] == entities["Adult"])
        let text = try MoultProcess.run(["inspect", output.path, "--model", Self.model])
        #expect(text.standardOutput.contains("matching version: v4"), "\(text.standardOutput)")
        #expect(try Self.digest(source) == before)
    }

    @Test func planListsStepsPassesAndChunks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("2", persons: 1_000, in: directory)
        let result = try MoultProcess.run([
            "plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--chunk-size", "100", "--json",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let plan = try #require(json["plan"] as? [String: Any])
        #expect(plan["chunkSize"] as? Int == 100)
        let mappings = try #require(plan["mappings"] as? [[String: Any]])
        #expect(mappings.compactMap { $0["name"] as? String } == ["PersonToPerson", "PersonToAddress"])
        let passes = try #require(plan["passes"] as? [[String: Any]])
        // Every stage-1 pass before any stage-2 pass.
        #expect(passes.compactMap { $0["stage"] as? String } == ["create", "create", "relationships", "relationships"])
        func rows(_ pass: [String: Any]) -> Int { (pass["chunks"] as? [[String: Any]] ?? []).compactMap { $0["estimatedRows"] as? Int }.reduce(0, +) }
        // PersonToAddress's objects are made first (PersonToPerson's address is written at insert).
        #expect(passes.compactMap { $0["mapping"] as? Int } == [1, 0, 0, 1])
        #expect(rows(passes[1]) == 1_000)
        #expect((passes[1]["chunks"] as? [Any])?.count == 10)
        // The address filter runs in SQL, so its pass counts exactly the persons with an address.
        let withAddress = try Self.count(source, "SELECT COUNT(*) FROM ZPERSON WHERE ZSTREET IS NOT NULL OR ZSTATE IS NOT NULL")
        #expect(mappings[1]["filterInSQL"] as? Bool == true)
        #expect(rows(passes[0]) == withAddress && withAddress > 0 && withAddress < 1_000)

        let text = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3")])
        #expect(text.standardOutput.contains("step 1: v2 -> v3"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("create PersonToAddress (Person -> Address) where"), "\(text.standardOutput)")
    }

    /// The first column of the first row of a query, by sqlite3.
    static func count(_ url: URL, _ sql: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-readonly", url.path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    // MARK: - Refusals

    @Test func anExistingOutputIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("1", persons: 50, in: directory)
        let before = try Self.digest(source)
        let output = directory.appending("taken.sqlite")
        let content = Data("not mine to overwrite".utf8)
        try content.write(to: output)
        let result = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path])
        #expect(result.exitCode == 74, "\(result.standardError)")
        #expect(result.standardError.contains("moult: error:") && result.standardError.contains(output.path), "\(result.standardError)")
        #expect(try Data(contentsOf: output) == content)
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
        #expect(try Self.digest(source) == before)
    }

    /// Running a finished migration again (issue 27) succeeds and says so, without claiming a migration
    /// it did not do, and writes nothing; with other arguments, the output is refused as another's.
    @Test func runningAgainIntoAFinishedOutputIsDone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("1", persons: 30, in: directory)
        let output = directory.appending("v2.sqlite")
        let arguments = ["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet"]
        #expect(try MoultProcess.run(arguments).exitCode == 0)
        let finished = try Self.digest(output)
        let again = try MoultProcess.run(arguments)
        #expect(again.exitCode == 0, "\(again.standardOutput) \(again.standardError)")
        #expect(again.standardOutput.contains("already migrated"), "\(again.standardOutput)")
        #expect(!again.standardOutput.contains("migrated \(source.path)"), "\(again.standardOutput)")
        #expect(try Self.digest(output) == finished)
        let other = try MoultProcess.run(arguments + ["--chunk-size", "7"])
        #expect(other.exitCode == 74, "\(other.standardError)")
        #expect(other.standardError.contains("already exists"), "\(other.standardError)")
        #expect(try Self.digest(output) == finished)
    }

    /// A run killed after its rename and clean-up, before it could report: `--resume` finds the output
    /// is exactly this migration's finished store and says so, exit 0, without touching it; another
    /// plan (here another chunk size) is still refused.
    @Test func resumingAFinishedMigrationAcceptsItsOwnOutput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("1", persons: 30, in: directory)
        let output = directory.appending("v2.sqlite")
        let arguments = ["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet"]
        #expect(try MoultProcess.run(arguments).exitCode == 0)
        let finished = try Self.digest(output)
        let resumed = try MoultProcess.run(arguments + ["--resume"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(resumed.standardOutput.contains("already migrated"), "\(resumed.standardOutput)")
        #expect(try Self.digest(output) == finished)
        let otherPlan = try MoultProcess.run(arguments + ["--resume", "--chunk-size", "7"])
        #expect(otherPlan.exitCode == 74, "\(otherPlan.standardError)")
        #expect(try Self.digest(output) == finished)
    }

    @Test func aDestinationBreakingARuleFailsWithTheObjectAndTheRule() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A copy of a generated v1 store with one person aged 200 (the model allows 0…150).
        let source = try Self.generate("1", persons: 120, in: directory)
        try Self.sqlite3(source, "UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK = 42")
        let before = try Self.digest(source)
        let output = directory.appending("v2.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--chunk-size", "25", "--quiet",
        ])
        #expect(result.exitCode == 67, "\(result.standardError)")
        let message = result.standardError
        #expect(message.contains("moult: error:"), "\(message)")
        // The entity, the object's primary key, the property and the rule.
        let line = message.split(separator: "\n").first { $0.contains("Z_PK 42") }
        let failure = try #require(line.map(String.init), "\(message)")
        #expect(failure.contains("Person") && failure.contains("age") && failure.contains("above the maximum 150"), "\(failure)")
        #expect(!message.contains("Z_PK 41"), "only the broken object is listed")
        // Nothing at the output path, no work directory left.
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
        #expect(try Self.digest(source) == before)
    }

    @Test func aMissingPolicyIsAClearError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("4", persons: 60, in: directory)
        let text = try String(contentsOf: URL(filePath: Self.mapping("v4-to-v5")), encoding: .utf8)
        let mapping = directory.appending("unregistered.json")
        try text.replacingOccurrences(of: "\"AdultToCompanyPolicy\"", with: "\"MyApp.NoSuchPolicy\"")
            .write(to: mapping, atomically: true, encoding: .utf8)
        let output = directory.appending("v5.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v5", "--mapping", mapping.path, "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("MyApp.NoSuchPolicy"), "\(result.standardError)")
        #expect(result.standardError.contains("AdultToCompany"), "names the mapping: \(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }

    /// Issue 10: a store already at the target is success (nothing to migrate); a migration to an
    /// older version runs when it can be inferred; a store of another model is refused (66).
    @Test func aStoreAlreadyAtTheTargetIsDoneAndOneOfAnotherModelIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.generate("3", persons: 10, in: directory)
        let output = directory.appending("out.sqlite")
        let same = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v3", "--output", output.path])
        #expect(same.exitCode == 0, "\(same.standardError)")
        #expect(same.standardOutput.contains("already at version v3: nothing to migrate; copied to"), "\(same.standardOutput)")
        // The output is the store's copy (issue 27: a batch job's output is there whatever its input's version).
        #expect(try InPlaceCommandTests.version(of: output) == "v3")
        try FileManager.default.removeItem(at: output)
        let backwards = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet"])
        #expect(backwards.exitCode == 0, "\(backwards.standardError)")
        #expect(backwards.standardOutput.contains("step 1: v3 -> v2 (inferred mapping)"), "\(backwards.standardOutput)")
        try FileManager.default.removeItem(at: output)
        let foreign = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let other = try MoultProcess.run(["migrate", foreign.path, "--model", Self.model, "--output", output.path])
        #expect(other.exitCode == 66, "\(other.standardError)")
        #expect(other.standardError.contains("no version of"), "\(other.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
