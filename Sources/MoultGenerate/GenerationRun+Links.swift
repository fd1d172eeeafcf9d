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
