package import MoultModel

/// The table in which the migration engine keeps its checkpoint, in the destination being built: one
/// row holding the source's fingerprint and the next pass and chunk to run, and beside it a table of
/// one row holding the plan.
///
/// The plan has a table of its own because every chunk's transaction moves the position: an `UPDATE`
/// of a row holding the plan read and compared the whole plan each time (1.1 MB at 9,000 chunks a
/// pass), and the buffer SQLite made for it each chunk was the heap's high-water mark of a long run.
///
/// A resumed run reads the tables a previous build wrote: their names and columns never change. A
/// checkpoint written before the plan's table existed holds the plan in its own `Z_PLAN`, where
/// ``plan(in:)`` still finds it; a newer one leaves that column empty.
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

    /// The name of the plan's table.
    package static let planName = "Z_MOULT_CHECKPOINT_PLAN"

    private static let table = SQLName.quoted(name)
    private static let planTable = SQLName.quoted(planName)

    /// Creates the two tables (they must not exist yet): a script of two statements.
    package static let createSQL = """
        CREATE TABLE \(table) (Z_ID INTEGER PRIMARY KEY CHECK (Z_ID = 1), Z_FINGERPRINT VARCHAR NOT NULL, \
        Z_PLAN BLOB NOT NULL, Z_PASS INTEGER NOT NULL, Z_CHUNK INTEGER NOT NULL, Z_DONE INTEGER NOT NULL, \
        Z_STAGE VARCHAR NOT NULL); \
        CREATE TABLE \(planTable) (Z_ID INTEGER PRIMARY KEY CHECK (Z_ID = 1), Z_PLAN BLOB NOT NULL)
        """

    /// Drops both tables, where they are.
    package static let dropSQL = "DROP TABLE IF EXISTS \(table); DROP TABLE IF EXISTS \(planTable)"

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

    /// Writes the rows of a run at its start: the plan in its table, and the first pass, the first
    /// chunk, nothing done.
    ///
    /// - Throws: ``StoreError``, also when a row is there already.
    package static func insertStart(fingerprint: String, plan: [UInt8], stage: String, in database: Database) throws(StoreError) {
        try database.execute("INSERT INTO \(planTable) (Z_ID, Z_PLAN) VALUES (1, ?)", [.data(plan)])
        try database.execute(
            "INSERT INTO \(table) (Z_ID, Z_FINGERPRINT, Z_PLAN, Z_PASS, Z_CHUNK, Z_DONE, Z_STAGE) VALUES (1, ?, X'', 0, 0, 0, ?)",
            [.string(fingerprint), .string(stage)])
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

    /// The plan as recorded, or nil when there is no row: from the plan's table, or from the
    /// checkpoint's own row when an older build wrote it.
    package static func plan(in database: Database) throws(StoreError) -> Value? {
        if try database.tableExists(planName) {
            return try database.scalar("SELECT Z_PLAN FROM \(planTable) WHERE Z_ID = 1")
        }
        return try database.scalar("SELECT Z_PLAN FROM \(table) WHERE Z_ID = 1")
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
