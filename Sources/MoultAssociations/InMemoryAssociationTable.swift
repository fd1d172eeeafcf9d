public import MoultModel

/// An ``AssociationTable`` held in memory: for small jobs, and the baseline the LMDB table is measured against.
///
/// It behaves as ``LMDBAssociationTable`` does (the same ordering, set semantics, chunk rollback and
/// side table), but nothing survives the process: ``close()`` and ``removeStorage()`` empty it.
/// Memory grows with the number of associations (about 100 bytes each, both directions).
public final class InMemoryAssociationTable: AssociationTable {
    /// mapping → source `Z_PK` → destinations, sorted.
    private var forward: [Int: [Int64: IDList]] = [:]
    /// mapping → destination → sources, sorted by primary key (one per source key).
    private var reverse: [Int: [ObjectID: IDList]] = [:]
    /// namespace → key → value.
    private var state: [String: [[UInt8]: [UInt8]]] = [:]
    private var associationCount = 0
    /// What undoes the open chunk's writes, newest last; nil outside a chunk.
    private var undoLog: [Undo]?

    private enum Undo {
        case forwardInserted(Association)
        case reverseInserted(Association)
        case reverseReplaced(mapping: Int, destination: ObjectID, previous: ObjectID)
        case state(namespace: String, key: [UInt8], previous: [UInt8]?)
    }

    /// A short sorted list of object ids, without an allocation for the common single one.
    private enum IDList {
        case one(ObjectID)
        case many([ObjectID])

        var ids: [ObjectID] {
            switch self {
            case .one(let id): [id]
            case .many(let ids): ids
            }
        }
    }

    public init() {}

    // MARK: - Chunks

    public var isInChunk: Bool { undoLog != nil }

    public func beginChunk() throws {
        guard undoLog == nil else { throw AssociationError(.misuse, "a chunk is already open") }
        undoLog = []
    }

    public func commitChunk(durable: Bool) throws {
        guard undoLog != nil else { throw AssociationError(.misuse, "no chunk is open to commit") }
        undoLog = nil
    }

    public func abortChunk() {
        guard let log = undoLog else { return }
        undoLog = nil
        for undo in log.reversed() {
            switch undo {
            case .forwardInserted(let a):
                let remaining = forward[a.mapping]?[a.source.primaryKey]?.ids.filter { $0 != a.destination } ?? []
                forward[a.mapping]?[a.source.primaryKey] = Self.list(remaining)
                associationCount -= 1
            case .reverseInserted(let a):
                let remaining = reverse[a.mapping]?[a.destination]?.ids.filter { $0.primaryKey != a.source.primaryKey } ?? []
                reverse[a.mapping]?[a.destination] = Self.list(remaining)
            case .reverseReplaced(let mapping, let destination, let previous):
                var ids = reverse[mapping]?[destination]?.ids ?? []
                if let index = ids.firstIndex(where: { $0.primaryKey == previous.primaryKey }) { ids[index] = previous }
                reverse[mapping]?[destination] = Self.list(ids)
            case .state(let namespace, let key, let previous):
                state[namespace, default: [:]][key] = previous
            }
        }
    }

    private static func list(_ ids: [ObjectID]) -> IDList? {
        switch ids.count {
        case 0: nil
        case 1: .one(ids[0])
        default: .many(ids)
        }
    }

    private func record(_ undo: Undo) {
        undoLog?.append(undo)
    }

    // MARK: - Writing

    public func associate(source: ObjectID, destination: ObjectID, mapping: Int) throws {
        _ = try AssociationArguments.mapping(mapping)
        let association = Association(source: source, destination: destination, mapping: mapping)

        // Forward: a set of destinations per source, sorted.
        var destinations = forward[mapping]?[source.primaryKey]?.ids ?? []
        let slot = destinations.firstIndex { $0 >= destination } ?? destinations.endIndex
        if slot == destinations.endIndex || destinations[slot] != destination {
            destinations.insert(destination, at: slot)
            forward[mapping, default: [:]][source.primaryKey] = Self.list(destinations)
            associationCount += 1
            record(.forwardInserted(association))
        }

        // Reverse: one source per source key, sorted by key; a replay may restate its entity.
        var sources = reverse[mapping]?[destination]?.ids ?? []
        let at = sources.firstIndex { $0.primaryKey >= source.primaryKey } ?? sources.endIndex
        if at < sources.endIndex, sources[at].primaryKey == source.primaryKey {
            guard sources[at] != source else { return }
            record(.reverseReplaced(mapping: mapping, destination: destination, previous: sources[at]))
            sources[at] = source
        } else {
            sources.insert(source, at: at)
            record(.reverseInserted(association))
        }
        reverse[mapping, default: [:]][destination] = Self.list(sources)
    }

    public func associate(_ associations: [Association]) throws {
        for association in associations {
            try associate(source: association.source, destination: association.destination, mapping: association.mapping)
        }
    }

    // MARK: - Reading

    public func destinations(forMapping mapping: Int, source: Int64) throws -> [ObjectID] {
        _ = try AssociationArguments.mapping(mapping)
        return forward[mapping]?[source]?.ids ?? []
    }

    public func destinations(forMapping mapping: Int, sources: [Int64]) throws -> [[ObjectID]] {
        _ = try AssociationArguments.mapping(mapping)
        let table = forward[mapping]
        return sources.map { table?[$0]?.ids ?? [] }
    }

    public func destinations(forSource source: ObjectID, mappings: [Int]) throws -> [ObjectID] {
        try mappings.flatMap { try destinations(forMapping: $0, source: source.primaryKey) }
    }

    public func sources(forMapping mapping: Int, destination: ObjectID) throws -> [ObjectID] {
        _ = try AssociationArguments.mapping(mapping)
        return reverse[mapping]?[destination]?.ids ?? []
    }

    public func count() throws -> Int { associationCount }

    // MARK: - Side table

    public func stateValue(forKey key: [UInt8], in namespace: String) throws -> [UInt8]? {
        try AssociationArguments.namespace(namespace)
        return state[namespace]?[key]
    }

    public func setStateValue(_ value: [UInt8], forKey key: [UInt8], in namespace: String) throws {
        try AssociationArguments.namespace(namespace)
        let previous = state[namespace, default: [:]].updateValue(value, forKey: key)
        record(.state(namespace: namespace, key: key, previous: previous))
    }

    @discardableResult
    public func removeStateValue(forKey key: [UInt8], in namespace: String) throws -> Bool {
        try AssociationArguments.namespace(namespace)
        guard let previous = state[namespace]?.removeValue(forKey: key) else { return false }
        record(.state(namespace: namespace, key: key, previous: previous))
        return true
    }

    // MARK: - Lifetime

    public func close() {
        abortChunk()
        forward = [:]
        reverse = [:]
        state = [:]
        associationCount = 0
    }

    public func removeStorage() throws { close() }
}

@available(*, unavailable)
extension InMemoryAssociationTable: Sendable {}
