import MoultModel
import MoultStore

// MARK: - To-many relationships

extension GenerationRun {
    /// Writes every to-many relationship, once per pair of inverses, in batches of sources: through the
    /// inverse's column (each destination has one source at most; some none when that side is
    /// optional), or as join rows (none, one or a few destinations per source, more than one source per
    /// destination).
    mutating func writeToManyLinks() throws {
        let model = generator.model
        for entity in model.entities {
            guard let layout = store.layout.entity(named: entity.name) else { continue }
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let toMany = layout.toMany(named: relationship.name), isWrittenFromThisSide(relationship, owner: entity.name) else { continue }
                try link(relationship, owner: entity.name, storage: toMany.storage)
            }
        }
    }

    /// A many-to-many is written from one side only: the ordered one, or the first by name.
    private func isWrittenFromThisSide(_ relationship: RelationshipDescription, owner: String) -> Bool {
        guard let inverse = generator.model.inverse(of: relationship), inverse.isToMany else { return true }
        if relationship.isOrdered != inverse.isOrdered { return relationship.isOrdered }
        let inverseOwner = relationship.inverseEntity ?? relationship.destinationEntity
        return (owner, relationship.name) <= (inverseOwner, inverse.name)
    }

    private mutating func link(_ relationship: RelationshipDescription, owner: String, storage: ToManyLayout.Storage) throws {
        let sources = population.kind(of: owner)
        let destinations = population.kind(of: relationship.destinationEntity)
        guard sources.count > 0, destinations.count > 0 else { return }
        let key = "\(owner).\(relationship.name)"
        let inverse = generator.model.inverse(of: relationship)
        let spread = inverse.flatMap { EvenSpread(relationship, inverse: $0, sources: sources.count, destinations: destinations.count) }
        var start = 0
        while start < sources.count {
            let end = min(start + generator.batchSize, sources.count)
            var written = 0
            try writer.write {
                for source in start..<end {
                    let picked: [Int]
                    if case .destinationColumn = storage {
                        picked = owned(
                            by: source, of: sources.count, destinations.count, key: key, optional: inverse?.isOptional ?? true,
                            minCount: relationship.minCount, maxCount: relationship.maxCount)
                    } else if let spread {
                        picked = spread.destinations(of: source)
                    } else {
                        picked = related(to: source, destinations.count, key: key, relationship: relationship)
                    }
                    guard !picked.isEmpty else { continue }
                    try writer.relate(relationship.name, sources.id(at: source), to: picked.map(destinations.id(at:)))
                    written += picked.count
                }
            }
            links += written
            start = end
        }
    }

    /// The destinations a source owns through a column: those numbered `source`, `source + sources`…,
    /// but for a few left without a source when the inverse is optional.
    ///
    /// With a minimum count, or a maximum count and a required inverse, each source owns a block of
    /// consecutive destinations instead, as many as it may hold (``Population`` made the counts fit), a
    /// few left without a source when the inverse is optional and the minimum allows it.
    private func owned(by source: Int, of sources: Int, _ destinations: Int, key: String, optional: Bool, minCount: Int, maxCount: Int) -> [Int] {
        if minCount > 0 || (maxCount > 0 && !optional) {
            let (share, rest) = (destinations / sources, destinations % sources)
            let start = source * share + min(source, rest)
            var picked = Array(start..<(start + share + (source < rest ? 1 : 0)))
            if maxCount > 0 && picked.count > maxCount { picked = Array(picked.prefix(maxCount)) }
            guard optional else { return picked }
            return picked.enumerated().filter { offset, destination in
                var draw = Draw(generator.seed, "owner " + key, destination)
                return offset < minCount || !draw.chance(20)
            }.map(\.element)
        }
        var picked: [Int] = []
        for destination in stride(from: source, to: destinations, by: sources) {
            var draw = Draw(generator.seed, "owner " + key, destination)
            if optional && draw.chance(20) { continue }
            picked.append(destination)
            if maxCount > 0 && picked.count == maxCount { break }
        }
        return picked
    }

    /// The destinations of a source through join rows: none for one source in five (unless a minimum
    /// count asks for some), else one to three distinct ones, within the relationship's counts.
    private func related(to source: Int, _ destinations: Int, key: String, relationship: RelationshipDescription) -> [Int] {
        var draw = Draw(generator.seed, "links " + key, source)
        var count = source % 5 == 0 ? 0 : 1 + draw.below(3)
        count = max(count, relationship.minCount)
        if relationship.maxCount > 0 { count = min(count, relationship.maxCount) }
        count = min(count, destinations)
        var picked: [Int] = []
        while picked.count < count {
            let candidate = draw.below(destinations)
            if !picked.contains(candidate) { picked.append(candidate) }
        }
        return picked
    }
}

// MARK: - Many-to-manys with counts on both sides

/// The links of a many-to-many whose inverse has a minimum or maximum count: every source gets the same
/// number of destinations give or take one, taken in turn around the destinations, so that every
/// destination is reached the same number of times give or take one, and both sides' counts hold.
///
/// The total is the usual number of links (about 1.6 a source) moved into the range both sides allow
/// (``Population`` trimmed the counts so that the range is not empty). Computed per source, in constant
/// memory.
///
/// ```swift
/// // Person.clubs (2 to 4) ↔ Club.members (at most 5), 25 persons and 10 clubs (Population trimmed 30
/// // persons to 25: 30 × 2 links would not fit in 10 × 5): 50 links, 2 a person, 5 a club.
/// let spread = EvenSpread(clubs, inverse: members, sources: 25, destinations: 10)!
/// spread.destinations(of: 0)   // [0, 1]
/// spread.destinations(of: 5)   // [0, 1] again: the cycle has gone round once
/// ```
struct EvenSpread {
    let sources: Int
    let destinations: Int
    let total: Int

    init?(_ relationship: RelationshipDescription, inverse: RelationshipDescription, sources: Int, destinations: Int) {
        guard inverse.isToMany, inverse.minCount > 0 || inverse.maxCount > 0, sources > 0, destinations > 0 else { return nil }
        let most = sources * destinations
        let low = max(sources * relationship.minCount, destinations * inverse.minCount)
        var high = most
        if relationship.maxCount > 0 { high = min(high, sources * relationship.maxCount) }
        if inverse.maxCount > 0 { high = min(high, destinations * inverse.maxCount) }
        self.sources = sources
        self.destinations = destinations
        total = min(max(sources * 8 / 5, low), max(high, low))
    }

    /// The destinations of source `source`: a run of the cycle of destinations, where the previous
    /// source's ended.
    func destinations(of source: Int) -> [Int] {
        let first = source * total / sources
        let end = (source + 1) * total / sources
        return (first..<end).map { $0 % destinations }
    }
}
