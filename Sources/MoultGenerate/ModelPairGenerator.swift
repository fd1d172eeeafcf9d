public import MoultModel

/// Seeded random pairs of model versions, the second made from the first by changes a lightweight
/// (inferred) mapping allows, for `moult test` to run on Moult itself.
///
/// ```swift
/// let pair = try ModelPairGenerator(seed: 7).pair(42)
/// try pair.model.write(to: URL(filePath: "/tmp/Pair42.xcdatamodeld"))
/// print(pair.changes)    // ["rename attribute E1.a3 → r9", "add entity E4", …]
/// ```
///
/// The first version has two to five entities (a sub-entity now and then), attributes of every stored
/// type (bounds, external storage, defaults), and relationships of every kind (to-one without inverse,
/// one-to-one, one-to-many ordered or not, many-to-many, reflexive). The second applies one to three
/// changes: an attribute added, removed, renamed (renaming identifier), widened (Integer 16 → 32 → 64,
/// Float → Double), made optional, or made required with a default; external storage turned on or off;
/// an entity added, removed or renamed; a relationship added, removed or renamed.
public struct ModelPairGenerator: Sendable {
    public var seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
    }

    /// A pair: the versioned model (`v1`, `v2`, current `v2`) and the changes made, in words.
    public struct Pair: Sendable {
        public var model: VersionedModel
        public var changes: [String]
    }

    /// The pair numbered `index` of this seed.
    ///
    /// - Throws: ``GeneratorError`` when a change left a model that does not resolve (a generator bug:
    ///   the pair's number and seed reproduce it).
    public func pair(_ index: Int) throws(GeneratorError) -> Pair {
        var builder = RandomModel(draw: Draw(seed, "model pair", index))
        builder.makeFirstVersion()
        let first = builder.entities
        var changes: [String] = []
        let wanted = 1 + builder.draw.below(3)
        // A change that finds nothing to change (no required attribute to make optional…) is drawn again.
        for _ in 0..<(wanted * 10) where changes.count < wanted {
            if let change = builder.change() { changes.append(change) }
        }
        do {
            let old = try ObjectModel(entities: first, versionIdentifier: "1")
            let new = try ObjectModel(entities: builder.entities, versionIdentifier: "2")
            let model = try VersionedModel(
                name: "Pair\(index)", versions: [.init(name: "v1", model: old), .init(name: "v2", model: new)], currentVersionName: "v2")
            return Pair(model: model, changes: changes)
        } catch {
            throw GeneratorError(.invalidOption, "pair \(index) of seed \(seed) does not resolve after \(changes): \(error.description)")
        }
    }
}

/// A model being made at random: the entities, and the counter that keeps every name unique.
struct RandomModel {
    var draw: Draw
    var entities: [EntityDescription] = []
    private var counter = 0

    init(draw: Draw) {
        self.draw = draw
    }

    mutating func name(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }

    static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri, .transformable,
    ]

    // MARK: - The first version

    mutating func makeFirstVersion() {
        for _ in 0..<(2 + draw.below(4)) { entities.append(newEntity()) }
        if draw.chance(30) {
            var sub = newEntity()
            sub.parentName = entities[0].name
            entities.append(sub)
        }
        for _ in 0..<(1 + draw.below(4)) { addRelationship() }
    }

    mutating func newEntity() -> EntityDescription {
        let name = name("E")
        return EntityDescription(name: name, representedClassName: name, attributes: (0..<(1 + draw.below(5))).map { _ in newAttribute() })
    }

    mutating func newAttribute() -> AttributeDescription {
        let type = Self.types[draw.below(Self.types.count)]
        var attribute = AttributeDescription(name: name("a"), type: type, isOptional: draw.chance(75))
        if !attribute.isOptional { attribute.defaultValueString = Self.defaultValue(type) }
        if attribute.isOptional && type.isInteger && draw.chance(20) {
            attribute.minValueString = "0"
            attribute.maxValueString = "1000"
        }
        if type == .string && draw.chance(15) { attribute.maxValueString = "30" }
        if type == .binary { attribute.allowsExternalBinaryDataStorage = draw.chance(50) }
        if type == .transformable { attribute.valueTransformerName = "NSSecureUnarchiveFromData" }
        attribute.usesScalarValueType = type.isNumeric || type == .boolean
        return attribute
    }

    /// A default value Xcode would write for a required attribute of `type` (nil where none is usual).
    static func defaultValue(_ type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "0"
        case .decimal, .double, .float: "0.0"
        case .string: "none"
        default: nil
        }
    }

    /// Adds a relationship of a random kind between two entities (the same one, now and then).
    mutating func addRelationship() {
        guard !entities.isEmpty else { return }
        let (a, b) = (draw.below(entities.count), draw.below(entities.count))
        let (source, destination) = (entities[a].name, entities[b].name)
        let forward = name("r")
        switch draw.below(5) {
        case 0:
            entities[a].relationships.append(RelationshipDescription(name: forward, destination: destination))
        case 1 where a != b:
            let back = name("r")
            entities[a].relationships.append(RelationshipDescription(name: forward, destination: destination, inverse: back))
            entities[b].relationships.append(RelationshipDescription(name: back, destination: source, inverse: forward))
        case 2, 1:
            let back = name("r")
            entities[a].relationships.append(
                RelationshipDescription(name: forward, destination: destination, inverse: back, isToMany: true, isOrdered: draw.chance(40)))
            entities[b].relationships.append(RelationshipDescription(name: back, destination: source, inverse: forward))
        case 3:
            let back = name("r")
            entities[a].relationships.append(RelationshipDescription(name: forward, destination: destination, inverse: back, isToMany: true))
            entities[b].relationships.append(RelationshipDescription(name: back, destination: source, inverse: forward, isToMany: true))
        default:
            entities[a].relationships.append(RelationshipDescription(name: forward, destination: destination, isToMany: true))
        }
    }
}
