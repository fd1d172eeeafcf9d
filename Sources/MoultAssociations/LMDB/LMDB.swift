// The only file that calls LMDB's C API. No C pointer leaves it: values are handed to closures as
// `UnsafeRawBufferPointer`s valid only during the call, or copied out as `[UInt8]`.

internal import MoultCLMDB
import Foundation

// MARK: - Result codes

/// Checks an LMDB (or errno) return code, turning anything but `MDB_SUCCESS` into an ``AssociationError``.
///
/// Every call into LMDB goes through this helper, so every failure has a code, a message, the
/// operation and the environment's directory.
@inline(__always)
func lmdbCheck(_ rc: Int32, _ operation: StaticString, directory: String) throws(AssociationError) {
    if rc != MDB_SUCCESS { throw lmdbError(rc, operation, directory: directory) }
}

func lmdbError(_ rc: Int32, _ operation: StaticString, directory: String) -> AssociationError {
    let message = String(cString: mdb_strerror(rc))
    let code: AssociationError.Code
    switch rc {
    case MDB_MAP_FULL: code = .mapFull
    case ENOSPC, EDQUOT: code = .diskFull
    case MDB_CORRUPTED, MDB_PANIC, MDB_VERSION_MISMATCH, MDB_INVALID, MDB_PAGE_NOTFOUND: code = .corrupted
    case MDB_BAD_VALSIZE: code = .keyTooLong
    case EINVAL, MDB_BAD_DBI, MDB_BAD_TXN, MDB_BAD_RSLOT, MDB_DBS_FULL, MDB_READERS_FULL, MDB_TXN_FULL,
        MDB_CURSOR_FULL, MDB_MAP_RESIZED:
        code = .misuse
    default: code = .io
    }
    return AssociationError(code, message, directory: directory, operation: "\(operation)", returnCode: rc)
}

// MARK: - Environment

/// An LMDB environment in one directory (`data.mdb`, `lock.mdb`), used from one thread at a time.
///
/// The map grows on demand: ``write(_:)`` retries its body after doubling the map when LMDB reports
/// `MDB_MAP_FULL`; callers driving a transaction by hand call ``grow()`` and start over.
final class Environment {
    /// A named database's handle in this environment.
    struct Database: Hashable {
        fileprivate let dbi: MDB_dbi
        let name: String
    }

    let directory: String
    /// The most the map may grow to, in bytes.
    let maximumMapSize: Int
    /// How many times the map grew since opening.
    private(set) var growthCount = 0

    private var handle: OpaquePointer?
    /// A read-only transaction kept reset between reads and renewed for the next one.
    private var idleReader: OpaquePointer?
    /// Whether a transaction (of this environment, from this object) is open.
    private var openTransactions = 0

    /// Opens (creating if needed) the environment in `directory`.
    ///
    /// - Parameters:
    ///   - directory: an existing directory; LMDB creates its two files inside.
    ///   - openingAt: the path LMDB is given for `directory` when it differs (`/proc/self/fd/N`, a
    ///     descriptor of the directory held for the run); errors always name `directory`.
    ///   - maxDatabases: how many named databases may be opened.
    ///   - mapSize: the initial map size in bytes (rounded up by LMDB to its page size; at least the
    ///     size of the existing data).
    ///   - maximumMapSize: the largest size the map may grow to.
    ///   - syncOnCommit: whether each commit flushes to disk (`false`: `MDB_NOSYNC`, flush with ``sync(force:)``).
    init(directory: String, openingAt: String? = nil, maxDatabases: Int, mapSize: Int, maximumMapSize: Int, syncOnCommit: Bool) throws {
        self.directory = directory
        self.maximumMapSize = max(mapSize, maximumMapSize)
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "mdb_env_create", directory: directory)
        handle = env
        do {
            try lmdbCheck(mdb_env_set_maxdbs(env, MDB_dbi(maxDatabases)), "mdb_env_set_maxdbs", directory: directory)
            try lmdbCheck(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize", directory: directory)
            var flags = UInt32(MDB_NOTLS)
            if !syncOnCommit { flags |= UInt32(MDB_NOSYNC) }
            try lmdbCheck(mdb_env_open(env, openingAt ?? directory, flags, 0o644), "mdb_env_open", directory: directory)
        } catch {
            mdb_env_close(env)
            handle = nil
            throw error
        }
    }

    deinit { close() }

    /// Closes the environment. Open transactions must have ended.
    func close() {
        guard let env = handle else { return }
        if let reader = idleReader { mdb_txn_abort(reader) }
        idleReader = nil
        mdb_env_close(env)
        handle = nil
    }

    var isOpen: Bool { handle != nil }

    private func open() throws(AssociationError) -> OpaquePointer {
        guard let handle else {
            throw AssociationError(.misuse, "the LMDB environment is closed", directory: directory)
        }
        return handle
    }

    /// The current map size in bytes.
    var mapSize: Int {
        guard let handle else { return 0 }
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// Whether commits flush to disk (`MDB_NOSYNC` off). Changing it is allowed between transactions.
    func setSyncOnCommit(_ sync: Bool) throws {
        let env = try open()
        try lmdbCheck(mdb_env_set_flags(env, UInt32(MDB_NOSYNC), sync ? 0 : 1), "mdb_env_set_flags", directory: directory)
    }

    /// Flushes committed data to disk; `force` flushes even when `MDB_NOSYNC` is set.
    func sync(force: Bool = true) throws {
        let env = try open()
        try lmdbCheck(mdb_env_sync(env, force ? 1 : 0), "mdb_env_sync", directory: directory)
    }

    /// Doubles the map (up to ``maximumMapSize``). No transaction may be open.
    ///
    /// - Throws: `.mapFull` when the map is already at its maximum, `.misuse` with a transaction open.
    func grow() throws {
        let env = try open()
        guard openTransactions == 0 else {
            throw AssociationError(.misuse, "cannot grow the map while a transaction is open", directory: directory)
        }
        let current = mapSize
        guard current < maximumMapSize else {
            throw AssociationError(
                .mapFull, "the association map reached its maximum size of \(maximumMapSize) bytes",
                directory: directory, operation: "mdb_env_set_mapsize")
        }
        if let reader = idleReader { mdb_txn_abort(reader) }
        idleReader = nil
        try lmdbCheck(mdb_env_set_mapsize(env, min(current * 2, maximumMapSize)), "mdb_env_set_mapsize", directory: directory)
        growthCount += 1
    }

    // MARK: Transactions

    /// Begins a write transaction driven by hand; the caller commits or aborts it.
    func beginWrite() throws -> Transaction {
        let env = try open()
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin", directory: directory)
        openTransactions += 1
        return Transaction(handle: txn!, environment: self, readOnly: false)
    }

    fileprivate func transactionEnded(_ txn: Transaction) {
        openTransactions -= 1
    }

    /// Runs `body` in a write transaction: commits when it returns, aborts when it throws.
    ///
    /// When the map fills up (in `body` or at commit), the transaction is aborted, the map grows and
    /// `body` runs again: it must only act through `txn`.
    func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        while true {
            let txn = try beginWrite()
            do {
                let result = try body(txn)
                try txn.commit()
                return result
            } catch let error as AssociationError where error.code == .mapFull && error.returnCode == MDB_MAP_FULL {
                txn.abort()
                try grow()
            } catch {
                txn.abort()
                throw error
            }
        }
    }

    /// Runs `body` in a read-only transaction (a snapshot of the last commit).
    func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        let env = try open()
        var raw: OpaquePointer?
        if let reader = idleReader {
            idleReader = nil
            try lmdbCheck(mdb_txn_renew(reader), "mdb_txn_renew", directory: directory)
            raw = reader
        } else {
            try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &raw), "mdb_txn_begin", directory: directory)
        }
        openTransactions += 1
        let txn = Transaction(handle: raw!, environment: self, readOnly: true)
        defer { txn.endRead() }
        return try body(txn)
    }

    fileprivate func keepIdleReader(_ raw: OpaquePointer) {
        if idleReader == nil, handle != nil {
            mdb_txn_reset(raw)
            idleReader = raw
        } else {
            mdb_txn_abort(raw)
        }
    }

    /// Opens (creating it) a named database, in its own committed write transaction.
    func database(named name: String) throws -> Database {
        try write { txn in
            var dbi: MDB_dbi = 0
            try lmdbCheck(mdb_dbi_open(txn.handle, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open", directory: directory)
            return Database(dbi: dbi, name: name)
        }
    }
}

@available(*, unavailable)
extension Environment: Sendable {}

// MARK: - Transaction

/// A read or write transaction. Valid only until it commits or aborts; a scoped one only inside its closure.
final class Transaction {
    fileprivate var handle: OpaquePointer?
    private unowned let environment: Environment
    let readOnly: Bool

    fileprivate init(handle: OpaquePointer, environment: Environment, readOnly: Bool) {
        self.handle = handle
        self.environment = environment
        self.readOnly = readOnly
    }

    deinit {
        if handle != nil { abort() }
    }

    private var directory: String { environment.directory }

    private func live() throws(AssociationError) -> OpaquePointer {
        guard let handle else {
            throw AssociationError(.misuse, "the transaction has already ended", directory: directory)
        }
        return handle
    }

    /// Commits. The transaction ends whether or not the commit succeeds.
    func commit() throws {
        let txn = try live()
        handle = nil
        environment.transactionEnded(self)
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit", directory: directory)
    }

    /// Aborts, discarding the writes. Does nothing when already ended.
    func abort() {
        guard let txn = handle else { return }
        handle = nil
        environment.transactionEnded(self)
        mdb_txn_abort(txn)
    }

    fileprivate func endRead() {
        guard let txn = handle else { return }
        handle = nil
        environment.transactionEnded(self)
        environment.keepIdleReader(txn)
    }

    // MARK: Data

    /// Stores `value` under `key`, replacing any value there.
    ///
    /// - Parameter append: try `MDB_APPEND` first (keys in ascending order); when the key is not past
    ///   the database's last key (a replayed chunk, an out-of-order key) it falls back to a normal put.
    func put(_ db: Environment.Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, append: Bool) throws {
        let txn = try live()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        if append {
            let rc = mdb_put(txn, db.dbi, &k, &v, UInt32(MDB_APPEND))
            if rc != MDB_KEYEXIST {
                try lmdbCheck(rc, "mdb_put", directory: directory)
                return
            }
        }
        try lmdbCheck(mdb_put(txn, db.dbi, &k, &v, 0), "mdb_put", directory: directory)
    }

    /// Calls `body` with the value stored under `key` (nil when there is none). The buffer is valid only during the call.
    func withValue<R>(_ db: Environment.Database, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let txn = try live()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(txn, db.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return try body(nil) }
        try lmdbCheck(rc, "mdb_get", directory: directory)
        return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Deletes the entry under `key`; returns whether there was one.
    @discardableResult
    func delete(_ db: Environment.Database, key: UnsafeRawBufferPointer) throws -> Bool {
        let txn = try live()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(txn, db.dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try lmdbCheck(rc, "mdb_del", directory: directory)
        return true
    }

    /// The number of entries in a database.
    func count(_ db: Environment.Database) throws -> Int {
        let txn = try live()
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(txn, db.dbi, &stat), "mdb_stat", directory: directory)
        return stat.ms_entries
    }

    /// Runs `body` with a cursor on `db`, closed when `body` returns.
    func withCursor<R>(_ db: Environment.Database, _ body: (Cursor) throws -> R) throws -> R {
        let txn = try live()
        var raw: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, db.dbi, &raw), "mdb_cursor_open", directory: directory)
        let cursor = Cursor(handle: raw!, directory: directory)
        defer { cursor.close() }
        return try body(cursor)
    }
}

@available(*, unavailable)
extension Transaction: Sendable {}

// MARK: - Cursor

/// A position in a database, for range scans in key order. Valid only inside ``Transaction/withCursor(_:_:)``.
final class Cursor {
    private var handle: OpaquePointer?
    private let directory: String
    private var key = MDB_val()
    private var value = MDB_val()

    fileprivate init(handle: OpaquePointer, directory: String) {
        self.handle = handle
        self.directory = directory
    }

    fileprivate func close() {
        if let handle { mdb_cursor_close(handle) }
        handle = nil
    }

    private func move(_ op: MDB_cursor_op, _ name: StaticString) throws -> Bool {
        guard let handle else { throw AssociationError(.misuse, "the cursor is closed", directory: directory) }
        let rc = mdb_cursor_get(handle, &key, &value, op)
        if rc == MDB_NOTFOUND { return false }
        try lmdbCheck(rc, name, directory: directory)
        return true
    }

    /// Moves to the first entry whose key is at or after `target`; false when there is none.
    func seek(atOrAfter target: UnsafeRawBufferPointer) throws -> Bool {
        key = MDB_val(mv_size: target.count, mv_data: UnsafeMutableRawPointer(mutating: target.baseAddress))
        return try move(MDB_SET_RANGE, "mdb_cursor_get(MDB_SET_RANGE)")
    }

    /// Moves to the next entry; false past the end.
    func next() throws -> Bool { try move(MDB_NEXT, "mdb_cursor_get(MDB_NEXT)") }

    /// Moves to the first entry; false when the database is empty.
    func first() throws -> Bool { try move(MDB_FIRST, "mdb_cursor_get(MDB_FIRST)") }

    /// Calls `body` with the current entry's key and value, valid only during the call.
    func withCurrent<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(
            UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
            UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }
}

@available(*, unavailable)
extension Cursor: Sendable {}
