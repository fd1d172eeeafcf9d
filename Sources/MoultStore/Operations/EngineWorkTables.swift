import MoultModel

/// The migration engine's other tables in the destination being built, dropped with the checkpoint
/// when the run ends: the chunks whose associations were not written (`Z_MOULT_MADE`), and the mirrors
/// of a mapping's associations (`Z_MOULT_ASSOCIATIONS_<mapping>`) that later mappings' to-ones are
/// written from at insert.
///
/// A resumed run reads the tables a previous build wrote: their names and columns never change.
///
/// ```swift
/// try EngineWorkTables.createMadeChunks(in: database)
/// try EngineWorkTables.recordMadeChunk(.init(pass: 0, first: 1, count: 5_000, lower: 0, upper: 5_012), in: database)
/// try EngineWorkTables.createMirror(ofMapping: 2, in: database)
/// try EngineWorkTables.mirror(source: 17, destination: 4, ofMapping: 2, in: database)
/// try EngineWorkTables.mirroredDestination(ofSource: 17, mapping: 2, in: database)   // 4
/// ```
package enum EngineWorkTables {
    // MARK: - Chunks whose associations were not written

    /// The table of bulk-copied chunks whose associations were not written.
    package static let madeChunks = "Z_MOULT_MADE"

    private static let madeTable = "main.\(SQLName.quoted(madeChunks))"

    /// A chunk recorded without its associations: its pass, the first destination key and the count
    /// of the objects it made, and the source chunk's bounds.
    package struct MadeChunk: Hashable, Sendable {
        package var pass: Int
        package var first: Int64
        package var count: Int64
        package var lower: Int64
        package var upper: Int64

        package init(pass: Int, first: Int64, count: Int64, lower: Int64, upper: Int64) {
            self.pass = pass
            self.first = first
            self.count = count
            self.lower = lower
            self.upper = upper
        }

        init(_ statement: Statement) {
            self.init(
                pass: Int(statement.int64(at: 0)), first: statement.int64(at: 1), count: statement.int64(at: 2),
                lower: statement.int64(at: 3), upper: statement.int64(at: 4))
        }
    }

    /// Creates the table of chunks whose associations were not written, when it does not exist.
    package static func createMadeChunks(in database: Database) throws(StoreError) {
        try database.executeScript(
            """
            CREATE TABLE IF NOT EXISTS \(madeTable) (pass INTEGER NOT NULL, first INTEGER NOT NULL, count INTEGER NOT NULL, \
            lower INTEGER NOT NULL, upper INTEGER NOT NULL, PRIMARY KEY (pass, first)) WITHOUT ROWID
            """)
    }

    /// Records a chunk whose associations were not written, in the chunk's transaction.
    package static func recordMadeChunk(_ chunk: MadeChunk, in database: Database) throws(StoreError) {
        try database.execute(
            "INSERT INTO \(madeTable) (pass, first, count, lower, upper) VALUES (?, ?, ?, ?, ?)",
            [.int(Int64(chunk.pass)), .int(chunk.first), .int(chunk.count), .int(chunk.lower), .int(chunk.upper)])
    }

    /// Every recorded chunk, in order of pass and first key; none when the table does not exist.
    package static func madeChunks(in database: Database) throws -> [MadeChunk] {
        guard try database.tableExists(madeChunks) else { return [] }
        return try database.query("SELECT pass, first, count, lower, upper FROM \(madeTable) ORDER BY pass, first", row: MadeChunk.init)
    }

    /// The recorded chunks that made the destination key `destination`, in pass order; none when the
    /// table does not exist.
    package static func madeChunks(holding destination: Int64, in database: Database) throws -> [MadeChunk] {
        guard try database.tableExists(madeChunks) else { return [] }
        return try database.query(
            "SELECT pass, first, count, lower, upper FROM \(madeTable) WHERE first <= ? AND first + count > ? ORDER BY pass",
            [.int(destination), .int(destination)], row: MadeChunk.init)
    }

    // MARK: - Mirrors of associations

    /// The table mirroring a mapping's associations: `(source key → destination key)`.
    package static func mirror(ofMapping mapping: Int) -> String { "Z_MOULT_ASSOCIATIONS_\(mapping)" }

    /// A `LIKE` pattern (escape `\`) that matches every mirror table's name.
    static let mirrorPattern = "Z\\_MOULT\\_ASSOCIATIONS\\_%"

    /// A mirror table as SQL names it: in the destination's own schema (not the attached source's).
    package static func mirrorTable(ofMapping mapping: Int) -> String { "main.\(SQLName.quoted(mirror(ofMapping: mapping)))" }

    /// Creates the mirror of a mapping's associations, when it does not exist.
    package static func createMirror(ofMapping mapping: Int, in database: Database) throws(StoreError) {
        try database.executeScript(
            "CREATE TABLE IF NOT EXISTS \(mirrorTable(ofMapping: mapping)) (source INTEGER PRIMARY KEY, destination INTEGER NOT NULL)")
    }

    /// Records an association in the mirror of its mapping.
    package static func mirror(source: Int64, destination: Int64, ofMapping mapping: Int, in database: Database) throws(StoreError) {
        try database.execute(
            "INSERT INTO \(mirrorTable(ofMapping: mapping)) (source, destination) VALUES (?, ?)", [.int(source), .int(destination)])
    }

    /// The destination key a mapping's mirror holds for a source key, or nil.
    package static func mirroredDestination(ofSource source: Int64, mapping: Int, in database: Database) throws(StoreError) -> Int64? {
        let lookup = try database.statement("SELECT destination FROM \(mirrorTable(ofMapping: mapping)) WHERE source = ?")
        try lookup.bind([.int(source)])
        defer { lookup.reset() }
        return try lookup.step() ? lookup.int64(at: 0) : nil
    }

    // MARK: - The end of a run

    /// Drops the engine's tables: the policies' state, the checkpoint, the chunks recorded without
    /// associations, and every mirror and key table (see ``EngineKeyMap``), whichever run made it.
    package static func dropAll(in database: Database) throws {
        try database.executeScript(
            "DROP TABLE IF EXISTS \(SQLName.quoted(EnginePolicyStateTable.name)); \(EngineCheckpointTable.dropSQL); DROP TABLE IF EXISTS \(SQLName.quoted(madeChunks))")
        let mirrors = try database.query(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND (name LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\')",
            [.string(mirrorPattern), .string(EngineKeyMap.tablePattern)]
        ) { $0.string(at: 0) ?? "" }
        for mirror in mirrors where !mirror.isEmpty { try database.executeScript("DROP TABLE IF EXISTS main.\(SQLName.quoted(mirror))") }
    }

    /// Gives the pages the engine's tables held back to the file system: Core Data's stores (and
    /// Moult's) use incremental auto-vacuum, so the free pages are moved to the end of the file and cut
    /// off, in the caller's transaction. The destination is then no larger than the same rows written
    /// without work tables.
    package static func reclaimFreePages(in database: Database) throws(StoreError) {
        try database.executeScript("PRAGMA main.incremental_vacuum")
    }

    /// Folds the write-ahead log into the database file and leaves rollback journaling, so that the
    /// store is one file, as Core Data leaves a store it has migrated.
    package static func foldIntoOneFile(_ database: Database) throws(StoreError) {
        try database.executeScript("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
    }
}
