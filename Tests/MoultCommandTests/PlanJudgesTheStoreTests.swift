import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 7: `plan` judges how a step runs in place on the store itself, as `migrate` does, and
/// `migrate` says why a step streams. The store is wibosco's real `CoreDataMigration_Example_3.sqlite`
/// (MIT), which a step by SQL migrates; renumbered (Color 2, Post 1, as an older Moult numbered entities),
/// the SQL made for its version's layout cannot run on it, and the step streams.
@Suite struct PlanJudgesTheStoreTests {
    static let fixture = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite")
    static let model = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld").path
    static let reason = "because the store's schema is not the one version CoreDataMigration_Example 3 lays out (it numbers the entity Post 1 where the model numbers it 2)"

    static func renumbered(in directory: TemporaryDirectory, name: String = "renumbered.sqlite") throws -> URL {
        let store = try directory.copyStore(fixture, as: name)
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.executeScript(
            """
            UPDATE Z_PRIMARYKEY SET Z_ENT = 3 WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_ENT = 1 WHERE Z_ENT = 2;
            UPDATE Z_PRIMARYKEY SET Z_ENT = 2 WHERE Z_ENT = 3; UPDATE ZCOLOR SET Z_ENT = 2; UPDATE ZPOST SET Z_ENT = 1;
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        return store
    }

    @Test func planAndRunAgreeOnAStoreNumberedOtherwise() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.renumbered(in: directory)
        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.model])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("in place: streamed, then swapped in, \(Self.reason)"), "\(plan.standardOutput)")
        let json = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let inPlace = try #require((report["inPlace"] as? [[String: Any]])?.first)
        #expect(inPlace["method"] as? String == "streaming")

        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let again = try Self.renumbered(in: directory, name: "again.sqlite")
        let run = try MoultProcess.run(["migrate", again.path, "--model", Self.model, "--json"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        let ran = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let step = try #require((ran["steps"] as? [[String: Any]])?.first)
        #expect(step["method"] as? String == "streaming")
        #expect((step["reasons"] as? [String])?.first?.contains("it numbers the entity Post 1") == true, "\(step)")
        let inspected = try MoultProcess.run(["inspect", store.path, "--model", Self.model])
        #expect(inspected.standardOutput.contains("matching version: CoreDataMigration_Example 4"), "\(inspected.standardOutput)")
    }

    /// The text a person reads: `migrate` prints the reason beside the step.
    @Test func migrateSaysWhyAStepStreams() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.renumbered(in: directory)
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains(": streamed, then swapped in, \(Self.reason)"), "\(migrated.standardOutput)")
    }

    /// The store as Core Data wrote it: `plan` and the run both say by SQL.
    @Test func theRealStoreRunsBySQL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try directory.copyStore(Self.fixture, as: "real.sqlite")
        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.model])
        #expect(plan.standardOutput.contains("in place: by SQL"), "\(plan.standardOutput)")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("(inferred mapping): by SQL"), "\(migrated.standardOutput)")
    }
}
