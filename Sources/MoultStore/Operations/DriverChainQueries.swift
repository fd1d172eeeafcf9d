import MoultModel

/// What a store holds of something a migration step does not carry, for one entity (its own objects,
/// not its sub-entities'): what `migrate` counts in the warning a step's data loss gives.
///
/// ```swift
/// let lost = try database.count(.values(column: "ZNICKNAME"), of: person)   // people with a nickname
/// ```
package enum UncarriedCount: Sendable, Hashable {
    /// The entity's objects.
    case objects
    /// The objects whose column (an attribute or a to-one key) is not nil.
    case values(column: String)
    /// The objects with at least one destination in a to-many relationship stored so.
    case withDestinations(ToManyLayout.Storage)
}

extension Database {
    /// How many objects of `entity` `what` counts; nil when SQLite gives no integer.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func count(_ what: UncarriedCount, of entity: EntityLayout) throws(StoreError) -> Int? {
        let scope = "FROM \(SQLName.quoted(entity.table)) o WHERE o.Z_ENT = \(entity.number)"
        let sql: String
        switch what {
        case .objects:
            sql = "SELECT COUNT(*) \(scope)"
        case .values(let column):
            sql = "SELECT COUNT(o.\(SQLName.quoted(column))) \(scope)"
        case .withDestinations(.destinationColumn(let table, let column, _, _)):
            sql = "SELECT COUNT(*) \(scope) AND EXISTS (SELECT 1 FROM \(SQLName.quoted(table)) d WHERE d.\(SQLName.quoted(column)) = o.Z_PK)"
        case .withDestinations(.joinTable(let table, let sourceColumn, _, _)):
            sql = "SELECT COUNT(*) \(scope) AND EXISTS (SELECT 1 FROM \(SQLName.quoted(table)) j WHERE j.\(SQLName.quoted(sourceColumn)) = o.Z_PK)"
        }
        guard case .int(let count)? = try scalar(sql) else { return nil }
        return Int(count)
    }
}
