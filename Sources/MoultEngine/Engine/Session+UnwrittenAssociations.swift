import MoultAssociations
import MoultModel
import MoultStore

extension Session {
    // MARK: - Associations not written

    /// The source keys of a chunk recorded in place of its associations, in the order its objects were
    /// made: of a uniquing mapping (``CompiledMapping/keyMapCopy``), each object's first holder.
    private func unwrittenKeys(_ chunk: UnreadAssociations.Chunk, _ plan: MigrationPlan) throws -> (CompiledMapping, [Int64]) {
        let pass = plan.passes[chunk.pass]
        let compiled = try variant(mappings[pass.mapping], pass.partition)
        if compiled.keyMapCopy != nil, let destination {
            let holders = try EngineKeyMap.firstHolders(from: chunk.first, count: Int(chunk.count), mapping: compiled.index, in: destination.database)
            guard Int64(holders.count) == chunk.count else {
                throw MigrationError(
                    .checkpointMismatch, "a chunk of '\(compiled.name)' made \(chunk.count) objects, but its key table holds \(holders.count)",
                    mapping: compiled.name)
            }
            return (compiled, holders)
        }
        guard let bulk = compiled.bulkCopy else {
            throw MigrationError(
                .checkpointMismatch, "a chunk of '\(compiled.name)' was copied in bulk, but this mapping no longer can be; start the migration again",
                mapping: compiled.name)
        }
        guard let sqlSource else {
            throw MigrationError(
                .checkpointMismatch, "a chunk of '\(compiled.name)' was copied in bulk from an SQLite source, but this source is not one; start the migration again",
                mapping: compiled.name)
        }
        let keys = try bulk.sourceKeys(
            after: chunk.lower, through: chunk.upper, filterArguments: compiled.filterSQL?.arguments ?? [], in: sqlSource.database)
        guard Int64(keys.count) == chunk.count else {
            throw MigrationError(
                .checkpointMismatch, "a chunk of '\(compiled.name)' made \(chunk.count) objects, but its source now holds \(keys.count)",
                mapping: compiled.name)
        }
        return (compiled, keys)
    }

    /// Writes the associations of the chunks recorded without them (see ``UnreadAssociations``) whose
    /// mapping this run reads: a resume under options that read more than the run began with.
    func writeUnwrittenAssociations(_ plan: MigrationPlan, manager: MigrationManager, destination: SQLiteStore) throws {
        let passes = Set(plan.passes.indices.filter { !manager.unreadAssociations.contains(plan.passes[$0].mapping) })
        let chunks = try UnreadAssociations.chunks(ofPasses: passes, in: destination.database)
        guard !chunks.isEmpty else { return }
        try manager.associations.beginChunk()
        do {
            for chunk in chunks {
                let pass = plan.passes[chunk.pass]
                let compiled = try variant(mappings[pass.mapping], pass.partition)
                guard let made = compiled.destination?.number, let from = compiled.source?.number else { continue }
                if let keyMap = compiled.keyMapCopy {
                    // Every object of the chunk's source with the object of its value, as the chunk would have written them.
                    let pairs = try keyMap.associations(
                        after: chunk.lower, through: chunk.upper, filterArguments: compiled.filterSQL?.arguments ?? [], in: destination.database)
                    try manager.associations.associate(
                        pairs.map {
                            Association(
                                source: ObjectID(entity: from, primaryKey: $0.source), destination: ObjectID(entity: made, primaryKey: $0.destination),
                                mapping: compiled.index)
                        })
                    continue
                }
                let (_, keys) = try unwrittenKeys(chunk, plan)
                try manager.associations.associate(
                    keys.enumerated().map {
                        Association(
                            source: ObjectID(entity: from, primaryKey: $0.element),
                            destination: ObjectID(entity: made, primaryKey: compiled.keepsKeys ? $0.element : chunk.first + Int64($0.offset)),
                            mapping: compiled.index)
                    })
            }
            try manager.associations.commitChunk(durable: job.options.durable)
        } catch {
            manager.associations.abortChunk()
            throw error
        }
    }

    /// The source key of a destination object made by a chunk recorded without its associations.
    func unwrittenSource(mapping: Int, destination key: Int64, _ plan: MigrationPlan) -> Int64? {
        guard let destination else { return nil }
        let passes = Set(plan.passes.indices.filter { plan.passes[$0].mapping == mapping && plan.passes[$0].stage == .createObjects })
        if mappings.indices.contains(mapping), mappings[mapping].keepsKeys {
            // Its objects kept their source keys: the chunk whose source bounds hold the key, if it made that object.
            guard let chunks = try? UnreadAssociations.chunks(ofPasses: passes, in: destination.database),
                let chunk = chunks.first(where: { $0.lower < key && key <= $0.upper }),
                let (_, keys) = try? unwrittenKeys(chunk, plan)
            else { return nil }
            return keys.contains(key) ? key : nil
        }
        guard let chunk = try? UnreadAssociations.chunk(holding: key, ofPasses: passes, in: destination.database),
            let (_, keys) = try? unwrittenKeys(chunk, plan)
        else { return nil }
        let offset = Int(key - chunk.first)
        return keys.indices.contains(offset) ? keys[offset] : nil
    }
}
