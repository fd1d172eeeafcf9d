import MoultAssociations
public import MoultMapping
public import MoultModel
import MoultStore

// MARK: - Associations

extension MigrationManager {
    /// Writes the associations recorded since the last flush into the chunk's transaction.
    func flushAssociations() throws {
        guard !pendingAssociations.isEmpty else { return }
        try associations.associate(pendingAssociations)
        pendingAssociations.removeAll(keepingCapacity: true)
    }

    /// Forgets the associations of a chunk that failed.
    func discardPendingAssociations() {
        pendingAssociations.removeAll(keepingCapacity: true)
    }

    /// Records that `mapping` made `destination` from `source`.
    public func associate(source: ObjectID, destination: ObjectID, mapping: EntityMapping) throws {
        let compiled = try self.compiled(mapping)
        pendingAssociations.append(Association(source: source, destination: destination, mapping: compiled.index))
        if compiled.mirrorsAssociations { try mirror(source: source, destination: destination, mapping: compiled.index) }
    }

    /// The destination objects the named entity mapping made from these source objects.
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for source in sourceInstances {
            result += try associations.destinations(forMapping: index, source: source.primaryKey)
        }
        return result
    }

    /// The source objects the named entity mapping made these destination objects from.
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for destination in destinationInstances {
            result += try associations.sources(forMapping: index, destination: destination)
        }
        return result
    }

    /// The destinations of these source objects through whichever mappings migrate the destination
    /// entity of the source relationship `name` of the current mapping's source entity.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        var result: [ObjectID] = []
        for source in sourceInstances {
            result += try associations.destinations(forSource: source, mappings: try mappings(migrating: source.entity, through: name))
        }
        return result
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
