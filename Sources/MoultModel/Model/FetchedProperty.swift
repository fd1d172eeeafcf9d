/// A fetched property: read and kept so that a model round-trips, never stored in a store.
public struct FetchedPropertyDescription: Sendable, Hashable {
    public var name: String
    public var isOptional: Bool
    /// The fetch request's entity name.
    public var fetchEntity: String?
    /// The fetch request's predicate text.
    public var predicateString: String?
    /// The fetch request's name as Xcode writes it.
    public var fetchRequestName: String
    public var userInfo: [String: String]

    public init(
        name: String, isOptional: Bool = true, fetchEntity: String? = nil, predicateString: String? = nil,
        fetchRequestName: String = "fetchedPropertyFetchRequest", userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.isOptional = isOptional
        self.fetchEntity = fetchEntity
        self.predicateString = predicateString
        self.fetchRequestName = fetchRequestName
        self.userInfo = userInfo
    }
}

/// A fetch index of an entity (`<fetchIndex>`): Core Data makes it an SQLite index.
public struct FetchIndexDescription: Sendable, Hashable {
    /// One element of a fetch index: a property (or an expression) and its order.
    public struct Element: Sendable, Hashable {
        /// The property's name; empty for an expression element.
        public var property: String
        /// `"Binary"` (the default) or `"RTree"`, as Xcode writes the element's type.
        public var type: String
        public var ascending: Bool
        /// The expression text of an expression element.
        public var expression: String?
        /// The expression's result type, as Xcode writes it.
        public var expressionType: String?

        public init(
            property: String, type: String = "Binary", ascending: Bool = true, expression: String? = nil,
            expressionType: String? = nil
        ) {
            self.property = property
            self.type = type
            self.ascending = ascending
            self.expression = expression
            self.expressionType = expressionType
        }

        /// Whether the element is an R-tree element (`type="RTree"`; `"R-Tree"` is read the same way).
        public var isRTree: Bool {
            let folded = type.lowercased().replacing("-", with: "")
            return folded == "rtree"
        }
    }

    public var name: String
    public var elements: [Element]
    /// The predicate of a partial index (`partialIndexPredicate`, e.g. `timestamp != nil`): only the rows
    /// it selects are indexed. The XML attribute's name is unverified against Xcode.
    public var partialIndexPredicate: String?

    public init(name: String, elements: [Element], partialIndexPredicate: String? = nil) {
        self.name = name
        self.elements = elements
        self.partialIndexPredicate = partialIndexPredicate
    }

    /// Whether this is an R-tree index (every element is an R-tree element).
    public var isRTree: Bool { !elements.isEmpty && elements.allSatisfy(\.isRTree) }
}

/// A named configuration of a model: a subset of its entities.
public struct ConfigurationDescription: Sendable, Hashable {
    public var name: String
    public var entityNames: [String]
    /// Whether Xcode marks the configuration as used with CloudKit.
    public var usedWithCloudKit: Bool

    public init(name: String, entityNames: [String], usedWithCloudKit: Bool = false) {
        self.name = name
        self.entityNames = entityNames
        self.usedWithCloudKit = usedWithCloudKit
    }
}

/// A fetch request template stored in a model (`<fetchRequest>`), kept for round-tripping.
public struct FetchRequestTemplate: Sendable, Hashable {
    public var name: String
    public var entity: String
    public var predicateString: String?
    /// The request's other settings as Xcode writes them (`fetchLimit`, `resultType`, …), by XML name.
    public var otherAttributes: [String: String]

    public init(name: String, entity: String, predicateString: String? = nil, otherAttributes: [String: String] = [:]) {
        self.name = name
        self.entity = entity
        self.predicateString = predicateString
        self.otherAttributes = otherAttributes
    }
}
