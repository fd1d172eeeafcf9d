/// What the streaming driver writes into a new destination store beside the engine's own rows.
///
/// ```swift
/// try created.database.write {
///     try created.database.createTables([Checkpoint.createSQL, PolicyState.createSQL])
/// }
/// ```
extension Database {
    /// Creates tables (or anything else) by their definitions, in one script, in the order given.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func createTables(_ definitions: [String]) throws(StoreError) {
        try executeScript(definitions.joined(separator: ";"))
    }
}
