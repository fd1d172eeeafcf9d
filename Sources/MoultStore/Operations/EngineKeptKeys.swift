import MoultModel

/// The queries by which the migration engine keeps source objects' primary keys (`KeptKeys` in the
/// engine): whether a key is already taken in a destination table, and the largest key of a source
/// table, above which fresh keys are allocated.
///
/// ```swift
/// let taken = try EngineKeptKeys.isTaken(12, inTable: "ZPERSON", of: destination)
/// let largest = try EngineKeptKeys.largestKey(ofTable: "ZPERSON", in: source)   // 0 for an empty table
/// ```
package enum EngineKeptKeys {
    /// Whether a row of `table` (unquoted) has the primary key `key`.
    ///
    /// - Throws: ``StoreError`` when the query fails.
    package static func isTaken(_ key: Int64, inTable table: String, of database: Database) throws(StoreError) -> Bool {
        let statement = try database.statement("SELECT 1 FROM main.\(SQLName.quoted(table)) WHERE Z_PK = ?")
        try statement.bind([.int(key)])
        defer { statement.reset() }
        return try statement.step()
    }

    /// The largest primary key of `table` (unquoted); 0 when it holds no row.
    ///
    /// - Throws: ``StoreError`` when the query fails.
    package static func largestKey(ofTable table: String, in database: Database) throws(StoreError) -> Int64 {
        let statement = try database.statement("SELECT COALESCE(MAX(Z_PK), 0) FROM \(SQLName.quoted(table))")
        try statement.bind([])
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : 0
    }
}
