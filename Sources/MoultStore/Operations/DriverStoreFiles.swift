import Foundation
import MoultModel

/// The operations on a store's files the drivers (and the command line) run through SQLite: its
/// journal, its write-ahead log, how durable a commit is.
///
/// ```swift
/// let created = try SQLiteStore.create(at: temporary, model: model)
/// try created.database.checkpointWAL()          // one file: everything in the main file
/// try created.database.setSynchronous(.full)    // each commit on disk when it returns
/// ```
extension Database {
    /// How SQLite syncs a commit (`PRAGMA synchronous`).
    package enum Synchronous: Sendable {
        /// Each commit is on disk when it returns, even against a power loss.
        case full
        /// In WAL mode, a commit is in the log when it returns and the log is synced before each
        /// checkpoint: a crash of the process loses nothing, a power loss may lose the last commits
        /// but never leaves the database damaged.
        case normal
        /// No sync: the operating system writes when it likes (a crash of the process loses nothing).
        case off
    }

    /// Writes a consistent copy of the whole database (its `-wal` included) to a new file at `path`
    /// (`VACUUM INTO`): a store already at its target, copied to `--output`.
    ///
    /// - Throws: ``StoreError`` from SQLite (the file exists, the disk is full).
    package func copy(into path: String) throws(StoreError) {
        try execute("VACUUM INTO ?", [.string(path)])
    }

    /// Sets how SQLite syncs a commit on this connection.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func setSynchronous(_ mode: Synchronous) throws(StoreError) {
        switch mode {
        case .full: try executeScript("PRAGMA synchronous = FULL")
        case .normal: try executeScript("PRAGMA synchronous = NORMAL")
        case .off: try executeScript("PRAGMA synchronous = OFF")
        }
    }

    /// Sets how large this connection lets the write-ahead log grow, in bytes, before a commit moves it
    /// into the main file (`PRAGMA wal_autocheckpoint`, in pages of the database; SQLite's default is
    /// 1,000 pages). Each such checkpoint syncs the log and the main file.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func setWALCheckpointBytes(_ bytes: Int64) throws(StoreError) {
        var pageSize: Int64 = 4096
        if case .int(let size)? = try scalar("PRAGMA page_size") { pageSize = size }
        try executeScript("PRAGMA wal_autocheckpoint = \(max(1, bytes / max(512, pageSize)))")
    }

    /// Moves everything in the write-ahead log into the main file and truncates the log, so that the
    /// main file alone is the whole store (before it is renamed or copied).
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func checkpointWAL() throws(StoreError) {
        try executeScript("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Checkpoints the write-ahead log, when the store is in WAL mode, into the main file and truncates
    /// it; nothing in another journal mode.
    ///
    /// - Returns: false when another connection kept the checkpoint from finishing (a reader of the
    ///   log), true otherwise.
    /// - Throws: ``StoreError`` from SQLite.
    package func checkpointWALIfInWALMode() throws -> Bool {
        guard try isInWALMode() else { return true }
        let busy = try query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int64(at: 0) }.first ?? 0
        return busy == 0
    }

    /// Whether the database is in WAL mode, where a second connection reads while this one writes.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func isInWALMode() throws -> Bool {
        guard case .string(let mode)? = try scalar("PRAGMA journal_mode") else { return false }
        return mode.lowercased() == "wal"
    }

    /// A second connection to this database's file, for another thread, that only reads: opened to
    /// write, so that it shares the WAL index as the writer does, and refusing every write
    /// (`query_only`). In WAL mode it reads what this connection has committed while this one writes.
    ///
    /// - Parameter pageCacheKiB: its page cache, this connection's when nil; a connection that only
    ///   scans tables once gains nothing from a large one.
    /// - Throws: ``StoreError`` when the connection cannot be made.
    package func queryOnlyReader(pageCacheKiB: Int? = nil) throws(StoreError) -> Database {
        var settings = configuration
        if let pageCacheKiB { settings.pageCacheKiB = pageCacheKiB }
        let reader = try Database(url: URL(filePath: path), mode: .readWrite, configuration: settings)
        try reader.executeScript("PRAGMA query_only = 1")
        return reader
    }

    /// A second read-only connection to this database's file with a page cache of `pageCacheKiB`, for
    /// another thread that scans tables once (see ``queryOnlyReader(pageCacheKiB:)``).
    ///
    /// - Throws: ``StoreError`` when the connection cannot be made.
    package func scanningReader(pageCacheKiB: Int) throws(StoreError) -> Database {
        var settings = configuration
        settings.pageCacheKiB = pageCacheKiB
        return try Database(url: URL(filePath: path), mode: .readOnly, configuration: settings)
    }

    /// Leaves WAL mode for a rollback journal, so that the store is one file whatever it was in.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func useRollbackJournal() throws(StoreError) {
        try executeScript("PRAGMA journal_mode = DELETE")
    }
}
