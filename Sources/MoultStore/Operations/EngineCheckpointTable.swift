package import MoultModel

/// The table in which the migration engine keeps its checkpoint, in the destination being built: one
/// row holding the source's fingerprint, the plan, and the next pass and chunk to run.
///
/// A resumed run reads the table a previous build wrote: its name and columns never change.
///
/// ```swift
/// try database.executeScript(EngineCheckpointTable.createSQL)
/// try EngineCheckpointTable.insertStart(fingerprint: "…", plan: bytes, stage: "passes", in: database)
/// try EngineCheckpointTable.update(pass: 1, chunk: 0, done: 5_000, stage: "passes", in: database)
/// let position = try EngineCheckpointTable.position(in: database)   // pass 1, chunk 0, …
/// ```
package enum EngineCheckpointTable {
    /// The table's name.
    package static let name = "Z_MOULT_CHECKPOINT"

    private static let table = SQLName.quoted(name)

    /// Creates the table (it must not exist yet).
    package static let createSQL = """
        CREATE TABLE \(table) (Z_ID INTEGER PRIMARY KEY CHECK (Z_ID = 1), Z_FINGERPRINT VARCHAR NOT NULL, \
        Z_PLAN BLOB NOT NULL, Z_PASS INTEGER NOT NULL, Z_CHUNK INTEGER NOT NULL, Z_DONE INTEGER NOT NULL, \
        Z_STAGE VARCHAR NOT NULL)
        """

    /// Where a run is, as the row holds it.
    package struct Position: Hashable, Sendable {
        package var pass: Int
        package var chunk: Int
        package var done: Int
        /// The stage's name; nil when the column holds no text.
        package var stage: String?

        package init(pass: Int, chunk: Int, done: Int, stage: String?) {
            self.pass = pass
            self.chunk = chunk
            self.done = done
            self.stage = stage
        }
    }

    /// Writes the row of a run at its start: the first pass, the first chunk, nothing done.
    ///
    /// - Throws: ``StoreError``, also when the row is there already.
    package static func insertStart(fingerprint: String, plan: [UInt8], stage: String, in database: Database) throws(StoreError) {
        try database.execute(
            "INSERT INTO \(table) (Z_ID, Z_FINGERPRINT, Z_PLAN, Z_PASS, Z_CHUNK, Z_DONE, Z_STAGE) VALUES (1, ?, ?, 0, 0, 0, ?)",
            [.string(fingerprint), .data(plan), .string(stage)])
    }

    /// Moves the row to a new position (in the transaction of the chunk that got there).
    package static func update(pass: Int, chunk: Int, done: Int, stage: String, in database: Database) throws(StoreError) {
        try database.execute(
            "UPDATE \(table) SET Z_PASS = ?, Z_CHUNK = ?, Z_DONE = ?, Z_STAGE = ? WHERE Z_ID = 1",
            [.int(Int64(pass)), .int(Int64(chunk)), .int(Int64(done)), .string(stage)])
    }

    /// The source's fingerprint as recorded, or nil when there is no row.
    package static func fingerprint(in database: Database) throws(StoreError) -> Value? {
        try database.scalar("SELECT Z_FINGERPRINT FROM \(table) WHERE Z_ID = 1")
    }

    /// The plan as recorded, or nil when there is no row.
    package static func plan(in database: Database) throws(StoreError) -> Value? {
        try database.scalar("SELECT Z_PLAN FROM \(table) WHERE Z_ID = 1")
    }

    /// The recorded position, or nil when there is no row.
    package static func position(in database: Database) throws(StoreError) -> Position? {
        let statement = try database.statement("SELECT Z_PASS, Z_CHUNK, Z_DONE, Z_STAGE FROM \(table) WHERE Z_ID = 1")
        try statement.bind([])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return Position(
            pass: Int(statement.int64(at: 0)), chunk: Int(statement.int64(at: 1)), done: Int(statement.int64(at: 2)),
            stage: statement.string(at: 3))
    }
}
