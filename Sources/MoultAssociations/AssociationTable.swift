public import MoultModel

/// One recorded association: a source object, the destination object made from it, and the index of
/// the entity mapping that made it.
public struct Association: Sendable, Hashable {
    public var source: ObjectID
    public var destination: ObjectID
    /// The entity mapping's index in its mapping model (or plan).
    public var mapping: Int

    public init(source: ObjectID, destination: ObjectID, mapping: Int) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
    }
}

/// The source ↔ destination object tables of a migration: Core Data's association tables, made
/// persistent and chunked.
///
/// Writes happen inside chunks that match the migration's chunks: ``beginChunk()``, writes,
/// ``commitChunk(durable:)`` (or ``abortChunk()``), or the scoped ``chunk(durable:_:)``. A write
/// outside a chunk commits on its own. Lookups inside a chunk see the chunk's own writes.
///
/// Associations are a set: recording the same (mapping, source, destination) twice keeps one entry,
/// so a chunk replayed after a crash overwrites the same entries. Several destinations per source
/// (a policy making two objects from one) and several sources per destination (many adults, one
/// company) are both kept. Destinations come back ordered by (entity, primary key), sources by
/// primary key.
///
/// The side table (``stateValue(forKey:in:)`` and friends, or ``policyState(_:)``) keeps what
/// policies remember across chunks, committed with the chunk.
///
/// Implementations are thread-confined: use one from one thread (or task) at a time.
public protocol AssociationTable: AnyObject {
    // MARK: Chunks

    /// Starts a chunk: the writes until ``commitChunk(durable:)`` commit together.
    ///
    /// - Throws: ``AssociationError/Code/misuse`` when a chunk is already open.
    func beginChunk() throws
    /// Commits the open chunk; with `durable`, its writes are on disk when this returns.
    func commitChunk(durable: Bool) throws
    /// Discards the open chunk's writes. Does nothing when no chunk is open.
    func abortChunk()
    /// Whether a chunk is open.
    var isInChunk: Bool { get }

    // MARK: Writing

    /// Records that `mapping` made `destination` from `source`.
    func associate(source: ObjectID, destination: ObjectID, mapping: Int) throws
    /// Records many associations (a chunk's worth), fastest in ascending (mapping, source) order.
    func associate(_ associations: [Association]) throws

    // MARK: Reading

    /// The destinations `mapping` made from the source object whose `Z_PK` is `source`.
    func destinations(forMapping mapping: Int, source: Int64) throws -> [ObjectID]
    /// ``destinations(forMapping:source:)`` for many sources at once, in the same order; sorted input
    /// is walked forward.
    func destinations(forMapping mapping: Int, sources: [Int64]) throws -> [[ObjectID]]
    /// The sources `mapping` made `destination` from.
    func sources(forMapping mapping: Int, destination: ObjectID) throws -> [ObjectID]
    /// The destinations made from `source` by any of `mappings` (those whose source entity is
    /// `source`'s), in the order of `mappings`: "whichever mapping migrated that object".
    func destinations(forSource source: ObjectID, mappings: [Int]) throws -> [ObjectID]
    /// How many associations are recorded (committed, plus the open chunk's).
    func count() throws -> Int

    // MARK: Side table

    /// The value stored under `key` in `namespace`, or nil.
    func stateValue(forKey key: [UInt8], in namespace: String) throws -> [UInt8]?
    /// Stores `value` under `key` in `namespace` (with the open chunk, or on its own).
    func setStateValue(_ value: [UInt8], forKey key: [UInt8], in namespace: String) throws
    /// Removes the value under `key` in `namespace`; returns whether there was one.
    @discardableResult
    func removeStateValue(forKey key: [UInt8], in namespace: String) throws -> Bool

    // MARK: Lifetime

    /// Closes the table, keeping its storage for a later resume. An open chunk is aborted.
    func close()
    /// Closes the table and removes its storage: call it when the migration succeeded.
    func removeStorage() throws
}

// MARK: - Conveniences

extension AssociationTable {
    /// Runs `body` as one chunk: commits when it returns, aborts when it throws.
    ///
    /// ```swift
    /// try table.chunk(durable: true) {
    ///     for row in rows { try table.associate(source: row.source, destination: row.destination, mapping: 0) }
    /// }
    /// ```
    public func chunk<R>(durable: Bool = false, _ body: () throws -> R) throws -> R {
        try beginChunk()
        do {
            let result = try body()
            try commitChunk(durable: durable)
            return result
        } catch {
            abortChunk()
            throw error
        }
    }

    /// A view of the side table restricted to one namespace, for a policy's state.
    public func policyState(_ namespace: String) -> PolicyStateStore {
        PolicyStateStore(table: self, namespace: namespace)
    }
}

/// Checks the arguments every implementation checks the same way.
enum AssociationArguments {
    static func mapping(_ mapping: Int) throws -> UInt32 {
        guard let value = UInt32(exactly: mapping) else {
            throw AssociationError(.invalidArgument, "entity mapping index \(mapping) is out of range (0...\(UInt32.max))")
        }
        return value
    }

    static func namespace(_ namespace: String) throws {
        guard !namespace.isEmpty, !namespace.utf8.contains(0) else {
            throw AssociationError(.invalidArgument, "a side-table namespace must be non-empty and contain no NUL character")
        }
    }
}
