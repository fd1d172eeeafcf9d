import Foundation
public import MoultModel

/// A prepared SQL statement of one ``Database``: bind arguments, step through rows, read columns.
///
/// Get one from ``Database/statement(_:)`` (cached and reused) or ``Database/makeStatement(_:)``.
/// Column indexes start at 0; argument positions follow the statement's `?` placeholders.
///
/// ```swift
/// let statement = try db.statement("SELECT Z_PK, ZNAME FROM ZPERSON WHERE Z_PK > ?")
/// try statement.bind([.int(0)])
/// while try statement.step() {
///     print(statement.int64(at: 0), statement.string(at: 1) ?? "nil")
/// }
/// ```
///
/// A statement belongs to the thread that uses its database; it is not `Sendable`.
public final class Statement {
    /// The statement's SQL text.
    public let sql: String
    let handle: OpaquePointer
    unowned let database: Database
    /// Whether the statement is mid-iteration (stepped but not finished or reset).
    private var isActive = false

    init(database: Database, sql: String, persistent: Bool) throws(StoreError) {
        self.database = database
        self.sql = sql
        self.handle = try SQLite.prepare(database.handle, sql, persistent: persistent, path: database.path)
    }

    deinit { SQLite.finalize(handle) }

    /// The number of `?` placeholders.
    public var parameterCount: Int { Int(SQLite.parameterCount(handle)) }

    /// The number of result columns.
    public var columnCount: Int { Int(SQLite.columnCount(handle)) }

    /// The name of a result column.
    public func columnName(at index: Int) -> String { SQLite.columnName(handle, Int32(index)) }

    /// Whether the statement only reads.
    public var isReadOnly: Bool { SQLite.isReadOnly(handle) }

    // MARK: - Binding

    /// Resets the statement and binds `arguments` to its placeholders, in order.
    ///
    /// - Throws: ``StoreError`` when the count differs from the placeholders' or a value cannot be bound.
    public func bind(_ arguments: [Value]) throws(StoreError) {
        reset()
        SQLite.clearBindings(handle)
        guard arguments.count == parameterCount else {
            throw StoreError(
                .sqlite, "the statement has \(parameterCount) placeholders but \(arguments.count) arguments were given",
                path: database.path, sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Binds one value to a placeholder (positions start at 1), as Core Data stores it: booleans as 0/1,
    /// dates as seconds since 2001-01-01, UUIDs as their 16 bytes, decimals as REAL, object ids as their
    /// primary key.
    ///
    /// - Throws: ``StoreError`` for an array value (to-many relationships are not columns) or a bad position.
    public func bind(_ value: Value, at position: Int) throws(StoreError) {
        let index = Int32(position)
        let code: Int32
        switch value {
        case .null: code = SQLite.bindNull(handle, index)
        case .bool(let b): code = SQLite.bind(handle, index, int64: b ? 1 : 0)
        case .int(let i): code = SQLite.bind(handle, index, int64: i)
        case .double(let d): code = SQLite.bind(handle, index, double: d)
        // Through the decimal's own text: Foundation's `NSDecimalNumber.doubleValue` is not correctly
        // rounded on Linux (-1491.57 would be stored as -1491.5700000000002).
        case .decimal(let d): code = SQLite.bind(handle, index, double: Double(d.description) ?? NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s): code = SQLite.bind(handle, index, text: s)
        case .date(let d): code = SQLite.bind(handle, index, double: d.timeIntervalSinceReferenceDate)
        case .data(let bytes): code = bytes.withUnsafeBytes { SQLite.bind(handle, index, bytes: $0) }
        case .uuid(let u): code = Swift.withUnsafeBytes(of: u.uuid) { SQLite.bind(handle, index, bytes: $0) }
        case .object(let id): code = SQLite.bind(handle, index, int64: id.primaryKey)
        case .array:
            throw StoreError(.invalidValue, "an array cannot be bound to a placeholder (position \(position))", path: database.path, sql: sql)
        }
        try SQLite.check(code, database.handle, sql: sql, path: database.path)
    }

    /// Binds an integer to a placeholder (positions start at 1) without going through ``/MoultModel/Value``.
    public func bind(_ value: Int64, at position: Int) throws(StoreError) {
        try SQLite.check(SQLite.bind(handle, Int32(position), int64: value), database.handle, sql: sql, path: database.path)
    }

    // MARK: - Stepping

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: ``StoreError`` for any SQLite failure (locked, full disk, constraint, corrupt…), with the SQL.
    @discardableResult
    public func step() throws(StoreError) -> Bool {
        let code = SQLite.step(handle)
        if code == SQLite.row {
            isActive = true
            return true
        }
        isActive = false
        if code == SQLite.done { return false }
        let error = SQLite.error(code, database.handle, sql: sql, path: database.path)
        SQLite.reset(handle)
        throw error
    }

    /// Runs the statement to its end with these arguments, ignoring any rows.
    public func execute(_ arguments: [Value] = []) throws(StoreError) {
        try bind(arguments)
        while try step() {}
        reset()
    }

    /// Resets the statement so that it can run again (bindings are kept).
    public func reset() {
        SQLite.reset(handle)
        isActive = false
    }

    // MARK: - Reading columns (indexes start at 0)

    /// Whether the column holds NULL.
    public func isNull(at index: Int) -> Bool { SQLite.columnType(handle, Int32(index)) == .null }

    /// The column as an integer (NULL reads as 0).
    public func int64(at index: Int) -> Int64 { SQLite.columnInt64(handle, Int32(index)) }

    /// The column as a double (NULL reads as 0).
    public func double(at index: Int) -> Double { SQLite.columnDouble(handle, Int32(index)) }

    /// The column as text, or nil for NULL.
    public func string(at index: Int) -> String? {
        isNull(at: index) ? nil : SQLite.columnText(handle, Int32(index))
    }

    /// The column's bytes, or nil for NULL.
    public func bytes(at index: Int) -> [UInt8]? {
        isNull(at: index) ? nil : SQLite.withColumnBytes(handle, Int32(index)) { Array($0) }
    }

    /// Calls `body` with the column's bytes without copying them. Do not let the pointer escape.
    public func withUnsafeBytes<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try SQLite.withColumnBytes(handle, Int32(index), body)
    }

    /// The column as SQLite stores it: `.int`, `.double`, `.string`, `.data` or `.null`.
    public func value(at index: Int) -> Value {
        switch SQLite.columnType(handle, Int32(index)) {
        case .null: .null
        case .integer: .int(int64(at: index))
        case .float: .double(double(at: index))
        case .text: .string(SQLite.columnText(handle, Int32(index)))
        case .blob: .data(SQLite.withColumnBytes(handle, Int32(index)) { Array($0) })
        }
    }

    /// The column decoded as Core Data reads an attribute of this type.
    ///
    /// A value stored in another form than the type's is converted as SQLite converts it when Core Data
    /// asks for the type (a REAL in an integer column is truncated toward zero, an integer or REAL in a
    /// string column reads as its text, a blob of UTF-8 in a string column as that text), and refused
    /// when no such conversion keeps its meaning. Decoding never traps, whatever the file holds.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/invalidValue``, naming the column and the
    ///   value: a string or blob larger than ``Database/Configuration/maxValueBytes``, a REAL that is not finite or outside the integer type's range, an integer outside
    ///   Integer 16's or Integer 32's range, text or a blob where a number or date is expected, text
    ///   that is not UTF-8, a UUID that is not 16 bytes, a number no Decimal can hold.
    public func value(at index: Int, as type: AttributeType) throws(StoreError) -> Value {
        let storage = SQLite.columnType(handle, Int32(index))
        if storage == .null { return .null }
        if storage == .text || storage == .blob {
            // Moult's own limit, per value: exactly the limit is taken, one byte more refused, before a copy.
            let bytes = SQLite.columnBytes(handle, Int32(index))
            let limit = database.configuration.maxValueBytes
            if bytes > limit { throw StoreError.valueTooLarge("column \(columnName(at: index))", bytes: bytes, limit: limit, path: database.path, sql: sql) }
        }
        switch type {
        case .integer16, .integer32, .integer64:
            return try integerValue(at: index, as: type, storage)
        case .boolean:
            switch storage {
            case .integer: return .bool(int64(at: index) != 0)
            case .float: return .bool(double(at: index) != 0)
            default: throw invalid(described(at: index, storage), at: index, as: type)
            }
        case .double, .float:
            switch storage {
            case .integer, .float: return .double(double(at: index))
            default: throw invalid(described(at: index, storage), at: index, as: type)
            }
        case .decimal:
            return try decimalValue(at: index, storage)
        case .date:
            switch storage {
            case .integer, .float:
                let seconds = double(at: index)
                guard seconds.isFinite else { throw invalid("the real \(seconds)", at: index, as: type) }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            default: throw invalid(described(at: index, storage), at: index, as: type)
            }
        case .string, .uri:
            return try stringValue(at: index, as: type, storage)
        case .uuid:
            return try uuidValue(at: index, storage)
        case .binary, .transformable, .composite, .undefined, .objectID:
            if storage == .blob { return .data(SQLite.withColumnBytes(handle, Int32(index)) { Array($0) }) }
            return value(at: index)
        }
    }

    // MARK: - Decoding by type

    /// An integer attribute: an integer in the type's range, or a REAL truncated toward zero.
    private func integerValue(at index: Int, as type: AttributeType, _ storage: SQLite.StorageClass) throws(StoreError) -> Value {
        let integer: Int64
        switch storage {
        case .integer:
            integer = int64(at: index)
        case .float:
            let real = double(at: index)
            // Int64(exactly:) of the truncated value: nil (never a trap) outside Int64's range.
            guard real.isFinite, let truncated = Int64(exactly: real.rounded(.towardZero)) else {
                throw invalid("the real \(real), outside any integer's range", at: index, as: type)
            }
            integer = truncated
        default:
            throw invalid(described(at: index, storage), at: index, as: type)
        }
        let range: ClosedRange<Int64> =
            switch type {
            case .integer16: Int64(Int16.min)...Int64(Int16.max)
            case .integer32: Int64(Int32.min)...Int64(Int32.max)
            default: Int64.min...Int64.max
            }
        guard range.contains(integer) else {
            throw invalid("\(described(at: index, storage)), outside \(type.rawValue)'s range \(range.lowerBound)…\(range.upperBound)", at: index, as: type)
        }
        return .int(integer)
    }

    private func decimalValue(at index: Int, _ storage: SQLite.StorageClass) throws(StoreError) -> Value {
        switch storage {
        case .integer: return .decimal(Decimal(int64(at: index)))
        case .float:
            // Core Data stores decimals in a DECIMAL (numeric-affinity) column; go through the
            // shortest decimal text of the double so 3.3333333333 reads back as written. A double
            // beyond Decimal's range (about 1e165) or not finite has no Decimal: refused. One too
            // small for it (below about 1e-128) reads as zero, as Foundation's conversion gives.
            let real = double(at: index)
            guard real.isFinite else { throw invalid("the real \(real)", at: index, as: .decimal) }
            if let decimal = Decimal(string: "\(real)", locale: Statement.posix), !decimal.isNaN { return .decimal(decimal) }
            if abs(real) < 1e-100 { return .decimal(0) }
            throw invalid("the real \(real), beyond the range of a Decimal", at: index, as: .decimal)
        case .text:
            guard let text = utf8Text(at: index),
                let decimal = Decimal(string: text, locale: Statement.posix), !decimal.isNaN
            else { throw invalid("text that is not a decimal number", at: index, as: .decimal) }
            return .decimal(decimal)
        default: throw invalid(described(at: index, storage), at: index, as: .decimal)
        }
    }

    private func stringValue(at index: Int, as type: AttributeType, _ storage: SQLite.StorageClass) throws(StoreError) -> Value {
        switch storage {
        case .text:
            guard let text = utf8Text(at: index) else { throw invalid("text that is not valid UTF-8", at: index, as: type) }
            return .string(text)
        case .blob:
            // Core Data binds a string as text, never as a blob: bytes are not taken for text (nor
            // brought into memory to find out whether they could be).
            throw invalid("a blob of \(SQLite.columnBytes(handle, Int32(index))) bytes where Core Data stores text", at: index, as: type)
        default:
            // SQLite's text of a number: what Core Data gets when it asks for text.
            return .string(SQLite.columnText(handle, Int32(index)))
        }
    }

    private func uuidValue(at index: Int, _ storage: SQLite.StorageClass) throws(StoreError) -> Value {
        if storage == .text {
            guard let text = utf8Text(at: index), let u = UUID(uuidString: text) else { throw invalid("text that is not a UUID", at: index, as: .uuid) }
            return .uuid(u)
        }
        guard storage == .blob else { throw invalid(described(at: index, storage), at: index, as: .uuid) }
        let uuid: UUID? = SQLite.withColumnBytes(handle, Int32(index)) { raw in
            guard raw.count == 16 else { return nil }
            var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            Swift.withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: raw) }
            return UUID(uuid: u)
        }
        guard let uuid else { throw invalid("a blob that is not 16 bytes", at: index, as: .uuid) }
        return .uuid(uuid)
    }

    /// The error for a value the column holds that is not one of `type`: `what` names it.
    private func invalid(_ what: String, at index: Int, as type: AttributeType) -> StoreError {
        StoreError(
            .invalidValue, "column \(columnName(at: index)) holds \(what), which is not a valid \(type.rawValue) value",
            path: database.path, sql: sql)
    }

    /// What the column holds, in words, for an error.
    private func described(at index: Int, _ storage: SQLite.StorageClass) -> String {
        switch storage {
        case .integer: "the integer \(int64(at: index))"
        case .float: "the real \(double(at: index))"
        case .text: "text"
        case .blob: "a blob of \(SQLite.withColumnBytes(handle, Int32(index)) { $0.count }) bytes"
        case .null: "NULL"
        }
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The column's bytes as UTF-8 text (a blob's too), or nil when they are not valid UTF-8.
    private func utf8Text(at index: Int) -> String? {
        SQLite.withColumnBytes(handle, Int32(index)) { raw in
            String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        }
    }
}

@available(*, unavailable)
extension Statement: Sendable {}
