public import MoultModel

/// The side table seen from one namespace: what a migration policy remembers across chunks (for
/// example "companies already created, by name").
///
/// Values are written with the association table's open chunk, so they commit (and survive a
/// resume) with the chunk that created them, and roll back with it.
///
/// ```swift
/// let companies = table.policyState("AdultToCompany.companies")
/// if let company = try companies.objectID(forKey: name) { ... }
/// else { try companies.set(newCompany, forKey: name) }
/// ```
public struct PolicyStateStore {
    public let table: any AssociationTable
    public let namespace: String

    public init(table: any AssociationTable, namespace: String) {
        self.table = table
        self.namespace = namespace
    }

    /// The bytes stored under `key`, or nil.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try table.stateValue(forKey: key, in: namespace)
    }

    /// Stores bytes under `key`.
    public func set(_ value: [UInt8], forKey key: [UInt8]) throws {
        try table.setStateValue(value, forKey: key, in: namespace)
    }

    /// Removes the value under `key`; returns whether there was one.
    @discardableResult
    public func remove(forKey key: String) throws -> Bool {
        try table.removeStateValue(forKey: Array(key.utf8), in: namespace)
    }

    /// The bytes stored under a string key, or nil.
    public func value(forKey key: String) throws -> [UInt8]? {
        try value(forKey: Array(key.utf8))
    }

    /// Stores bytes under a string key.
    public func set(_ value: [UInt8], forKey key: String) throws {
        try set(value, forKey: Array(key.utf8))
    }

    /// The object id stored under a string key, or nil.
    ///
    /// - Throws: ``AssociationError/Code/invalidArgument`` when the stored value is not an object id.
    public func objectID(forKey key: String) throws -> ObjectID? {
        guard let bytes = try value(forKey: key) else { return nil }
        guard let id = AssociationKeys.objectID(bytes) else {
            throw AssociationError(.invalidArgument, "the value under \"\(key)\" in \"\(namespace)\" is not an object id (\(bytes.count) bytes)")
        }
        return id
    }

    /// Stores an object id under a string key.
    public func set(_ id: ObjectID, forKey key: String) throws {
        try set(AssociationKeys.bytes(of: id), forKey: key)
    }
}

@available(*, unavailable)
extension PolicyStateStore: Sendable {}
