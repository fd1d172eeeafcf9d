package import MoultExpressions
import MoultMapping
package import MoultModel
import MoultStore

// MARK: - Reading the source

extension MigrationManager {
    /// Reads the source objects of a mapping with `lowerBound < Z_PK <= upperBound` that pass its
    /// filter, with the to-many relationships its expressions use.
    ///
    /// - Parameter rows: The chunk's rows when they were read ahead (``SourceReadAhead``, by
    ///   ``readAheadRequest(_:after:through:)``), else nil: they are read here.
    func sourceObjects(_ mapping: CompiledMapping, after lowerBound: Int64, through upperBound: Int64, rows: [ObjectRow]? = nil) throws
        -> [MigrationObject]
    {
        guard let layout = mapping.source, let schema = mapping.sourceSchema else { return [] }
        var objects: [MigrationObject] = []
        let extra = layout.toManyRelationships.count
        func add(_ row: ObjectRow) {
            var values = row.values
            if extra > 0 { values.append(contentsOf: repeatElement(Value.null, count: extra)) }
            objects.append(MigrationObject(objectID: row.id, entityName: layout.name, schema: schema, values: values))
        }
        if let rows {
            objects.reserveCapacity(rows.count)
            rows.forEach(add)
        } else {
            // The filter is in SQL only on a source that runs it (see `Session.sqlAccepts`).
            let cursor: any ObjectRowCursor
            if let sqlSource {
                cursor = try sqlSource.objects(
                    of: layout.name, includingSubentities: false, after: lowerBound, through: upperBound, condition: mapping.filterSQL,
                    batchSize: 4096)
            } else {
                cursor = try sourceStore.objects(
                    of: layout.name, includingSubentities: false, after: lowerBound, through: upperBound, batchSize: 4096)
            }
            while let row = try cursor.next() { add(row) }
        }
        if !mapping.toManyLoads.isEmpty, !objects.isEmpty {
            let keys = objects.map(\.objectID.primaryKey)
            for (slot, name) in mapping.toManyLoads {
                let destinations = try sourceStore.toManyDestinations(name, of: layout.name, sources: keys)
                for index in objects.indices {
                    objects[index].values[slot] = .array((destinations[keys[index]] ?? []).map(Value.object))
                }
            }
        }
        if let filter = mapping.filter {
            var kept: [MigrationObject] = []
            kept.reserveCapacity(objects.count)
            for object in objects {
                context.object = object
                context[variableSlot: sourceSlot] = .object(object)
                do {
                    if try filter.evaluate(context) { kept.append(object) }
                } catch {
                    throw MigrationError(
                        .evaluationFailed, "the filter predicate could not be evaluated", mapping: mapping.name,
                        entity: layout.name, primaryKey: object.objectID.primaryKey, underlying: error)
                }
            }
            objects = kept
        }
        return objects
    }

    /// What ``sourceObjects(_:after:through:rows:)`` reads from the source, for ``SourceReadAhead``: the
    /// filter in SQL only from a source that runs SQL.
    func readAheadRequest(_ mapping: CompiledMapping, after lowerBound: Int64, through upperBound: Int64) -> SourceReadAhead.Request? {
        guard let layout = mapping.source, mapping.sourceSchema != nil else { return nil }
        return SourceReadAhead.Request(
            entity: layout.name, after: lowerBound, through: upperBound, condition: sqlSource == nil ? nil : mapping.filterSQL)
    }

    /// Stage 2's source objects with only their keys and the to-one values the direct lookups use (see
    /// ``CompiledMapping/KeysOnlyRead``); the other slots are nil.
    func sourceKeys(_ mapping: CompiledMapping, _ read: CompiledMapping.KeysOnlyRead, after lowerBound: Int64, through upperBound: Int64)
        throws -> [MigrationObject]
    {
        guard let layout = mapping.source, let schema = mapping.sourceSchema else { return [] }
        let source = try sqlSource(for: "the keys-only read")
        var objects: [MigrationObject] = []
        let empty = [Value](repeating: .null, count: schema.keys.count)
        try read.read.forEachRow(
            after: lowerBound, through: upperBound, filterArguments: mapping.filterSQL?.arguments ?? [], in: source.database
        ) { row in
            var values = empty
            for (index, slot) in read.slots.enumerated() {
                if let id = row.toOne(index) { values[slot] = .object(id) }
            }
            let id = ObjectID(entity: row.entity, primaryKey: row.primaryKey)
            objects.append(MigrationObject(objectID: id, entityName: layout.name, schema: schema, values: values))
        }
        return objects
    }

    /// The source's SQL capability, which a fast path (`what`) reads by: the session takes those paths
    /// only on a source that has it.
    ///
    /// - Throws: ``MigrationError`` (`.evaluationFailed`) when the source has none.
    func sqlSource(for what: String) throws -> any SQLFastPaths {
        guard let sqlSource else {
            throw MigrationError(.evaluationFailed, "\(what) needs a source that runs SQL, and this source's store type does not")
        }
        return sqlSource
    }

    /// A source object by id, for key paths that go through relationships (`$source.owner.name`).
    func sourceObject(_ id: ObjectID) throws -> MigrationObject? {
        guard let layout = sourceLayout.entity(number: id.entity) else { return nil }
        let cursor = try sourceStore.objects(of: layout.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
        guard let row = try cursor.next() else { return nil }
        let schema = CompiledMapping.schema(of: layout)
        var values = row.values
        for toMany in layout.toManyRelationships {
            let destinations = try sourceStore.toManyDestinations(toMany.name, of: layout.name, sources: [id.primaryKey])
            values.append(.array((destinations[id.primaryKey] ?? []).map(Value.object)))
        }
        return MigrationObject(objectID: id, entityName: layout.name, schema: schema, values: values)
    }
}


/// Resolves relationship values of source objects for key paths that go through them.
package struct SourceResolver: ObjectResolver {
    unowned let manager: MigrationManager

    package func record(for id: ObjectID) throws -> (any ObjectRecord)? {
        try manager.sourceObject(id)
    }

    package func schema(forEntity entity: Int32) -> KeySchema? {
        manager.sourceLayout.entity(number: entity).map(CompiledMapping.schema(of:))
    }
}
