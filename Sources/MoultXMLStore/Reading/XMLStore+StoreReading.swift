public import MoultModel
public import MoultStore

// MARK: - The store protocol

extension XMLStore: StoreReading {
    /// The store's metadata (`NSStoreType` "XML"), from its header.
    ///
    /// - Throws: ``/MoultStore/StoreError`` (`.corrupt`) when the header's metadata has no version hashes.
    public func metadata() throws(StoreError) -> StoreMetadata {
        do {
            return try info.storeMetadata()
        } catch {
            throw StoreError(.corrupt, error.message, path: path)
        }
    }

    /// The number of objects of an entity, from the index.
    ///
    /// - Throws: ``/MoultStore/StoreError`` (`.unknownName`).
    public func count(of entityName: String, includingSubentities: Bool) throws(StoreError) -> Int {
        let entity = try entity(entityName)
        let numbers = includingSubentities ? entity.hierarchyNumbers : [entity.number]
        return numbers.reduce(0) { $0 + (indexed(entity: $1)?.count ?? 0) }
    }

    /// A cursor over an entity's objects with `after < key <= through`, in key order, each read from
    /// its element when the cursor reaches it (`batchSize` does not apply: one object is in memory).
    ///
    /// - Throws: ``/MoultStore/StoreError`` (`.unknownName`).
    public func objects(of entityName: String, includingSubentities: Bool, after: Int64, through: Int64?, batchSize: Int)
        throws(StoreError) -> XMLStoreCursor
    {
        let entity = try entity(entityName)
        let numbers = includingSubentities ? entity.hierarchyNumbers : [entity.number]
        return XMLStoreCursor(store: self, entity: entity, entries: entries(of: numbers, after: after, through: through))
    }

    /// The destinations of a to-many relationship, read from each source object's element: in the
    /// file's order for an ordered relationship, else by key (every destination is one the store holds:
    /// opening it checked).
    ///
    /// - Throws: ``/MoultStore/StoreError`` (`.unknownName` for a relationship the entity does not have,
    ///   `.corrupt` for an object that no longer reads).
    public func toManyDestinations(_ relationship: String, of entityName: String, sources: [Int64]) throws(StoreError) -> [Int64: [ObjectID]] {
        let entity = try entity(entityName)
        guard let toMany = entity.toMany(named: relationship), let destination = layout.entity(named: toMany.destination) else {
            throw StoreError(.unknownName, "entity '\(entityName)' has no to-many relationship '\(relationship)'", path: path, entity: entityName)
        }
        var result: [Int64: [ObjectID]] = [:]
        for key in Set(sources).sorted() {
            guard let found = locate(key, in: entity.hierarchyNumbers) else { continue }
            let (object, layout) = try object(found.entry, entity: found.entity)
            guard let position = layout.toManyRelationships.firstIndex(where: { $0.name == relationship }) else { continue }
            // Every destination was checked when the store was opened: only a file changed since fails here.
            var destinations = try changedFile(found.entry) { () throws(XMLStoreError) in
                try object.toMany[position].map { number throws(XMLStoreError) in
                    try resolve(number, to: destination.number, by: relationship, of: object, line: 0)
                }
            }
            if !toMany.isOrdered { destinations.sort { $0.primaryKey < $1.primaryKey } }
            if !destinations.isEmpty { result[key] = destinations }
        }
        return result
    }

    /// The chunk boundaries of an entity's own objects, from the index.
    public func keyBoundaries(of entityName: String, chunkSize: Int) throws(StoreError) -> KeyBoundaries {
        let entries = indexed(entity: try entity(entityName).number) ?? []
        let size = max(1, chunkSize)
        let boundaries = stride(from: size - 1, to: entries.count, by: size).map { entries[$0].key }
        let remainder = entries.count % size
        return KeyBoundaries(boundaries: boundaries, remainderUpper: remainder > 0 ? entries.last?.key : nil, remainderCount: remainder)
    }

    /// The largest object number of each entity that has objects, by entity number.
    public func primaryKeyMaxima() throws -> [(entity: Int64, maximum: Int64)] {
        layout.entities.compactMap { entity in indexed(entity: entity.number)?.last.map { (Int64(entity.number), $0.key) } }
    }
}

// MARK: - The cursor

/// A single-pass cursor over an ``XMLStore``'s objects in key order (see
/// ``XMLStore/objects(of:includingSubentities:after:through:batchSize:)``).
///
/// ```swift
/// let cursor = try store.objects(of: "Person", includingSubentities: true, after: 0, through: nil, batchSize: 1)
/// while let row = try cursor.next() { print(row.id) }
/// ```
public final class XMLStoreCursor: ObjectRowCursor {
    private let store: XMLStore
    /// The entity read: every row has its shape.
    private let entity: EntityLayout
    private var entries: MergedEntries

    init(store: XMLStore, entity: EntityLayout, entries: MergedEntries) {
        self.store = store
        self.entity = entity
        self.entries = entries
    }

    /// The next object, or nil at the end.
    ///
    /// - Throws: ``/MoultStore/StoreError``: `.corrupt` when the file changed since it was indexed,
    ///   `.invalidValue` for a to-one to an object the store does not hold.
    public func next() throws(StoreError) -> ObjectRow? {
        guard let (entity, entry) = entries.next() else { return nil }
        return try store.row(entry, entity: entity, as: self.entity)
    }
}

@available(*, unavailable)
extension XMLStoreCursor: Sendable {}

extension XMLStore: ReopenableStore {
    /// A second reader sharing the index (``reopened()``).
    public func secondReader() throws -> any StoreReading { try reopened() }
}
