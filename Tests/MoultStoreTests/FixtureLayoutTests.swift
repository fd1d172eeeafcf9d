import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Every real store in the fixtures, laid out from its model, has exactly the join tables (names,
/// columns, column order) and `Z_PRIMARYKEY` rows Core Data wrote; and a store numbered otherwise than
/// Moult numbers is read with its own numbers.
@Suite struct FixtureLayoutTests {
    /// A store and where its model comes from.
    struct Case: Sendable, CustomStringConvertible {
        var store: String
        /// The `.xcdatamodeld` and version, or nil: the store's own model cache.
        var xcode: FixtureStore?
        var description: String { "\((store as NSString).lastPathComponent) (\(xcode == nil ? "model cache" : "Xcode model"))" }

        func model(_ database: Database) throws -> ObjectModel {
            if let xcode { return try xcode.loadVersion().model }
            return try FixtureLayoutTests.cachedModel(database, store)
        }
    }

    static let photos = "osxphotos__Photos-10.15.1/Photos.sqlite"

    /// The model a store's cache holds, without its fetch indexes: Photos' `AlbumList.byAlbumsIndex`
    /// names a to-many relationship, which Moult's layout refuses (no column to index), and fetch
    /// indexes decide neither join tables nor entity numbers.
    static func cachedModel(_ database: Database, _ store: String) throws -> ObjectModel {
        let model = try #require(try ModelCache.model(in: database), "\(store) carries no model")
        return try ObjectModel(
            entities: model.entities.map { entity in
                var entity = entity
                entity.fetchIndexes = []
                return entity
            })
    }

    /// Every store with its Xcode model (those version-hashes.json names), and every store with a model
    /// cache through that cache (Photos' is the only model of its store besides the rebuilt XML).
    static let cases: [Case] = {
        var result = FixtureStore.all.map { Case(store: $0.store, xcode: $0) }
        let root = Fixtures.root
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var stores: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "sqlite", !url.path.contains("/regressions/") else { continue }
            stores.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        for store in stores.sorted() {
            let hasCache = (try? Database(url: Fixtures.url(store), mode: .readOnly)).flatMap { database in
                defer { database.close() }
                return try? database.scalar("SELECT COUNT(*) FROM Z_MODELCACHE")
            }
            if hasCache == .int(1) { result.append(Case(store: store, xcode: nil)) }
        }
        return result
    }()

    /// The stores with many-to-many relationships, and their join tables.
    static let joinTableCounts: [String: Int] = {
        var counts = [photos: 14, "bignerdranch__CoreDataStack/Sample Model/Deprecated/TestModel.sqlite": 1]
        let apptentive = "apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/"
        for store in ["ATDataModelv1", "ATDataModelv2", "ATDataModelv3", "ATDataModelv4", "v2WALDatabase/ATDataModel", "v3WALDatabase/ATDataModel"] {
            counts[apptentive + store + ".sqlite"] = 1
        }
        // DuckDuckGo's favourites, many-to-many from BookmarksModel 4 on; XCServerCoreData's three.
        for version in [4, 5] { counts["duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V\(version).sqlite"] = 1 }
        for store in ["1.2.0", "1.2.0_empty", "2.0.0_empty", "2.0.1"] {
            counts["richardpiazza__XCServerCoreData/Tests/XCServerCoreData_\(store).sqlite"] = 3
        }
        return counts
    }()

    @Test func everyStoreIsWalked() {
        #expect(Set(Self.cases.map(\.store)).count == 41)
        #expect(Self.cases.contains { $0.store == Self.photos })
    }

    /// The store's join tables: `Z_<n>…` tables (not Core Data's own, not R-tree tables) with their
    /// columns in table order.
    static func joinTables(_ database: Database) throws -> [String: [String]] {
        let names = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z_[0-9]*'") { $0.string(at: 0) ?? "" }
        var tables: [String: [String]] = [:]
        for name in names {
            tables[name] = try database.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.string(name)]) { $0.string(at: 0) ?? "" }
        }
        return tables
    }

    @Test(arguments: cases)
    func joinTablesAndEntityNumbersAreCoreDatas(_ fixture: Case) throws {
        let url = Fixtures.url(fixture.store)
        let before = fileFingerprint(url)
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let model = try fixture.model(database)
        let layout = try StoreLayout(model: model)

        let expected = Dictionary(uniqueKeysWithValues: layout.joinTables.map { ($0.name, $0.columns + $0.orderColumns) })
        let actual = try Self.joinTables(database)
        #expect(actual.count == Self.joinTableCounts[fixture.store] ?? 0, "\(fixture)")
        for name in Set(expected.keys).union(actual.keys).sorted() {
            #expect(expected[name] == actual[name], "join table \(name) of \(fixture)")
        }

        // Z_PRIMARYKEY: every entity row (16001… are persistent history's), Z_ENT and Z_SUPER exactly. Z_NAME
        // is the entity's name, or, in a store migrated in place, may still be the old name a renamed
        // entity's renaming identifier gives (SampleModel_V2: ExpensiveSportCar for LuxuryCar).
        let rows = try database.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT") {
            (number: Int32($0.int64(at: 0)), name: $0.string(at: 1) ?? "", parent: Int32($0.int64(at: 2)))
        }
        #expect(rows.map { "\($0.number) \($0.parent)" } == layout.entities.map { "\($0.number) \($0.superNumber)" }, "\(fixture)")
        for (row, entity) in zip(rows, layout.entities) {
            let names = [entity.name, model.entity(named: entity.name)?.renamingIdentifier].compactMap { $0 }
            #expect(names.contains(row.name), "Z_ENT \(row.number) of \(fixture) is \(row.name), not \(names)")
        }
        #expect(fileFingerprint(url) == before, "the fixture was modified")
    }

    /// The names that differ between byte order and Core Data's: `ComputedAssetAttributes` (numbered 16 in
    /// Photos 14.6) before `ComputeSyncAttributes` (17), and the Photos 10.15 store's 53 numbers.
    @Test func photosNumbering() throws {
        let database = try Database(url: Fixtures.url(Self.photos), mode: .readOnly)
        defer { database.close() }
        let layout = try StoreLayout(model: Self.cachedModel(database, Self.photos))
        #expect(layout.entities.count == 53)
        #expect(layout.entity(named: "ComputedAssetAttributes")?.number == 15)
        #expect(layout.entity(named: "GenericAsset")?.hierarchyNumbers == [34, 35])
    }

    // MARK: - A store numbered otherwise

    /// `Item` with sub-entities `SubB` and `Sub_a`, and a many-to-many `Item.tags` ↔ `Tag.items`.
    static let renumberedModel: ObjectModel = try! ObjectModel(entities: [
        EntityDescription(
            name: "Item", attributes: [AttributeDescription(name: "title", type: .string, isOptional: true)],
            relationships: [RelationshipDescription(name: "tags", destination: "Tag", inverse: "items", isToMany: true)]),
        EntityDescription(name: "SubB", parent: "Item"),
        EntityDescription(name: "Sub_a", parent: "Item"),
        EntityDescription(
            name: "Tag", relationships: [RelationshipDescription(name: "items", destination: "Item", inverse: "tags", isToMany: true)]),
    ])

    /// A store whose `Z_PRIMARYKEY` numbers `SubB` 2 and `Sub_a` 3 (byte order, as Moult numbered before)
    /// is read with those numbers: each object comes out as the entity its row's `Z_ENT` names in the
    /// store, never as the one Moult's own numbering would give that `Z_ENT`.
    @Test func aStoreNumberedOtherwiseIsReadWithItsOwnNumbers() throws {
        let model = Self.renumberedModel
        #expect(try StoreLayout(model: model).entities.map(\.name) == ["Item", "Sub_a", "SubB", "Tag"])
        let old: [String: Int32] = ["Item": 1, "SubB": 2, "Sub_a": 3, "Tag": 4]
        let oldLayout = try StoreLayout(model: model, numbers: old)
        #expect(oldLayout.entities.map { "\($0.number) \($0.name)" } == ["1 Item", "2 SubB", "3 Sub_a", "4 Tag"])

        // The store as Moult wrote it before: the same schema (no name here carries 2 or 3), those numbers.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.appending("old.sqlite")
        let created = try SQLiteStore.create(at: url, model: model)
        #expect(created.layout.joinTables == oldLayout.joinTables)
        try created.database.execute("DELETE FROM Z_PRIMARYKEY")
        for entity in oldLayout.entities {
            try created.database.execute(
                "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                [.int(Int64(entity.number)), .string(entity.name), .int(Int64(entity.superNumber))])
        }
        try created.database.executeScript(
            """
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (1, 2, 1, 'a SubB'), (2, 3, 1, 'a Sub_a'), (3, 3, 1, 'another Sub_a');
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT) VALUES (1, 4, 1);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 4;
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        created.database.close()

        let store = try SQLiteStore(url: url, model: model)
        defer { store.database.close() }
        #expect(store.layout.entity(named: "SubB")?.number == 2)
        #expect(store.layout.entity(number: 3)?.name == "Sub_a")
        #expect(try store.count(of: "SubB") == 1)
        #expect(try store.count(of: "Sub_a") == 2)
        let cursor = try store.objects(of: "Sub_a", batchSize: 10)
        var titles: [String] = []
        while let row = try cursor.next() {
            #expect(row.id.entity == 3)
            if case .string(let title) = row["title"] { titles.append(title) }
        }
        #expect(titles == ["a Sub_a", "another Sub_a"])
    }
}
