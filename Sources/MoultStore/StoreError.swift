public import MoultModel

/// An error opening, reading or writing a store.
///
/// The message says what went wrong in words a person can act on; `path`, `entity` and `sql` say where,
/// and ``resultCode`` holds SQLite's own code when SQLite reported the failure.
///
/// ```swift
/// do { _ = try StoreMetadata(contentsOf: url) }
/// catch let error as StoreError where error.code == .notCoreData { … }
/// ```
public struct StoreError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file is not an SQLite database (or is encrypted).
        public static let notADatabase = Code(rawValue: "not a database")
        /// The file is an SQLite database whose content is damaged (or truncated).
        public static let corrupt = Code(rawValue: "corrupt store")
        /// The file is an SQLite database, but not a Core Data store.
        public static let notCoreData = Code(rawValue: "not a Core Data store")
        /// No version of the model made this store.
        public static let unknownVersion = Code(rawValue: "unknown model version")
        /// The store's content disagrees with its model (a missing table or column).
        public static let schemaMismatch = Code(rawValue: "schema mismatch")
        /// Another connection holds a lock on the store.
        public static let locked = Code(rawValue: "store locked")
        /// The store or its folder cannot be written.
        public static let readOnly = Code(rawValue: "read-only")
        /// A program stopped in the middle of a transaction (killed, crashed) and left its hot
        /// `-journal` beside the store, which a read-only connection cannot roll back.
        public static let unfinishedTransaction = Code(rawValue: "unfinished transaction")
        /// The disk (or the file system quota) is full: the work done so far is kept and can be resumed.
        public static let diskFull = Code(rawValue: "disk full")
        /// The file does not exist.
        public static let notFound = Code(rawValue: "not found")
        /// The file exists already and would be overwritten.
        public static let alreadyExists = Code(rawValue: "already exists")
        /// Reading or writing a file failed.
        public static let ioFailure = Code(rawValue: "I/O failure")
        /// A write broke a uniqueness or other constraint.
        public static let constraint = Code(rawValue: "constraint violated")
        /// A value cannot be stored in, or read from, a column of this type.
        public static let invalidValue = Code(rawValue: "invalid value")
        /// An entity, property or relationship the model does not have.
        public static let unknownName = Code(rawValue: "unknown name")
        /// Another Moult run holds the store or destination (see ``RunLock``): nothing was touched.
        public static let busy = Code(rawValue: "busy")
        /// Any other SQLite failure (bad SQL, misuse): a bug in the caller.
        public static let sqlite = Code(rawValue: "SQLite error")
    }

    public var code: Code
    public var message: String
    /// The store's path, when known.
    public var path: String?
    /// The SQL being run, when the error came from a statement.
    public var sql: String?
    /// The entity concerned, when known.
    public var entity: String?
    /// The primary key (`Z_PK`) of the object concerned, when known.
    public var primaryKey: Int64?
    /// SQLite's result code, when SQLite reported the failure.
    public var resultCode: ResultCode?
    /// The value size limit in bytes (``Database/Configuration/maxValueBytes``) a value was larger than,
    /// when that is the failure: a command that offers a way to raise it can say so.
    public var valueLimit: Int?

    public init(
        _ code: Code, _ message: String, path: String? = nil, sql: String? = nil, entity: String? = nil,
        primaryKey: Int64? = nil, resultCode: ResultCode? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.sql = sql
        self.entity = entity
        self.primaryKey = primaryKey
        self.resultCode = resultCode
    }

    /// A value larger than the value size limit (``Database/Configuration/maxValueBytes``): bad input
    /// (``Code/invalidValue``, exit 65), with ``valueLimit`` set. The message names no option: the
    /// command that offers one to raise the limit adds it.
    ///
    /// - Parameters:
    ///   - place: Where the value is, in words (`"column ZNOTES"`, `"attribute 'notes'"`).
    ///   - bytes: The value's size in bytes.
    ///   - limit: The limit it is over.
    static func valueTooLarge(
        _ place: String, bytes: Int, limit: Int, path: String?, sql: String? = nil, entity: String? = nil
    ) -> StoreError {
        var error = StoreError(
            .invalidValue, "\(place) holds a value of \(bytes) bytes, more than the limit of \(limit) bytes a value may have",
            path: path, sql: sql, entity: entity)
        error.valueLimit = limit
        return error
    }

    /// An error from an SQLite result code, its code chosen from the result code.
    init(resultCode: ResultCode, sqliteMessage: String, sql: String?, path: String?) {
        let code: Code
        let message: String
        switch resultCode.primary {
        case .busy, .locked:
            code = .locked
            message = "the store is locked by another connection (\(sqliteMessage)); close the other program or try again"
        case .readOnly where resultCode.rawValue == Self.readOnlyRollback:
            code = .unfinishedTransaction
            let journal = path.map { "\($0)-journal" } ?? "the -journal file beside the store"
            message = "another program stopped in the middle of writing the store (killed or crashed) and left its unfinished transaction in "
                + "\(journal), which a read-only open cannot roll back (\(sqliteMessage)): open the store once read-write, with its app or "
                + "`sqlite3 STORE 'PRAGMA quick_check'`, to roll the transaction back, then run again"
        case .readOnly, .permission:
            code = .readOnly
            // Who may not write it, and who owns the store and its folder (the image runs as uid 65534).
            message = "the store cannot be written (\(sqliteMessage)): "
                + (path.map { FileOperations.permissionReason(nil, $0) } ?? "check the permissions of the file and its folder")
        case .full:
            code = .diskFull
            message = "the disk is full (\(sqliteMessage)): free some space and run again"
        case .notADatabase:
            code = .notADatabase
            message = "the file is not an SQLite database (\(sqliteMessage))"
        case .corrupt:
            code = .corrupt
            message = "the store is damaged or truncated (\(sqliteMessage))"
        case .cantOpen where resultCode.rawValue == Self.cantOpenSymbolicLink:
            code = .ioFailure
            message = "a symbolic link is in the way (at the store or a file beside it: -wal, -shm, -journal), and Moult does not follow it (\(sqliteMessage))"
        case .cantOpen:
            code = .ioFailure
            message = "the store cannot be opened (\(sqliteMessage)): check that the folder exists and can be written"
        case .ioError where resultCode.rawValue == ResultCode.ioErrorShortRead.rawValue:
            // The file ends before the pages its header and b-trees point to: a truncated store.
            code = .corrupt
            message = "the store is truncated: it ends before the pages it refers to (\(sqliteMessage))"
        case .tooBig:
            // Over SQLite's own length limit, left at the library's maximum: Moult's value size limit is
            // checked before (Database.Configuration.maxValueBytes), so this is a value or row SQLite
            // cannot hold at all.
            code = .invalidValue
            message = "a value or row is larger than SQLite can hold (\(sqliteMessage))"
        case .ioError, .noMemory:
            code = .ioFailure
            message = "reading or writing the store failed (\(sqliteMessage))"
        case .constraint:
            code = .constraint
            message = "a constraint failed: \(sqliteMessage)"
        case .error where sqliteMessage.hasPrefix("no such collation sequence"):
            // An index or column of the file's schema names a collation no SQLite has: Core Data
            // writes only built-in ones, so the schema is damaged.
            code = .corrupt
            message = "the store's schema is damaged: \(sqliteMessage)"
        default:
            code = .sqlite
            message = sqliteMessage
        }
        self.init(code, message, path: path, sql: sql, resultCode: resultCode)
    }

    /// The columns of the uniqueness constraint a write broke (`ZCODE` of SQLite's
    /// `UNIQUE constraint failed: ZCONTINENT.ZCODE`), nil for any other error.
    ///
    /// ```swift
    /// if let columns = error.uniqueColumns { print("not unique:", columns) }   // ["ZCODE"]
    /// ```
    public var uniqueColumns: [String]? {
        let marker = "UNIQUE constraint failed: "
        guard code == .constraint, let range = message.firstRange(of: marker) else { return nil }
        let listed = message[range.upperBound...].prefix { $0 != "\n" && $0 != "(" && $0 != "[" }
        let columns = listed.split(separator: ",").compactMap { part in
            part.filter { $0 != " " }.split(separator: ".").last.map(String.init)
        }
        return columns.isEmpty ? nil : columns
    }

    /// SQLITE_READONLY_ROLLBACK: a hot journal that a read-only connection cannot roll back.
    static let readOnlyRollback = ResultCode.readOnly.rawValue | (3 << 8)
    /// `SQLITE_CANTOPEN_SYMLINK`: a link where `SQLITE_OPEN_NOFOLLOW` allows none.
    static let cantOpenSymbolicLink = ResultCode.cantOpen.rawValue | (6 << 8)

    /// The same error, with a path, entity or SQL filled in where it had none.
    func located(path: String? = nil, entity: String? = nil, primaryKey: Int64? = nil, sql: String? = nil) -> StoreError {
        var copy = self
        if copy.path == nil { copy.path = path }
        if copy.entity == nil { copy.entity = entity }
        if copy.primaryKey == nil { copy.primaryKey = primaryKey }
        if copy.sql == nil { copy.sql = sql }
        return copy
    }

    /// Bad input for a damaged or foreign file, I/O for locks, permissions and full disks, validation
    /// for a broken constraint, internal for misuse of SQLite.
    ///
    /// A full disk is reported as I/O with the distinct code ``Code/diskFull``: a migration maps it to
    /// "interrupted, resumable".
    public var category: FailureCategory {
        switch code {
        case .notADatabase, .corrupt, .notCoreData, .unknownVersion, .schemaMismatch, .invalidValue, .unknownName: .badInput
        case .locked, .readOnly, .unfinishedTransaction, .diskFull, .notFound, .alreadyExists, .ioFailure: .io
        case .constraint: .validationFailed
        case .busy: .busy
        default: .internalError
        }
    }

    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += "\(code): \(message)"
        switch (entity, primaryKey) {
        case (let entity?, let primaryKey?): text += " (entity \(entity), Z_PK \(primaryKey))"
        case (let entity?, nil): text += " (entity \(entity))"
        case (nil, let primaryKey?): text += " (Z_PK \(primaryKey))"
        case (nil, nil): break
        }
        if let resultCode { text += " [\(resultCode)]" }
        if let sql { text += "\n  SQL: \(sql)" }
        return text
    }
}
