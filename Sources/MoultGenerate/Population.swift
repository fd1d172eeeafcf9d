import MoultModel
import MoultStore

/// How many objects each concrete entity of a generated store gets, and the primary keys they take.
///
/// Objects are spread evenly over the concrete entities (in the layout's order); within a hierarchy,
/// each entity's objects take consecutive primary keys after those of the entities before it, so any
/// object's id is known before it is written and a relationship can name an object not yet inserted.
struct Population: Sendable {
    struct Member: Sendable, Hashable {
        var name: String
        var number: Int32
        var count: Int
        /// The primary key of the member's first object.
        var firstKey: Int64
    }

    /// The concrete entities, in the order they are written.
    let members: [Member]
    private let byName: [String: Int]
    private let model: ObjectModel

    init(layout: StoreLayout, objects: Int) {
        let concrete = layout.entities.filter { !$0.isAbstract }
        var counts = concrete.enumerated().map { index, _ in
            objects / max(concrete.count, 1) + (index < objects % max(concrete.count, 1) ? 1 : 0)
        }
        Self.fitCardinalities(&counts, of: concrete.map(\.name), model: layout.model)
        var next: [Int32: Int64] = [:]
        var members: [Member] = []
        for (entity, count) in zip(concrete, counts) {
            let first = (next[entity.rootNumber] ?? 0) + 1
            next[entity.rootNumber] = first + Int64(count) - 1
            members.append(Member(name: entity.name, number: entity.number, count: count, firstKey: first))
        }
        self.members = members
        byName = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.name, $0) })
        model = layout.model
    }

    // MARK: - Cardinalities

    /// Trims the counts (never raises one) until every relationship can keep its cardinality: the two
    /// sides of a one-to-one required on a side hold as many objects (an even number for one that is
    /// its own inverse); the sources of a to-many whose inverse is a to-one can each own at least its
    /// minimum count of the destinations, and, when the inverse is required, at most its maximum hold
    /// them all.
    static func fitCardinalities(_ counts: inout [Int], of names: [String], model: ObjectModel) {
        func kind(_ entity: String) -> [Int] { names.indices.filter { model.entity(names[$0], isKindOf: entity) } }
        func total(_ members: [Int]) -> Int { members.reduce(0) { $0 + counts[$1] } }
        func trim(_ members: [Int], to target: Int) {
            var excess = total(members) - max(target, 0)
            for member in members.reversed() where excess > 0 {
                let cut = min(excess, counts[member])
                counts[member] -= cut
                excess -= cut
            }
        }
        for _ in 0..<16 {
            let before = counts
            for entity in model.entities {
                for relationship in entity.relationships where !relationship.isTransient {
                    guard let inverse = model.inverse(of: relationship) else { continue }
                    let sources = kind(entity.name), destinations = kind(relationship.destinationEntity)
                    if !relationship.isToMany && !inverse.isToMany && !(relationship.isOptional && inverse.isOptional) {
                        if sources == destinations {
                            trim(sources, to: total(sources) / 2 * 2)
                        } else {
                            let fewer = min(total(sources), total(destinations))
                            trim(sources, to: fewer)
                            trim(destinations, to: fewer)
                        }
                    } else if relationship.isToMany && inverse.isToMany && sources != destinations && (inverse.minCount > 0 || inverse.maxCount > 0) {
                        // A many-to-many with counts on the inverse (EvenSpread): the sources' minimums fit
                        // under the destinations' maximums, and the other way round; a minimum larger
                        // than the other side leaves no object of this side.
                        if relationship.minCount > total(destinations) { trim(sources, to: 0) }
                        if inverse.minCount > total(sources) { trim(destinations, to: 0) }
                        if relationship.minCount > 0 && inverse.maxCount > 0 {
                            trim(sources, to: total(destinations) * inverse.maxCount / relationship.minCount)
                        }
                        if inverse.minCount > 0 && relationship.maxCount > 0 {
                            trim(destinations, to: total(sources) * relationship.maxCount / inverse.minCount)
                        }
                    } else if relationship.isToMany && !inverse.isToMany && sources != destinations {
                        if relationship.minCount > 0 { trim(sources, to: total(destinations) / relationship.minCount) }
                        if relationship.maxCount > 0 && !inverse.isOptional { trim(destinations, to: total(sources) * relationship.maxCount) }
                    }
                }
            }
            if counts == before { break }
        }
    }

    func member(_ name: String) -> Member? { byName[name].map { members[$0] } }

    /// The objects of an entity and its sub-entities, numbered from 0 across them.
    func kind(of entityName: String) -> Kind {
        Kind(members: members.filter { model.entity($0.name, isKindOf: entityName) })
    }

    /// The objects of one entity's hierarchy, numbered 0 ..< count.
    struct Kind: Sendable {
        let members: [Member]
        var count: Int { members.reduce(0) { $0 + $1.count } }

        /// The id of the object numbered `index`.
        func id(at index: Int) -> ObjectID {
            var rest = index
            for member in members {
                if rest < member.count { return ObjectID(entity: member.number, primaryKey: member.firstKey + Int64(rest)) }
                rest -= member.count
            }
            preconditionFailure("object \(index) is beyond the \(count) objects of the kind")
        }

        /// The number, in this kind, of an entity's object `index` (the entity must belong to it).
        func position(of entityName: String, _ index: Int) -> Int? {
            var offset = 0
            for member in members {
                if member.name == entityName { return offset + index }
                offset += member.count
            }
            return nil
        }
    }
}

/// A seeded generator of 64-bit values (SplitMix64), derived per object so that any object's values
/// are known without generating those before it.
struct Draw {
    private var state: UInt64

    init(_ parts: UInt64...) {
        var state: UInt64 = 0x243F_6A88_85A3_08D3
        for part in parts { state = Self.mix(state ^ part) }
        self.state = state
    }

    init(_ seed: UInt64, _ text: String, _ index: Int) {
        self.init(seed, Self.stableHash(text), UInt64(bitPattern: Int64(index)))
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func stableHash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A value in 0 ..< bound (0 when bound is 0).
    mutating func below(_ bound: Int) -> Int {
        bound <= 0 ? 0 : Int(next() % UInt64(bound))
    }

    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
