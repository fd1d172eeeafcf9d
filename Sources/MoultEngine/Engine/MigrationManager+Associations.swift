import MoultAssociations
public import MoultMapping
public import MoultModel
import MoultStore

// MARK: - Associations

extension MigrationManager {
    // Look-ups see the association table's committed entries and the chunk's own, not yet written
    // (see ``ChunkEvaluation``), merged as the table orders them: destinations by (entity, key),
    // sources by key.

    /// The destinations `mapping` made from the source key, the chunk's own included.
    func destinations(forMapping mapping: Int, source: Int64) throws -> [ObjectID] {
        let committed = try associations.destinations(forMapping: mapping, source: source)
        guard evaluation.hasAssociations else { return committed }
        return Self.merged(committed, evaluation.destinations(forMapping: mapping, source: source))
    }

    /// ``destinations(forMapping:source:)`` for many source keys, in their order.
    func destinations(forMapping mapping: Int, sources: [Int64]) throws -> [[ObjectID]] {
        let committed = try associations.destinations(forMapping: mapping, sources: sources)
        guard evaluation.hasAssociations else { return committed }
        return zip(committed, sources).map { Self.merged($0, evaluation.destinations(forMapping: mapping, source: $1)) }
    }

    private static func merged(_ committed: [ObjectID], _ recorded: [ObjectID]) -> [ObjectID] {
        guard !recorded.isEmpty else { return committed }
        return Set(committed + recorded).sorted { ($0.entity, $0.primaryKey) < ($1.entity, $1.primaryKey) }
    }

    /// Records that `mapping` made `destination` from `source`.
    public func associate(source: ObjectID, destination: ObjectID, mapping: EntityMapping) throws {
        let compiled = try self.compiled(mapping)
        evaluation.associate(Association(source: source, destination: destination, mapping: compiled.index))
        if compiled.mirrorsAssociations { try mirror(source: source, destination: destination, mapping: compiled.index) }
    }

    /// The destination objects the named entity mapping made from these source objects.
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for source in sourceInstances {
            result += try destinations(forMapping: index, source: source.primaryKey)
        }
        return result
    }

    /// The source objects the named entity mapping made these destination objects from.
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectID]) throws -> [ObjectID] {
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for destination in destinationInstances {
            let committed = try associations.sources(forMapping: index, destination: destination)
            let recorded = evaluation.hasAssociations ? evaluation.sources(forMapping: index, destination: destination) : []
            result += recorded.isEmpty
                ? committed : Set(committed + recorded).sorted { ($0.primaryKey, $0.entity) < ($1.primaryKey, $1.entity) }
        }
        return result
    }

    /// The destinations of these source objects through whichever mappings migrate the destination
    /// entity of the source relationship `name` of the current mapping's source entity.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        var result: [ObjectID] = []
        for source in sourceInstances {
            let mappings = try mappings(migrating: source.entity, through: name)
            var found: [ObjectID] = []
            if evaluation.hasAssociations {
                for mapping in mappings { found += try destinations(forMapping: mapping, source: source.primaryKey) }
            } else {
                found = try associations.destinations(forSource: source, mappings: mappings)
            }
            // A to-one's key that names no source object, into a to-one: it may be kept (see `keptDangling`).
            if found.isEmpty, mappings.count == 1, isToOneOnBothSides(name),
                let kept = try keptDangling(lookup: mappings[0], sourceKey: source.primaryKey)
            {
                found = [kept]
            }
            result += found
        }
        return result
    }

    /// Whether `name` is a to-one of the current mapping's source entity and of its destination entity.
    private func isToOneOnBothSides(_ name: String) -> Bool {
        guard let mapping = currentMapping, let from = mapping.sourceEntityName, let into = mapping.destinationEntityName,
            let old = sourceModel.relationship(named: name, of: from), let new = destinationModel.relationship(named: name, of: into)
        else { return false }
        return !old.isToMany && !new.isToMany
    }

    struct SourceRelationshipKey: Hashable {
        var mapping: String
        var relationship: String
        var sourceEntity: Int32
    }

    /// The mappings that migrate an object of `entity` reached through the current mapping's source
    /// relationship `name`, worked out once per (mapping, relationship, entity): the model look-ups
    /// are not repeated per object.
    private func mappings(migrating entityNumber: Int32, through name: String) throws -> [Int] {
        guard let mapping = currentMapping, let sourceEntity = mapping.sourceEntityName,
            let relationship = sourceModel.relationship(named: name, of: sourceEntity)
        else {
            throw MigrationError(
                .invalidMapping, "the source entity has no relationship named '\(name)'", mapping: currentMapping?.name)
        }
        let key = SourceRelationshipKey(mapping: currentCompiled?.name ?? mapping.name, relationship: name, sourceEntity: entityNumber)
        if let known = sourceRelationshipMappings[key] { return known }
        guard sourceLayout.entity(number: entityNumber) != nil else {
            sourceRelationshipMappings[key] = []
            return []
        }
        // Only mappings that make objects the destination relationship can hold: a source object may
        // also be migrated into an unrelated entity (an Adult into its Company).
        var accepted: Set<Int32>?
        if let destinationEntity = mapping.destinationEntityName,
            let destinationRelationship = destinationModel.relationship(named: name, of: destinationEntity),
            let target = destinationLayout.entity(named: destinationRelationship.destinationEntity)
        {
            accepted = Set(target.hierarchyNumbers)
        }
        let relevant = mappings.filter { compiled in
            guard let accepted else { return true }
            return compiled.destination.map { accepted.contains($0.number) } ?? false
        }
        // Mappings whose source entity is this object's own entity, or (for objects of a sub-entity
        // migrated by a mapping of the destination entity) the relationship's destination.
        let candidates = relevant.filter { $0.source?.number == entityNumber }.map(\.index)
        let chosen = candidates.isEmpty
            ? relevant.filter { $0.mapping.sourceEntityName == relationship.destinationEntity }.map(\.index) : candidates
        sourceRelationshipMappings[key] = chosen
        return chosen
    }
}
