package import MoultModel
package import MoultStore

// MARK: - Objects by id, for a layer over the manager

// What the CoreData module's contexts read: a source object by id, a destination object as the run
// has made it so far (the chunk's own writes, not yet written, over what earlier chunks committed),
// and the destination objects made so far. Each read is bounded: one object, or a single-pass walk.

extension MigrationManager {
    /// A destination object's attributes and to-ones as the run has made it so far.
    package struct DestinationRow {
        package var entity: EntityLayout
        /// Attribute and to-one values by name (`.object` or `.null` for a to-one).
        package var values: [String: Value]
        /// Whether the object was made by the chunk being evaluated (not yet written).
        package var isInChunk: Bool
    }

    /// The source object with this id: its entity and its attributes and to-ones by slot of the row's shape.
    ///
    /// - Throws: ``MigrationError`` `.io` when the source cannot be read.
    package func sourceRow(_ id: ObjectID) throws -> (entity: EntityLayout, row: ObjectRow)? {
        guard let layout = sourceLayout.entity(number: id.entity) else { return nil }
        do {
            let cursor = try sourceStore.objects(
                of: layout.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            guard let row = try cursor.next() else { return nil }
            return (layout, row)
        } catch {
            throw MigrationError(.io, "the source object \(layout.name) \(id.primaryKey) could not be read", underlying: error)
        }
    }

    /// The destinations of a source object's to-many relationship.
    package func sourceToMany(_ name: String, of id: ObjectID) throws -> [ObjectID] {
        guard let layout = sourceLayout.entity(number: id.entity) else { return [] }
        do {
            return try sourceStore.toManyDestinations(name, of: layout.name, sources: [id.primaryKey])[id.primaryKey] ?? []
        } catch {
            throw MigrationError(.io, "the relationship '\(name)' of the source \(layout.name) \(id.primaryKey) could not be read", underlying: error)
        }
    }

    /// The source layout of an entity number, or nil.
    package func sourceEntity(number: Int32) -> EntityLayout? { sourceLayout.entity(number: number) }

    /// The destination layout of an entity, by name or number.
    package func destinationEntity(named name: String) -> EntityLayout? { destinationLayout.entity(named: name) }
    package func destinationEntity(number: Int32) -> EntityLayout? { destinationLayout.entity(number: number) }

    /// Every destination entity's layout.
    package var destinationEntities: [EntityLayout] { destinationLayout.entities }

    /// A destination object as the run has made it so far: the chunk's insert and later attribute
    /// writes (found through `index`, which follows the chunk's writes as they grow), or the committed
    /// row with the chunk's attribute writes over it.
    package func destinationRow(_ id: ObjectID, index: ChunkRowIndex) throws -> DestinationRow? {
        guard let layout = destinationLayout.entity(number: id.entity) else { return nil }
        index.advance(over: evaluation.chunk.writes, generation: evaluationGeneration, layout: destinationLayout)
        let key = ChunkRowIndex.Key(table: layout.table, primaryKey: id.primaryKey)
        if let values = index.inserted[key] { return DestinationRow(entity: layout, values: values, isInChunk: true) }
        var values: [String: Value] = [:]
        do {
            let cursor = try destinationStore.objects(
                of: layout.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            guard let row = try cursor.next() else { return nil }
            for column in layout.attributes { values[column.name] = row[column.name] ?? .null }
            for toOne in layout.toOneRelationships { values[toOne.name] = row[toOne.name] ?? .null }
        } catch {
            throw MigrationError(.io, "the destination object \(layout.name) \(id.primaryKey) could not be read", underlying: error)
        }
        for (column, value) in index.updated[key] ?? [:] {
            if let attribute = layout.attributes.first(where: { $0.column == column }) { values[attribute.name] = value }
        }
        return DestinationRow(entity: layout, values: values, isInChunk: false)
    }

    /// The destination objects the chunk being evaluated made, in the order it made them.
    package func destinationObjectsInChunk(index: ChunkRowIndex) -> [ObjectID] {
        index.advance(over: evaluation.chunk.writes, generation: evaluationGeneration, layout: destinationLayout)
        return index.order
    }

    /// The destinations of a destination object's to-many relationship as earlier chunks committed it.
    package func committedDestinationToMany(_ name: String, of id: ObjectID) throws -> [ObjectID] {
        guard let layout = destinationLayout.entity(number: id.entity), layout.toMany(named: name) != nil else { return [] }
        do {
            return try destinationStore.toManyDestinations(name, of: layout.name, sources: [id.primaryKey])[id.primaryKey] ?? []
        } catch {
            throw MigrationError(.io, "the relationship '\(name)' of the destination \(layout.name) \(id.primaryKey) could not be read", underlying: error)
        }
    }

    /// A single-pass cursor over the destination objects earlier chunks committed, of one entity (its
    /// own objects, not its sub-entities'), in key order.
    package func committedDestinations(of entity: EntityLayout, batchSize: Int = 512) throws -> any ObjectRowCursor {
        do {
            return try destinationStore.objects(of: entity.name, includingSubentities: false, after: 0, through: nil, batchSize: batchSize)
        } catch {
            throw MigrationError(.io, "the destination's \(entity.name) objects could not be read", underlying: error)
        }
    }

    /// A single-pass cursor over the destination objects earlier chunks committed, of one entity (its
    /// own objects), for which `condition` holds: SQL over the entity's table (a fetch's predicate
    /// pushed down), in key order.
    package func committedDestinations(of entity: EntityLayout, where condition: SQLCondition, batchSize: Int = 512) throws -> any ObjectRowCursor {
        do {
            return try destinationStore.objects(
                of: entity.name, includingSubentities: false, after: 0, through: nil, condition: condition, batchSize: batchSize)
        } catch {
            throw MigrationError(.io, "the destination's \(entity.name) objects could not be read", underlying: error)
        }
    }

    /// A single-pass cursor over the source objects of one entity (its own, not its sub-entities'), in key order.
    package func sourceObjects(of entity: EntityLayout, batchSize: Int = 512) throws -> any ObjectRowCursor {
        do {
            return try sourceStore.objects(of: entity.name, includingSubentities: false, after: 0, through: nil, batchSize: batchSize)
        } catch {
            throw MigrationError(.io, "the source's \(entity.name) objects could not be read", underlying: error)
        }
    }

    /// The source layout of an entity, by name.
    package func sourceEntity(named name: String) -> EntityLayout? { sourceLayout.entity(named: name) }

    /// Every source entity's layout.
    package var sourceEntities: [EntityLayout] { sourceLayout.entities }
}

/// The destination objects the chunk being evaluated made, and the attributes it set, indexed as the
/// chunk's writes grow: each write is read once, so finding an object the chunk made costs no scan.
///
/// Made by a layer over the manager and handed to ``MigrationManager/destinationRow(_:index:)``; it
/// starts afresh with each chunk.
package final class ChunkRowIndex {
    package struct Key: Hashable {
        var table: String
        var primaryKey: Int64
    }

    private var generation = -1
    private var scanned = 0
    /// The objects the chunk made: attribute and to-one values by name, attribute writes applied.
    private(set) var inserted: [Key: [String: Value]] = [:]
    /// Attribute writes to objects earlier chunks made: values by column.
    private(set) var updated: [Key: [String: Value]] = [:]
    /// The objects the chunk made, in order.
    private(set) var order: [ObjectID] = []
    private var columns: [String: [String: String]] = [:]

    package init() {}

    func advance(over writes: [EvaluatedChunk.Write], generation current: Int, layout: StoreLayout) {
        if current != generation || writes.count < scanned {
            generation = current
            scanned = 0
            inserted = [:]
            updated = [:]
            order = []
        }
        guard scanned < writes.count else { return }
        for write in writes[scanned...] {
            switch write {
            case .insert(let name, let primaryKey, let row):
                guard let entity = layout.entity(named: name) else { continue }
                var values: [String: Value] = [:]
                for (column, value) in zip(entity.attributes, row) { values[column.name] = value }
                for (offset, toOne) in entity.toOneRelationships.enumerated() {
                    let slot = entity.attributes.count + offset
                    values[toOne.name] = slot < row.count ? row[slot] : .null
                }
                inserted[Key(table: entity.table, primaryKey: primaryKey)] = values
                order.append(ObjectID(entity: entity.number, primaryKey: primaryKey))
            case .setAttribute(let value, let column, let table, let primaryKey):
                let key = Key(table: table, primaryKey: primaryKey)
                if inserted[key] != nil, let name = attributeName(column: column, table: table, layout: layout) {
                    inserted[key]?[name] = value
                } else {
                    updated[key, default: [:]][column] = value
                }
            default:
                continue
            }
        }
        scanned = writes.count
    }

    private func attributeName(column: String, table: String, layout: StoreLayout) -> String? {
        if let known = columns[table]?[column] { return known }
        for entity in layout.entities where entity.table == table {
            if let attribute = entity.attributes.first(where: { $0.column == column }) {
                columns[table, default: [:]][column] = attribute.name
                return attribute.name
            }
        }
        return nil
    }
}

@available(*, unavailable)
extension ChunkRowIndex: Sendable {}
