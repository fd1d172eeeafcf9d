import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult plan` and `moult migrate` end to end on how a chain is made (issue 10): every mapping given
/// is used by a step or refused before anything is written, what a step does not carry is listed,
/// nothing to migrate is success, a refused run leaves nothing behind, another migration's work is
/// never deleted, and validation failures name their source objects.
@Suite struct ChainCommandTests {
    static let model = MigrateCommandTests.model
    static func mapping(_ name: String) -> String { MigrateCommandTests.mapping(name) }
    static let wibosco = "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData"

    /// What the run left in `directory` besides the files that were there: the output and any
    /// work folder (`*.moult`, `*.moult-steps`, and their `.removing` leftovers).
    static func leftovers(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            .filter { $0.hasPrefix("out") || $0.contains(".moult") }.sorted()
    }

    /// A store of a Tests/Fixtures/Chain model with one `Person` per row.
    static func chainStore(_ model: String, _ version: String, rows: [[String: Value]], in directory: TemporaryDirectory) throws -> URL {
        let versioned = try VersionedModel(contentsOf: Fixtures.packageRoot.appending(path: "Tests/ChainModels/\(model).xcdatamodeld"))
        let url = directory.appending("\(model)-\(version).sqlite")
        let store = try SQLiteStore.create(at: url, model: versioned.version(named: version)!.model)
        let entity = store.layout.entity(named: "Person")!
        try store.database.write {
            for (offset, row) in rows.enumerated() {
                let columns = row.keys.sorted()
                let sql = "INSERT INTO \(entity.table) (Z_PK, Z_ENT, Z_OPT\(columns.map { ", Z\($0.uppercased())" }.joined())) VALUES (?, ?, 1\(String(repeating: ", ?", count: columns.count)))"
                try store.database.execute(sql, [.int(Int64(offset + 1)), .int(Int64(entity.number))] + columns.map { row[$0]! })
            }
            try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Person'", [.int(Int64(rows.count))])
        }
        store.database.close()
        return url
    }

    // MARK: - Item 1: every mapping used, or the run refused

    /// The issue's case: a mapping model of another app (a real `.xcmappingmodel`, then a JSON
    /// mapping recording another model's hashes) used to be dropped silently, the step inferred and
    /// every address lost, exit 0. It is refused, exit 66, naming the file, and nothing is written.
    @Test func aMappingOfAnotherAppIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 40, in: directory)
        let before = try MigrateCommandTests.digest(source)
        let output = directory.appending("out.sqlite")
        let xcode = Fixtures.url("\(Self.wibosco)/Migration/Mappings/Migration1to2.xcmappingmodel").path
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", xcode, "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardOutput) \(result.standardError)")
        #expect(result.standardError.contains(xcode) && result.standardError.contains("fits no step"), "\(result.standardError)")
        #expect(try Self.leftovers(directory) == [])

        // A JSON mapping with the entity hashes of another app's models (as `moult infer --json` writes).
        let inferred = try MoultProcess.run([
            "infer", "--model", Fixtures.url("\(Self.wibosco)/Model/CoreDataMigration_Example.xcdatamodeld").path,
            "--from", "CoreDataMigration_Example", "--to", "CoreDataMigration_Example 2", "--json",
        ])
        #expect(inferred.exitCode == 0, "\(inferred.standardError)")
        let other = directory.appending("other-app.json")
        try inferred.standardOutput.write(to: other, atomically: true, encoding: .utf8)
        for command in ["migrate", "plan"] {
            var arguments = [command, source.path, "--model", Self.model, "--to", "v3", "--mapping", other.path]
            if command == "migrate" { arguments += ["--output", output.path, "--quiet"] }
            let json = try MoultProcess.run(arguments)
            #expect(json.exitCode == 66, "\(command): \(json.standardError)")
            #expect(json.standardError.contains("other-app.json fits no step"), "\(json.standardError)")
            #expect(json.standardError.contains("matches no version of People by entity hashes"), "\(json.standardError)")
        }
        #expect(try Self.leftovers(directory) == [])
        #expect(try MigrateCommandTests.digest(source) == before)
    }

    /// A mapping made for an older edit of v2 (its recorded hashes are not v2's) is refused, naming
    /// the entity that differs.
    @Test func aStaleMappingIsRefusedNamingTheEntity() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 20, in: directory)
        let text = try String(contentsOf: URL(filePath: Self.mapping("v2-to-v3")), encoding: .utf8)
        // The hash of a Person that is not v2's (v3's).
        let stale = text.replacingOccurrences(
            of: "\"source\": { \"name\": \"v2\" }",
            with: "\"source\": { \"name\": \"v2\", \"entityVersionHashes\": { \"Person\": \"bebf2fcf4f2ad2a9ba98e9b0deb043e9a2dbb2c350aaee1b09b805616049f3ad\" } }")
        #expect(stale != text)
        let mapping = directory.appending("v2-to-v3-old.json")
        try stale.write(to: mapping, atomically: true, encoding: .utf8)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path, "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("v2-to-v3-old.json fits no step"), "\(result.standardError)")
        #expect(result.standardError.contains("against v2: Person differs"), "\(result.standardError)")
        #expect(try Self.leftovers(directory) == [])
    }

    /// A mapping of a step that is not on the way (the store is past it) is refused, not ignored.
    @Test func aMappingOffTheWayIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 20, in: directory)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v1-to-v2"), "--mapping",
            Self.mapping("v2-to-v3"), "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("v1-to-v2.json fits no step: it maps v1 → v2, but the store is at v2"), "\(result.standardError)")
        #expect(try Self.leftovers(directory) == [])
    }

    // MARK: - Item 2: direct inference, said in the plan

    @Test func planSaysWhereInferenceIsDirectAndWhereItIsChained() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let returning = try Self.chainStore("Returning", "v1", rows: [["name": .string("Ada"), "nickname": .string("countess")]], in: directory)
        let model = Fixtures.packageRoot.appending(path: "Tests/ChainModels/Returning.xcdatamodeld").path
        let plan = try MoultProcess.run(["plan", returning.path, "--model", model])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("step 1: v1 -> v3 (inferred mapping)"), "\(plan.standardOutput)")
        #expect(!plan.standardOutput.contains("step 2"), "\(plan.standardOutput)")
        let output = directory.appending("out.sqlite")
        let migrate = try MoultProcess.run(["migrate", returning.path, "--model", model, "--output", output.path, "--quiet"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        #expect(try MigrateCommandTests.count(output, "SELECT COUNT(*) FROM ZPERSON WHERE ZNICKNAME = 'countess'") == 1)

        let retyped = try Self.chainStore("Retyped", "v1", rows: [["name": .string("Edsger"), "score": .string("7")]], in: directory)
        let chained = try MoultProcess.run(["plan", retyped.path, "--model", Fixtures.packageRoot.appending(path: "Tests/ChainModels/Retyped.xcdatamodeld").path, "--json"])
        #expect(chained.exitCode == 0, "\(chained.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(chained.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.map { "\($0["from"] as? String ?? "")->\($0["to"] as? String ?? "")" } == ["v1->v2", "v2->v3"])
        #expect((steps[0]["chainedInference"] as? String)?.contains("cannot be inferred directly") == true, "\(steps[0])")
        // v1 -> v2 drops score: listed, counted in the store.
        let notCarried = try #require(steps[0]["notCarried"] as? [[String: Any]])
        #expect(notCarried.count == 1 && notCarried[0]["property"] as? String == "score" && notCarried[0]["count"] as? Int == 1, "\(notCarried)")

        let stretch = try Self.chainStore("Stretch", "v1", rows: [["name": .string("Grace")]], in: directory)
        let direct = try MoultProcess.run(["plan", stretch.path, "--model", Fixtures.packageRoot.appending(path: "Tests/ChainModels/Stretch.xcdatamodeld").path])
        #expect(direct.exitCode == 0, "\(direct.standardError)")
        #expect(direct.standardOutput.contains("step 1: v1 -> v4 (inferred mapping)"), "\(direct.standardOutput)")
    }

    // MARK: - Item 3: optional becomes required, validation names the objects

    @Test func anOptionalAttributeBecomingRequiredIsInferredAndValidationNamesTheObjects() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Fixtures.packageRoot.appending(path: "Tests/ChainModels/Required.xcdatamodeld").path
        let infer = try MoultProcess.run(["infer", "--model", model, "--from", "v1", "--to", "v2"])
        #expect(infer.exitCode == 0, "\(infer.standardError)")
        #expect(infer.standardError.contains("warning") && infer.standardError.contains("name"), "\(infer.standardError)")

        let source = try Self.chainStore(
            "Required", "v1", rows: [["name": .string("Ada")], ["name": .null], ["name": .string("Alan")], ["name": .null]], in: directory)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run(["migrate", source.path, "--model", model, "--output", output.path, "--quiet"])
        #expect(result.exitCode == 67, "\(result.standardError)")
        for key in [2, 4] {
            #expect(
                result.standardError.contains("Person Z_PK \(key).name: required value is nil (made from the source object Person Z_PK \(key))"),
                "\(result.standardError)")
        }
        #expect(!result.standardError.contains("Z_PK 1.name"), "\(result.standardError)")
        #expect(try Self.leftovers(directory) == [])

        // Every name given: the migration runs.
        let fine = try Self.chainStore("Required", "v1", rows: [["name": .string("Ada")]], in: TemporaryDirectory())
        let ok = try MoultProcess.run(["migrate", fine.path, "--model", model, "--output", output.path, "--quiet"])
        #expect(ok.exitCode == 0, "\(ok.standardError)")
        try? FileManager.default.removeItem(at: fine.deletingLastPathComponent())
    }

    // MARK: - Item 6: what a step does not carry

    @Test func planAndMigrateListWhatIsNotCarried() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 200, in: directory)
        // v2 -> v3 without the age.
        let text = try String(contentsOf: URL(filePath: Self.mapping("v2-to-v3")), encoding: .utf8)
        let noAge = text.replacingOccurrences(of: "        { \"name\": \"age\", \"value\": \"$source.age\" },\n", with: "")
        #expect(noAge != text)
        let mapping = directory.appending("no-age.json")
        try noAge.write(to: mapping, atomically: true, encoding: .utf8)
        let ages = try MigrateCommandTests.count(source, "SELECT COUNT(ZAGE) FROM ZPERSON")
        #expect(ages > 0)
        let plan = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path, "--json"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(json["steps"] as? [[String: Any]])
        let notCarried = try #require(steps.first?["notCarried"] as? [[String: Any]])
        #expect(notCarried.count == 1, "\(notCarried)")
        #expect(notCarried.first?["entity"] as? String == "Person" && notCarried.first?["property"] as? String == "age")
        #expect(notCarried.first?["count"] as? Int == ages)
        let text2 = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path])
        #expect(text2.standardOutput.contains("not carried: Person.age (attribute, \(ages) non-nil values)"), "\(text2.standardOutput)")

        let output = directory.appending("out.sqlite")
        let migrate = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path, "--output", output.path, "--json",
        ])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(migrate.standardOutput.utf8)) as? [String: Any])
        let migrated = try #require((report["steps"] as? [[String: Any]])?.first?["notCarried"] as? [[String: Any]])
        #expect(migrated.first?["count"] as? Int == ages, "\(migrated)")
    }

    /// A step that drops a whole entity with objects warns, in plan and migrate (here v3 -> v2,
    /// which has no Address).
    @Test func droppingAWholeEntityWarns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("3", persons: 100, in: directory)
        let addresses = try MigrateCommandTests.count(source, "SELECT COUNT(*) FROM ZADDRESS")
        #expect(addresses > 0)
        let plan = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        let warning = "warning: step 1 (v3 -> v2) drops all \(addresses) Address objects"
        #expect(plan.standardError.contains(warning), "\(plan.standardError)")
        let output = directory.appending("out.sqlite")
        let migrate = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        #expect(migrate.standardError.contains(warning), "\(migrate.standardError)")
        #expect(migrate.standardOutput.contains("Address (every object, \(addresses) objects)"), "\(migrate.standardOutput)")
    }

    // MARK: - Item 8: exit codes and housekeeping

    @Test func aStoreAlreadyAtTheTargetIsSuccess() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("3", persons: 10, in: directory)
        let output = directory.appending("out.sqlite")
        // As a batch job run again: same arguments as the run that made the store.
        let migrate = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--output", output.path,
        ])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        #expect(migrate.standardOutput.contains("nothing to migrate"), "\(migrate.standardOutput)")
        let json = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v3", "--output", output.path, "--json"])
        #expect(json.exitCode == 0, "\(json.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        // The first run wrote the output, a copy of the store; the second finds it there.
        #expect(report["nothingToMigrate"] as? Bool == true && report["written"] as? Bool == false, "\(report)")
        try FileManager.default.removeItem(at: output)
        let plan = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v3", "--json"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("\"nothingToMigrate\":true"), "\(plan.standardOutput)")
        #expect(try Self.leftovers(directory) == [])
    }

    @Test func inspectAndMigrateAgreeWhenNoVersionMatches() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let foreign = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let output = directory.appending("out.sqlite")
        let migrate = try MoultProcess.run(["migrate", foreign.path, "--model", Self.model, "--output", output.path])
        let inspect = try MoultProcess.run(["inspect", foreign.path, "--model", Self.model])
        #expect(migrate.exitCode == 66 && inspect.exitCode == 66, "\(migrate.standardError) \(inspect.standardError)")
        // The same per-version differences, in the same error.
        let lines = migrate.standardError.split(separator: "\n").filter { $0.hasPrefix("  v") }
        #expect(lines.count == 5, "\(migrate.standardError)")
        for line in lines { #expect(inspect.standardError.contains(line), "\(line)") }
        #expect(try Self.leftovers(directory) == [])
    }

    /// Every refusal path of a chain leaves no work folder behind.
    @Test func aRefusedRunLeavesNothingBehind() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 60, in: directory)
        let output = directory.appending("out.sqlite")
        func run(_ extra: [String]) throws -> MoultProcess.Result {
            try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--output", output.path, "--quiet", "--chunk-size", "16"] + extra)
        }
        // A policy not registered, in the last step of four (v1 -> v2 inferred, then the three given).
        let text = try String(contentsOf: URL(filePath: Self.mapping("v4-to-v5")), encoding: .utf8)
        let unregistered = directory.appending("unregistered.json")
        try text.replacingOccurrences(of: "\"AdultToCompanyPolicy\"", with: "\"MyApp.NoSuchPolicy\"").write(to: unregistered, atomically: true, encoding: .utf8)
        let policy = try run([
            "--to", "v5", "--mapping", Self.mapping("v2-to-v3"), "--mapping", Self.mapping("v3-to-v4"), "--mapping", unregistered.path,
        ])
        #expect(policy.exitCode == 66 && policy.standardError.contains("MyApp.NoSuchPolicy"), "\(policy.standardError)")
        #expect(try Self.leftovers(directory) == [])
        // `plan` says the same, though it plans only the first step.
        let planned = try MoultProcess.run([
            "plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", Self.mapping("v2-to-v3"), "--mapping", Self.mapping("v3-to-v4"),
            "--mapping", unregistered.path,
        ])
        #expect(planned.exitCode == 66 && planned.standardError.contains("MyApp.NoSuchPolicy"), "\(planned.standardError)")
        // An output already there, for a chain of three steps: refused before the first runs.
        try Data("mine".utf8).write(to: output)
        let taken = try run(["--to", "v3", "--mapping", Self.mapping("v2-to-v3")])
        #expect(taken.exitCode == 74 && taken.standardError.contains("already exists"), "\(taken.standardError)")
        #expect(try Self.leftovers(directory) == ["out.sqlite"])
        #expect(try Data(contentsOf: output) == Data("mine".utf8))
        try FileManager.default.removeItem(at: output)
        // A target that does not exist; a mapping that fits no step.
        #expect(try run(["--to", "v9"]).exitCode == 66)
        #expect(try run(["--to", "v3", "--mapping", Self.mapping("v4-to-v5")]).exitCode == 66)
        #expect(try Self.leftovers(directory) == [])
        // A validation failure in the first step of a chain (ages above v2's maximum).
        let broken = try MigrateCommandTests.generate("1", persons: 60, in: directory, name: "broken.sqlite")
        try MigrateCommandTests.sqlite3(broken, "UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK IN (3, 40)")
        let validation = try MoultProcess.run([
            "migrate", broken.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--output", output.path,
            "--quiet", "--chunk-size", "16",
        ])
        #expect(validation.exitCode == 67, "\(validation.standardError)")
        #expect(validation.standardError.contains("Person Z_PK 3.age"), "\(validation.standardError)")
        #expect(validation.standardError.contains("made from the source object Person Z_PK 3"), "\(validation.standardError)")
        #expect(try Self.leftovers(directory) == [])
    }

    /// The work folder of another, interrupted migration is refused (65), never deleted: for one step
    /// (another destination model) and for a chain (another source).
    @Test func anotherMigrationsWorkIsRefusedNotDeleted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.appending("out.sqlite")
        // One step, v1 -> v2, killed after its second chunk.
        let first = try MigrateCommandTests.generate("1", persons: 80, in: directory, name: "a.sqlite")
        let killed = try MoultProcess.run(
            ["migrate", first.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet", "--chunk-size", "10"],
            environment: ["MOULT_FAULT": "after-sqlite-commit:2"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let work = output.path + ".moult"
        #expect(FileManager.default.fileExists(atPath: work + "/destination.sqlite"))
        // Another migration (another store, to v3) into the same output.
        let second = try MigrateCommandTests.generate("2", persons: 30, in: directory, name: "b.sqlite")
        let other = try MoultProcess.run([
            "migrate", second.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--output", output.path, "--quiet",
        ])
        #expect(other.exitCode == 65, "\(other.standardError)")
        #expect(other.standardError.contains("another"), "\(other.standardError)")
        #expect(FileManager.default.fileExists(atPath: work + "/destination.sqlite"))
        // The interrupted one resumes and finishes.
        let resumed = try MoultProcess.run(
            ["migrate", first.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet", "--chunk-size", "10"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        try FileManager.default.removeItem(at: output)

        // One step killed when its store was finished but not yet marked so (the marker removed after
        // a kill at `after-marker`): the other migration refuses it too, and it finishes.
        let late = try MoultProcess.run(
            ["migrate", first.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet", "--chunk-size", "10"],
            environment: ["MOULT_FAULT": "after-marker"])
        #expect(late.terminatedBySignal, "\(late.standardError)")
        try FileManager.default.removeItem(atPath: work + "/finished")
        let otherAgain = try MoultProcess.run([
            "migrate", second.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--output", output.path, "--quiet",
        ])
        #expect(otherAgain.exitCode == 65, "\(otherAgain.standardError)")
        #expect(FileManager.default.fileExists(atPath: work + "/destination.sqlite"))
        let done = try MoultProcess.run(
            ["migrate", first.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet", "--chunk-size", "10"])
        #expect(done.exitCode == 0, "\(done.standardError)")
        #expect(!FileManager.default.fileExists(atPath: work))
        try FileManager.default.removeItem(at: output)

        // A chain v1 -> v3, killed in its second step (the first is made by SQL, without chunks).
        let chain = ["--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--output", output.path, "--quiet", "--chunk-size", "10"]
        let interrupted = try MoultProcess.run(["migrate", first.path] + chain, environment: ["MOULT_FAULT": "after-sqlite-commit:4"])
        #expect(interrupted.terminatedBySignal, "\(interrupted.standardError)")
        let steps = output.path + ".moult-steps"
        #expect(FileManager.default.fileExists(atPath: steps + "/step-1-v2.sqlite"))
        let contents = try FileManager.default.contentsOfDirectory(atPath: steps).sorted()
        let third = try MigrateCommandTests.generate("1", persons: 30, in: directory, name: "c.sqlite")
        let refused = try MoultProcess.run(["migrate", third.path] + chain)
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: steps).sorted() == contents)
        let finished = try MoultProcess.run(["migrate", first.path] + chain)
        #expect(finished.exitCode == 0, "\(finished.standardError)")
        #expect(!FileManager.default.fileExists(atPath: steps))
    }
}
