import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 6, in part: a to-one naming an object that does not exist is counted before a run and
/// the warning says what the run does with it. wibosco's real `CoreDataMigration_Example_3.sqlite` (MIT)
/// with one `Color` deleted: post 20 still names it. In place by SQL keeps the value (as Core Data's
/// lightweight migration does); a copy into a new store sets it to nil, and says so (keeping it there
/// waits for kept primary keys, item 5).
@Suite struct DanglingReferenceTests {
    static let fixture = PlanJudgesTheStoreTests.fixture
    static let model = PlanJudgesTheStoreTests.model
    static let counted = "the store holds 1 to-one reference naming an object that does not exist (Post.color: 1)"

    static func store(in directory: TemporaryDirectory) throws -> URL {
        let store = try directory.copyStore(fixture, as: "dangling.sqlite")
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        #expect(try database.scalar("SELECT COUNT(*) FROM ZPOST WHERE ZCOLOR = 5") == .int(1))
        try database.executeScript("DELETE FROM ZCOLOR WHERE Z_PK = 5; PRAGMA wal_checkpoint(TRUNCATE)")
        return store
    }

    @Test func inPlaceBySQLKeepsItAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardError.contains("\(Self.counted); the step by SQL keeps them"), "\(migrated.standardError)")
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT ZCOLOR FROM ZPOST WHERE Z_PK = 20") == .int(5))
    }

    @Test func aCopySaysItSetsThemToNil() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let copied = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--output", directory.appending("out.sqlite").path])
        #expect(copied.standardError.contains("\(Self.counted); the objects are copied into a new store, which sets them to nil"), "\(copied.standardError)")
        // A store without one says nothing.
        let clean = try directory.copyStore(Self.fixture, as: "clean.sqlite")
        let migrated = try MoultProcess.run(["migrate", clean.path, "--model", Self.model, "--output", directory.appending("clean-out.sqlite").path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("does not exist"))
    }
}
