/// A fetched property: read and kept so that a model round-trips, never stored in a store.
public struct FetchedPropertyDescription: Sendable, Hashable {
    public var name: String
    public var isOptional: Bool
    /// The fetch request's entity name.
    public var fetchEntity: String?
    /// The fetch request's predicate text.
    public var predicateString: String?
    public var userInfo: [String: String]

    public init(
        name: String, isOptional: Bool = true, fetchEntity: String? = nil, predicateString: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.isOptional = isOptional
        self.fetchEntity = fetchEntity
        self.predicateString = predicateString
        self.userInfo = userInfo
    }
}

/// A fetch index of an entity (`<fetchIndex>`): Core Data makes it an SQLite index.
public struct FetchIndexDescription: Sendable, Hashable {
    public struct Element: Sendable, Hashable {
        public var property: String
        /// `"Binary"` (the default) or another index type Xcode writes.
        public var type: String
        public var ascending: Bool
        public init(property: String, type: String = "Binary", ascending: Bool = true) {
            self.property = property
            self.type = type
            self.ascending = ascending
        }
    }

    public var name: String
    public var elements: [Element]

    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

/// A named configuration of a model: a subset of its entities.
public struct ConfigurationDescription: Sendable, Hashable {
    public var name: String
    public var entityNames: [String]
    public init(name: String, entityNames: [String]) {
        self.name = name
        self.entityNames = entityNames
    }
}

/// A fetch request template stored in a model (`<fetchRequest>`), kept for round-tripping.
public struct FetchRequestTemplate: Sendable, Hashable {
    public var name: String
    public var entity: String
    public var predicateString: String?
    public init(name: String, entity: String, predicateString: String? = nil) {
        self.name = name
        self.entity = entity
        self.predicateString = predicateString
    }
}
