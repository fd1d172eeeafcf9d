import MoultAssociations
import MoultModel
import MoultStore

// MARK: - The built-in uniquing policy's key table (see `EngineKeyMap`)

extension MigrationManager {
    /// The destination object a uniquing mapping made for a key value, the chunk's own included; nil
    /// when none was made yet.
    func keyMapped(_ key: Value, mapping: CompiledMapping) throws -> ObjectID? {
        guard let layout = mapping.destination else { return nil }
        let found = try evaluation.keyMapped(mapping: mapping.index, key: key)
            ?? EngineKeyMap.destination(ofKey: key, mapping: mapping.index, in: destination)
        return found.map { ObjectID(entity: layout.number, primaryKey: $0) }
    }

    /// Records the object a uniquing mapping made for a key value from its first holder.
    func recordKey(_ key: Value, made: ObjectID, first: ObjectID, mapping: CompiledMapping) {
        evaluation.append(.keyMap(mapping: mapping.index, key: key, destination: made.primaryKey, first: first.primaryKey))
    }

    /// Stage 1 of a chunk of a uniquing mapping as set operations (see ``CompiledMapping/keyMapCopy``):
    /// the chunk's new values get objects whose primary keys continue from the writer's counter in the
    /// order of their first holder, and every source object of the chunk is associated with the object
    /// of its value, as the per-object path associates it. It is the chunk writer's: SQLite evaluates the
    /// mapping itself, in the chunk's transaction.
    ///
    /// When nothing in the run reads the mapping's associations (``UnreadAssociations``: the to-ones that
    /// look its objects up are written at insert, from its mirror), the chunk is recorded instead: the
    /// associations follow from the source and the key table whenever they are wanted.
    ///
    /// - Returns: false, with nothing written, when the chunk holds a row the per-object path would
    ///   decode differently (see `EngineKeyMap`): that chunk takes the per-object path.
    /// `guarded`: the chunk's guard already ran on the second thread and refused nothing.
    func uniqueCreate(
        _ mapping: CompiledMapping, _ keys: EngineKeyMap, pass: Int, after lowerBound: Int64, through upperBound: Int64, guarded: Bool = false
    ) throws -> Bool {
        guard let layout = mapping.destination else { return true }
        let filterArguments = mapping.filterSQL?.arguments ?? []
        let first = try writer.lastPrimaryKey(for: layout.name) + 1
        let made: Int?
        do {
            made = try keys.make(
                first: first, after: lowerBound, through: upperBound, filterArguments: filterArguments, guarded: guarded, in: destination)
        } catch {
            throw MigrationError(
                .evaluationFailed, "making the chunk's unique '\(layout.name)' objects failed", mapping: mapping.name, entity: layout.name,
                underlying: error)
        }
        guard let made else { return false }
        if made > 0 { _ = try writer.allocatePrimaryKeys(for: layout.name, count: made) }
        if mapping.mirrorsAssociations { FaultInjection.reach(.associationsMirrored) }
        if unreadAssociations.contains(mapping.index) {
            // A chunk that made no object (each of its values had one already: most chunks) is
            // recorded under a key no object has, -1 - its lower bound, so that two such chunks of a
            // pass never share one, nor one with a chunk that made objects.
            let recorded = made > 0 ? first : -1 - lowerBound
            try UnreadAssociations.record(pass: pass, first: recorded, count: made, lower: lowerBound, upper: upperBound, in: destination)
            FaultInjection.reach(.associationsUnwritten)
            return true
        }
        let from = mapping.source?.number ?? 0
        let pairs = try keys.associations(after: lowerBound, through: upperBound, filterArguments: filterArguments, in: destination)
        try associations.associate(
            pairs.map { pair in
                Association(
                    source: ObjectID(entity: from, primaryKey: pair.source), destination: ObjectID(entity: layout.number, primaryKey: pair.destination),
                    mapping: mapping.index)
            })
        return true
    }
}
