import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The store Moult creates from Apple's Photos model (macOS 10.15, 53 entities) has the schema Core Data
/// wrote for it (`Photos.sqlite.schema.sql`, every `CREATE` of that store's `sqlite_master`).
///
/// Compared: tables with their columns and declared types, and indexes by table, terms and `WHERE`
/// (not by name). Left out, because the model rebuilt from the store's model cache does not carry them:
/// fetch indexes (`Z_<Entity>_<name>`, not unique), the R-tree table `Z_RT_…`, the `RADAR_*` indexes
/// Photos adds itself, Photos' own `ZT_…` triggers and the persistent-history tables
/// (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`).
///
/// One difference is named rather than hidden: Moult writes `ZGENERICASSET_Z_ENT_INDEX`, which Photos'
/// store lacks. GenericAsset is abstract with one sub-entity, exactly as CoreDataPlus' Writer, and Core
/// Data made `ZWRITER_Z_ENT_INDEX` for Writer (SampleModel2_V2.sqlite): no rule of the model explains
/// Photos' missing index, which Photos (which alters its own schema) is taken to drop.
@Suite struct PhotosSchemaTests {
    static let folder = "osxphotos__Photos-10.15.1"

    /// Tables (name → "COLUMN TYPE" set) and indexes ("[UNIQUE ]ON TABLE (terms)[ WHERE …]").
    struct Schema: Equatable {
        var tables: [String: Set<String>] = [:]
        var indexes: Set<String> = []
    }

    static func schema(_ database: Database, entityNames: Set<String>) throws -> Schema {
        var schema = Schema()
        let rows = try database.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL") {
            ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "", $0.string(at: 2) ?? "", $0.string(at: 3) ?? "")
        }
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        for (type, name, table, sql) in rows {
            if history.contains(table) || table.hasPrefix("Z_RT_") { continue }
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
                if !unique, parts.count == 3, name.hasPrefix("Z_"), entityNames.contains(String(parts[1])) { continue }
                guard let on = sql.range(of: " ON ") else { continue }
                let rest = sql[on.upperBound...].split(whereSeparator: \.isWhitespace).joined(separator: " ")
                schema.indexes.insert((unique ? "UNIQUE " : "") + "ON " + rest)
            default:
                break
            }
        }
        return schema
    }

    @Test func createGivesCoreDataSchema() throws {
        let model = try ObjectModel(contentsOf: Fixtures.url("\(Self.folder)/Photos.xcdatamodel"))
        #expect(model.entities.count == 53)
        let names = Set(model.entities.map(\.name))
        let directory = try TemporaryDirectory("moult-photos")
        defer { directory.remove() }

        // Core Data's schema, executed into an empty database: tables first (the file lists statements
        // in sqlite_master's order, where a trigger may come before its table).
        let sql = try String(contentsOf: Fixtures.url("\(Self.folder)/Photos.sqlite.schema.sql"), encoding: .utf8)
        let statements = sql.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && !$0.hasPrefix("CREATE TABLE \"Z_RT_") }  // the R-tree's own tables
        let isTable = { (statement: String) in statement.hasPrefix("CREATE TABLE") || statement.hasPrefix("CREATE VIRTUAL TABLE") }
        #expect(statements.count == 462)
        let reference = try Database(url: directory.appending("coredata.sqlite"), mode: .create)
        for statement in statements.filter(isTable) + statements.filter({ !isTable($0) }) { try reference.execute(statement) }
        let coreData = try Self.schema(reference, entityNames: names)

        let created = try SQLiteStore.create(at: directory.appending("moult.sqlite"), model: model)
        let moult = try Self.schema(created.database, entityNames: names)

        #expect(coreData.tables.count == 59)  // 42 entity tables, 14 join tables, Core Data's own 3
        for table in Set(coreData.tables.keys).union(moult.tables.keys).sorted() {
            #expect(moult.tables[table] == coreData.tables[table], "table \(table)")
        }
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
}
