/// One entity of a model: Core Data's `NSEntityDescription`.
///
/// An entity holds the properties it declares. Inherited properties, sub-entities and the root of the
/// hierarchy are known once the entity belongs to an ``ObjectModel``, which resolves them.
public struct EntityDescription: Sendable, Hashable {
    public var name: String
    public var representedClassName: String?
    /// The parent entity's name (`parentEntity`).
    public var parentName: String?
    public var isAbstract: Bool
    public var versionHashModifier: String?
    /// The renaming identifier (Xcode's `elementID`).
    public var renamingIdentifier: String?
    public var codeGenerationType: String?
    /// Attributes this entity declares, in the order the model lists them.
    public var attributes: [AttributeDescription]
    /// Relationships this entity declares, in the order the model lists them.
    public var relationships: [RelationshipDescription]
    public var fetchedProperties: [FetchedPropertyDescription]
    /// Uniqueness constraints: each one a list of property names.
    public var uniquenessConstraints: [[String]]
    public var fetchIndexes: [FetchIndexDescription]
    public var userInfo: [String: String]

    public init(
        name: String,
        representedClassName: String? = nil,
        parent: String? = nil,
        isAbstract: Bool = false,
        versionHashModifier: String? = nil,
        renamingIdentifier: String? = nil,
        codeGenerationType: String? = nil,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        fetchedProperties: [FetchedPropertyDescription] = [],
        uniquenessConstraints: [[String]] = [],
        fetchIndexes: [FetchIndexDescription] = [],
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.representedClassName = representedClassName
        self.parentName = parent
        self.isAbstract = isAbstract
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.codeGenerationType = codeGenerationType
        self.attributes = attributes
        self.relationships = relationships
        self.fetchedProperties = fetchedProperties
        self.uniquenessConstraints = uniquenessConstraints
        self.fetchIndexes = fetchIndexes
        self.userInfo = userInfo
    }

    /// The identifier that links this entity across versions: the renaming identifier, or the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }

    /// The declared attribute with this name.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The declared relationship with this name.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }
}
