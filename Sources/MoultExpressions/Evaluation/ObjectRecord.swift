public import MoultModel

/// An object an expression is evaluated on: a store's row, or a migration engine's object.
///
/// Both MoultStore's records and MoultMigration's objects conform. Keys are property names; slots
/// are the positions a ``KeySchema`` gives the keys, so that a compiled expression reads a value with
/// ``value(atSlot:)`` (an array index) and never looks a key up per row.
///
/// Values follow ``/MoultModel/Value``'s conventions: to-one relationships are `.object(id)` (or `.null`),
/// to-many ones `.array` of `.object`.
public protocol ObjectRecord {
    /// The object's identity, which `$source` itself evaluates to.
    var objectID: ObjectID { get }
    /// The value of a property by name; `.null` when the object has no such value.
    func value(forKey key: String) -> Value
    /// The value at a slot of the ``KeySchema`` the expression was compiled against (the fast path).
    func value(atSlot slot: Int) -> Value
}

/// Finds the objects that relationship values (`.object(id)`) point to, so that key paths such as
/// `$source.owner.name` can go through relationships.
public protocol ObjectResolver {
    /// The object with this id, or nil when there is none.
    func record(for id: ObjectID) throws -> (any ObjectRecord)?
    /// The schema of the objects of an entity number (`Z_ENT`), so key paths through relationships
    /// read slots; nil to read them by key. The default is nil.
    func schema(forEntity entity: Int32) -> KeySchema?
}

extension ObjectResolver {
    public func schema(forEntity entity: Int32) -> KeySchema? { nil }
}

/// What a `FUNCTION` receiver is, as the host sees it.
public enum FunctionReceiver: Sendable, Hashable {
    /// A variable: `FUNCTION($manager, …)` gives `.variable("manager")`.
    case variable(String)
    /// Any other receiver, evaluated.
    case value(Value)
}

/// The host that answers `FUNCTION` calls the expression language does not know itself: calls on
/// `$manager` (`destinationInstancesForEntityMappingNamed:sourceInstances:`,
/// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`, …), on `$entityPolicy`, and any
/// other selector. The migration engine implements it.
public protocol ExpressionFunctionHost {
    /// Performs `selector` on `receiver` with evaluated `arguments`.
    ///
    /// - Throws: any error; evaluation wraps it in an ``ExpressionError`` (code `.evaluationFailed`)
    ///   that names the selector.
    func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value
}

/// Gives each key of an entity a slot, so that compiled key paths read values by position.
///
/// Build it from a model (``init(entity:in:)``: for each entity from the root down, its attributes
/// then its relationships, so an entity's slots are a prefix of its sub-entities' slots) or from a
/// plain list of keys. Records evaluated with an expression compiled against a schema must answer
/// ``ObjectRecord/value(atSlot:)`` with the same numbering.
public struct KeySchema: Sendable, Hashable {
    /// The keys, in slot order.
    public let keys: [String]
    /// For relationship keys, the destination entity's name.
    public let destinations: [String: String]
    /// For attribute keys, the attribute's type.
    public let attributeTypes: [String: AttributeType]
    private let slots: [String: Int]

    /// A schema over keys in this order (slot `i` is `keys[i]`).
    public init(keys: [String], destinations: [String: String] = [:], attributeTypes: [String: AttributeType] = [:]) {
        self.keys = keys
        self.destinations = destinations
        self.attributeTypes = attributeTypes
        var slots: [String: Int] = [:]
        for (slot, key) in keys.enumerated() where slots[key] == nil { slots[key] = slot }
        self.slots = slots
    }

    /// The schema of an entity of a model: from the root entity down, each entity's attributes then its
    /// relationships.
    public init?(entity name: String, in model: ObjectModel) {
        guard let entity = model.entity(named: name) else { return nil }
        let chain = model.ancestors(of: name).reversed() + [entity]
        var keys: [String] = []
        var destinations: [String: String] = [:]
        var types: [String: AttributeType] = [:]
        for member in chain {
            for attribute in member.attributes {
                keys.append(attribute.name)
                types[attribute.name] = attribute.attributeType
            }
            for relationship in member.relationships {
                keys.append(relationship.name)
                destinations[relationship.name] = relationship.destinationEntity
            }
        }
        self.init(keys: keys, destinations: destinations, attributeTypes: types)
    }

    /// The slot of a key, or nil when the entity has no such key.
    public func slot(of key: String) -> Int? { slots[key] }
}
