import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A store whose entity numbers are not the ones Moult computes (an older Moult numbered entities in
/// byte order: `SubB` before `Sub_a`) keeps its objects' entities through a migration in place: the
/// SQL step, which would rewrite the store with the computed numbers, is not taken; the step streams,
/// reading the store with its own numbers.
@Suite struct RenumberedStoreTests {
    static func model(extra: Bool) throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Item",
                attributes: [AttributeDescription(name: "title", type: .string, isOptional: true)]
                    + (extra ? [AttributeDescription(name: "note", type: .string, isOptional: true)] : [])),
            EntityDescription(name: "SubB", parent: "Item"),
            EntityDescription(name: "Sub_a", parent: "Item"),
        ])
    }

    /// The store of the test below, numbered in byte order, with `extraSQL` run on it.
    static func renumberedStore(in directory: TemporaryDirectory, extraSQL: String = "") throws -> (url: URL, model: VersionedModel) {
        let (v1, v2) = (try Self.model(extra: false), try Self.model(extra: true))
        let versioned = try VersionedModel(name: "Renumbered", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let url = directory.appending("old.sqlite")
        let created = try SQLiteStore.create(at: url, model: v1)
        #expect(created.layout.entities.map { "\($0.number) \($0.name)" } == ["1 Item", "2 Sub_a", "3 SubB"])
        let writer = try created.makeWriter()
        try writer.write {
            _ = try writer.insert("SubB", ["title": .string("b")])
            _ = try writer.insert("Sub_a", ["title": .string("a1")])
            _ = try writer.insert("Sub_a", ["title": .string("a2")])
        }
        // Renumbered as byte order numbers them: SubB 2, Sub_a 3, rows and Z_PRIMARYKEY alike.
        try created.database.executeScript(
            """
            UPDATE ZITEM SET Z_ENT = 5 - Z_ENT WHERE Z_ENT IN (2, 3);
            UPDATE Z_PRIMARYKEY SET Z_ENT = -Z_ENT WHERE Z_ENT IN (2, 3);
            UPDATE Z_PRIMARYKEY SET Z_ENT = 5 + Z_ENT WHERE Z_ENT IN (-2, -3);
            \(extraSQL)
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        created.database.close()
        return (url, versioned)
    }

    @Test func aStoreNumberedInByteOrderMigratesInPlaceWithItsObjectsEntities() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, versioned) = try Self.renumberedStore(in: directory)
        let v2 = try Self.model(extra: true)

        let migration = try InPlaceMigration(store: url, model: versioned, to: "v2", keepsBackup: false)
        // By SQL from the models alone, but judged on the store (issue 40, item 7): its numbers are not the layout's.
        #expect(try migration.chain.chainPlan.inPlaceMethod(ofStep: 0).isSQL)
        guard case .streaming(let reasons) = migration.methods[0] else {
            Issue.record("the step is planned by SQL on a store numbered otherwise")
            return
        }
        #expect(reasons.first?.contains("it numbers the entity SubB 2 where the model numbers it 3") == true, "\(reasons)")
        let report = try migration.run()
        #expect(report.ranBySQL == [false])  // the store's numbers are not the layout's: streamed

        let store = try SQLiteStore(url: url, model: v2)
        defer { store.database.close() }
        #expect(try store.count(of: "SubB") == 1)
        #expect(try store.count(of: "Sub_a") == 2)
        var titles: [String] = []
        let cursor = try store.objects(of: "Sub_a", batchSize: 10)
        while let row = try cursor.next() { if case .string(let title) = row["title"] { titles.append(title) } }
        #expect(titles.sorted() == ["a1", "a2"])
    }

    /// The same store holding Core Data's persistent history: its step is planned by SQL from the models,
    /// but this store's numbers make it a copy, which would drop the history. `plan`'s answer
    /// (``InPlaceMigration/ownObjectOutcomes()``) says so, and the run is refused (66) before anything is
    /// written, rather than streamed without the history.
    @Test func itsHistoryIsRefusedBeforeTheStepWouldCopyIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, versioned) = try Self.renumberedStore(
            in: directory, extraSQL: "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, ZENTITY INTEGER); INSERT INTO ACHANGE VALUES (1, 2);")
        let migration = try InPlaceMigration(store: url, model: versioned, to: "v2", keepsBackup: false)
        // Judged on the store: numbered otherwise, the step is a copy (issue 40, item 7).
        #expect(!migration.methods[0].isSQL)
        #expect(try migration.ownObjectOutcomes().map(\.description) == [
            "table ACHANGE: step 1: cannot be kept: the step makes a new store from the model, which does not describe it"
        ])
        let before = try Data(contentsOf: url)
        let error = #expect(throws: MigrationError.self) { try migration.run() }
        #expect(error?.category.exitCode == 66)
        #expect(error?.description.contains("table ACHANGE: step 1: cannot be kept") == true, "\(error?.description ?? "")")
        #expect(try Data(contentsOf: url) == before)
    }
}
