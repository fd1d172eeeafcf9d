public import Foundation
import Glibc
public import MoultModel

/// A connection to an SQLite database file: the one door through which Moult reads and writes stores.
///
/// Statements are prepared once and cached (``statement(_:)``); writes happen in scoped transactions
/// that commit when the closure returns and roll back when it throws:
///
/// ```swift
/// let db = try Database(url: storeURL, mode: .readWrite)
/// try db.write {
///     try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.int(42), .int(1)])
/// }
/// let count = try db.scalar("SELECT COUNT(*) FROM ZPOST")   // .int(…)
/// ```
///
/// Every SQLite result code is checked; failures throw ``StoreError`` with the SQL and SQLite's code.
/// A database is confined to the thread that uses it; it is not `Sendable`.
public final class Database {
    /// How to open the file.
    public enum OpenMode: Sendable, Hashable {
        /// Read only: nothing is ever written, not even the `-wal`/`-shm` companions (see ``Database``).
        case readOnly
        /// Read and write an existing database.
        case readWrite
        /// Read and write, creating the file when it does not exist.
        case create
    }

    /// Connection settings.
    public struct Configuration: Sendable, Hashable {
        /// The page cache, in KiB (`PRAGMA cache_size = -N`): the bound on SQLite's own heap per connection.
        public var pageCacheKiB: Int
        /// How long a statement waits for another connection's lock before failing with ``StoreError/Code/locked``.
        public var busyTimeout: Duration
        /// The largest attribute value (string or blob) the connection reads or writes, in bytes: a value of
        /// exactly this size is taken, one byte more is refused (``StoreError/Code/invalidValue``, exit 65,
        /// with ``StoreError/valueLimit`` set) as it is read from a row (``Statement/value(at:as:)``) or
        /// bound into one (``StoreWriter/insert(_:values:primaryKey:)``), before Moult copies it. That
        /// bounds what one value can cost (a value is held several times over while its row is migrated).
        /// Moult's own check, per value: SQLite's length limit stays at the library's maximum (1,000,000,000
        /// bytes in its default build), so a row holding several values of this size is never refused for
        /// its length. Any size is honoured; the store's metadata and model cache are not attribute values.
        public var maxValueBytes: Int

        /// The default of ``maxValueBytes``: 256 MiB.
        public static let defaultMaxValueBytes = 256 << 20

        public init(pageCacheKiB: Int = 8 * 1024, busyTimeout: Duration = .seconds(2), maxValueBytes: Int = Configuration.defaultMaxValueBytes) {
            self.pageCacheKiB = pageCacheKiB
            self.busyTimeout = busyTimeout
            self.maxValueBytes = maxValueBytes
        }
    }

    /// The database file's path.
    public let path: String
    public let mode: OpenMode
    /// What the connection was opened with.
    public let configuration: Configuration
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    private var savepointDepth = 0
    /// Where this connection's `moult_chunk_rows` tables find their rows, once registered (see ``ChunkRows``).
    var chunkRowsSlot: UnsafeMutableRawPointer?
    /// The numbers of columns of the `moult_chunk_rows` tables made on this connection.
    var chunkRowsTables: Set<Int> = []
    /// The descriptors of held folders this connection's files are opened through
    /// (``DatabaseFile/Place``), closed with the connection.
    private var heldFolders: [Int32] = []

    /// Opens (or, with ``OpenMode/create``, creates) a database file.
    ///
    /// A read-only open checks the file's header first, so a file that is not SQLite fails with a clear
    /// error before SQLite touches anything, and it never creates or writes a file beside the database,
    /// whatever its header says: without a `-wal` file (or with an empty one)
    /// the file is opened as immutable; with a `-wal` holding frames, SQLite reads them (they are
    /// committed data of the store) through a wal-index kept in private memory instead of the `-shm`.
    ///
    /// A file whose header or schema SQLite cannot read (an unsupported schema format, a damaged
    /// `sqlite_master`) fails here with ``StoreError/Code/corrupt``.
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code/notFound`` when the file is missing (read-only,
    ///   read-write), ``StoreError/Code/notADatabase``, ``StoreError/Code/corrupt``, ``StoreError/Code/locked``,
    ///   ``StoreError/Code/readOnly`` or ``StoreError/Code/ioFailure``.
    public init(url: URL, mode: OpenMode, configuration: Configuration = Configuration()) throws(StoreError) {
        let path = url.path(percentEncoded: false)
        self.path = path
        self.mode = mode
        self.configuration = configuration
        var flags: SQLite.OpenFlags = [.uri, .noMutex, .extendedResultCodes, .noFollow]
        var query = ""
        // Resolved once, here; from then on SQLite follows no link (`SQLITE_OPEN_NOFOLLOW`). In a folder
        // the run holds, through that folder's descriptor.
        let place = try DatabaseFile.place(path, followingTheFile: mode != .create)
        do throws(StoreError) {
            let real = place.sqlitePath
            try DatabaseFile.checkCompanions(real, writing: mode != .readOnly)
            switch mode {
            case .readOnly:
                let header = try DatabaseFile.header(real)
                flags.insert(.readOnly)
                query = DatabaseFile.readOnlyQuery(real, header: header)
            case .readWrite:
                _ = try DatabaseFile.header(real)
                flags.insert(.readWrite)
            case .create:
                flags.formUnion([.readWrite, .create])
            }
            handle = try SQLite.open(DatabaseFile.uri(real, query: place.query(query)), flags: flags, path: path)
        } catch {
            place.close()
            throw place.showing(error)
        }
        heldFolders = place.folder.map { [$0] } ?? []
        let milliseconds = configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        SQLite.busyTimeout(handle, milliseconds: Int32(clamping: milliseconds))
        CoreDataTriggerFunctions.register(on: handle)
        MoultFunctions.register(on: handle, maxValueBytes: configuration.maxValueBytes)
        do {
            try SQLite.exec(handle, "PRAGMA cache_size = -\(max(configuration.pageCacheKiB, 64))", path: path)
            // Touch the schema so that a file that is not a database fails here, not at first use.
            _ = try scalar("SELECT COUNT(*) FROM sqlite_master")
        } catch {
            cache.removeAll()
            SQLite.close(handle)
            place.close()
            throw mode == .create ? error : DatabaseFile.openingFailure(error)
        }
    }

    deinit {
        if !isClosed {
            cache.removeAll()
            SQLite.close(handle)
            for folder in heldFolders { Glibc.close(folder) }
        }
        chunkRowsSlot?.deallocate()
    }

    /// Whether ``close()`` was called.
    public private(set) var isClosed = false

    /// Copies the whole database, page by page (SQLite's online backup), into a new file at `url`: a
    /// consistent copy, whatever the `-wal` holds, made through this connection (a read-only one
    /// writes nothing beside its own file). The copy keeps the database's journal mode.
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code/diskFull`` when the disk fills (the partial copy is
    ///   left for the caller to remove), or another code when the file cannot be made.
    public func copy(to url: URL) throws(StoreError) {
        let target = url.path(percentEncoded: false)
        let place = try DatabaseFile.place(target, followingTheFile: false)
        defer { place.close() }
        do throws(StoreError) {
            try DatabaseFile.checkCompanions(place.sqlitePath, writing: true)
            let copy = try SQLite.open(
                DatabaseFile.uri(place.sqlitePath, query: place.query("")), flags: [.uri, .noMutex, .extendedResultCodes, .noFollow, .readWrite, .create],
                path: target)
            defer { SQLite.close(copy) }
            try SQLite.backup(from: handle, to: copy, path: target)
        } catch {
            throw place.showing(error)
        }
    }

    private func checkOpen(_ sql: String) throws(StoreError) {
        if isClosed { throw StoreError(.sqlite, "the database connection is closed", path: path, sql: sql) }
    }

    // MARK: - Statements

    /// A prepared statement for this SQL, prepared on first use and reused afterwards.
    ///
    /// The statement is reset before it is returned. Use it for statements that run many times (inserts
    /// of a batch, the page query of a cursor).
    ///
    /// - Throws: ``StoreError`` when the SQL does not compile.
    public func statement(_ sql: String) throws(StoreError) -> Statement {
        try checkOpen(sql)
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(database: self, sql: sql, persistent: true)
        cache[sql] = statement
        return statement
    }

    /// A new, uncached prepared statement (for SQL that runs once).
    public func makeStatement(_ sql: String) throws(StoreError) -> Statement {
        try checkOpen(sql)
        return try Statement(database: self, sql: sql, persistent: false)
    }

    /// Runs one statement with arguments, ignoring any rows.
    ///
    /// - Throws: ``StoreError`` with the SQL.
    public func execute(_ sql: String, _ arguments: [Value] = []) throws(StoreError) {
        try statement(sql).execute(arguments)
    }

    /// Runs several `;`-separated statements without arguments (schema scripts).
    public func executeScript(_ sql: String) throws(StoreError) {
        try checkOpen(sql)
        try SQLite.exec(handle, sql, path: path)
    }

    /// Calls `body` for each row of a query; the statement is positioned on the row during the call.
    public func forEachRow(
        _ sql: String, _ arguments: [Value] = [], _ body: (Statement) throws -> Void
    ) throws {
        let statement = try statement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        while try statement.step() { try body(statement) }
    }

    /// The rows of a query, each turned into a `T` by `row`.
    public func query<T>(_ sql: String, _ arguments: [Value] = [], row: (Statement) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEachRow(sql, arguments) { result.append(try row($0)) }
        return result
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ arguments: [Value] = []) throws(StoreError) -> Value? {
        let statement = try statement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        // `Optional.none`, not `nil`: `Value` is itself expressible by `nil` (it would become `.null`).
        return try statement.step() ? statement.value(at: 0) : Optional<Value>.none
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { SQLite.changes(handle) }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { SQLite.lastInsertRowID(handle) }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { !SQLite.isAutocommit(handle) }

    /// The SQLite library's version (`3.40.1`).
    public static var sqliteVersion: String { SQLite.libraryVersion }

    // MARK: - Transactions

    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Locks on first read/write (`BEGIN DEFERRED`).
        case deferred = "DEFERRED"
        /// Takes the write lock at once (`BEGIN IMMEDIATE`), so a lock conflict shows at the start.
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// Inside a transaction already open, `body` runs in a savepoint instead, released on return and
    /// rolled back to on throw, so transactions nest.
    ///
    /// - Throws: what `body` throws (after rolling back), or ``StoreError`` from BEGIN/COMMIT.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        if isInTransaction {
            savepointDepth += 1
            let name = "moult_\(savepointDepth)"
            defer { savepointDepth -= 1 }
            try executeScript("SAVEPOINT \(name)")
            do {
                let result = try body()
                try executeScript("RELEASE \(name)")
                return result
            } catch {
                try? executeScript("ROLLBACK TO \(name); RELEASE \(name)")
                throw error
            }
        }
        try executeScript("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try executeScript("COMMIT")
            return result
        } catch {
            if isInTransaction { try? executeScript("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in an immediate write transaction (see ``transaction(_:_:)``).
    public func write<T>(_ body: () throws -> T) throws -> T {
        try transaction(.immediate, body)
    }

    /// Runs `body` in a deferred read transaction: every read inside it sees one snapshot.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try transaction(.deferred, body)
    }

    // MARK: - Attached databases

    /// Attaches another database file read-only under a schema name, so that one statement can read
    /// it and write this one (`INSERT INTO main.T … SELECT … FROM name.T`).
    ///
    /// The same rules as a read-only open apply: the file's header is checked first, and nothing is
    /// ever created or written beside the attached file (see ``init(url:mode:configuration:)``).
    /// Not allowed inside a transaction.
    ///
    /// - Throws: ``StoreError`` as a read-only open does, or when the name is taken.
    public func attachReadOnly(_ url: URL, as name: String) throws(StoreError) {
        let place = try DatabaseFile.place(url.path(percentEncoded: false), followingTheFile: true)
        let (path, shown) = (place.sqlitePath, place.shown)
        let header: DatabaseFile.Header
        do throws(StoreError) {
            try DatabaseFile.checkCompanions(path, writing: false)
            header = try DatabaseFile.header(path)
        } catch {
            place.close()
            throw place.showing(error)
        }
        let query = DatabaseFile.readOnlyQuery(path, header: header)
        // The folder's descriptor stays open while the connection does: SQLite may open the attached
        // file's `-wal` later, through it.
        if let folder = place.folder { heldFolders.append(folder) }
        do {
            try makeStatement("ATTACH DATABASE ? AS \(name)").execute([.string(DatabaseFile.uri(path, query: place.query(query)))])
        } catch where error.code == .sqlite && error.message.contains("text encoding") {
            // Core Data writes UTF-8 stores; SQLite attaches only databases of the main one's encoding.
            throw StoreError(
                .notCoreData, "the store's text encoding is not UTF-8 (header byte 56 says \(header.textEncoding)): Core Data writes UTF-8 stores",
                path: shown)
        } catch where error.code == .sqlite && (error.message.contains("file format") || error.message.contains("malformed")) {
            // A header or schema SQLite cannot read, as a read-only open reports it.
            throw DatabaseFile.openingFailure(StoreError(error.code, error.message, path: shown, resultCode: error.resultCode))
        } catch {
            throw place.showing(error)
        }
    }

    /// Detaches a database attached with ``attachReadOnly(_:as:)``.
    public func detach(_ name: String) throws(StoreError) {
        try makeStatement("DETACH DATABASE \(name)").execute()
    }

    // MARK: - Schema

    /// Whether a table with this name exists.
    public func tableExists(_ name: String) throws(StoreError) -> Bool {
        if case .some = try scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(name)]) { return true }
        return false
    }

    /// The column names of a table, in declaration order.
    public func columns(of table: String) throws -> [String] {
        try query("SELECT name FROM pragma_table_info(?)", [.string(table)]) { $0.string(at: 0) ?? "" }
    }

    /// Finalizes the cached statements and closes the connection now (it also closes on deinit).
    ///
    /// In WAL mode, closing the last connection checkpoints the WAL into the main file and removes it.
    /// Using the database afterwards throws; statements made with ``makeStatement(_:)`` must be released
    /// first for the file to close at once.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        SQLite.close(handle)
        for folder in heldFolders { Glibc.close(folder) }
        heldFolders = []
    }
}

@available(*, unavailable)
extension Database: Sendable {}

// MARK: - The file itself

/// Checks on a database file made before SQLite opens it.
enum DatabaseFile {
    struct Header {
        /// The file's write and read format versions (header bytes 18–19: 1 for a rollback journal, 2 for WAL).
        var writeVersion: UInt8
        var readVersion: UInt8
        /// Header bytes 56–59: 1 for UTF-8, 2 and 3 for UTF-16.
        var textEncoding: UInt32
    }

    static let magic = Array("SQLite format 3\0".utf8)

    /// Reads the 100-byte header: a missing file, an empty or foreign file fail here with a clear error.
    static func header(_ path: String) throws(StoreError) -> Header {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw StoreError(.notFound, "there is no file here", path: path)
        }
        if isFolder.boolValue {
            throw StoreError(.notADatabase, "this is a folder, not a store: give the store's file (NAME.sqlite) itself", path: path)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.ioFailure, "the file cannot be read (check its permissions)", path: path)
        }
        defer { try? handle.close() }
        let bytes: [UInt8]
        do {
            bytes = Array(try handle.read(upToCount: 100) ?? Data())
        } catch {
            throw StoreError(.ioFailure, "the file cannot be read: \(error.localizedDescription)", path: path)
        }
        guard bytes.count == 100, Array(bytes[0..<16]) == magic else {
            throw StoreError(
                .notADatabase,
                bytes.isEmpty ? "the file is empty, not an SQLite database" : "the file is not an SQLite database (no SQLite header)",
                path: path)
        }
        return Header(
            writeVersion: bytes[18], readVersion: bytes[19],
            textEncoding: bytes[56..<60].reduce(0) { $0 << 8 | UInt32($1) })
    }

    /// The URI query of a read-only open that creates and writes nothing beside the file.
    ///
    /// SQLite creates `-wal` and `-shm` files beside a WAL database (header bytes 18–19 of 2, or a mix
    /// such as 1 and 2), and beside any database that has a `-wal` file, even on a read-only connection.
    /// - A `-wal` with frames holds committed transactions that belong to the store: it is read through
    ///   the private-memory wal-index VFS (`shim.h`), which rebuilds the index from the `-wal` without
    ///   creating or touching the `-shm`.
    /// - An empty `-wal`, or none with a header that is not plainly rollback-journal (1 and 1): the
    ///   content is all in the main file, opened as immutable so that SQLite looks for no companion.
    /// - A rollback-journal database without a `-wal` is opened read-only as it is, so that a writer's
    ///   lock keeps this reader out while it writes (SQLite creates nothing for such a reader).
    static func readOnlyQuery(_ path: String, header: Header) -> String {
        let manager = FileManager.default
        if manager.fileExists(atPath: path + "-wal") {
            let walSize = (try? manager.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.int64Value ?? 0
            if walSize > 0 { return SQLite.privateSharedMemoryVFS.map { "mode=ro&vfs=\($0)" } ?? "mode=ro" }
            return "mode=ro&immutable=1"
        }
        if header.writeVersion == 1 && header.readVersion == 1 { return "mode=ro" }
        return "mode=ro&immutable=1"
    }

    /// An error from the first statements on a new connection, named for what it means there: SQLite's
    /// plain "error" before any SQL of ours ran is a header or schema it cannot read (`unsupported file
    /// format` for a schema format above 4, `malformed database schema`), so the file is corrupt.
    static func openingFailure(_ error: StoreError) -> StoreError {
        switch error.code {
        case .sqlite:
            return StoreError(
                .corrupt, "the store's header or schema cannot be read (\(error.message)): the file is damaged",
                path: error.path, resultCode: error.resultCode)
        case .corrupt:
            return StoreError(.corrupt, error.message, path: error.path, resultCode: error.resultCode)
        default:
            return error
        }
    }

    /// Where SQLite opens a database file: the path it is given, the path messages show, and, for a file in
    /// a folder the run holds (``HeldFolders``), a descriptor of its folder that the path goes through
    /// (`/proc/self/fd/N/NAME`, opened by the held-folder VFS of `shim.h`, which keeps that path as it is
    /// for the file's `-journal`, `-wal` and `-shm` too). The owner closes the descriptor once SQLite
    /// opens no file there any more.
    struct Place {
        var sqlitePath: String
        var shown: String
        var folder: Int32?

        /// `query` with the held-folder VFS named, for a file reached through a held folder (a query
        /// naming the private-memory VFS keeps it: that VFS keeps such paths too).
        func query(_ query: String) -> String {
            guard folder != nil, !query.contains("vfs="), let vfs = SQLite.heldFolderVFS else { return query }
            return query.isEmpty ? "vfs=\(vfs)" : query + "&vfs=\(vfs)"
        }

        /// `error` naming the file as the user knows it, never by `/proc/self/fd/N`.
        func showing(_ error: StoreError) -> StoreError {
            guard folder != nil, let named = error.path, named.hasPrefix(sqlitePath) else { return error }
            var shownError = error
            shownError.path = shown + named.dropFirst(sqlitePath.count)
            return shownError
        }

        func close() {
            if let folder { Glibc.close(folder) }
        }
    }

    /// The ``Place`` of `path`: in a folder the run holds, through a new descriptor of its folder (reached
    /// from the held one without following a link); elsewhere at ``realPath(_:followingTheFile:)``.
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when the file's folder cannot be reached from the folder the
    ///   run holds (a symbolic link on the way, or the folder gone).
    static func place(_ path: String, followingTheFile: Bool) throws(StoreError) -> Place {
        let file = followingTheFile && FileOperations.isSymbolicLink(path) ? realPath(path, followingTheFile: true) : path
        let absolute = HeldFolders.absolute(file)
        if SQLite.heldFolderVFS != nil, let (descriptor, folder) = try FileOperations.openFolder(FileOperations.parent(of: absolute)) {
            return Place(sqlitePath: folder + "/" + URL(filePath: absolute).lastPathComponent, shown: absolute, folder: descriptor)
        }
        let real = realPath(file, followingTheFile: false)
        return Place(sqlitePath: real, shown: real, folder: nil)
    }

    /// The path SQLite is given for `path`, which it then opens with `SQLITE_OPEN_NOFOLLOW`: the folder's
    /// real path (a folder the user names may be reached through links, as any path the user gives) and
    /// the file's name; with `followingTheFile`, a symbolic link at the name (checked with `lstat`) is
    /// resolved once to the file it leads to, so that a store the user names through a link is opened
    /// where it really is, its companions beside it there. After this no link is followed: not at the
    /// name, not at a companion (`-wal`, `-shm`, `-journal`), which SQLite then refuses to open.
    static func realPath(_ path: String, followingTheFile: Bool) -> String {
        let url = URL(filePath: path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
        if followingTheFile, FileOperations.isSymbolicLink(path) { return url.resolvingSymlinksInPath().path(percentEncoded: false) }
        let folder = url.deletingLastPathComponent().resolvingSymlinksInPath()
        return folder.appending(path: url.lastPathComponent).path(percentEncoded: false)
    }

    /// Checks, with `lstat`, the files SQLite keeps beside the database at `path` (`-wal`, `-shm`,
    /// `-journal`) before it opens any: a symbolic link, a FIFO, a device or a folder at one of those
    /// names is refused (SQLite would open a FIFO and wait on it), and so, when the connection writes, is
    /// a file with other names (hard links), which a write would change under every name.
    ///
    /// - Throws: ``StoreError/Code/ioFailure`` naming the companion and what it is.
    static func checkCompanions(_ path: String, writing: Bool) throws(StoreError) {
        for suffix in ["-wal", "-shm", "-journal"] {
            var info = stat()
            guard lstat(path + suffix, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                throw StoreError(.ioFailure, "the store's \(suffix) is a symbolic link, and Moult does not follow it", path: path + suffix)
            case S_IFREG:
                guard !writing || info.st_nlink == 1 else {
                    throw StoreError(
                        .ioFailure, "the store's \(suffix) has other names (\(info.st_nlink) hard links): writing it would change another file",
                        path: path + suffix)
                }
            default:
                throw StoreError(.ioFailure, "the store's \(suffix) is not a file (a FIFO, a device or a folder): Moult does not open it", path: path + suffix)
            }
        }
    }

    /// A `file:` URI for a path, percent-encoding the characters URIs reserve.
    static func uri(_ path: String, query: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(encoded)" + (query.isEmpty ? "" : "?\(query)")
    }
}
