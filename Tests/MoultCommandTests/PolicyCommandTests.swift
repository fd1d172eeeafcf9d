import Foundation
import MoultTestSupport
import Testing

/// Policies from the command line: `moult` with no policy compiled in, the built-in policies named by
/// a JSON mapping or bound to a class with `--policy`, `--policy CLASS=default`, and the People
/// command's compiled ones.
@Suite struct PolicyCommandTests {
    static let model = Fixtures.peopleModel.path
    static func mapping(_ name: String) -> String { Fixtures.peopleMapping(name).path }

    /// The store's rows, table by table, without `Z_METADATA` (whose store UUID derives from the run's
    /// arguments): `sqlite3 .dump`.
    static func rows(_ store: URL) throws -> [String] {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", store.path, ".dump"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.contains("Z_METADATA") }
    }

    static func migrate(
        _ source: URL, _ mapping: String, to output: URL, tool: MoultProcess.Tool = .moult, policies: [String] = [],
        environment: [String: String] = [:]
    ) throws -> MoultProcess.Result {
        try MoultProcess.run(
            ["migrate", source.path, "--model", model, "--to", "v5", "--mapping", mapping, "--output", output.path, "--chunk-size", "41", "--quiet"]
                + policies.flatMap { ["--policy", $0] }, tool: tool, environment: environment)
    }

    /// The People v4 → v5 migration: `moult-people` with its compiled policies, `moult` with the JSON
    /// mapping naming the built-in one, and `moult` with the classes bound to it by `--policy` all
    /// write the same store.
    @Test func theBuiltinUniquingPolicyGivesThePeopleStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 500, in: directory)

        let compiled = directory.appending("compiled.sqlite")
        let people = try Self.migrate(source, Self.mapping("v4-to-v5"), to: compiled, tool: .people)
        #expect(people.exitCode == 0, "\(people.standardError)")

        let named = directory.appending("named.sqlite")
        let builtin = try Self.migrate(source, Self.mapping("v4-to-v5-builtin"), to: named)
        #expect(builtin.exitCode == 0, "\(builtin.standardError)")
        #expect(builtin.standardError.isEmpty, "no warning: \(builtin.standardError)")

        // The compiled policy sets Apple's business in Swift; for the bound one the mapping says it.
        let text = try String(contentsOf: URL(filePath: Self.mapping("v4-to-v5")), encoding: .utf8).replacingOccurrences(
            of: "{ \"name\": \"name\", \"value\": \"$source.companyName\" }",
            with: "{ \"name\": \"business\", \"value\": \"TERNARY($source.companyName == \\\"Apple\\\", \\\"makes phones\\\", nil)\" }, "
                + "{ \"name\": \"name\", \"value\": \"$source.companyName\" }")
        let edited = directory.appending("v4-to-v5-business.json")
        try text.write(to: edited, atomically: true, encoding: .utf8)
        let bound = directory.appending("bound.sqlite")
        let binding = try Self.migrate(
            source, edited.path, to: bound,
            policies: ["AdultToCompanyPolicy=builtin:unique(key: companyName)", "ChildToSchoolPolicy=builtin:unique(key: schoolName)"])
        #expect(binding.exitCode == 0, "\(binding.standardError)")

        let expected = try Self.rows(compiled)
        #expect(expected.contains { $0.contains("ZCOMPANY") && $0.contains("'makes phones'") }, "Apple is there")
        #expect(expected.filter { $0.hasPrefix("INSERT INTO ZCOMPANY") }.count > 100, "many companies")
        #expect(try Self.rows(named) == expected)
        #expect(try Self.rows(bound) == expected)
    }

    /// The built-in uniquing policy killed in the middle of its passes (SIGKILL at a chunk's end, twice)
    /// and resumed: the store of a run never interrupted. What it made is found again after a resume.
    @Test func theBuiltinUniquingPolicyResumes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 500, in: directory)
        let mapping = Self.mapping("v4-to-v5-builtin")
        let whole = directory.appending("whole.sqlite")
        #expect(try Self.migrate(source, mapping, to: whole).exitCode == 0)
        let output = directory.appending("resumed.sqlite")
        var kills = 0
        // Chunks of 41: about 10 for the addresses, 13 for each of the four other stage-1 passes; the
        // first kill falls in AdultToCompany's stage 1, the second a little further on.
        for point in ["after-rows:40", "after-lmdb-commit:8"] {
            let killed = try Self.migrate(source, mapping, to: output, environment: ["MOULT_FAULT": point])
            #expect(killed.terminatedBySignal, "\(point): \(killed.exitCode) \(killed.standardError)")
            if killed.terminatedBySignal { kills += 1 }
        }
        let resumed = try Self.migrate(source, mapping, to: output)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(resumed.standardOutput.contains("(resumed)"), "\(resumed.standardOutput)")
        #expect(kills == 2)
        #expect(try Self.rows(output) == Self.rows(whole))
    }

    /// `moult` refuses a mapping naming a class it has not got, naming the class and how to bind it,
    /// and writes nothing; `moult-people` has it.
    @Test func aClassNeitherRegisteredNorBoundIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 40, in: directory)
        let output = directory.appending("v5.sqlite")
        for command in ["migrate", "plan"] {
            var arguments = [command, source.path, "--model", Self.model, "--to", "v5", "--mapping", Self.mapping("v4-to-v5")]
            if command == "migrate" { arguments += ["--output", output.path] }
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 66, "\(command): \(result.standardError)")
            for part in ["mapping AdultToCompany", "'AdultToCompanyPolicy'", "none is registered", "--policy AdultToCompanyPolicy=builtin:unique(key: <attribute>)", "--policy AdultToCompanyPolicy=default"] {
                #expect(result.standardError.contains(part), "\(command): \(part) in \(result.standardError)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [source.lastPathComponent])
        let people = try MoultProcess.run(
            ["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", Self.mapping("v4-to-v5")], tool: .people)
        #expect(people.exitCode == 0, "\(people.standardError)")
    }

    /// An Xcode mapping model (CoreDataPlus's, naming `REPLACE_AT_RUNTIME.V2to3MakerPolicy`): refused
    /// without a binding; with `--policy V2to3MakerPolicy=default` it runs Core Data's default policy
    /// and says, for each mapping, that the class's behaviour is skipped.
    @Test func anXcodeMappingsClassBoundToTheDefaultPolicyRunsWithAWarning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        let source = try directory.copyStore(Fixtures.url("\(folder)/Fixtures/SampleModel_V2.sqlite"))
        let output = directory.appending("v3.sqlite")
        let arguments = [
            "migrate", source.path, "--model", Fixtures.url("\(folder)/SampleModel.xcdatamodeld").path, "--to", "SampleModel3",
            "--mapping", Fixtures.url("\(folder)/MappingModels/V2toV3.xcmappingmodel").path, "--output", output.path, "--quiet",
        ]
        let refused = try MoultProcess.run(arguments)
        #expect(refused.exitCode == 66, "\(refused.standardError)")
        #expect(refused.standardError.contains("'REPLACE_AT_RUNTIME.V2to3MakerPolicy'") && refused.standardError.contains("--policy V2to3MakerPolicy=default"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let run = try MoultProcess.run(arguments + ["--policy", "V2to3MakerPolicy=default"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        for mapping in ["CarToCar", "LuxuryCarToLuxuryCar", "SportCarToSportCar"] {
            #expect(
                run.standardError.contains(
                    "warning: entity mapping \(mapping) runs Core Data's default policy instead of REPLACE_AT_RUNTIME.V2to3MakerPolicy"),
                "\(run.standardError)")
        }
        #expect(run.standardError.contains("what that class does is skipped"))
        #expect(FileManager.default.fileExists(atPath: output.path))
    }

    /// `--policy` that cannot be read is bad usage, before anything is read; one naming a class no
    /// mapping names gets a warning.
    @Test func aBadPolicyBindingIsBadUsage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 20, in: directory)
        let cases: [([String], String)] = [
            (["AdultToCompanyPolicy"], "expected CLASS=builtin:<policy> or CLASS=default"),
            (["=default"], "expected CLASS=builtin:<policy> or CLASS=default"),
            (["AdultToCompanyPolicy=unique(key: companyName)"], "neither 'default' nor 'builtin:<policy>'"),
            (["AdultToCompanyPolicy=builtin:uniq(key: companyName)"], "no built-in policy is named 'uniq'"),
            (["AdultToCompanyPolicy=builtin:unique(key: companyName", "ChildToSchoolPolicy=default"], "expected ','"),
            (["A=default", "A=builtin:unique(key: x)"], "binds the class 'A' twice"),
        ]
        for (policies, message) in cases {
            let result = try Self.migrate(source, Self.mapping("v4-to-v5"), to: directory.appending("out.sqlite"), policies: policies)
            #expect(result.exitCode == 64, "\(policies): \(result.standardError)")
            #expect(result.standardError.contains(message), "\(policies): \(result.standardError)")
        }
        let unused = try MoultProcess.run(
            ["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", Self.mapping("v4-to-v5-builtin"), "--policy", "MyApp.Nothing=default"])
        #expect(unused.exitCode == 0, "\(unused.standardError)")
        #expect(unused.standardError.contains("--policy MyApp.Nothing=…: no entity mapping of this migration names that class"), "\(unused.standardError)")
        // A built-in policy naming an attribute the source lacks: bad input, named, before anything is written.
        let output = directory.appending("v5.sqlite")
        let missing = try Self.migrate(
            source, Self.mapping("v4-to-v5"), to: output,
            policies: ["AdultToCompanyPolicy=builtin:unique(key: employer)", "ChildToSchoolPolicy=builtin:unique(key: schoolName)"])
        #expect(missing.exitCode == 65, "\(missing.standardError)")
        #expect(missing.standardError.contains("the source entity Adult has no attribute 'employer'"), "\(missing.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path) && !FileManager.default.fileExists(atPath: output.path + ".moult"))
        // A JSON mapping naming a built-in policy that cannot be read: bad input, the mapping named.
        let text = try String(contentsOf: URL(filePath: Self.mapping("v4-to-v5-builtin")), encoding: .utf8)
            .replacingOccurrences(of: "unique(key: schoolName)", with: "unique(by: schoolName)")
        let broken = directory.appending("broken.json")
        try text.write(to: broken, atomically: true, encoding: .utf8)
        let unreadable = try Self.migrate(source, broken.path, to: output)
        #expect(unreadable.exitCode == 65, "\(unreadable.standardError)")
        #expect(unreadable.standardError.contains("mapping ChildToSchool") && unreadable.standardError.contains("unique has no argument 'by'"), "\(unreadable.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path) && !FileManager.default.fileExists(atPath: output.path + ".moult"))
    }
}
