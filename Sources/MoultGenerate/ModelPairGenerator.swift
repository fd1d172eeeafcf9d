public import MoultModel

/// Seeded random pairs of model versions, the second made from the first by changes a lightweight
/// (inferred) mapping allows, for `moult test` to run on Moult itself.
///
/// ```swift
/// let pair = try ModelPairGenerator(seed: 7).pair(42)
/// try FileOperations.writeFolder(pair.model.xcodeFiles(), at: URL(filePath: "/tmp/Pair42.xcdatamodeld"))
/// print(pair.changes)    // ["rename attribute E1.a3 → r9", "add entity E4", …]
/// ```
///
/// The first version has two to five entities (a sub-entity now and then), attributes of every stored
/// type (bounds, external storage, defaults), and relationships of every kind (to-one without inverse,
/// one-to-one, one-to-many ordered or not, many-to-many, reflexive). The second applies one to three
/// changes: an attribute added, removed, renamed (renaming identifier), widened (Integer 16 → 32 → 64,
/// Float → Double), made optional, or made required with a default; external storage turned on or off;
/// an entity added, removed or renamed; a relationship added, removed or renamed.
///
/// The first version also has the rules a store must keep, drawn apart (`RandomModel.addRules`):
/// uniqueness constraints of one or two attributes, patterns and length bounds on strings, one-to-ones
/// required on one side or both, to-ones required under a to-many, and minimum and maximum counts of
/// to-manys (on one side of a many-to-many or both). The changes keep them (a renamed attribute is
/// renamed in its constraint, a removed one leaves it; an attribute of a constraint is never made required
/// with a default, which would give every object without a value the same one).
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
        // The rules take a draw of their own: the entities, attributes and changes of a pair are those
        // they were before rules were drawn.
        var rules = Draw(seed, "model pair rules", index)
        builder.addRules(&rules)
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

// MARK: - Rules

extension RandomModel {
    /// The types whose values the store generator makes distinct for a uniqueness constraint.
    static let uniqueTypes: Set<AttributeType> = [.integer16, .integer32, .integer64, .string, .uuid, .uri, .double, .date]

    /// Adds, with `draw`, the rules a store must keep: uniqueness constraints, string patterns and
    /// lengths, required to-ones and to-many counts.
    mutating func addRules(_ draw: inout Draw) {
        let parents = Set(entities.compactMap(\.parentName))
        for index in entities.indices {
            for slot in entities[index].attributes.indices where entities[index].attributes[slot].attributeType == .string {
                if draw.chance(20) {
                    entities[index].attributes[slot].regularExpressionString = ["[a-z]+", "[A-Za-z0-9_ -]*", "[a-z][a-z0-9]*"][draw.below(3)]
                }
                if draw.chance(15) { entities[index].attributes[slot].minValueString = "1" }
            }
            // A constraint on an entity outside any hierarchy (its index is the table's own).
            guard entities[index].parentName == nil, !parents.contains(entities[index].name), draw.chance(35) else { continue }
            let candidates = entities[index].attributes.filter { Self.uniqueTypes.contains($0.attributeType) }.map(\.name)
            guard !candidates.isEmpty else { continue }
            let first = candidates[draw.below(candidates.count)]
            let second = candidates.count > 1 && draw.chance(25) ? candidates.filter { $0 != first }[draw.below(candidates.count - 1)] : nil
            entities[index].uniquenessConstraints.append([first] + (second.map { [$0] } ?? []))
        }
        // Relationships: each pair of inverses once, from the side that names the other first.
        for index in entities.indices {
            for slot in entities[index].relationships.indices {
                let relationship = entities[index].relationships[slot]
                guard let inverseName = relationship.inverseName,
                    let other = entities.firstIndex(where: { $0.name == relationship.destinationEntity }),
                    let back = entities[other].relationships.firstIndex(where: { $0.name == inverseName }),
                    (index, slot) < (other, back)
                else { continue }
                let inverse = entities[other].relationships[back]
                switch (relationship.isToMany, inverse.isToMany) {
                case (false, false) where index != other:
                    // A one-to-one required on one side, or both.
                    if draw.chance(40) { entities[index].relationships[slot].isOptional = false }
                    if draw.chance(30) { entities[other].relationships[back].isOptional = false }
                case (true, false) where index != other:
                    if draw.chance(30) { entities[other].relationships[back].isOptional = false }
                    if draw.chance(35) { Self.count(&entities[index].relationships[slot], &draw) }
                case (false, true) where index != other:
                    if draw.chance(30) { entities[index].relationships[slot].isOptional = false }
                    if draw.chance(35) { Self.count(&entities[other].relationships[back], &draw) }
                case (true, true) where index != other:
                    if draw.chance(35) { Self.count(&entities[index].relationships[slot], &draw) }
                    if draw.chance(25) { Self.count(&entities[other].relationships[back], &draw) }
                default:
                    break
                }
            }
        }
    }

    /// Gives a to-many a minimum count, a maximum, or both; required now and then.
    private static func count(_ relationship: inout RelationshipDescription, _ draw: inout Draw) {
        switch draw.below(3) {
        case 0: relationship.minCount = 1
        case 1: relationship.maxCount = 2 + draw.below(3)
        default:
            relationship.minCount = 1
            relationship.maxCount = 3
        }
        if draw.chance(30) { relationship.isOptional = false }
    }
}
