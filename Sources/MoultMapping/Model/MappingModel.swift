public import MoultModel

/// How a store made with one model version becomes a store of another: Core Data's `NSMappingModel`.
///
/// A mapping model names its source and destination models (``ModelReference``) and lists entity
/// mappings in the order they run. Read one from Moult's JSON format (``init(json:)``), from an Xcode
/// `.xcmappingmodel` (``init(xcmappingModelAt:)``), infer one (``inferred(from:to:through:sourceName:destinationName:)``), or build one in
/// code:
///
/// ```swift
/// let mapping = MappingModel(source: .init(name: "v2"), destination: .init(name: "v3")) {
///     EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person") {
///         PropertyMapping("name", "$source.name")
///     }
/// }
/// ```
///
/// A mapping may be partial (``infersRest``): it gives only the entity mappings that need a policy or
/// an expression, and the rest of its step is inferred as a lightweight step would infer it
/// (``completion(from:to:through:sourceName:destinationName:alongside:)``).
public struct MappingModel: Sendable, Hashable {
    public var sourceModel: ModelReference
    public var destinationModel: ModelReference
    /// The entity mappings, in the order they run.
    public var entityMappings: [EntityMapping]
    /// Whether the entity mappings not given are to be inferred: a partial mapping (JSON
    /// `"inferRest": true`). Completing it (``completion(from:to:through:sourceName:destinationName:alongside:)``)
    /// gives a mapping that is no longer partial. An Xcode mapping model is always complete.
    public var infersRest: Bool
    /// The names of the entity mappings inference added when a partial mapping was completed; empty
    /// for a mapping given whole, and for one not completed yet.
    public var inferredEntityMappingNames: Set<String>

    public init(
        source: ModelReference = .init(), destination: ModelReference = .init(), entityMappings: [EntityMapping], infersRest: Bool = false
    ) {
        self.sourceModel = source
        self.destinationModel = destination
        self.entityMappings = entityMappings
        self.infersRest = infersRest
        self.inferredEntityMappingNames = []
    }

    /// Whether this entity mapping was inferred to complete a partial mapping rather than given.
    public func isInferred(_ mapping: EntityMapping) -> Bool {
        inferredEntityMappingNames.contains(mapping.name)
    }

    /// The entity mapping with this name.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }

    /// The entity mappings whose source is this entity, in order.
    public func entityMappings(fromSource entityName: String) -> [EntityMapping] {
        entityMappings.filter { $0.sourceEntityName == entityName }
    }

    /// The entity mappings sorted by their ``EntityMapping/order`` (mappings without one keep their
    /// place after the ordered ones).
    public var orderedEntityMappings: [EntityMapping] {
        entityMappings.enumerated().sorted { lhs, rhs in
            switch (lhs.element.order, rhs.element.order) {
            case let (l?, r?): l != r ? l < r : lhs.offset < rhs.offset
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): lhs.offset < rhs.offset
            }
        }.map(\.element)
    }
}

/// Which model version a mapping model reads from or writes to.
///
/// Every field is optional: a hand-written mapping may name the version only. The entity version
/// hashes, when present, identify the version exactly (Core Data matches stores by them).
public struct ModelReference: Sendable, Hashable {
    /// The version's name (`"v2"`, `"Model 2"`), if known.
    public var name: String?
    /// The path Xcode recorded or the user gave (`Model.xcdatamodeld/Model 2.xcdatamodel`), if any.
    public var path: String?
    /// Entity name → version hash, if known.
    public var entityVersionHashes: [String: VersionHash]

    public init(name: String? = nil, path: String? = nil, entityVersionHashes: [String: VersionHash] = [:]) {
        self.name = name
        self.path = path
        self.entityVersionHashes = entityVersionHashes
    }
}
