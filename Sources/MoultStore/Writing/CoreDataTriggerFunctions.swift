import Foundation
internal import MoultCSQLite

/// The SQL functions Core Data registers on its own connections, which the triggers of its stores call.
///
/// A store with derived attributes has `Z_DA_…` triggers calling
/// `NSCoreDataDATriggerUpdatedAffectedObjectValue(table, Z_ENT, Z_PK, attribute, value)` and
/// `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue(…)` (CoreDataPlus' SampleModel2_V2.sqlite);
/// Photos' own `ZT_…` triggers call `NSCoreDataTriggerUpdateAffectedObjectValue(…)`. Core Data uses them
/// to learn which objects a trigger changed; without them, the first insert into such a store fails
/// (`no such function`). Every connection Moult opens registers them as functions that do nothing and
/// return NULL: the triggers' own `UPDATE`s are what keep the values current.
///
/// The triggers of the other derivations compute their values with four more functions, which Moult
/// implements: `NSCoreDataNow()` (the time, in seconds since 2001-01-01, as Core Data stores dates),
/// `NSCoreDataToLower(text)`, `NSCoreDataToUpper(text)` and `NSCoreDataCanonical(text)`: case- and
/// diacritic-folded text (Apple: "a case- and diacritic-insensitive String value"). Core Data's own
/// canonical form applies Unicode transforms whose exact set is not published; Moult's (canonical
/// decomposition, marks removed, lowercased, recomposed) is by rule, not confirmed on a real store.
enum CoreDataTriggerFunctions {
    static let names = [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        "NSCoreDataTriggerUpdateAffectedObjectValue",
    ]

    /// Registers the functions on a connection. They are called from a store's triggers: they are
    /// registered `SQLITE_INNOCUOUS` (no side effect, nothing read but their arguments and the clock), so
    /// that they keep working on a connection that does not trust the schema (`PRAGMA trusted_schema = OFF`).
    static func register(on handle: OpaquePointer) {
        let innocuous = SQLITE_UTF8 | SQLITE_INNOCUOUS
        for name in names {
            _ = sqlite3_create_function_v2(
                handle, name, -1, innocuous, nil, { context, _, _ in sqlite3_result_null(context) }, nil, nil, nil)
        }
        _ = sqlite3_create_function_v2(
            handle, "NSCoreDataNow", 0, innocuous, nil,
            { context, _, _ in sqlite3_result_double(context, Date().timeIntervalSinceReferenceDate) }, nil, nil, nil)
        let deterministic = innocuous | SQLITE_DETERMINISTIC
        _ = sqlite3_create_function_v2(
            handle, "NSCoreDataToLower", 1, deterministic, nil, { context, count, arguments in
                CoreDataTriggerFunctions.transform(context, count, arguments) { $0.lowercased() }
            }, nil, nil, nil)
        _ = sqlite3_create_function_v2(
            handle, "NSCoreDataToUpper", 1, deterministic, nil, { context, count, arguments in
                CoreDataTriggerFunctions.transform(context, count, arguments) { $0.uppercased() }
            }, nil, nil, nil)
        _ = sqlite3_create_function_v2(
            handle, "NSCoreDataCanonical", 1, deterministic, nil, { context, count, arguments in
                CoreDataTriggerFunctions.transform(context, count, arguments, CoreDataTriggerFunctions.canonical)
            }, nil, nil, nil)
    }

    /// Case- and diacritic-folded text: canonical decomposition, combining marks removed, lowercased,
    /// recomposed.
    static func canonical(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: continue
            default: scalars.append(scalar)
            }
        }
        return String(scalars).lowercased().precomposedStringWithCanonicalMapping
    }

    /// Applies a text function to the one argument: NULL stays NULL, anything else is read as text.
    private static func transform(
        _ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?, _ body: (String) -> String
    ) {
        guard count == 1, let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL,
            let text = sqlite3_value_text(argument)
        else {
            sqlite3_result_null(context)
            return
        }
        // The whole value, by its byte count (a NUL inside it does not end it).
        let bytes = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(argument)))
        let result = Array(body(String(decoding: bytes, as: UTF8.self)).utf8CString)
        // Its byte count without the closing NUL: NULs inside the value stay.
        result.withUnsafeBufferPointer { chars in
            sqlite3_result_text(context, chars.baseAddress, Int32(chars.count - 1), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }
}
