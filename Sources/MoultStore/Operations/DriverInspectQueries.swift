import MoultModel

/// What `moult inspect` reads of a store without its model: the entities `Z_PRIMARYKEY` lists, the
/// tables, and rows per entity number.
///
/// ```swift
/// for (number, name) in try database.primaryKeyEntities() {
///     let count = try database.rowCount(in: "ZPERSON", entityNumber: number)
/// }
/// ```
extension Database {
    /// Each entity `Z_PRIMARYKEY` lists: its number and name, in the order SQLite gives them.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func primaryKeyEntities() throws -> [(number: Int64, name: String)] {
        try query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") { ($0.int64(at: 0), $0.string(at: 1) ?? "") }
    }

    /// The names of the database's tables (SQLite's own included).
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func tableNames() throws -> [String] {
        try query("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.string(at: 0) ?? "" }
    }

    /// The rows of a table whose `Z_ENT` is `entityNumber`; nil when the table has no `Z_ENT` column
    /// (not an entity's table) or SQLite gives no integer.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func rowCount(in table: String, entityNumber: Int64) throws -> Int64? {
        guard try columns(of: table).contains("Z_ENT"),
            case .int(let count)? = try scalar("SELECT COUNT(*) FROM \(SQLName.quoted(table)) WHERE Z_ENT = ?", [.int(entityNumber)]) else { return nil }
        return count
    }
}
