/// What happens to a relationship's destinations when its source object is deleted.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
    case nullify = "Nullify"
    case cascade = "Cascade"
    case deny = "Deny"
    case noAction = "No Action"
}

/// One relationship of an entity: Core Data's `NSRelationshipDescription`.
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    /// The destination entity's name.
    public var destinationEntity: String
    /// The inverse relationship's name on the destination entity, if any.
    public var inverseName: String?
    /// The entity declaring the inverse, as Xcode writes it (`inverseEntity`); normally the destination.
    public var inverseEntity: String?
    public var isOptional: Bool
    public var isTransient: Bool
    public var isReadOnly: Bool
    public var isToMany: Bool
    public var isOrdered: Bool
    /// The minimum count; 0 when Xcode writes none.
    public var minCount: Int
    /// The maximum count as written: 1 for a to-one, 0 (unbounded) for a to-many when Xcode writes none.
    public var maxCount: Int
    public var deleteRule: DeleteRule
    /// The renaming identifier (Xcode's `elementID`).
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]

    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        inverseEntity: String? = nil,
        isToMany: Bool = false,
        isOrdered: Bool = false,
        isOptional: Bool = true,
        isTransient: Bool = false,
        isReadOnly: Bool = false,
        minCount: Int = 0,
        maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntity = destination
        self.inverseName = inverse
        self.inverseEntity = inverseEntity ?? (inverse == nil ? nil : destination)
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }

    /// The identifier that links this relationship across versions: the renaming identifier, or the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }
}
