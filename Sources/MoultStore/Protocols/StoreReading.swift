public import MoultModel

// MARK: - Reading a store

/// A Core Data store read as the engine's streamed path reads it: its metadata, its layout, the objects
/// of an entity in primary-key order, and the destinations of its to-many relationships.
///
/// This is the seam a second store type plugs into: ``SQLiteStore`` conforms, and so can a reader of
/// Core Data's XML store. A store that also runs SQL conforms to ``SQLFastPaths`` as well, and the
/// engine asks for that capability rather than assuming it.
///
/// ```swift
/// func count<Store: StoreReading>(_ entity: String, in store: Store) throws(StoreError) -> Int {
///     let cursor = try store.objects(of: entity, includingSubentities: true, after: 0, through: nil, batchSize: 1000)
///     var count = 0
///     while try cursor.next() != nil { count += 1 }
///     return count
/// }
/// ```
///
/// The layout is Core Data's for the store's model (``StoreLayout/init(model:)``) whatever the file's
/// format: it numbers the entities (`Z_ENT`, which every `ObjectID` carries) and orders the slots of
/// a row (``ObjectShape``). A reader is confined to one thread.
public protocol StoreReading: AnyObject {
    /// The cursor ``objects(of:includingSubentities:after:through:batchSize:)`` returns.
    associatedtype Cursor: ObjectRowCursor

    /// The layout of the store's model: entity numbers and the slots of each entity's rows.
    var layout: StoreLayout { get }

    /// The store's metadata: its UUID, type, and the model version hashes of its entities.
    ///
    /// - Throws: ``StoreError`` when the metadata is missing or unreadable.
    func metadata() throws(StoreError) -> StoreMetadata

    /// The number of objects of an entity, its sub-entities' included when asked.
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for an entity the model does not have).
    func count(of entityName: String, includingSubentities: Bool) throws(StoreError) -> Int

    /// A single-pass cursor over an entity's objects with `after < primary key <= through`, in
    /// primary-key order; memory is bounded by one batch.
    ///
    /// - Parameters:
    ///   - entityName: The entity.
    ///   - includingSubentities: Whether sub-entities' objects are included.
    ///   - after: Only objects whose primary key is greater than this.
    ///   - through: Only objects whose primary key is at most this, when given.
    ///   - batchSize: Objects read at a time.
    /// - Throws: ``StoreError`` (`.unknownName` for an entity the model does not have).
    func objects(of entityName: String, includingSubentities: Bool, after: Int64, through: Int64?, batchSize: Int)
        throws(StoreError) -> Cursor

    /// The destinations of a to-many relationship (one-to-many, ordered or many-to-many) for a batch of
    /// source objects: in the relationship's order for an ordered one, else by primary key.
    ///
    /// - Parameters:
    ///   - relationship: The to-many relationship's name.
    ///   - entityName: The entity declaring (or inheriting) it.
    ///   - sources: Primary keys of the source objects.
    /// - Returns: For each source with at least one destination, its destinations.
    /// - Throws: ``StoreError`` (`.unknownName` for a relationship the entity does not have).
    func toManyDestinations(_ relationship: String, of entityName: String, sources: [Int64]) throws(StoreError) -> [Int64: [ObjectID]]

    /// The primary keys that cut an entity's own objects (not its sub-entities') into chunks of
    /// `chunkSize` in key order, without holding the keys: what the engine's plan is made of when the
    /// store has no ``SQLFastPaths``.
    ///
    /// - Parameters:
    ///   - entityName: The entity.
    ///   - chunkSize: Objects per chunk (at least 1).
    /// - Throws: ``StoreError`` (`.unknownName` for an entity the model does not have).
    func keyBoundaries(of entityName: String, chunkSize: Int) throws(StoreError) -> KeyBoundaries

    /// The largest primary key each entity has used, by entity number: what identifies a state of the
    /// store's objects in a run's fingerprint (SQLite's `Z_PRIMARYKEY`).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func primaryKeyMaxima() throws -> [(entity: Int64, maximum: Int64)]
}

/// How an entity's objects are cut into chunks along their primary keys (see
/// ``StoreReading/keyBoundaries(of:chunkSize:)``): every full chunk ends at a boundary, and the objects
/// after the last boundary, fewer than a chunk, are the remainder.
///
/// ```swift
/// let cuts = try store.keyBoundaries(of: "Person", chunkSize: 5_000)
/// print(cuts.boundaries.count, "full chunks;", cuts.remainderCount, "objects after them, up to", cuts.remainderUpper ?? 0)
/// ```
public struct KeyBoundaries: Sendable, Hashable {
    /// The key of every `chunkSize`-th object, in order: the upper bound of each full chunk.
    public var boundaries: [Int64]
    /// The last key of the objects after the last boundary; nil when there is none.
    public var remainderUpper: Int64?
    /// The number of objects after the last boundary.
    public var remainderCount: Int

    /// Boundaries and the remainder after them.
    ///
    /// - Parameters:
    ///   - boundaries: The key of every `chunkSize`-th object.
    ///   - remainderUpper: The last key after the last boundary, nil when there is none.
    ///   - remainderCount: The number of objects after the last boundary.
    public init(boundaries: [Int64], remainderUpper: Int64?, remainderCount: Int) {
        self.boundaries = boundaries
        self.remainderUpper = remainderUpper
        self.remainderCount = remainderCount
    }
}

/// A store that opens a second reader of itself: its own connection or file handle, sharing nothing
/// mutable with the first, so that another thread can read while this one works (the engine reads the
/// next chunk's objects ahead on a second thread this way).
///
/// ```swift
/// let second = try store.secondReader()       // for another thread: each reader stays on its own
/// ```
public protocol ReopenableStore: StoreReading {
    /// A new reader of the same store, read-only, with the same layout.
    ///
    /// - Throws: what opening the store throws.
    func secondReader() throws -> any StoreReading
}

/// A single-pass cursor over a store's objects, in primary-key order (see ``StoreReading``).
public protocol ObjectRowCursor: AnyObject {
    /// The next object, or nil at the end.
    ///
    /// - Throws: ``StoreError`` for a damaged store or a value of the wrong type.
    func next() throws(StoreError) -> ObjectRow?
}

extension ObjectCursor: ObjectRowCursor {}

extension SQLiteStore: ReopenableStore {
    /// A second read-only connection (``reopened()``).
    public func secondReader() throws -> any StoreReading { try reopened() }
}

extension SQLiteStore: StoreReading {
    /// A single-pass cursor over an entity's objects in primary-key order, without a condition (see
    /// ``StoreReading/objects(of:includingSubentities:after:through:batchSize:)``).
    public func objects(
        of entityName: String, includingSubentities: Bool, after: Int64, through: Int64?, batchSize: Int
    ) throws(StoreError) -> ObjectCursor {
        try objects(
            of: entityName, includingSubentities: includingSubentities, after: after, through: through, condition: nil, batchSize: batchSize)
    }

    /// The chunk boundaries of an entity's own objects, by `ORDER BY Z_PK LIMIT 1 OFFSET n-1` steps
    /// (see ``StoreReading/keyBoundaries(of:chunkSize:)``).
    public func keyBoundaries(of entityName: String, chunkSize: Int) throws(StoreError) -> KeyBoundaries {
        let queries = EngineChunkQueries.Boundaries(entity: try entity(entityName), filter: nil, chunkSize: max(1, chunkSize))
        var boundaries: [Int64] = []
        var lower: Int64 = 0
        while let upper = try queries.boundary(after: lower, in: database) {
            boundaries.append(upper)
            lower = upper
        }
        let rest = try queries.remainder(after: lower, in: database)
        return KeyBoundaries(boundaries: boundaries, remainderUpper: rest?.upper, remainderCount: rest?.count ?? 0)
    }
}

// MARK: - Rows made by another store type

extension ObjectShape {
    /// The shape of an entity's rows: its attributes, then its to-one relationships, in the layout's order.
    ///
    /// ```swift
    /// let shape = ObjectShape(layoutOf: layout.entity(named: "Person")!)
    /// ```
    public init(layoutOf entity: EntityLayout) {
        self.init(entity: entity)
    }
}

extension ObjectRow {
    /// A row read by a store type of its own (see ``StoreReading``).
    ///
    /// ```swift
    /// let row = ObjectRow(id: ObjectID(entity: 1, primaryKey: 7), version: 1, values: ["Ada"], of: shape)
    /// ```
    ///
    /// - Parameters:
    ///   - id: The object's entity number and primary key.
    ///   - version: Core Data's optimistic-locking version (`Z_OPT`).
    ///   - values: One value per slot of `shape`: attributes, then to-ones as `.object` or `.null`.
    ///   - shape: The shape of the entity's rows (``ObjectShape/init(layoutOf:)``).
    public init(id: ObjectID, version: Int64, values: [Value], of shape: ObjectShape) {
        self.id = id
        self.version = version
        self.values = values
        self.shape = shape
    }
}
