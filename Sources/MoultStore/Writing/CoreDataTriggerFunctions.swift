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
enum CoreDataTriggerFunctions {
    static let names = [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        "NSCoreDataTriggerUpdateAffectedObjectValue",
    ]

    /// Registers the functions on a connection (any number of arguments, NULL result).
    static func register(on handle: OpaquePointer) {
        for name in names {
            _ = sqlite3_create_function_v2(
                handle, name, -1, SQLITE_UTF8, nil, { context, _, _ in sqlite3_result_null(context) }, nil, nil, nil)
        }
    }
}
