import Foundation
import MoultMapping
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

@testable import MoultEngine
@testable import MoultMigration

/// In place on the stores apps really have (issue 22, item 6): what a store holds beyond its model
/// (Core Data's persistent history, R-tree and past fetch indexes, an application's triggers, tables,
/// views and indexes) is kept by an SQL step, as Core Data keeps it; what a step cannot keep is named
/// with why, the same way by `plan` (``InPlaceMigration/ownObjectOutcomes()``) and by the run.
@Suite struct InPlaceOwnObjectsTests {
    static let photos = "osxphotos__Photos-10.15.1"

    /// Apple's Photos 10.15.1 store, and a version of its model with a new entity whose name sorts first:
    /// every entity is renumbered, every table rebuilt.
    static func photosCase(in directory: TemporaryDirectory) throws -> (store: URL, model: VersionedModel) {
        let v1 = try ObjectModel(contentsOf: Fixtures.url("\(photos)/Photos.xcdatamodel"))
        let first = EntityDescription(name: "AAAardvark", attributes: [AttributeDescription(name: "name", type: .string)])
        let v2 = try ObjectModel(entities: [first] + v1.entities, versionIdentifier: "v2")
        let model = try VersionedModel(name: "Photos", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        return (try directory.copyStore(Fixtures.url("\(photos)/Photos.sqlite")), model)
    }

    static func master(_ url: URL) throws -> [String: String] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let rows = try database.query("SELECT type || ' ' || name, sql FROM sqlite_master WHERE sql IS NOT NULL") {
            ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "")
        }
        return Dictionary(rows, uniquingKeysWith: { a, _ in a })
    }

    /// Every object the plan keeps is there after the run with the same statement; every one it drops
    /// is gone; history follows the entities' new numbers; the step ran by SQL as planned.
    @Test func aPhotosLibraryKeepsItsHistoryRTreeTriggersAndIndexes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, model) = try Self.photosCase(in: directory)
        let before = try Self.master(store)
        let historyBefore = try InPlaceSQLKindsTests.rows(store, "SELECT Z_PK, ZENTITY FROM ACHANGE ORDER BY Z_PK")
        let reserved = "SELECT * FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT"
        let reservedBefore = try InPlaceSQLKindsTests.rows(store, reserved)

        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        #expect(migration.methods[0].isSQL)
        let outcomes = try migration.ownObjectOutcomes()
        let tables = outcomes.filter { $0.object.kind == .table && $0.fate == .kept }.map(\.object.name)
        #expect(Set(tables) == ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING", "Z_RT_GenericAsset_boundedByRect"])
        #expect(outcomes.filter { $0.object.kind == .trigger }.count == 59)
        #expect(!outcomes.contains { if case .refused = $0.fate { true } else { false } }, "\(outcomes.filter { $0.fate != .kept && $0.fate != .madeAgain })")
        // The join table the two RADAR indexes are on is renamed (its entity numbers change): dropped, said.
        let dropped = outcomes.filter { if case .dropped = $0.fate { true } else { false } }
        #expect(Set(dropped.map(\.object.name)) == ["RADAR_10322662_INDEX", "RADAR_22158684_INDEX"])

        var warnings: [String] = []
        let report = try migration.run(events: { if case .warning(let warning) = $0 { warnings.append(warning.message) } })
        #expect(report.ranBySQL == [true], "planned by SQL, run by SQL")
        #expect(warnings.filter { $0.contains("RADAR_") && $0.contains("dropped: it indexes Z_26ASSETS") }.count == 2, "\(warnings)")

        let after = try Self.master(store)
        for outcome in outcomes {
            let key = "\(outcome.object.kind.rawValue) \(outcome.object.name)"
            switch outcome.fate {
            case .kept, .madeAgain: #expect(after[key] == before[key], "\(key)")
            case .dropped: #expect(after[key] == nil, "\(key)")
            case .refused: Issue.record("\(outcome)")
            }
        }
        // Every entity moved up by one (the new entity is first): history names the same objects.
        let historyAfter = try InPlaceSQLKindsTests.rows(store, "SELECT Z_PK, ZENTITY FROM ACHANGE ORDER BY Z_PK")
        #expect(historyAfter.count == 566)
        #expect(historyAfter == historyBefore.map { row in
            let parts = row.split(separator: "|")
            return "\(parts[0])|\(Int(parts[1])! + 1)"
        })
        #expect(try InPlaceSQLKindsTests.rows(store, reserved) == reservedBefore)
        #expect(try InPlaceSQLKindsTests.rows(store, "PRAGMA integrity_check") == ["ok"])
        #expect(try InPlaceSQLKindsTests.rows(store, "SELECT count(*) FROM Z_RT_GenericAsset_boundedByRect") == ["7"])
    }

    /// A two-version model: Book(title, subtitle) → Book(title).
    static func bookModel() throws -> VersionedModel {
        let v1 = try ObjectModel {
            Entity("Book") {
                Attribute("title", .string)
                Attribute("subtitle", .string)
            }
        }
        let v2 = try ObjectModel {
            Entity("Book") { Attribute("title", .string) }
        }
        return try VersionedModel(name: "Books", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
    }

    static func bookStore(in directory: TemporaryDirectory, model: VersionedModel, extraSQL: String) throws -> URL {
        let url = directory.appending("books.sqlite")
        let created = try SQLiteStore.create(at: url, model: model.versions[0].model)
        let writer = try created.makeWriter()
        try writer.write {
            for index in 0..<3 { try writer.insert("Book", ["title": .string("t\(index)"), "subtitle": .string("s\(index)")]) }
        }
        try created.database.executeScript(extraSQL)
        created.database.close()
        return url
    }

    /// An application's index on a column the step removes is dropped, with a warning naming it and
    /// why; its index on a column that stays is made again; its own table stays with its rows.
    @Test func anIndexWhoseColumnGoesIsDroppedWithAWarning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.bookModel()
        let store = try Self.bookStore(
            in: directory, model: model,
            extraSQL: "CREATE INDEX app_by_subtitle ON ZBOOK (ZSUBTITLE); CREATE INDEX app_by_title ON ZBOOK (ZTITLE); "
                + "CREATE TABLE app_log (x); INSERT INTO app_log VALUES (7)")
        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        var warnings: [String] = []
        let report = try migration.run(events: { if case .warning(let warning) = $0 { warnings.append(warning.message) } })
        #expect(report.ranBySQL == [true])
        #expect(warnings == ["in place, index app_by_subtitle: step 1: dropped: it indexes ZBOOK.ZSUBTITLE, which the step removes or changes"])
        let indexes = try InPlaceSQLKindsTests.rows(store, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'app%'")
        #expect(indexes == ["app_by_title"])
        #expect(try InPlaceSQLKindsTests.rows(store, "SELECT x FROM app_log") == ["7"])
        #expect(try InPlaceSQLKindsTests.rows(store, "SELECT ZTITLE FROM ZBOOK ORDER BY Z_PK") == ["t0", "t1", "t2"])
    }

    /// A view reading a column the step removes cannot be made again: refused (66) before anything is
    /// written, naming the view and the column.
    @Test func aViewOnARemovedColumnIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.bookModel()
        let store = try Self.bookStore(in: directory, model: model, extraSQL: "CREATE VIEW app_subtitles AS SELECT ZSUBTITLE FROM ZBOOK")
        let before = try Data(contentsOf: store)
        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        let error = #expect(throws: MigrationError.self) { try migration.run() }
        #expect(error?.category.exitCode == 66)
        #expect(error?.description.contains("view app_subtitles: step 1: cannot be kept: it names ZBOOK.ZSUBTITLE") == true, "\(error?.description ?? "")")
        #expect(try Data(contentsOf: store) == before)
    }

    /// A step that streams makes a new store from the model: the store's own tables cannot be kept
    /// (refused), its own indexes are dropped (said); an SQL step before it keeps both.
    @Test func aStreamedStepCannotKeepTheStoresOwnTables() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.bookModel()
        let store = try Self.bookStore(
            in: directory, model: model, extraSQL: "CREATE INDEX app_by_title ON ZBOOK (ZTITLE); CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, ZENTITY INTEGER)")
        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        let own = try StoreOwnObjects(reading: database, layout: StoreLayout(model: model.versions[0].model))
        #expect(own.objects.map(\.description) == ["index app_by_title", "table ACHANGE"])
        let streamed = try InPlaceMigration.outcomes(of: own, steps: migration.steps, methods: [.streaming(["a test"])])
        #expect(streamed.map(\.description) == [
            "index app_by_title: step 1: dropped: the step makes a new store, which has the model's indexes",
            "table ACHANGE: step 1: cannot be kept: the step makes a new store from the model, which does not describe it",
        ])
        let bySQL = try InPlaceMigration.outcomes(of: own, steps: migration.steps, methods: migration.methods)
        #expect(bySQL.map(\.fate) == [.madeAgain, .kept])
    }
}
