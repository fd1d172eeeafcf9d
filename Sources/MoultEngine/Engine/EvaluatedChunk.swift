package import MoultAssociations
package import MoultModel
package import MoultStore

/// A chunk evaluated: everything its mapping and policy decided the destination holds, as values, and
/// nothing written yet. The ``ChunkWriter`` applies it in the chunk's transaction, in order.
///
/// Evaluation reads the source and the destination's committed state (policies' state, the mirrors of
/// earlier passes, the association table) and writes nothing: what the chunk itself records is kept
/// here and seen by its own later look-ups (see ``ChunkEvaluation``). Because it is a `Sendable` value,
/// chunk n + 1 can be evaluated on a second thread while chunk n is written.
///
/// ```swift
/// var chunk = EvaluatedChunk(mapping: "PersonToPerson")
/// chunk.writes.append(.insert(entity: "Person", primaryKey: 8, values: ["Ada", .null]))
/// chunk.associations.append(Association(source: ObjectID(entity: 1, primaryKey: 3),
///                                       destination: ObjectID(entity: 1, primaryKey: 8), mapping: 0))
/// try chunkWriter.apply(chunk)
/// ```
package struct EvaluatedChunk: Sendable {
    /// One write, in the order evaluation made it (the order the store receives it: the same SQL in
    /// the same order as the object-by-object path always wrote).
    package enum Write: Sendable {
        /// A new object: its entity, the key evaluation allocated, one value per slot.
        case insert(entity: String, primaryKey: Int64, values: [Value])
        /// A to-one set on an object (a one-to-one's inverse is a second write).
        case setToOne(EngineLinkWrites.ToOneUpdate, object: ObjectID, target: ObjectID)
        /// Destinations added to a to-many; an ordered one's positions counted from `firstPosition`.
        case relate(relationship: String, source: ObjectID, destinations: [ObjectID], firstPosition: Int)
        /// Destinations removed from a to-many (a policy's).
        case unrelate(relationship: String, source: ObjectID, destinations: [ObjectID])
        /// A to-one set back to nil on an object, when it still names `target` (a policy's; a
        /// one-to-one's inverse is a second write).
        case clearToOne(EngineLinkWrites.ToOneClear, object: ObjectID, target: ObjectID)
        /// An attribute set by a policy on an object already made.
        case setAttribute(value: Value, column: String, table: String, primaryKey: Int64)
        /// A policy's state: a value stored under a key, or removed (nil).
        case policyState(namespace: String, key: String, value: Value?)
        /// An association mirrored in the destination (see ``ToOnesAtInsert``).
        case mirror(mapping: Int, source: Int64, destination: Int64)
        /// A value of a uniquing mapping's key table and the object made for it from its first holder
        /// (see `EngineKeyMap`).
        case keyMap(mapping: Int, key: Value, destination: Int64, first: Int64)
    }

    /// Stage 2's links of one relationship as a set operation: staged, then written by one update.
    package struct LinkSet: Sendable {
        package struct Link: Sendable {
            package var object: Int64
            package var value: Int64
            package var entity: Int32
            package var position: Int
        }

        package var relationship: String
        package var update: EngineLinkWrites.ColumnUpdate
        package var links: [Link]
    }

    /// The mapping evaluated (for errors).
    package var mapping: String?
    package var writes: [Write] = []
    /// Stage 2 as set operations, after ``writes``.
    package var linkSets: [LinkSet] = []
    /// The associations the chunk recorded, written to the association table with the chunk.
    package var associations: [Association] = []

    package init(mapping: String?) {
        self.mapping = mapping
    }

    /// Whether applying the chunk writes nothing.
    package var isEmpty: Bool { writes.isEmpty && linkSets.isEmpty && associations.isEmpty }
}

/// The chunk being evaluated, as the manager records it: its writes and associations, the primary
/// keys it allocated, and what its own look-ups must see of them before they are written (the chunk's
/// associations, mirrors and policy state).
///
/// Confined to the evaluating thread; what leaves it is ``take()``'s ``EvaluatedChunk``.
package final class ChunkEvaluation {
    private(set) var chunk = EvaluatedChunk(mapping: nil)
    /// The last primary key used, by root entity number: continued from the writer's before a chunk.
    private var lastKeys: [Int32: Int64] = [:]
    /// The chunk's policy state, by namespace and key (nil: removed).
    private var state: [String: [LiteralKey: Value?]] = [:]
    /// The chunk's new values of uniquing mappings' key tables, by mapping and value (see `EngineKeyMap`).
    private var keyMaps: [Int: [LiteralKey: Int64]] = [:]
    /// The chunk's mirrored associations, by mapping and source key.
    private var mirrors: [Int: [Int64: Int64]] = [:]
    /// The chunk's associations, by mapping and source key, built when a look-up needs them.
    private var destinationsIndex: [Int: [Int64: [ObjectID]]]?

    package init() {}

    /// Starts a chunk: the key counters continue from `lastKey` (the writer's).
    func begin(mapping: String?, lastKey: @escaping (Int32) -> Int64) {
        chunk = EvaluatedChunk(mapping: mapping)
        state = [:]
        keyMaps = [:]
        mirrors = [:]
        destinationsIndex = nil
        keySource = lastKey
        lastKeys = [:]
    }

    private var keySource: ((Int32) -> Int64)?

    /// The evaluated chunk, handed over; the collector is empty again.
    func take() -> EvaluatedChunk {
        defer { begin(mapping: nil, lastKey: keySource ?? { _ in 0 }) }
        return chunk
    }

    /// The next primary key of a hierarchy.
    func allocateKey(root: Int32) -> Int64 {
        let key = (lastKeys[root] ?? keySource?(root) ?? 0) + 1
        lastKeys[root] = key
        return key
    }

    func append(_ write: EvaluatedChunk.Write) {
        chunk.writes.append(write)
        switch write {
        case .policyState(let namespace, let key, let value): state[namespace, default: [:]][LiteralKey(key)] = .some(value)
        case .keyMap(let mapping, let key, let destination, _):
            if let text = UniquingByKeyPolicy.stateKey(key) { keyMaps[mapping, default: [:]][LiteralKey(text)] = destination }
        case .mirror(let mapping, let source, let destination): mirrors[mapping, default: [:]][source] = destination
        default: break
        }
    }

    func append(_ linkSet: EvaluatedChunk.LinkSet) { chunk.linkSets.append(linkSet) }

    func associate(_ association: Association) {
        chunk.associations.append(association)
        if destinationsIndex != nil { index(association) }
    }

    // MARK: - What the chunk's own look-ups see

    /// The chunk's policy state under a key: `.some(nil)` when the chunk removed it, nil when it did not touch it.
    func stateValue(namespace: String, key: String) -> Value?? {
        guard let values = state[namespace], let value = values[LiteralKey(key)] else { return nil }
        return .some(value)
    }

    /// The destination key the chunk made for a value of a uniquing mapping's key table, if it did.
    func keyMapped(mapping: Int, key: Value) -> Int64? {
        guard let values = keyMaps[mapping], let text = UniquingByKeyPolicy.stateKey(key) else { return nil }
        return values[LiteralKey(text)]
    }

    /// The destination the chunk mirrored for a source, if it did.
    func mirrored(mapping: Int, source: Int64) -> Int64? { mirrors[mapping]?[source] }

    /// Whether the chunk recorded any association (look-ups then merge them with the table's).
    var hasAssociations: Bool { !chunk.associations.isEmpty }

    /// The destinations the chunk recorded for `source` by `mapping`.
    func destinations(forMapping mapping: Int, source: Int64) -> [ObjectID] {
        if destinationsIndex == nil {
            destinationsIndex = [:]
            for association in chunk.associations { index(association) }
        }
        return destinationsIndex?[mapping]?[source] ?? []
    }

    /// The sources the chunk recorded for `destination` by `mapping`.
    func sources(forMapping mapping: Int, destination: ObjectID) -> [ObjectID] {
        chunk.associations.filter { $0.mapping == mapping && $0.destination == destination }.map(\.source)
    }

    private func index(_ association: Association) {
        destinationsIndex?[association.mapping, default: [:]][association.source.primaryKey, default: []].append(association.destination)
    }
}

@available(*, unavailable)
extension ChunkEvaluation: Sendable {}

/// A policy's state key compared by its UTF-8 bytes, as the state table (SQLite's BINARY collation)
/// and the expression evaluator compare strings: `String`'s own equality would take "é" as one code
/// point and "e" + U+0301 for one key within a chunk and for two across chunks.
struct LiteralKey: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    static func == (lhs: LiteralKey, rhs: LiteralKey) -> Bool {
        lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
    }
}
