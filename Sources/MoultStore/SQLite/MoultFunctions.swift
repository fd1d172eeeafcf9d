internal import MoultCSQLite

/// Moult's own SQL functions, registered on every connection Moult opens (``Database``). No store's
/// schema names them: they serve the statements Moult runs, and are registered `SQLITE_DIRECTONLY`, so
/// that a store's trigger or view that calls one fails instead of running it.
public enum MoultFunctions {
    /// `moult_refuse(reason)` fails the statement that evaluates it, with `reason` as SQLite's message:
    /// a guard inside a statement (`CASE WHEN <odd row> THEN moult_refuse('…') ELSE … END`) that stops it
    /// at the first row it must not take. Run it inside a savepoint (``Database/transaction(_:_:)``
    /// nested in the chunk's) so that the refused statement's rows are rolled back with it.
    public static let refuse = "moult_refuse"

    static func register(on handle: OpaquePointer) {
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
