package import MoultModel

/// The table in which the migration engine keeps policies' state, in the destination being built: a
/// value by namespace and key, committed with the chunk that wrote it.
///
/// A resumed run reads the table a previous build wrote: its name and columns never change.
///
/// ```swift
/// try database.executeScript(EnginePolicyStateTable.createSQL)
/// try EnginePolicyStateTable.set(.int(7), namespace: "companies", key: "Acme", in: database)
/// try EnginePolicyStateTable.value(namespace: "companies", key: "Acme", in: database)   // .int(7)
/// ```
package enum EnginePolicyStateTable {
    /// The table's name.
    package static let name = "Z_MOULT_STATE"

    private static let table = SQLName.quoted(name)

    /// Creates the table when it does not exist.
    package static let createSQL =
        "CREATE TABLE IF NOT EXISTS \(table) (Z_NAMESPACE VARCHAR NOT NULL, Z_KEY VARCHAR NOT NULL, Z_VALUE BLOB, PRIMARY KEY (Z_NAMESPACE, Z_KEY)) WITHOUT ROWID"

    /// The value stored under a key of a namespace, or nil.
    package static func value(namespace: String, key: String, in database: Database) throws(StoreError) -> Value? {
        let statement = try database.statement("SELECT Z_VALUE FROM \(table) WHERE Z_NAMESPACE = ? AND Z_KEY = ?")
        try statement.bind([.string(namespace), .string(key)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.value(at: 0)
    }

    /// Stores a value under a key of a namespace, replacing any there.
    package static func set(_ value: Value, namespace: String, key: String, in database: Database) throws(StoreError) {
        try database.execute(
            "INSERT OR REPLACE INTO \(table) (Z_NAMESPACE, Z_KEY, Z_VALUE) VALUES (?, ?, ?)", [.string(namespace), .string(key), value])
    }

    /// Removes the value under a key of a namespace.
    package static func remove(namespace: String, key: String, in database: Database) throws(StoreError) {
        try database.execute("DELETE FROM \(table) WHERE Z_NAMESPACE = ? AND Z_KEY = ?", [.string(namespace), .string(key)])
    }
}
