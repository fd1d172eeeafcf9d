import Foundation
import MoultTestSupport
import Testing

/// `moult verify` end to end: exit 0 on a good migration, 67 listing every failure on a broken one.
@Suite struct VerifyCommandTests {
    static let model = Fixtures.peopleModel.path

    @Test func verifyPassesThenListsEveryFailureWithExitCode67() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 300, in: directory)
        let output = directory.appending("v3.sqlite")
        let mapping = MigrateCommandTests.mapping("v2-to-v3")
        let migrate = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping, "--output", output.path, "--quiet",
        ])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let arguments = ["verify", source.path, output.path, "--model", Self.model, "--to", "v3", "--mapping", mapping]
        let good = try MoultProcess.run(arguments)
        #expect(good.exitCode == 0, "\(good.standardOutput)\(good.standardError)")
        #expect(good.standardOutput.hasPrefix("verified"), "\(good.standardOutput)")
        // Without --to, DEST's own version (v3) is the target, not the model's current one (v5).
        let withoutTo = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--mapping", mapping])
        #expect(withoutTo.exitCode == 0, "\(withoutTo.standardOutput)\(withoutTo.standardError)")

        try MigrateCommandTests.sqlite3(output, "UPDATE ZPERSON SET ZADDRESS = 99999 WHERE Z_PK IN (2, 5); DELETE FROM ZADDRESS WHERE Z_PK = 1")
        let log = directory.appending("events.jsonl")
        let bad = try MoultProcess.run(arguments + ["--sample", "0", "--events", log.path])
        #expect(bad.exitCode == 67, "\(bad.standardError)")
        for key in [2, 5] {
            #expect(bad.standardOutput.contains("FAIL dangling-key: Person Z_PK \(key).address points at Z_PK 99999"), "\(bad.standardOutput)")
        }
        #expect(bad.standardOutput.contains("FAIL count: Address"), "\(bad.standardOutput)")
        let events = try EventsCommandTests.events(at: log)
        #expect(EventsCommandTests.kinds(events).filter { $0 == "warning" }.count >= 3)
        #expect(events.last?["event"] as? String == "failed" && events.last?["exitCode"] as? Int == 67, "\(events.last ?? [:])")

        let json = try MoultProcess.run(arguments + ["--json", "--sample", "0"])
        #expect(json.exitCode == 67)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["passed"] as? Bool == false)
        let failures = try #require(object["failures"] as? [[String: Any]])
        #expect(failures.count == object["failureCount"] as? Int && failures.count >= 3, "\(failures)")

        // A destination that is not there: an I/O failure, named.
        let missing = try MoultProcess.run(["verify", source.path, directory.appending("nope.sqlite").path, "--model", Self.model, "--to", "v3", "--mapping", mapping])
        #expect(missing.exitCode == 74 && missing.standardError.contains("nope.sqlite"), "\(missing.standardError)")
        let badSample = try MoultProcess.run(arguments + ["--sample", "-1"])
        #expect(badSample.exitCode == 64)
    }

    /// A chain (v1 -> v2 inferred, then the v2 -> v3 and v3 -> v4 mappings): counted and sampled
    /// through every step; to v5, the counts a policy makes are listed as not checked, with why.
    /// DEST that cannot be opened because a symbolic link is at its `-wal`'s name is an I/O failure
    /// (74, naming the link), not a store of another model (66); nothing it leads to is read.
    @Test func aLinkAtDestinationsWALIsAnIOFailure() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 20, in: directory)
        let output = directory.appending("v3.sqlite")
        let mapping = MigrateCommandTests.mapping("v2-to-v3")
        let migrate = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping, "--output", output.path, "--quiet"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let elsewhere = directory.appending("elsewhere")
        try Data("not a WAL".utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: output.path + "-wal", withDestinationPath: elsewhere.path)
        let verified = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--to", "v3", "--mapping", mapping])
        #expect(verified.exitCode == 74, "\(verified.standardError)")
        #expect(verified.standardError.contains("-wal is a symbolic link"), "\(verified.standardError)")
        #expect(try Data(contentsOf: elsewhere) == Data("not a WAL".utf8))
    }

    @Test func verifyComparesAChainThroughEveryStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 200, in: directory)
        let mappings = ["v2-to-v3", "v3-to-v4"].flatMap { ["--mapping", MigrateCommandTests.mapping($0)] }
        let output = directory.appending("v4.sqlite")
        let migrate = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v4", "--output", output.path, "--quiet"] + mappings)
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let arguments = ["verify", source.path, output.path, "--model", Self.model, "--to", "v4"] + mappings
        let good = try MoultProcess.run(arguments + ["--json"])
        #expect(good.exitCode == 0, "\(good.standardOutput)\(good.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(good.standardOutput.utf8)) as? [String: Any])
        let checks = try #require(object["checks"] as? [String: [String: Int]])
        #expect(checks["count"]?["checked"] == 3 && (checks["sample"]?["checked"] ?? 0) > 0, "\(checks)")
        #expect((object["skipped"] as? [String])?.isEmpty == true, "\(object)")

        // Every v1 person is a child or an adult now: one made an adult by hand is a count failure of each.
        try MigrateCommandTests.sqlite3(
            output, "UPDATE ZPERSON SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Adult') WHERE Z_PK = (SELECT MIN(Z_PK) FROM ZPERSON WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Child'))")
        let bad = try MoultProcess.run(arguments + ["--sample", "0"])
        #expect(bad.exitCode == 67, "\(bad.standardOutput)\(bad.standardError)")
        #expect(bad.standardOutput.contains("FAIL count: Adult: ") && bad.standardOutput.contains("FAIL count: Child: "), "\(bad.standardOutput)")
        #expect(bad.standardOutput.contains("made from the source by replaying v1 → v2 → v3 → v4"), "\(bad.standardOutput)")

        let v5 = directory.appending("v5.sqlite")
        let toV5 = mappings + ["--mapping", MigrateCommandTests.mapping("v4-to-v5-builtin")]
        let migrated = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v5", "--output", v5.path, "--quiet"] + toV5)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let log = directory.appending("verify.jsonl")
        let partly = try MoultProcess.run(["verify", source.path, v5.path, "--model", Self.model, "--to", "v5", "--events", log.path] + toV5)
        #expect(partly.exitCode == 0, "\(partly.standardOutput)\(partly.standardError)")
        #expect(partly.standardOutput.contains("  not checked: the count of Company: the entity mapping AdultToCompany (v4 → v5) runs a policy"), "\(partly.standardOutput)")
        let warnings = try EventsCommandTests.events(at: log).filter { $0["event"] as? String == "warning" }.compactMap { $0["message"] as? String }
        #expect(warnings.contains("not checked: the count of School: the entity mapping ChildToSchool (v4 → v5) runs a policy"), "\(warnings)")
    }
}
