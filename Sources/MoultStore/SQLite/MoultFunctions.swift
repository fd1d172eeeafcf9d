internal import MoultCSQLite
import MoultModel

/// Moult's own SQL functions, registered on every connection Moult opens (``Database``). No store's
/// schema names them: they serve the statements Moult runs, and are registered `SQLITE_DIRECTONLY`, so
/// that a store's trigger or view that calls one fails instead of running it.
public enum MoultFunctions {
    /// `moult_refuse(reason)` fails the statement that evaluates it, with `reason` as SQLite's message:
    /// a guard inside a statement (`CASE WHEN <odd row> THEN moult_refuse('…') ELSE … END`) that stops it
    /// at the first row it must not take. Run it inside a savepoint (``Database/transaction(_:_:)``
    /// nested in the chunk's) so that the refused statement's rows are rolled back with it.
    public static let refuse = "moult_refuse"

    /// `moult_utf8(value)` is 1 when a text value's bytes are valid UTF-8 (and for any value that is not
    /// text), 0 otherwise: the bulk copy's guard uses it so that text the per-object path would refuse is
    /// never copied as it is.
    public static let validUTF8 = "moult_utf8"

    /// `moult_within_limit(value)` is 1 when a text or blob value holds at most the connection's value size
    /// limit (``Database/Configuration/maxValueBytes``) in bytes (and for any other value), 0 otherwise:
    /// the bulk copy's guard uses it so that a value the per-object path would refuse is never copied.
    public static let withinLimit = "moult_within_limit"

    /// `moult_limited(value)` is `value` when it is within the connection's value size limit (see
    /// ``withinLimit``), and fails the statement with the bulk copy's refusal otherwise: a value the
    /// bulk copy computes (rather than copies) is refused as the per-object path would refuse it.
    public static let limited = "moult_limited"

    /// Whether a text or blob value holds more bytes than `limit` (never for another value).
    private static func isOverLimit(_ value: OpaquePointer, _ limit: Int) -> Bool {
        let type = sqlite3_value_type(value)
        return (type == SQLITE_TEXT || type == SQLITE_BLOB) && Int(sqlite3_value_bytes(value)) > limit
    }

    /// The limit a function registered by ``register(on:maxValueBytes:)`` was given, from its user data
    /// (the limit plus one, so that a limit of 0 is not a null pointer).
    private static func limit(of context: OpaquePointer?) -> Int {
        Int(bitPattern: sqlite3_user_data(context)) - 1
    }

    /// Whether `bytes` are valid UTF-8.
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        UTF8Validation.firstInvalid(bytes) == nil
    }

    static func register(on handle: OpaquePointer, maxValueBytes: Int) {
        let limitData = UnsafeMutableRawPointer(bitPattern: min(max(maxValueBytes, 0), Int.max - 1) + 1)
        _ = sqlite3_create_function_v2(
            handle, withinLimit, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, limitData,
            { context, count, arguments in
                guard count == 1, let argument = arguments?[0] else { return sqlite3_result_int(context, 1) }
                sqlite3_result_int(context, MoultFunctions.isOverLimit(argument, MoultFunctions.limit(of: context)) ? 0 : 1)
            }, nil, nil, nil)
        _ = sqlite3_create_function_v2(
            handle, limited, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, limitData,
            { context, count, arguments in
                guard count == 1, let argument = arguments?[0] else { return sqlite3_result_null(context) }
                if MoultFunctions.isOverLimit(argument, MoultFunctions.limit(of: context)) {
                    return sqlite3_result_error(context, EngineBulkCopy.refusal, -1)
                }
                sqlite3_result_value(context, argument)
            }, nil, nil, nil)
        _ = sqlite3_create_function_v2(
            handle, validUTF8, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 1, let argument = arguments?[0], sqlite3_value_type(argument) == SQLITE_TEXT else {
                    sqlite3_result_int(context, 1)
                    return
                }
                // The bytes as stored (no conversion: the store's encoding is UTF-8).
                let length = Int(sqlite3_value_bytes(argument))
                guard length > 0, let start = sqlite3_value_text(argument) else {
                    sqlite3_result_int(context, 1)
                    return
                }
                let valid = MoultFunctions.isValidUTF8(UnsafeRawBufferPointer(start: start, count: length))
                sqlite3_result_int(context, valid ? 1 : 0)
            }, nil, nil, nil)
        _ = sqlite3_create_function_v2(
            handle, refuse, 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, nil,
            { context, count, arguments in
                var reason = "refused"
                if count == 1, let argument = arguments?[0], let text = sqlite3_value_text(argument) {
                    reason = String(cString: text)
                }
                sqlite3_result_error(context, reason, -1)
            }, nil, nil, nil)
    }
}
