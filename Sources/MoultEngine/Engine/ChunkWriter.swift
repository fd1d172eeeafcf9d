import MoultAssociations
import MoultModel
import MoultStore

/// Writes evaluated chunks into the destination, in chunk order: each chunk's rows, links and policy
/// state, its associations and its checkpoint in one transaction of the destination, inside which the
/// association table's chunk commits.
///
/// What SQLite evaluates itself is the writer's too: a stage 1 copied by one `INSERT … SELECT` from
/// the attached source (``MigrationManager`` `bulkCreate`) and stage 2's links written as set
/// operations are "evaluation inside SQLite", a capability of the store (``/MoultStore/SQLFastPaths``)
/// that a store type without SQL does not offer.
///
/// ```swift
/// let chunk = try evaluate(step)                                   // reads, writes nothing
/// try writer.commit(next, durable: true) { try writer.apply(chunk) }
/// ```
package final class ChunkWriter {
    let writer: StoreWriter
    let associations: any AssociationTable
    private var database: Database { writer.database }
    /// Whether the temporary table of stage 2's links exists on the destination's connection.
    private var linksTableReady = false

    init(writer: StoreWriter, associations: any AssociationTable) {
        self.writer = writer
        self.associations = associations
    }

    /// Runs an evaluation in one read transaction of the destination: it sees the committed state as
    /// one snapshot, and its many small reads (policies' state, mirrors) share one read lock.
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        try database.read(body)
    }

    /// Runs `body` as one chunk: the association table's chunk and the destination's transaction,
    /// with the checkpoint moved to `next`. On throw nothing of it remains.
    func commit(_ next: Checkpoint.Position, durable: Bool, _ body: () throws -> Void) throws {
        try associations.beginChunk()
        do {
            try writer.write {
                try body()
                try Checkpoint.save(next, in: database)
                FaultInjection.reach(.afterRows)
                try associations.commitChunk(durable: durable)
                FaultInjection.reach(.afterLMDBCommit)
            }
        } catch {
            associations.abortChunk()
            throw error
        }
        FaultInjection.reach(.afterSQLiteCommit)
    }

    /// Applies an evaluated chunk: its writes in order, its link sets, then its associations.
    ///
    /// - Throws: ``MigrationError`` (`.evaluationFailed`) naming the entity or relationship whose write
    ///   failed, with the store's error.
    func apply(_ chunk: EvaluatedChunk) throws {
        for write in chunk.writes {
            do {
                try apply(write, mapping: chunk.mapping)
            } catch let error as MigrationError {
                throw uniquenessFailure(error, write: write, in: chunk) ?? error
            }
        }
        for linkSet in chunk.linkSets {
            try write(linkSet, mapping: chunk.mapping)
        }
        if !chunk.associations.isEmpty { try associations.associate(chunk.associations) }
    }

    private func apply(_ write: EvaluatedChunk.Write, mapping: String?) throws {
        switch write {
        case .insert(let entity, let primaryKey, let values):
            do {
                try writer.insert(entity, values: values, primaryKey: primaryKey)
            } catch {
                throw MigrationError(
                    .evaluationFailed, "inserting a '\(entity)' object failed", mapping: mapping, entity: entity, underlying: error)
            }
        case .setToOne(let update, let object, let target):
            try update.run(object: object, target: target, in: database)
        case .relate(let relationship, let source, let destinations, let firstPosition):
            try writer.relate(relationship, source, to: destinations, from: firstPosition)
        case .unrelate(let relationship, let source, let destinations):
            try writer.unrelate(relationship, source, from: destinations)
        case .clearToOne(let clear, let object, let target):
            try clear.run(object: object, target: target, in: database)
        case .setAttribute(let value, let column, let table, let primaryKey):
            try EngineLinkWrites.setAttribute(value, column: column, table: table, primaryKey: primaryKey, in: database)
        case .policyState(let namespace, let key, let value?):
            try EnginePolicyStateTable.set(value, namespace: namespace, key: key, in: database)
        case .policyState(let namespace, let key, nil):
            try EnginePolicyStateTable.remove(namespace: namespace, key: key, in: database)
        case .mirror(let mapping, let source, let destination):
            try EngineWorkTables.mirror(source: source, destination: destination, ofMapping: mapping, in: database)
        case .keyMap(let mapping, let key, let destination, let first):
            try EngineKeyMap.record(key: key, destination: destination, first: first, mapping: mapping, in: database)
        }
    }

    /// An insert that broke a uniqueness constraint of the destination model, as the validation failure
    /// it is (67): the entity, the attributes and the value, and the objects that hold it (the one
    /// being inserted and those already written), each by its source key where the association table or
    /// the chunk knows it, rather than SQLite's text naming a work file.
    private func uniquenessFailure(_ error: MigrationError, write: EvaluatedChunk.Write, in chunk: EvaluatedChunk) -> MigrationError? {
        guard case .insert(let entity, let primaryKey, let values) = write, let underlying = error.underlying as? StoreError,
            let columns = underlying.uniqueColumns, let layout = writer.layout.entity(named: entity)
        else { return nil }
        let slots = columns.map { column in layout.attributes.firstIndex { $0.column == column } }
        let attributes = zip(columns, slots).map { column, slot in slot.map { layout.attributes[$0].name } ?? column }
        let held = zip(attributes, slots).map { name, slot in
            "\(name) = \(slot.flatMap { values.indices.contains($0) ? values[$0].description : nil } ?? "?")"
        }
        // The object being inserted: its source, from the chunk's own associations or mirrors.
        let association = chunk.associations.first { $0.destination.primaryKey == primaryKey && $0.destination.entity == layout.number }
        let mirrored = chunk.writes.lazy.compactMap { write -> Int64? in
            guard case .mirror(_, let source, let destination) = write, destination == primaryKey else { return nil }
            return source
        }.first
        var objects = [(association?.source.primaryKey ?? mirrored).map { "source Z_PK \($0)" } ?? "the destination's Z_PK \(primaryKey)"]
        // The objects already written with the same value, found in the destination.
        let bound = slots.map { slot in slot.flatMap { values.indices.contains($0) ? values[$0] : nil } ?? .null }
        if !bound.contains(.null) {
            let query = EngineValidationQueries.holders(of: bound, in: columns, table: layout.table)
            // (Inside the chunk's transaction, which the failed insert left open: what earlier chunks wrote.)
            try? query.forEachRow(in: database) { row in
                let holder = ObjectID(entity: Int32(row.int64(at: 1)), primaryKey: row.int64(at: 0))
                // Made earlier in this chunk (its associations not written yet), or in an earlier one.
                let source = chunk.associations.first { $0.destination == holder }?.source
                    ?? association.flatMap { try? associations.sources(forMapping: $0.mapping, destination: holder).first }
                objects.append(source.map { "source Z_PK \($0.primaryKey)" } ?? "the destination's Z_PK \(holder.primaryKey)")
            }
        }
        return MigrationError(
            .validationFailed,
            "\(entity): the uniqueness constraint on \(attributes.joined(separator: ", ")) is broken: \(held.joined(separator: ", ")) is held by "
                + "more than one \(entity) (the objects made from \(objects.joined(separator: ", ")))"
                + " (fix the data, or the mapping, so that each \(entity) is unique)",
            mapping: chunk.mapping, entity: entity, underlying: underlying)
    }

    /// One relationship's links as a set operation: staged in the temporary table, then one update.
    private func write(_ linkSet: EvaluatedChunk.LinkSet, mapping: String?) throws {
        if !linksTableReady {
            try EngineLinkWrites.createLinks(in: database)
            linksTableReady = true
        }
        let links = try EngineLinkWrites.Links(in: database)
        try links.clear()
        for link in linkSet.links {
            try links.add(object: link.object, value: link.value, entity: link.entity, position: link.position)
        }
        FaultInjection.reach(.setLinksStaged)
        guard !linkSet.links.isEmpty else { return }
        do {
            try linkSet.update.run(in: database)
        } catch {
            throw MigrationError(
                .evaluationFailed, "writing the chunk's '\(linkSet.relationship)' relationships failed", mapping: mapping, underlying: error)
        }
        FaultInjection.reach(.setLinksWritten)
    }
}

@available(*, unavailable)
extension ChunkWriter: Sendable {}
