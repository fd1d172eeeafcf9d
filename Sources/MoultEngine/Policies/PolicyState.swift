public import MoultModel
import MoultStore

/// What a policy remembers across chunks, in one namespace (for example "companies already created, by
/// name").
///
/// The values live in a table of the destination being built, so they commit in the same transaction
/// as the chunk that wrote them (a chunk's own values are recorded with its evaluation, which sees
/// them, and written by the chunk writer): a chunk rolled back by a crash leaves no stale entry behind, and a
/// resumed migration sees exactly what the committed chunks remembered. The table is dropped when the
/// migration ends. Memory stays bounded by SQLite's page cache, whatever the number of entries.
///
/// ```swift
/// let companies = manager.state("companies")
/// if let company = try companies.objectID(forKey: name) { … }
/// else { try companies.set(newCompany, forKey: name) }
/// ```
public struct PolicyState {
    let database: Database
    public let namespace: String
    /// The chunk being evaluated, which records the values set; nil to write them at once.
    let evaluation: ChunkEvaluation?

    init(database: Database, namespace: String, evaluation: ChunkEvaluation? = nil) {
        self.database = database
        self.namespace = namespace
        self.evaluation = evaluation
    }

    package static let createSQL = EnginePolicyStateTable.createSQL

    /// The value stored under `key`, or nil.
    public func value(forKey key: String) throws -> Value? {
        if let recorded = evaluation?.stateValue(namespace: namespace, key: key) { return recorded }
        return try EnginePolicyStateTable.value(namespace: namespace, key: key, in: database)
    }

    /// Stores a value under `key` (integers, doubles, strings and bytes keep their type).
    public func set(_ value: Value, forKey key: String) throws {
        if let evaluation { return evaluation.append(.policyState(namespace: namespace, key: key, value: value)) }
        try EnginePolicyStateTable.set(value, namespace: namespace, key: key, in: database)
    }

    /// The object id stored under `key`, or nil.
    public func objectID(forKey key: String) throws -> ObjectID? {
        guard case .string(let text)? = try value(forKey: key) else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let entity = Int32(parts[0]), let primaryKey = Int64(parts[1]) else { return nil }
        return ObjectID(entity: entity, primaryKey: primaryKey)
    }

    /// Stores an object id under `key`.
    public func set(_ id: ObjectID, forKey key: String) throws {
        try set(.string("\(id.entity)/\(id.primaryKey)"), forKey: key)
    }

    /// Removes the value under `key`.
    public func remove(forKey key: String) throws {
        if let evaluation { return evaluation.append(.policyState(namespace: namespace, key: key, value: nil)) }
        try EnginePolicyStateTable.remove(namespace: namespace, key: key, in: database)
    }
}

@available(*, unavailable)
extension PolicyState: Sendable {}
