public import Foundation
public import MoultModel

// MARK: - Writing a store

/// A new Core Data store being written: created for a model, filled in transactions, given its
/// metadata, and finished into the file Core Data opens.
///
/// ``SQLiteStore`` conforms; a writer of Core Data's XML store can too. The engine's chunk writer
/// speaks to the store through ``makeWriter()`` (objects and links) and ``SQLFastPaths`` when the
/// store has it.
///
/// ```swift
/// func copy<Store: WritableStore>(_ people: [[String: Value]], into store: Store, model: ObjectModel) throws {
///     let writer = try store.makeWriter()
///     try writer.transaction {
///         for person in people { _ = try writer.insert("Person", values: [person["name"] ?? .null], primaryKey: nil) }
///     }
///     try store.writeMetadata(StoreMetadata(model: model))
///     try store.finish()
/// }
/// ```
public protocol WritableStore: AnyObject {
    /// The writer ``makeWriter()`` returns.
    associatedtype Writer: StoreWriting

    /// Creates a new, empty store for a model at `url`, with `metadata` (by default what Core Data
    /// writes for the model).
    ///
    /// - Throws: ``StoreError``: `.alreadyExists` when a file is there, or any error creating it.
    static func create(at url: URL, model: ObjectModel, metadata: StoreMetadata?) throws(StoreError) -> Self

    /// The layout of the store's model.
    var layout: StoreLayout { get }

    /// A writer of objects and relationships into this store.
    ///
    /// - Throws: ``StoreError`` when the store's key counters cannot be read.
    func makeWriter() throws(StoreError) -> Writer

    /// Replaces the store's metadata.
    ///
    /// - Throws: ``StoreError`` from the write.
    func writeMetadata(_ metadata: StoreMetadata) throws(StoreError)

    /// Leaves the store as the one file Core Data opens (no side file of the writer's left beside it).
    ///
    /// - Throws: ``StoreError`` from the write.
    func finish() throws(StoreError)
}

/// Inserts objects and sets their relationships and attributes, all inside ``transaction(_:)``s that
/// commit whole or not at all (see ``StoreWriter``, SQLite's).
public protocol StoreWriting: AnyObject {
    /// The last primary key used in an entity's hierarchy (keys are allocated per inheritance root).
    ///
    /// - Throws: ``StoreError`` (`.unknownName`).
    func lastPrimaryKey(for entityName: String) throws(StoreError) -> Int64

    /// Allocates `count` consecutive primary keys of an entity's hierarchy.
    ///
    /// - Throws: ``StoreError`` (`.unknownName`).
    func allocatePrimaryKeys(for entityName: String, count: Int) throws(StoreError) -> ClosedRange<Int64>

    /// Inserts an object with one value per slot (attributes, then to-ones as `.object` or `.null`).
    ///
    /// - Parameters:
    ///   - entityName: The entity (not abstract).
    ///   - values: One value per slot of the entity's ``ObjectShape``.
    ///   - primaryKey: The key; allocated when nil; a given key above the counter advances it.
    /// - Returns: The new object's id.
    /// - Throws: ``StoreError``: `.invalidValue` for a wrong count or value, an abstract entity.
    @discardableResult
    func insert(_ entityName: String, values: [Value], primaryKey: Int64?) throws(StoreError) -> ObjectID

    /// Adds destinations to a to-many relationship of `source` (in order for an ordered one).
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for a relationship the entity does not have).
    func relate(_ relationship: String, _ source: ObjectID, to destinations: [ObjectID]) throws(StoreError)

    /// Points a to-one relationship of `object` at `target` (its inverse is not touched).
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for a to-one the entity does not have).
    func setToOne(_ relationship: String, of object: ObjectID, to target: ObjectID) throws(StoreError)

    /// Sets an attribute of an object already inserted.
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for an attribute the entity does not have).
    func setAttribute(_ attribute: String, of object: ObjectID, to value: Value) throws(StoreError)

    /// Runs `body` as one transaction: everything it wrote commits together, or, when it throws,
    /// nothing does (the key counters included).
    func transaction<T>(_ body: () throws -> T) throws -> T
}

// MARK: - SQL fast paths

/// What only a store SQLite runs offers the engine: its connection, on which bulk `INSERT … SELECT`
/// copies, stage 2's links as set operations, the checkpoint and work tables, and filters pushed down
/// to SQL run ("evaluation inside SQLite"). A store type without it is read and written object by
/// object through ``StoreReading`` and ``StoreWriting``.
///
/// ```swift
/// if let sql = store as? any SQLFastPaths {
///     let cursor = try sql.objects(of: "Person", includingSubentities: true, after: 0, through: nil,
///                                  condition: SQLCondition("ZAGE >= ?", [.int(18)]), batchSize: 1000)
///     _ = cursor
/// }
/// ```
public protocol SQLFastPaths: StoreReading {
    /// The connection.
    var database: Database { get }

    /// The objects of an entity that pass an SQL condition, in primary-key order.
    ///
    /// - Throws: ``StoreError`` (`.unknownName`, or SQLite's refusal of the condition).
    func objects(
        of entityName: String, includingSubentities: Bool, after: Int64, through: Int64?, condition: SQLCondition?, batchSize: Int
    ) throws(StoreError) -> ObjectCursor
}

extension SQLiteStore: SQLFastPaths {}

extension SQLiteStore: WritableStore {
    /// Creates a new, empty store (see ``create(at:model:metadata:configuration:)``).
    public static func create(at url: URL, model: ObjectModel, metadata: StoreMetadata?) throws(StoreError) -> Self {
        // `SQLiteStore` is final: `Self` is `SQLiteStore`.
        try create(at: url, model: model, metadata: metadata, configuration: .init()) as! Self
    }

    /// Replaces the metadata in `Z_METADATA`, in a transaction of its own.
    public func writeMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        do {
            try database.write { try metadata.write(to: database) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.ioFailure, "writing the metadata failed: \(error)", path: database.path)
        }
    }

    /// Checkpoints the write-ahead log and leaves the store in rollback-journal mode: one file.
    public func finish() throws(StoreError) {
        try EngineWorkTables.foldIntoOneFile(database)
    }
}

extension StoreWriter: StoreWriting {
    /// Points a to-one relationship of `object` at `target`: its column, and its `Z_ENT` companion when
    /// the destination has sub-entities.
    public func setToOne(_ relationship: String, of object: ObjectID, to target: ObjectID) throws(StoreError) {
        guard let entity = layout.entity(number: object.entity), let toOne = entity.toOne(named: relationship) else {
            throw StoreError(.unknownName, "no entity numbered \(object.entity) has a to-one '\(relationship)'", path: database.path)
        }
        try EngineLinkWrites.ToOneUpdate(toOne, table: entity.table).run(object: object, target: target, in: database)
    }

    /// Sets an attribute of an object already inserted.
    public func setAttribute(_ attribute: String, of object: ObjectID, to value: Value) throws(StoreError) {
        guard let entity = layout.entity(number: object.entity), let column = entity.attribute(named: attribute) else {
            throw StoreError(.unknownName, "no entity numbered \(object.entity) has an attribute '\(attribute)'", path: database.path)
        }
        try EngineLinkWrites.setAttribute(value, column: column.column, table: entity.table, primaryKey: object.primaryKey, in: database)
    }

    /// Runs `body` in one transaction (see ``write(_:)``).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try write(body)
    }
}
