import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The store Moult creates from Apple's Photos model (macOS 10.15, 53 entities) has the schema Core Data
/// wrote for it (`Photos.sqlite.schema.sql`, every `CREATE` of that store's `sqlite_master`).
///
/// Compared: tables with their columns and declared types, and indexes by table, terms and `WHERE`
/// (not by name), and, for the model extracted from the store's own cache, fetch indexes by name and
/// the R-tree with its triggers as text. Left out because no model makes them: the `RADAR_*` indexes
/// Photos adds itself and the persistent-history tables (`ACHANGE`, `ATRANSACTION`,
/// `ATRANSACTIONSTRING`); and Photos' `ZT_…` triggers, which Core Data makes from the `NSTriggerKey` user
/// info of five attributes (the extracted model keeps that user info; Moult does not write the triggers).
@Suite struct PhotosSchemaTests {
    static let folder = "osxphotos__Photos-10.15.1"

    /// Tables (name → "COLUMN TYPE" set), indexes ("[UNIQUE ]ON TABLE (terms)[ WHERE …]", with the
    /// index's name first when `named`) and R-tree triggers (their text).
    struct Schema: Equatable {
        var tables: [String: Set<String>] = [:]
        var indexes: Set<String> = []
        var triggers: Set<String> = []
    }

    /// The schema of a database. With `whole`, fetch indexes and R-trees are in it and indexes are named;
    /// without, they are left out (the shared Photos model, rebuilt without them, is compared so).
    static func schema(_ database: Database, entityNames: Set<String>, whole: Bool = false) throws -> Schema {
        var schema = Schema()
        let rows = try database.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL") {
            ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "", $0.string(at: 2) ?? "", $0.string(at: 3) ?? "")
        }
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        for (type, name, table, sql) in rows {
            if history.contains(table) || (!whole && table.hasPrefix("Z_RT_")) { continue }
            switch type {
            case "table":
                let columns = try database.query("SELECT name, type, pk FROM pragma_table_info(?)", [.string(name)]) {
                    "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")\($0.int64(at: 2) > 0 ? " PK\($0.int64(at: 2))" : "")"
                }
                schema.tables[name] = Set(columns)
            case "index":
                if name.hasPrefix("RADAR_") { continue }
                let unique = sql.hasPrefix("CREATE UNIQUE")
                // A fetch index: Z_<Entity>_<name>, not unique (uniqueness constraints are Z_<Entity>_UNIQUE_…).
                let parts = name.split(separator: "_", maxSplits: 2)
                if !whole, !unique, parts.count == 3, name.hasPrefix("Z_"), entityNames.contains(String(parts[1])) { continue }
                guard let on = sql.range(of: " ON ") else { continue }
                let rest = sql[on.upperBound...].split(whereSeparator: \.isWhitespace).joined(separator: " ")
                schema.indexes.insert((whole ? name + " " : "") + (unique ? "UNIQUE " : "") + "ON " + rest)
            case "trigger" where name.hasPrefix("Z_RT_"):
                schema.triggers.insert(sql)
            default:
                break
            }
        }
        return schema
    }

    /// Core Data's Photos schema, executed into an empty database: tables first (the file lists
    /// statements in sqlite_master's order, where a trigger may come before its table).
    static func coreDataSchema(in directory: TemporaryDirectory) throws -> Database {
        let sql = try String(contentsOf: Fixtures.url("\(Self.folder)/Photos.sqlite.schema.sql"), encoding: .utf8)
        let statements = sql.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && !$0.hasPrefix("CREATE TABLE \"Z_RT_") }  // the R-tree's own tables
        let isTable = { (statement: String) in statement.hasPrefix("CREATE TABLE") || statement.hasPrefix("CREATE VIRTUAL TABLE") }
        #expect(statements.count == 462)
        let reference = try Database(url: directory.appending("coredata.sqlite"), mode: .create)
        for statement in statements.filter(isTable) + statements.filter({ !isTable($0) }) { try reference.execute(statement) }
        return reference
    }

    @Test func createGivesCoreDataSchema() throws {
        let model = try ObjectModel(contentsOf: Fixtures.url("\(Self.folder)/Photos.xcdatamodel"))
        #expect(model.entities.count == 53)
        let names = Set(model.entities.map(\.name))
        let directory = try TemporaryDirectory("moult-photos")
        defer { directory.remove() }

        let reference = try Self.coreDataSchema(in: directory)
        let coreData = try Self.schema(reference, entityNames: names)

        let created = try SQLiteStore.create(at: directory.appending("moult.sqlite"), model: model)
        let moult = try Self.schema(created.database, entityNames: names)

        #expect(coreData.tables.count == 59)  // 42 entity tables, 14 join tables, Core Data's own 3
        for table in Set(coreData.tables.keys).union(moult.tables.keys).sorted() {
            #expect(moult.tables[table] == coreData.tables[table], "table \(table)")
        }
        // The shared model was rebuilt without user info: GenericAsset's `_NSEntityOmitSubentityColumnIndex`,
        // which its store's cache holds (see the next test), is missing from it, and so its Z_ENT index is made.
        #expect(moult.indexes.subtracting(coreData.indexes).sorted() == ["ON ZGENERICASSET (Z_ENT)"], "indexes Core Data does not make")
        #expect(coreData.indexes.subtracting(moult.indexes).sorted() == [], "indexes Core Data makes")
        // The ones issue 11 names: join-table indexes on both columns, the second first; Z_ENT indexes.
        #expect(moult.indexes.contains("ON Z_1KEYWORDS (Z_37KEYWORDS, Z_1ASSETATTRIBUTES)"))
        #expect(moult.indexes.contains("ON Z_45MERGECANDIDATES (REFLEXIVE, Z_45MERGECANDIDATES)"))
        #expect(moult.indexes.contains("ON ZGENERICALBUM (Z_ENT)"))
        #expect(moult.tables["Z_34SUGGESTIONSBEINGREPRESENTATIVEASSETS"]?.contains("Z_34REPRESENTATIVEASSETS1 INTEGER PK1") == true)

        // Photos' own triggers (ZT_…) call NSCoreDataTriggerUpdateAffectedObjectValue, which Moult's
        // connections provide: rows go into Core Data's Photos schema, and the triggers run.
        try reference.execute("INSERT INTO ZPHOTOSHIGHLIGHT (Z_PK, Z_ENT, Z_OPT) VALUES (1, 47, 1)")
        try reference.execute(
            "INSERT INTO ZGENERICASSET (Z_PK, Z_ENT, Z_OPT, ZHIDDEN, ZTRASHEDSTATE, ZVISIBILITYSTATE, ZHIGHLIGHTBEINGASSETS, ZLATITUDE, ZLONGITUDE) VALUES (1, 35, 1, 0, 0, 0, 1, 48.5, 2.25)")
        #expect(try reference.scalar("SELECT ZASSETSCOUNT FROM ZPHOTOSHIGHLIGHT WHERE Z_PK = 1") == .int(1))
        #expect(try reference.scalar("SELECT COUNT(*) FROM Z_RT_GenericAsset_boundedByRect") == .int(1))
    }

    /// Issue 22's must-show: the model extracted from Photos.sqlite's own `Z_MODELCACHE`, written as Xcode
    /// XML and read back, has the store's hashes, and the store Moult creates from it has Core Data's
    /// schema: every table and column, every index by name (the 138 fetch indexes Core Data made of the
    /// cache's 151, expression elements on `Z_ENT` and the partial index included), and the location
    /// attribute's R-tree with its three triggers, text for text. The `ZGENERICASSET_Z_ENT_INDEX` the
    /// shared model gets is explained by the cache: GenericAsset's user info holds
    /// `_NSEntityOmitSubentityColumnIndex = YES`.
    ///
    /// One difference remains, named: Photos has 79 more indexes, `Z_<Entity>_<property>` on one column,
    /// each beside the fetch index `by<Property>Index` on the same column. They are the indexed
    /// properties (`NSIsIndexed`) that each root entity declares, for every entity but GenericAsset,
    /// whose 23 indexed properties have none. The cache marks all 102 alike and holds no index by these
    /// names, so it does not explain them (an index Core Data adds for an indexed property at run time,
    /// or one left from an older version of the store, and dropped by Photos on GenericAsset?): Moult
    /// makes none of them.
    @Test func theExtractedModelGivesCoreDataSchemaWhole() throws {
        let store = try Database(url: Fixtures.url("\(Self.folder)/Photos.sqlite"), mode: .readOnly)
        defer { store.close() }
        let extraction = try #require(try ModelCache.extraction(in: store))
        let metadata = try StoreMetadata(reading: store)
        #expect(extraction.model.entityVersionHashes() == metadata.entityHashes)
        #expect(extraction.model.entity(named: "GenericAsset")?.userInfo["_NSEntityOmitSubentityColumnIndex"] == "YES")
        #expect(extraction.model.attribute(named: "boundedByRect", of: "GenericAsset")?.userInfo["_NSLocationAttributeDerivedComponents"] == "latitude,longitude")
        let model = try ObjectModel(xcodeContents: Data(extraction.model.xcodeContents().utf8))
        #expect(model == extraction.model)
        #expect(model.entityVersionHashes() == metadata.entityHashes)
        #expect(model.entities.reduce(0) { $0 + $1.fetchIndexes.count } == 151)

        let directory = try TemporaryDirectory("moult-photos")
        defer { directory.remove() }
        let coreData = try Self.schema(try Self.coreDataSchema(in: directory), entityNames: [], whole: true)
        let created = try SQLiteStore.create(at: directory.appending("moult.sqlite"), model: model)
        defer { created.database.close() }
        let moult = try Self.schema(created.database, entityNames: [], whole: true)
        #expect(coreData.tables.count == 63)  // 42 entity tables, 14 join tables, Core Data's own 3, the R-tree and its 3 shadow tables
        for table in Set(coreData.tables.keys).union(moult.tables.keys).sorted() {
            #expect(moult.tables[table] == coreData.tables[table], "table \(table)")
        }
        #expect(moult.indexes.subtracting(coreData.indexes).sorted() == [], "indexes Core Data does not make")
        let unexplained = coreData.indexes.subtracting(moult.indexes)
        #expect(unexplained.count == 79)
        for index in unexplained {
            // "Z_<Entity>_<property> ON <TABLE> (<COLUMN> COLLATE BINARY ASC)", and Moult has by<Property>Index there.
            let name = index.prefix { $0 != " " }, parts = name.split(separator: "_", maxSplits: 2)
            guard parts.count == 3, let first = parts[2].first, first.isLowercase else {
                Issue.record("not an indexed property's index: \(index)")
                continue
            }
            let twin = "Z_\(parts[1])_by\(first.uppercased())\(parts[2].dropFirst())Index" + index.dropFirst(name.count)
            #expect(moult.indexes.contains(twin), "\(index) has no fetch index \(twin)")
        }
        #expect(!unexplained.contains { $0.hasPrefix("Z_GenericAsset_") })
        #expect(coreData.indexes.filter { $0.hasPrefix("Z_") && !$0.contains("_INDEX ") && !$0.contains("_UNIQUE_") }.count == 138 + 79)
        #expect(moult.triggers == coreData.triggers)
        #expect(moult.triggers.count == 3)
    }
}
