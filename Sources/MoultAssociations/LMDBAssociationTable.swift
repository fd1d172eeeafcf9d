public import Foundation
public import MoultModel
import MoultStore

/// An ``AssociationTable`` kept in an LMDB environment on disk, so that memory stays flat however
/// many objects a migration moves.
///
/// The environment lives in `directory`, which the table creates; ``removeStorage()`` deletes it
/// when the migration succeeded, and opening a table on an existing directory resumes it. Each
/// chunk is one LMDB write transaction, committed by ``commitChunk(durable:)`` before the migration
/// commits the chunk's rows. The map starts small and doubles whenever it fills (the chunk's writes
/// are replayed into the grown map), up to `maximumMapSize`.
///
/// ```swift
/// let table = try LMDBAssociationTable(directory: work.appending(path: "associations"))
/// try table.chunk(durable: true) {
///     try table.associate(source: ObjectID(entity: 1, primaryKey: 42), destination: ObjectID(entity: 3, primaryKey: 7), mapping: 0)
/// }
/// let made = try table.destinations(forMapping: 0, source: 42)
/// try table.removeStorage()
/// ```
///
/// Key layout (big-endian, see the "Key layout" article):
/// - `forward`: (mapping, source `Z_PK`, destination `Z_ENT`, destination `Z_PK`) → empty. The whole
///   association is in the key, so replaying a chunk rewrites exactly the same keys, a source with
///   several destinations is several keys, and ascending source keys are `MDB_APPEND`s.
/// - `reverse`: (mapping, destination `Z_ENT`, destination `Z_PK`, source `Z_PK`) → source `Z_ENT`.
///   A composite key rather than `MDB_DUPSORT`, for the same reasons: a replay overwrites the same
///   key, appends work whenever destinations are made in order (the common case, since destination
///   keys are allocated in source order), and a prefix scan gives one destination's sources (one
///   company's many adults) in source order.
/// - `state`: (namespace, 0, key) → value, the policies' side table.
public final class LMDBAssociationTable: AssociationTable {
    /// The directory that holds the environment; created by the table, removed by ``removeStorage()``.
    public let directory: URL

    private let environment: Environment
    /// The directory's descriptor LMDB opens its files through, when it lies in a folder the run holds
    /// (``FileOperations/openFolder(_:)``); closed with the environment.
    private var heldDirectory: Int32?
    private let forward: Environment.Database
    private let reverse: Environment.Database
    private let state: Environment.Database

    /// The open chunk's transaction.
    private var chunkTransaction: Transaction?
    /// The open chunk's writes, replayed into a fresh transaction when the map has to grow.
    private var chunkLog: [LoggedWrite] = []
    private var scratchKey: [UInt8] = []
    private var scratchKey2: [UInt8] = []

    private enum LoggedWrite {
        case association(Association)
        case setState(key: [UInt8], value: [UInt8])
        case removeState(key: [UInt8])
    }

    /// The largest side-table key (namespace + key) LMDB accepts.
    public static let maximumStateKeyLength = 510

    /// Opens the table in `directory`, creating the directory and the environment, or resuming the
    /// environment already there.
    ///
    /// - Parameters:
    ///   - directory: the work directory of the associations (owned by the table).
    ///   - initialMapSize: the map's starting size in bytes; it doubles whenever it fills.
    ///   - maximumMapSize: the largest the map may grow to.
    ///   - syncOnCommit: whether every commit flushes to disk. `false` (the default) flushes only for
    ///     `commitChunk(durable: true)`.
    /// - Throws: ``AssociationError`` when the directory or the environment cannot be created or opened.
    public init(
        directory: URL, initialMapSize: Int = 64 << 20, maximumMapSize: Int = 1 << 40, syncOnCommit: Bool = false
    ) throws {
        self.directory = directory
        do throws(StoreError) {
            try FileOperations.makeDirectories(directory.path(percentEncoded: false))
        } catch {
            throw AssociationError(.io, "cannot create the association directory: \(error.message)", directory: directory.path)
        }
        // LMDB opens its two files by path, following links: checked first (lstat), never followed.
        for name in ["data.mdb", "lock.mdb"] where FileOperations.isSymbolicLink(directory.appending(path: name).path(percentEncoded: false)) {
            throw AssociationError(.io, "\(name) is a symbolic link, and Moult does not follow it", directory: directory.path)
        }
        // In a folder the run holds, through a descriptor of the directory (`/proc/self/fd/N`): the files
        // are made in the folder the run looked at, wherever it now is.
        let held: (descriptor: Int32, path: String)?
        do throws(StoreError) {
            held = try FileOperations.openFolder(directory.path(percentEncoded: false))
        } catch {
            throw AssociationError(.io, "cannot open the association directory: \(error.message)", directory: directory.path)
        }
        do {
            environment = try Environment(
                directory: directory.path, openingAt: held?.path, maxDatabases: 4, mapSize: initialMapSize, maximumMapSize: maximumMapSize,
                syncOnCommit: syncOnCommit)
        } catch {
            if let held { FileOperations.closeFolder(held.descriptor) }
            throw error
        }
        do {
            forward = try environment.database(named: "forward")
            reverse = try environment.database(named: "reverse")
            state = try environment.database(named: "state")
        } catch {
            environment.close()
            if let held { FileOperations.closeFolder(held.descriptor) }
            throw error
        }
        heldDirectory = held?.descriptor
        scratchKey.reserveCapacity(32)
        scratchKey2.reserveCapacity(32)
    }

    deinit { close() }

    /// The map's current size in bytes.
    public var mapSize: Int { environment.mapSize }
    /// How many times the map grew since the table was opened.
    public var mapGrowthCount: Int { environment.growthCount }

    /// Flushes everything committed so far to disk, even when commits do not sync.
    public func sync() throws { try environment.sync(force: true) }

    // MARK: - Chunks

    public var isInChunk: Bool { chunkTransaction != nil }

    public func beginChunk() throws {
        guard chunkTransaction == nil else {
            throw AssociationError(.misuse, "a chunk is already open", directory: directory.path)
        }
        chunkTransaction = try environment.beginWrite()
        chunkLog.removeAll(keepingCapacity: false)
    }

    public func commitChunk(durable: Bool) throws {
        guard let transaction = chunkTransaction else {
            throw AssociationError(.misuse, "no chunk is open to commit", directory: directory.path)
        }
        var current = transaction
        while true {
            do {
                try current.commit()
                break
            } catch let error as AssociationError where error.code == .mapFull {
                current = try regrowAndReplay()
            } catch {
                chunkTransaction = nil
                chunkLog.removeAll(keepingCapacity: false)
                throw error
            }
        }
        chunkTransaction = nil
        chunkLog.removeAll(keepingCapacity: false)
        if durable { try environment.sync(force: true) }
    }

    public func abortChunk() {
        chunkTransaction?.abort()
        chunkTransaction = nil
        chunkLog.removeAll(keepingCapacity: false)
    }

    /// Aborts the chunk's transaction, grows the map, and replays the chunk's writes into a new
    /// transaction, as many times as the map needs.
    private func regrowAndReplay() throws -> Transaction {
        while true {
            chunkTransaction?.abort()
            chunkTransaction = nil
            try environment.grow()
            let transaction = try environment.beginWrite()
            chunkTransaction = transaction
            do {
                for write in chunkLog { try apply(write, in: transaction) }
                return transaction
            } catch let error as AssociationError where error.code == .mapFull {
                continue
            }
        }
    }

    /// Applies one write to the open chunk (opening a chunk of its own when none is), growing the map when it fills.
    private func perform(_ write: LoggedWrite) throws {
        guard var transaction = chunkTransaction else {
            try chunk { try perform(write) }
            return
        }
        while true {
            do {
                try apply(write, in: transaction)
                break
            } catch let error as AssociationError where error.code == .mapFull {
                transaction = try regrowAndReplay()
            } catch {
                abortChunk()
                throw error
            }
        }
        chunkLog.append(write)
    }

    private func apply(_ write: LoggedWrite, in transaction: Transaction) throws {
        switch write {
        case .association(let association):
            try put(association, in: transaction)
        case .setState(let key, let value):
            try key.withUnsafeBytes { k in
                try value.withUnsafeBytes { v in try transaction.put(state, key: k, value: v, append: false) }
            }
        case .removeState(let key):
            try key.withUnsafeBytes { _ = try transaction.delete(state, key: $0) }
        }
    }

    private func put(_ association: Association, in transaction: Transaction) throws {
        let mapping = try AssociationArguments.mapping(association.mapping)
        scratchKey.removeAll(keepingCapacity: true)
        AssociationKeys.append(mapping, to: &scratchKey)
        AssociationKeys.append(association.source.primaryKey, to: &scratchKey)
        AssociationKeys.append(association.destination.entity, to: &scratchKey)
        AssociationKeys.append(association.destination.primaryKey, to: &scratchKey)
        scratchKey2.removeAll(keepingCapacity: true)
        AssociationKeys.append(mapping, to: &scratchKey2)
        AssociationKeys.append(association.destination.entity, to: &scratchKey2)
        AssociationKeys.append(association.destination.primaryKey, to: &scratchKey2)
        AssociationKeys.append(association.source.primaryKey, to: &scratchKey2)
        let sourceEntity = UInt32(bitPattern: association.source.entity).bigEndian
        try scratchKey.withUnsafeBytes { key in
            try transaction.put(forward, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0), append: true)
        }
        try scratchKey2.withUnsafeBytes { key in
            try withUnsafeBytes(of: sourceEntity) { value in
                try transaction.put(reverse, key: key, value: value, append: true)
            }
        }
    }

    // MARK: - Writing

    public func associate(source: ObjectID, destination: ObjectID, mapping: Int) throws {
        _ = try AssociationArguments.mapping(mapping)
        try perform(.association(Association(source: source, destination: destination, mapping: mapping)))
    }

    public func associate(_ associations: [Association]) throws {
        guard chunkTransaction != nil else {
            try chunk { try associate(associations) }
            return
        }
        for association in associations { _ = try AssociationArguments.mapping(association.mapping) }
        chunkLog.reserveCapacity(chunkLog.count + associations.count)
        for association in associations { try perform(.association(association)) }
    }

    // MARK: - Reading

    /// Runs `body` in the open chunk's transaction (to see its writes) or in a read snapshot.
    private func reading<R>(_ body: (Transaction) throws -> R) throws -> R {
        if let transaction = chunkTransaction { return try body(transaction) }
        return try environment.read(body)
    }

    /// Appends the destinations of (mapping, source) found from the cursor's position to `result`.
    private func scanForward(_ cursor: Cursor, mapping: UInt32, source: Int64, into result: inout [ObjectID]) throws {
        scratchKey.removeAll(keepingCapacity: true)
        AssociationKeys.append(mapping, to: &scratchKey)
        AssociationKeys.append(source, to: &scratchKey)
        var found = try scratchKey.withUnsafeBytes { try cursor.seek(atOrAfter: $0) }
        while found {
            let id: ObjectID? = cursor.withCurrent { key, _ in
                guard key.count == AssociationKeys.forwardKeySize, AssociationKeys.uint32(key, at: 0) == mapping,
                    AssociationKeys.int64(key, at: 4) == source
                else { return nil }
                return ObjectID(entity: AssociationKeys.int32(key, at: 12), primaryKey: AssociationKeys.int64(key, at: 16))
            }
            guard let id else { break }
            result.append(id)
            found = try cursor.next()
        }
    }

    public func destinations(forMapping mapping: Int, source: Int64) throws -> [ObjectID] {
        let index = try AssociationArguments.mapping(mapping)
        return try reading { transaction in
            try transaction.withCursor(forward) { cursor in
                var result: [ObjectID] = []
                try scanForward(cursor, mapping: index, source: source, into: &result)
                return result
            }
        }
    }

    public func destinations(forMapping mapping: Int, sources: [Int64]) throws -> [[ObjectID]] {
        let index = try AssociationArguments.mapping(mapping)
        return try reading { transaction in
            try transaction.withCursor(forward) { cursor in
                try sources.map { source in
                    var result: [ObjectID] = []
                    try scanForward(cursor, mapping: index, source: source, into: &result)
                    return result
                }
            }
        }
    }

    public func destinations(forSource source: ObjectID, mappings: [Int]) throws -> [ObjectID] {
        let indexes = try mappings.map(AssociationArguments.mapping)
        return try reading { transaction in
            try transaction.withCursor(forward) { cursor in
                var result: [ObjectID] = []
                for index in indexes { try scanForward(cursor, mapping: index, source: source.primaryKey, into: &result) }
                return result
            }
        }
    }

    public func sources(forMapping mapping: Int, destination: ObjectID) throws -> [ObjectID] {
        let index = try AssociationArguments.mapping(mapping)
        scratchKey.removeAll(keepingCapacity: true)
        AssociationKeys.append(index, to: &scratchKey)
        AssociationKeys.append(destination.entity, to: &scratchKey)
        AssociationKeys.append(destination.primaryKey, to: &scratchKey)
        let prefix = scratchKey
        return try reading { transaction in
            try transaction.withCursor(reverse) { cursor in
                var result: [ObjectID] = []
                var found = try prefix.withUnsafeBytes { try cursor.seek(atOrAfter: $0) }
                while found {
                    let id: ObjectID? = cursor.withCurrent { key, value in
                        guard key.count == AssociationKeys.reverseKeySize, value.count == 4,
                            prefix.withUnsafeBytes({ $0.elementsEqual(UnsafeRawBufferPointer(rebasing: key[0..<16])) })
                        else { return nil }
                        return ObjectID(entity: AssociationKeys.int32(value, at: 0), primaryKey: AssociationKeys.int64(key, at: 16))
                    }
                    guard let id else { break }
                    result.append(id)
                    found = try cursor.next()
                }
                return result
            }
        }
    }

    public func count() throws -> Int {
        try reading { try $0.count(forward) }
    }

    // MARK: - Side table

    private func stateKey(_ key: [UInt8], _ namespace: String) throws -> [UInt8] {
        try AssociationArguments.namespace(namespace)
        let bytes = AssociationKeys.stateKey(key, namespace: namespace)
        guard bytes.count <= Self.maximumStateKeyLength else {
            throw AssociationError(
                .keyTooLong,
                "a side-table key in \"\(namespace)\" is \(key.count) bytes; namespace and key together may be at most \(Self.maximumStateKeyLength) bytes",
                directory: directory.path)
        }
        return bytes
    }

    public func stateValue(forKey key: [UInt8], in namespace: String) throws -> [UInt8]? {
        let bytes = try stateKey(key, namespace)
        return try reading { transaction in
            try bytes.withUnsafeBytes { k in try transaction.withValue(state, key: k) { $0.map { Array($0) } } }
        }
    }

    public func setStateValue(_ value: [UInt8], forKey key: [UInt8], in namespace: String) throws {
        try perform(.setState(key: try stateKey(key, namespace), value: value))
    }

    @discardableResult
    public func removeStateValue(forKey key: [UInt8], in namespace: String) throws -> Bool {
        let bytes = try stateKey(key, namespace)
        let existed = try reading { transaction in
            try bytes.withUnsafeBytes { k in try transaction.withValue(state, key: k) { $0 != nil } }
        }
        if existed { try perform(.removeState(key: bytes)) }
        return existed
    }

    // MARK: - Lifetime

    public func close() {
        abortChunk()
        environment.close()
        if let heldDirectory { FileOperations.closeFolder(heldDirectory) }
        heldDirectory = nil
    }

    public func removeStorage() throws {
        close()
        do throws(StoreError) {
            try FileOperations.removeTree(directory)
        } catch {
            throw AssociationError(.io, "cannot remove the association directory: \(error.message)", directory: directory.path)
        }
    }
}

@available(*, unavailable)
extension LMDBAssociationTable: Sendable {}
