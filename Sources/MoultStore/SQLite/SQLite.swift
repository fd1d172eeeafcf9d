internal import MoultCSQLite

/// Every call into SQLite's C API, in one place.
///
/// The rest of the module holds connection and statement handles as `OpaquePointer` and calls these
/// functions; no C type leaves this file except the opaque handles, and every result code goes through
/// ``check(_:_:sql:path:)``.
enum SQLite {
    // MARK: - Result codes

    static let ok: Int32 = SQLITE_OK
    static let row: Int32 = SQLITE_ROW
    static let done: Int32 = SQLITE_DONE

    /// The SQLite library's version string.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Turns a result code other than OK/ROW/DONE into a ``StoreError`` carrying SQLite's message and the SQL.
    static func check(_ code: Int32, _ connection: OpaquePointer?, sql: String? = nil, path: String? = nil) throws(StoreError) {
        guard code != SQLITE_OK && code != SQLITE_ROW && code != SQLITE_DONE else { return }
        throw error(code, connection, sql: sql, path: path)
    }

    static func error(_ code: Int32, _ connection: OpaquePointer?, sql: String?, path: String?) -> StoreError {
        let message: String
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        return StoreError(resultCode: ResultCode(rawValue: code), sqliteMessage: message, sql: sql, path: path)
    }

    // MARK: - Limits

    /// The linked library's limits that a schema can reach, read once from a private in-memory
    /// connection (`sqlite3_limit`); SQLite's documented defaults if that connection cannot be opened.
    static let limits: (columns: Int, sqlLength: Int) = {
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        guard sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nil) == SQLITE_OK, let handle else {
            return (2_000, 1_000_000_000)
        }
        return (Int(sqlite3_limit(handle, SQLITE_LIMIT_COLUMN, -1)), Int(sqlite3_limit(handle, SQLITE_LIMIT_SQL_LENGTH, -1)))
    }()

    // MARK: - Connections

    struct OpenFlags: OptionSet {
        var rawValue: Int32
        static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
        static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
        static let extendedResultCodes = OpenFlags(rawValue: SQLITE_OPEN_EXRESCODE)
        /// No symbolic link anywhere in the file's path, nor at a companion's (`-wal`, `-journal`): SQLite
        /// fails with `SQLITE_CANTOPEN_SYMLINK` instead (SQLite 3.31 and later).
        static let noFollow = OpenFlags(rawValue: SQLITE_OPEN_NOFOLLOW)
    }

    /// Opens a connection; on failure the half-open handle is closed before throwing.
    static func open(_ filename: String, flags: OpenFlags, path: String) throws(StoreError) -> OpaquePointer {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(filename, &handle, flags.rawValue, nil)
        guard code == SQLITE_OK, let handle else {
            let error = error(code, handle, sql: nil, path: path)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        // `PRAGMA trusted_schema` stays ON: with it OFF, SQLite (3.40) refuses the R-tree virtual tables
        // Core Data's own `Z_RT_` triggers write ("unsafe use of virtual table"). What a store's schema
        // must not reach is kept from it otherwise: Moult's own functions are `SQLITE_DIRECTONLY`
        // (`MoultFunctions`), and no database is attached while Moult's SQL runs on a store.
        return handle
    }

    /// The name of the read-only VFS that keeps a WAL database's index in private memory (see
    /// `shim.h`), registered on first use; nil when SQLite has no default VFS to wrap.
    static let privateSharedMemoryVFS: String? = moult_register_private_shm_vfs().map { String(cString: $0) }

    /// The name of the VFS that opens a file reached through a held folder's descriptor
    /// (`/proc/self/fd/N/NAME`, see `shim.h`) and its companions through that same descriptor, registered on
    /// first use; nil when SQLite has no default VFS to copy (such files are then opened by their path).
    static let heldFolderVFS: String? = moult_register_held_vfs().map { String(cString: $0) }

    /// Copies every page of `source`'s main database into `target`'s, in one pass.
    static func backup(from source: OpaquePointer, to target: OpaquePointer, path: String) throws(StoreError) {
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw error(sqlite3_errcode(target), target, sql: nil, path: path)
        }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw error(stepped, target, sql: nil, path: path) }
        try check(finished, target, path: path)
    }

    static func close(_ connection: OpaquePointer) {
        sqlite3_close_v2(connection)
    }

    static func busyTimeout(_ connection: OpaquePointer, milliseconds: Int32) {
        sqlite3_busy_timeout(connection, milliseconds)
    }

    /// Runs SQL that returns no rows (several statements allowed).
    static func exec(_ connection: OpaquePointer, _ sql: String, path: String) throws(StoreError) {
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        try check(code, connection, sql: sql, path: path)
    }

    static func changes(_ connection: OpaquePointer) -> Int { Int(sqlite3_changes64(connection)) }
    static func totalChanges(_ connection: OpaquePointer) -> Int { Int(sqlite3_total_changes64(connection)) }
    static func lastInsertRowID(_ connection: OpaquePointer) -> Int64 { sqlite3_last_insert_rowid(connection) }
    static func isAutocommit(_ connection: OpaquePointer) -> Bool { sqlite3_get_autocommit(connection) != 0 }

    // MARK: - Statements

    static func prepare(_ connection: OpaquePointer, _ sql: String, persistent: Bool, path: String) throws(StoreError) -> OpaquePointer {
        var statement: OpaquePointer?
        let flags: UInt32 = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(connection, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw error(code, connection, sql: sql, path: path)
        }
        guard let statement else {
            throw StoreError(StoreError.Code.sqlite, "the SQL holds no statement", path: path, sql: sql)
        }
        return statement
    }

    static func finalize(_ statement: OpaquePointer) { sqlite3_finalize(statement) }
    static func reset(_ statement: OpaquePointer) { sqlite3_reset(statement) }
    static func clearBindings(_ statement: OpaquePointer) { sqlite3_clear_bindings(statement) }
    static func step(_ statement: OpaquePointer) -> Int32 { sqlite3_step(statement) }
    static func parameterCount(_ statement: OpaquePointer) -> Int32 { sqlite3_bind_parameter_count(statement) }
    static func isReadOnly(_ statement: OpaquePointer) -> Bool { sqlite3_stmt_readonly(statement) != 0 }

    // MARK: Binding (indexes start at 1)

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func bindNull(_ statement: OpaquePointer, _ index: Int32) -> Int32 { sqlite3_bind_null(statement, index) }
    static func bind(_ statement: OpaquePointer, _ index: Int32, int64 value: Int64) -> Int32 {
        sqlite3_bind_int64(statement, index, value)
    }
    static func bind(_ statement: OpaquePointer, _ index: Int32, double value: Double) -> Int32 {
        sqlite3_bind_double(statement, index, value)
    }
    static func bind(_ statement: OpaquePointer, _ index: Int32, text value: String) -> Int32 {
        var value = value
        return value.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress, !chars.isEmpty else { return sqlite3_bind_text(statement, index, "", 0, transient) }
                return sqlite3_bind_text64(statement, index, base, sqlite3_uint64(chars.count), transient, UInt8(SQLITE_UTF8))
            }
        }
    }
    static func bind(_ statement: OpaquePointer, _ index: Int32, bytes: UnsafeRawBufferPointer) -> Int32 {
        if bytes.isEmpty { return sqlite3_bind_zeroblob(statement, index, 0) }
        return sqlite3_bind_blob64(statement, index, bytes.baseAddress, sqlite3_uint64(bytes.count), transient)
    }

    // MARK: Columns (indexes start at 0)

    enum StorageClass { case integer, float, text, blob, null }

    static func columnCount(_ statement: OpaquePointer) -> Int32 { sqlite3_column_count(statement) }
    static func columnName(_ statement: OpaquePointer, _ index: Int32) -> String {
        sqlite3_column_name(statement, index).map { String(cString: $0) } ?? ""
    }
    static func columnType(_ statement: OpaquePointer, _ index: Int32) -> StorageClass {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .float
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }
    static func columnInt64(_ statement: OpaquePointer, _ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }
    static func columnDouble(_ statement: OpaquePointer, _ index: Int32) -> Double { sqlite3_column_double(statement, index) }
    static func columnText(_ statement: OpaquePointer, _ index: Int32) -> String {
        guard let text = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
    /// The column's size in bytes.
    static func columnBytes(_ statement: OpaquePointer, _ index: Int32) -> Int { Int(sqlite3_column_bytes(statement, index)) }
    /// Calls `body` with the column's bytes; the pointer is valid only inside the closure.
    static func withColumnBytes<T>(_ statement: OpaquePointer, _ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }
}
