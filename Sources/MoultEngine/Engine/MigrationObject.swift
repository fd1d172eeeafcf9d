public import MoultExpressions
public import MoultModel

/// An object as a migration reads it: a source row with its attributes and relationships, typed.
///
/// Values sit in the slots of the entity's ``/MoultExpressions/KeySchema`` (from the root entity down, each entity's
/// attributes then its relationships), so compiled expressions read them by position. To-one
/// relationships are `.object(id)` or `.null`; to-many relationships are `.array` of `.object`, loaded
/// for a whole chunk at once when an expression of the mapping uses them, `.null` otherwise.
public struct MigrationObject: ObjectRecord {
    public let objectID: ObjectID
    /// The entity's name in its model.
    public let entityName: String
    let schema: KeySchema
    var values: [Value]

    package init(objectID: ObjectID, entityName: String, schema: KeySchema, values: [Value]) {
        self.objectID = objectID
        self.entityName = entityName
        self.schema = schema
        self.values = values
    }

    public func value(forKey key: String) -> Value {
        guard let slot = schema.slot(of: key), slot < values.count else { return .null }
        return values[slot]
    }

    public func value(atSlot slot: Int) -> Value {
        slot < values.count ? values[slot] : .null
    }
}
