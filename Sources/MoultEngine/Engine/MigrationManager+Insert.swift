import MoultAssociations
import MoultExpressions
public import MoultMapping
public import MoultModel
import MoultStore

// MARK: - Creating objects (stage 1), and setting their attributes

// What is created or set here is recorded in the chunk's evaluation (``EvaluatedChunk``), with the
// primary key it will have, and written by the ``ChunkWriter``; only the bulk copy writes itself.

extension MigrationManager {
    /// Creates a destination object with these attribute values; attributes not given get their
    /// default value. Relationships are set in stage 2.
    ///
    /// - Returns: the new object's id.
    /// - Throws: ``MigrationError`` when the entity is unknown or abstract, or the insert fails.
    @discardableResult
    public func createObject(entity name: String, values: [String: Value]) throws -> ObjectID {
        guard let layout = destinationLayout.entity(named: name), !layout.isAbstract else {
            throw MigrationError(
                .invalidMapping, "cannot create an object of '\(name)': no such concrete entity in the destination model",
                mapping: currentMapping?.name, entity: name)
        }
        var row: [Value] = []
        row.reserveCapacity(layout.attributes.count)
        for column in layout.attributes {
            if let value = values[column.name] {
                row.append(DefaultValues.coerce(value, to: column.type))
            } else {
                row.append(destinationModel.attribute(named: column.name, of: name).map(DefaultValues.value(of:)) ?? .null)
            }
        }
        return try insert(row, into: layout)
    }

    /// Stage 1's default: one destination object from the attribute mappings, associated with its source.
    public func createDefaultDestinationInstance(for source: MigrationObject, mapping: EntityMapping) throws {
        try createDestinationInstance(for: source, mapping: mapping)
    }

    /// One destination object from the attribute mappings, associated with its source, as
    /// ``createDefaultDestinationInstance(for:mapping:)`` makes it; `variables` are bound while the
    /// expressions are evaluated (`["value": "red"]` for `$value`).
    ///
    /// - Returns: the new object's id; nil when the mapping has no concrete destination entity.
    @discardableResult
    public func createDestinationInstance(
        for source: MigrationObject, mapping: EntityMapping, variables: [String: Value] = [:]
    ) throws -> ObjectID? {
        let compiled = try self.compiled(mapping)
        guard let layout = compiled.destination else { return nil }
        context.object = source
        context[variableSlot: sourceSlot] = .object(source)
        for (name, value) in variables { context[variable: name] = .value(value) }
        defer { for name in variables.keys { context[variable: name] = .unbound } }
        var row: [Value] = []
        row.reserveCapacity(compiled.attributeValues.count)
        for (offset, (column, valueSource)) in zip(layout.attributes, compiled.attributeValues).enumerated() {
            switch valueSource {
            case .constant(let value):
                row.append(value)
            case .expression(let expression, let defaultForNil):
                do {
                    var value = try expression.evaluate(context)
                    if let conversion = compiled.externalDataConversions[offset], let externalData {
                        value = try ExternalDataConversion.apply(conversion, to: value, folder: externalData.folder, maxBytes: externalData.maxBytes)
                    }
                    row.append(value.isNull ? defaultForNil : DefaultValues.coerce(value, to: column.type))
                } catch let error as StoreError {
                    throw MigrationError(
                        error.code == .invalidValue ? .invalidStore : .io, "the value of '\(column.name)' could not be read: \(error.message)",
                        mapping: compiled.name, entity: source.entityName, primaryKey: source.objectID.primaryKey, underlying: error)
                } catch {
                    throw MigrationError(
                        .evaluationFailed, "the value of '\(column.name)' could not be computed", mapping: compiled.name,
                        entity: source.entityName, primaryKey: source.objectID.primaryKey, underlying: error)
                }
            }
        }
        let kept = try keptKey(of: source, compiled, layout: layout)
        let id: ObjectID
        if compiled.insertedToOnes.isEmpty {
            id = try insert(row, into: layout, key: kept)
        } else {
            id = try insert(row, toOnes: try insertedToOneValues(compiled, layout: layout, source: source), into: layout, key: kept)
        }
        evaluation.associate(Association(source: source.objectID, destination: id, mapping: compiled.index))
        if compiled.mirrorsAssociations { try mirror(source: source.objectID, destination: id, mapping: compiled.index) }
        return id
    }

    /// The primary key the object made from `source` keeps (see ``KeptKeys``): the source's own, unless
    /// the mapping does not keep keys, or it checks them and another mapping's object already has it
    /// (nil: a fresh key).
    private func keptKey(of source: MigrationObject, _ compiled: CompiledMapping, layout: EntityLayout) throws -> Int64? {
        guard compiled.keepsKeys else { return nil }
        let key = source.objectID.primaryKey
        guard compiled.checksKeptKeys else { return key }
        do {
            return try EngineKeptKeys.isTaken(key, inTable: layout.table, of: destination) ? nil : key
        } catch {
            throw MigrationError(
                .io, "whether the key \(key) is taken in '\(layout.table)' could not be read", mapping: compiled.name, entity: layout.name,
                underlying: error)
        }
    }

    /// The to-one values of a new object whose to-ones are written at insert (see ``ToOnesAtInsert``):
    /// the looked-up mapping's object, as stage 2 would set it; nil for the others.
    private func insertedToOneValues(_ compiled: CompiledMapping, layout: EntityLayout, source: MigrationObject) throws -> [Value] {
        var values = [Value](repeating: .null, count: layout.toOneRelationships.count)
        for inserted in compiled.insertedToOnes {
            guard let offset = layout.toOneRelationships.firstIndex(where: { $0.name == inserted.name }) else { continue }
            let key: ObjectID
            if let slot = inserted.slot {
                guard case .object(let held) = source.value(atSlot: slot) else { continue }
                key = held
            } else {
                key = source.objectID
            }
            // The looked-up mapping ran in an earlier pass (see `ToOnesAtInsert.createOrder`): its mirror is
            // whole (its associations may not be written, see `UnreadAssociations`).
            if let found = try evaluation.mirrored(mapping: inserted.lookup, source: key.primaryKey)
                ?? EngineWorkTables.mirroredDestination(ofSource: key.primaryKey, mapping: inserted.lookup, in: destination)
            {
                values[offset] = .object(ObjectID(entity: inserted.targetEntity, primaryKey: found))
            } else if inserted.slot != nil, let kept = try keptDangling(lookup: inserted.lookup, sourceKey: key.primaryKey) {
                // A key that names no source object, kept (see `keptDangling`), as the bulk copy keeps it.
                values[offset] = .object(kept)
            }
        }
        return values
    }

    /// Records an association for the destination's mirror table of its mapping (see ``ToOnesAtInsert``).
    func mirror(source: ObjectID, destination: ObjectID, mapping: Int) throws {
        evaluation.append(.mirror(mapping: mapping, source: source.primaryKey, destination: destination.primaryKey))
    }

    /// Stage 1 of a chunk as one `INSERT … SELECT` from the attached source (see ``CompiledMapping/bulkCopy``):
    /// primary keys continue from the writer's counter in source order, or are the source objects' own
    /// (``CompiledMapping/keepsKeys``), and the chunk's associations are written from the same keys. It
    /// is the chunk writer's: SQLite evaluates the mapping itself, in the chunk's transaction.
    ///
    /// A mapping whose associations nothing reads (see ``UnreadAssociations``) records the chunk as one row
    /// instead, under its pass, without reading the keys.
    ///
    /// `evaluated` is what the second thread's `SELECT` made of the chunk, when it was evaluated ahead
    /// (``BulkReadAhead``): the insert then only writes those rows, the same records.
    ///
    /// - Returns: false, with nothing written, when the chunk holds a row the per-object path would
    ///   convert or refuse rather than copy as it is stored (see `EngineBulkCopy`): that chunk takes the
    ///   per-object path.
    func bulkCreate(
        _ mapping: CompiledMapping, _ bulk: EngineBulkCopy, pass: Int, after lowerBound: Int64, through upperBound: Int64,
        evaluated: BulkReadAhead.Evaluated? = nil
    ) throws -> Bool {
        guard let layout = mapping.destination else { return true }
        let filterArguments = mapping.filterSQL?.arguments ?? []
        let first = try writer.lastPrimaryKey(for: layout.name) + 1
        var inserted: Int?
        var made: ChunkRows?
        do {
            switch evaluated {
            case .rows(let rows)?: made = rows
            case .refused?: break
            case nil, .guarded?:
                // Evaluated on the writer's connection first, as the second thread would: the rows
                // numbered by their place, not by `ROW_NUMBER()`, whose window copies every row.
                switch try bulk.evaluation(
                    after: lowerBound, through: upperBound, filterArguments: filterArguments, in: destination, limit: BulkReadAhead.rowsLimit)
                {
                case .rows(let rows): made = rows
                case .refused: break
                case .overLimit:
                    let insert = try bulk.preparedInsert(in: destination)
                    inserted = try bulk.insert(insert, first: first, after: lowerBound, through: upperBound, filterArguments: filterArguments, into: destination)
                }
            }
            if let made { inserted = try bulk.insert(made, first: first, into: destination) }
        } catch let error as StoreError where error.uniqueColumns != nil {
            // The one INSERT failed as a whole, writing nothing: the per-object path names the object
            // that breaks the uniqueness constraint (a validation failure, ChunkWriter).
            return false
        } catch {
            throw MigrationError(
                .evaluationFailed, "inserting the chunk's '\(layout.name)' objects failed", mapping: mapping.name, entity: layout.name,
                underlying: error)
        }
        guard let count = inserted else { return false }
        guard count > 0 else { return true }
        let mirrored: Int?
        if let made {
            mirrored = try bulk.mirror(made, first: first, in: destination)
        } else {
            mirrored = try bulk.mirror(first: first, after: lowerBound, through: upperBound, filterArguments: filterArguments, in: destination)
        }
        if let mirrored {
            guard mirrored == count else {
                throw MigrationError(
                    .evaluationFailed, "the chunk inserted \(count) objects but mirrored \(mirrored) associations", mapping: mapping.name)
            }
            FaultInjection.reach(.associationsMirrored)
        }
        // Kept keys were reserved when the run began (`Session.reserveKeptKeys`): nothing is allocated.
        let keeps = bulk.keys != .numbered
        if !keeps { _ = try writer.allocatePrimaryKeys(for: layout.name, count: count) }
        if unreadAssociations.contains(mapping.index) {
            // A chunk that kept its keys is recorded from its first source key: its objects are told by their keys.
            let recorded = keeps ? lowerBound + 1 : first
            try UnreadAssociations.record(pass: pass, first: recorded, count: count, lower: lowerBound, upper: upperBound, in: destination)
            FaultInjection.reach(.associationsUnwritten)
            return true
        }
        let keys = try bulk.sourceKeys(after: lowerBound, through: upperBound, filterArguments: filterArguments, in: try sqlSource(for: "the bulk copy").database)
        let from = mapping.source?.number ?? 0
        guard keys.count == count else {
            throw MigrationError(
                .evaluationFailed, "the chunk inserted \(count) objects but read \(keys.count) source keys", mapping: mapping.name)
        }
        try associations.associate(
            keys.enumerated().map { offset, key in
                Association(
                    source: ObjectID(entity: from, primaryKey: key),
                    destination: ObjectID(entity: layout.number, primaryKey: keeps ? key : first + Int64(offset)),
                    mapping: mapping.index)
            })
        return true
    }

    private func insert(_ row: [Value], toOnes: [Value]? = nil, into layout: EntityLayout, key kept: Int64? = nil) throws -> ObjectID {
        var values = row
        if let toOnes {
            values.append(contentsOf: toOnes)
        } else if !layout.toOneRelationships.isEmpty {
            values.append(contentsOf: repeatElement(Value.null, count: layout.toOneRelationships.count))
        }
        let key = kept ?? evaluation.allocateKey(root: layout.rootNumber)
        evaluation.append(.insert(entity: layout.name, primaryKey: key, values: values))
        return ObjectID(entity: layout.number, primaryKey: key)
    }

    /// Sets an attribute of a destination object already created.
    public func setValue(_ value: Value, forKey key: String, of object: ObjectID) throws {
        guard let layout = destinationLayout.entity(number: object.entity), let column = layout.attribute(named: key) else {
            throw MigrationError(
                .invalidMapping, "the destination object \(object) has no attribute '\(key)'", mapping: currentMapping?.name)
        }
        evaluation.append(
            .setAttribute(value: DefaultValues.coerce(value, to: column.type), column: column.column, table: layout.table, primaryKey: object.primaryKey))
    }
}
