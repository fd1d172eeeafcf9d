import MoultCSQLite

/// A chunk's rows as a `SELECT` on one connection made them, to be inserted by another: the values
/// with their SQLite types, text and blobs as their bytes (`MoultCSQLite/chunk_rows.h`).
///
/// The engine's second thread fills them from a bulk copy's `SELECT` (``Statement/fill(_:)``); the
/// destination's connection reads them back through a `moult_chunk_rows` table in its temp schema
/// (``Database/withChunkRows(_:_:)``), so an `INSERT … SELECT` from it writes the records the
/// `SELECT` itself would have written, in the same order.
///
/// ```swift
/// let rows = try ChunkRows(columns: select.columnCount)
/// try select.fill(rows)                                        // on the second thread's connection
/// try destination.withChunkRows(rows) { table in try destination.execute("INSERT INTO main.T SELECT * FROM temp.\(table)") }
/// ```
package final class ChunkRows: @unchecked Sendable {
    // Unchecked: filled on one thread, then handed over whole and only read.
    let rows: UnsafeMutablePointer<MoultChunkRows>

    /// Empty rows of `columns` values each.
    ///
    /// - Throws: ``StoreError/Code/ioFailure`` when memory cannot be had.
    package init(columns: Int) throws(StoreError) {
        guard columns > 0, let rows = moult_chunk_rows_new(Int32(clamping: columns)) else {
            throw StoreError(.ioFailure, "no memory for a chunk's rows of \(columns) columns")
        }
        self.rows = rows
    }

    deinit { moult_chunk_rows_free(rows) }

    /// The number of rows.
    package var count: Int { Int(rows.pointee.count) }

    /// The number of values of each row.
    package var columns: Int { Int(rows.pointee.columns) }

    /// The bytes of text and blobs held.
    package var byteCount: Int { Int(rows.pointee.byteCount) }
}

extension Statement {
    /// Steps the statement (bound already) to its end, appending every row's first `rows.columns`
    /// values to `rows`, then resets it; stops, and returns false, before the rows would hold more than
    /// `limit` bytes (16 per value, and the bytes of texts and blobs).
    ///
    /// - Throws: ``StoreError`` for the SQLite failure that stopped it, with the SQL; the rows read
    ///   before it stay in `rows`.
    @discardableResult
    package func fill(_ rows: ChunkRows, limit: Int = .max) throws(StoreError) -> Bool {
        let code = moult_chunk_rows_fill(handle, rows.rows, Int64(limit))
        if code == MOULT_CHUNK_ROWS_OVER_LIMIT {
            reset()
            return false
        }
        guard code == SQLite.done else {
            let error = SQLite.error(code, database.handle, sql: sql, path: database.path)
            reset()
            throw error
        }
        reset()
        return true
    }
}

extension Database {
    /// Runs `body` with the name of a table of this connection's temp schema that reads `rows` (made
    /// and registered on first use, one per number of columns; its columns are `c0`, `c1`, …).
    ///
    /// Nothing is written to the database's file: the table is virtual, in the temp schema.
    ///
    /// - Throws: ``StoreError`` when the table cannot be made, and what `body` throws.
    package func withChunkRows<T>(_ rows: ChunkRows, _ body: (String) throws -> T) throws -> T {
        let slot = try chunkRowsSlotRegistered()
        let table = "moult_chunk_rows_\(rows.columns)"
        if !chunkRowsTables.contains(rows.columns) {
            try execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.\(table) USING moult_chunk_rows(\(rows.columns))")
            chunkRowsTables.insert(rows.columns)
        }
        slot.pointee = rows.rows
        defer { slot.pointee = nil }
        return try withExtendedLifetime(rows) { try body(table) }
    }

    private func chunkRowsSlotRegistered() throws(StoreError) -> UnsafeMutablePointer<UnsafeMutablePointer<MoultChunkRows>?> {
        if let slot = chunkRowsSlot { return slot.assumingMemoryBound(to: UnsafeMutablePointer<MoultChunkRows>?.self) }
        let slot = UnsafeMutablePointer<UnsafeMutablePointer<MoultChunkRows>?>.allocate(capacity: 1)
        slot.initialize(to: nil)
        do {
            try SQLite.check(moult_chunk_rows_register(handle, slot), handle, path: path)
        } catch {
            slot.deallocate()
            throw error
        }
        chunkRowsSlot = UnsafeMutableRawPointer(slot)
        return slot
    }
}
