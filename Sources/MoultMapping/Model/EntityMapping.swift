public import MoultModel

/// What an entity mapping does: Core Data's `NSEntityMappingType`.
public enum MappingType: String, Sendable, Hashable, CaseIterable {
    /// Custom: a policy (``EntityMapping/entityMigrationPolicyClassName``) makes the destination objects.
    case custom = "Custom"
    /// Add: a new destination entity with no source; nothing to migrate.
    case add = "Add"
    /// Remove: a source entity with no destination; its objects are dropped.
    case remove = "Remove"
    /// Copy: every source object is copied as it is.
    case copy = "Copy"
    /// Transform: each destination object is made from one source object by the property mappings.
    case transform = "Transform"
    /// Xcode writes "Undefined" for the mappings it generates; see ``EntityMapping/effectiveType``.
    case undefined = "Undefined"
}

/// How objects of one destination entity are made from objects of one source entity: Core Data's
/// `NSEntityMapping`.
///
/// The filter predicate is kept as predicate text (`age >= 18`); the engine parses it.
///
/// ```swift
/// let mapping = EntityMapping(
///     name: "PersonToAdult", type: .transform, source: "Person", destination: "Adult",
///     filter: "age >= 18",
///     attributes: [PropertyMapping("name", "$source.name"), PropertyMapping("age", "$source.age")])
/// ```
public struct EntityMapping: Sendable, Hashable {
    /// The mapping's name, unique in its mapping model (`PersonToPerson`).
    public var name: String
    /// The type as written; ``effectiveType`` resolves ``MappingType/undefined``.
    public var mappingType: MappingType
    /// The source entity's name; nil for an add mapping.
    public var sourceEntityName: String?
    /// The source entity's version hash, when known.
    public var sourceEntityVersionHash: VersionHash?
    /// The destination entity's name; nil for a remove mapping.
    public var destinationEntityName: String?
    /// The destination entity's version hash, when known.
    public var destinationEntityVersionHash: VersionHash?
    /// Predicate text selecting the source objects this mapping migrates; nil for all of them.
    public var filterPredicate: String?
    public var attributeMappings: [PropertyMapping]
    public var relationshipMappings: [PropertyMapping]
    /// The name under which a custom migration policy is registered, if any.
    public var entityMigrationPolicyClassName: String?
    /// A built-in policy of MoultMigration this mapping runs, as written (`unique(key: companyName)`);
    /// it takes the place of any class ``entityMigrationPolicyClassName`` names. Only Moult's JSON
    /// format carries it.
    public var builtinPolicy: String?
    public var userInfo: [String: String]
    /// The position Xcode gives the mapping (`mappingnumber`); mappings run in this order.
    public var order: Int?

    public init(
        name: String,
        type: MappingType,
        source: String?,
        destination: String?,
        sourceVersionHash: VersionHash? = nil,
        destinationVersionHash: VersionHash? = nil,
        filter: String? = nil,
        attributes: [PropertyMapping] = [],
        relationships: [PropertyMapping] = [],
        policy: String? = nil,
        userInfo: [String: String] = [:],
        order: Int? = nil,
        builtinPolicy: String? = nil
    ) {
        self.name = name
        self.mappingType = type
        self.sourceEntityName = source
        self.destinationEntityName = destination
        self.sourceEntityVersionHash = sourceVersionHash
        self.destinationEntityVersionHash = destinationVersionHash
        self.filterPredicate = filter
        self.attributeMappings = attributes
        self.relationshipMappings = relationships
        self.entityMigrationPolicyClassName = policy
        self.userInfo = userInfo
        self.order = order
        self.builtinPolicy = builtinPolicy
    }

    /// The type the mapping behaves as.
    ///
    /// An explicit type is itself. For ``MappingType/undefined`` (what Xcode writes for the mappings it
    /// generates), CORE-DATA-FORMATS.md §2: no source entity makes an add, no destination a remove;
    /// otherwise a mapping with a policy class is custom, one whose every property mapping is the
    /// default (`$source.<same name>` or none) between same-named entities is a copy, and anything else
    /// a transform.
    public var effectiveType: MappingType {
        guard mappingType == .undefined else { return mappingType }
        guard sourceEntityName != nil else { return .add }
        guard destinationEntityName != nil else { return .remove }
        if entityMigrationPolicyClassName != nil || builtinPolicy != nil { return .custom }
        let identical = sourceEntityName == destinationEntityName && filterPredicate == nil
            && attributeMappings.allSatisfy { $0.valueExpression == nil || $0.valueExpression == PropertyMapping.sourceValue($0.name) }
            && relationshipMappings.allSatisfy { $0.valueExpression == nil }
        return identical ? .copy : .transform
    }

    /// The attribute mapping for this destination attribute.
    public func attributeMapping(named name: String) -> PropertyMapping? {
        attributeMappings.first { $0.name == name }
    }

    /// The relationship mapping for this destination relationship.
    public func relationshipMapping(named name: String) -> PropertyMapping? {
        relationshipMappings.first { $0.name == name }
    }
}
