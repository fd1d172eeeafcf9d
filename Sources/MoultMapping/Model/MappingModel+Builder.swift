/// Builds a list of entity mappings in a `MappingModel { ... }` block.
@resultBuilder
public enum EntityMappingsBuilder {
    public static func buildExpression(_ mapping: EntityMapping) -> [EntityMapping] { [mapping] }
    public static func buildExpression(_ mappings: [EntityMapping]) -> [EntityMapping] { mappings }
    public static func buildBlock(_ parts: [EntityMapping]...) -> [EntityMapping] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMapping]?) -> [EntityMapping] { part ?? [] }
    public static func buildEither(first part: [EntityMapping]) -> [EntityMapping] { part }
    public static func buildEither(second part: [EntityMapping]) -> [EntityMapping] { part }
    public static func buildArray(_ parts: [[EntityMapping]]) -> [EntityMapping] { parts.flatMap { $0 } }
}

/// One property mapping in an `EntityMapping { ... }` block: an attribute or a relationship.
public enum PropertyMappingItem: Sendable, Hashable {
    case attribute(PropertyMapping)
    case relationship(PropertyMapping)
}

/// Builds the property mappings of an `EntityMapping { ... }` block.
///
/// A bare ``PropertyMapping`` is an attribute mapping; wrap a relationship's in ``Relationship``.
@resultBuilder
public enum PropertyMappingsBuilder {
    public static func buildExpression(_ mapping: PropertyMapping) -> [PropertyMappingItem] { [.attribute(mapping)] }
    public static func buildExpression(_ relationship: Relationship) -> [PropertyMappingItem] {
        [.relationship(relationship.mapping)]
    }
    public static func buildExpression(_ items: [PropertyMappingItem]) -> [PropertyMappingItem] { items }
    public static func buildBlock(_ parts: [PropertyMappingItem]...) -> [PropertyMappingItem] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [PropertyMappingItem]?) -> [PropertyMappingItem] { part ?? [] }
    public static func buildEither(first part: [PropertyMappingItem]) -> [PropertyMappingItem] { part }
    public static func buildEither(second part: [PropertyMappingItem]) -> [PropertyMappingItem] { part }
    public static func buildArray(_ parts: [[PropertyMappingItem]]) -> [PropertyMappingItem] { parts.flatMap { $0 } }
}

/// A relationship mapping in an `EntityMapping { ... }` block.
///
/// ```swift
/// Relationship("address", mapping: "PersonToAddress", sourceKeyPath: nil)
/// Relationship("owner", "$source.owner")
/// ```
public struct Relationship: Sendable, Hashable {
    public var mapping: PropertyMapping

    /// A relationship mapping with this value expression.
    public init(_ name: String, _ valueExpression: String? = nil, userInfo: [String: String] = [:]) {
        mapping = PropertyMapping(name, valueExpression, userInfo: userInfo)
    }

    /// A relationship mapping to the objects the entity mapping `mappingName` made from
    /// `$source.<sourceKeyPath>` (or from `$source` itself when the key path is nil).
    public init(_ name: String, mapping mappingName: String, sourceKeyPath: String?) {
        mapping = PropertyMapping(name, PropertyMapping.destinationInstances(mapping: mappingName, sourceKeyPath: sourceKeyPath))
    }
}

extension MappingModel {
    /// Builds a mapping model from a block of entity mappings.
    ///
    /// With `infersRest`, the block gives only the entity mappings that need a policy or an
    /// expression, and the rest of the step is inferred (a partial mapping, ``MappingModel/infersRest``):
    ///
    /// ```swift
    /// let mapping = MappingModel(source: .init(name: "v4"), destination: .init(name: "v5"), infersRest: true) {
    ///     EntityMapping(name: "AdultToCompany", type: .custom, source: "Adult", destination: "Company", policy: "CompanyPolicy") {
    ///         PropertyMapping("name", "$source.companyName")
    ///     }
    /// }
    /// ```
    public init(
        source: ModelReference = .init(), destination: ModelReference = .init(), infersRest: Bool = false,
        @EntityMappingsBuilder _ mappings: () -> [EntityMapping]
    ) {
        self.init(source: source, destination: destination, entityMappings: mappings(), infersRest: infersRest)
    }
}

extension EntityMapping {
    /// Builds an entity mapping from a block of property mappings.
    public init(
        name: String, type: MappingType, source: String?, destination: String?,
        filter: String? = nil, policy: String? = nil, userInfo: [String: String] = [:], order: Int? = nil,
        @PropertyMappingsBuilder _ properties: () -> [PropertyMappingItem]
    ) {
        var attributes: [PropertyMapping] = []
        var relationships: [PropertyMapping] = []
        for item in properties() {
            switch item {
            case .attribute(let mapping): attributes.append(mapping)
            case .relationship(let mapping): relationships.append(mapping)
            }
        }
        self.init(
            name: name, type: type, source: source, destination: destination, filter: filter,
            attributes: attributes, relationships: relationships, policy: policy, userInfo: userInfo, order: order)
    }
}
