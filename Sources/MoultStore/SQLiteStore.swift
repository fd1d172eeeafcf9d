public import Foundation
public import MoultModel

/// A Core Data SQLite store opened with its model: counts, cursors over entities, to-many reads and a
/// batched writer, all through one ``Database`` connection.
///
/// ```swift
/// let store = try SQLiteStore(url: storeURL, model: version.model)            // read-only
/// let cursor = try store.objects(of: "Person", batchSize: 10_000)
/// while let person = try cursor.next() { print(person.id, person["name"] ?? .null) }
///
/// let destination = try SQLiteStore.create(at: newURL, model: target)          // schema + metadata
/// let writer = destination.makeWriter()
/// try writer.write { _ = try writer.insert("Person", ["name": "Ada"]) }
/// ```
///
/// A store is confined to one thread; it is not `Sendable`.
public final class SQLiteStore {
    /// The connection; use it for SQL of your own (side tables, checkpoints).
    public let database: Database
    /// The layout of the store's model.
    public let layout: StoreLayout

    /// Opens an existing store with the model that made it.
    ///
    /// The model is not checked against the store's hashes here: find the right version with
    /// ``StoreMetadata`` and `VersionedModel.version(matchingEntityHashes:)` first.
    ///
    /// - Throws: ``StoreError`` from opening, `.notCoreData` when `Z_PRIMARYKEY`/`Z_METADATA` are missing,
    ///   `.schemaMismatch` when the store does not have the model's layout (a missing table or column, a
    ///   view in place of a table, entity numbers that are not the model's).
    public init(url: URL, model: ObjectModel, mode: Database.OpenMode = .readOnly, configuration: Database.Configuration = .init())
        throws(StoreError)
    {
        let database = try Database(url: url, mode: mode, configuration: configuration)
        self.database = database
        guard try database.tableExists("Z_PRIMARYKEY"), try database.tableExists("Z_METADATA") else {
            throw StoreError(.notCoreData, "the database has no Z_PRIMARYKEY or Z_METADATA table: it is not a Core Data store", path: database.path)
        }
        layout = try Self.layout(of: model, in: database)
        try checkLayout()
    }

    private init(database: Database, layout: StoreLayout) {
        self.database = database
        self.layout = layout
    }

    /// A second read-only connection to the same file, with the same configuration and layout (see
    /// ``ReopenableStore``).
    ///
    /// - Throws: ``StoreError`` from opening the file.
    public func reopened() throws(StoreError) -> SQLiteStore {
        SQLiteStore(
            database: try Database(url: URL(filePath: database.path), mode: .readOnly, configuration: database.configuration), layout: layout)
    }

    /// Creates a new, empty store for a model: Core Data's schema, one `Z_PRIMARYKEY` row per entity
    /// (`Z_MAX` 0), and the metadata (by default every key Core Data writes for this model).
    ///
    /// The store uses WAL journaling and incremental auto-vacuum, as Core Data's do.
    ///
    /// - Throws: ``StoreError``: `.alreadyExists` when a file is there, or any error creating it.
    public static func create(
        at url: URL, model: ObjectModel, metadata: StoreMetadata? = nil, configuration: Database.Configuration = .init()
    ) throws(StoreError) -> SQLiteStore {
        let path = url.path(percentEncoded: false)
        guard !FileOperations.exists(path) else {
            throw StoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: path)
        }
        let layout = try StoreLayout(model: model)
        try layout.checkWritable()
        let database = try Database(url: url, mode: .create, configuration: configuration)
        try database.executeScript("PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        let store = SQLiteStore(database: database, layout: layout)
        do {
            try database.write {
                for sql in layout.schemaSQL { try database.executeScript(sql) }
                for entity in layout.entities {
                    try database.execute(
                        "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                        [.int(Int64(entity.number)), .string(entity.name), .int(Int64(entity.superNumber))])
                }
                try (metadata ?? StoreMetadata(model: model)).write(to: database)
                // The model the store carries, as Core Data writes it; a model with a part whose archived
                // form is not known leaves the cache empty, which Core Data accepts.
                if let cache = try? ModelCache.encoded(model) {
                    try database.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", [.data(cache)])
                }
            }
        } catch let error as StoreError {
            throw error.located(path: path)
        } catch {
            throw StoreError(.ioFailure, "creating the store failed: \(error)", path: path)
        }
        return store
    }

    /// The store's metadata, read through this connection.
    public func metadata() throws(StoreError) -> StoreMetadata { try StoreMetadata(reading: database) }

    /// `Z_PRIMARYKEY`'s `Z_MAX` by `Z_ENT`, in entity-number order.
    public func primaryKeyMaxima() throws -> [(entity: Int64, maximum: Int64)] {
        try database.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") { ($0.int64(at: 0), $0.int64(at: 1)) }
    }

    /// The layout of an entity.
    ///
    /// - Throws: ``StoreError`` (`.unknownName`) when the model has no such entity.
    public func entity(_ name: String) throws(StoreError) -> EntityLayout {
        guard let entity = layout.entity(named: name) else {
            throw StoreError(.unknownName, "the model has no entity '\(name)'", path: database.path, entity: name)
        }
        return entity
    }

    /// The number of objects of an entity (its sub-entities' included unless told otherwise).
    public func count(of entityName: String, includingSubentities: Bool = true) throws(StoreError) -> Int {
        let entity = try entity(entityName)
        let condition = entity.entityCondition(
            includingSubentities: includingSubentities, tableEntityCount: layout.table(named: entity.table)?.entityNumbers.count ?? 1)
        let sql = "SELECT COUNT(*) FROM \(entity.table)" + (condition.map { " WHERE \($0)" } ?? "")
        do {
            guard case .int(let count) = try database.scalar(sql) else { return 0 }
            return Int(count)
        } catch {
            throw error.located(entity: entityName)
        }
    }

    /// A single-pass cursor over an entity's objects in primary-key order.
    ///
    /// - Parameters:
    ///   - entityName: The entity.
    ///   - includingSubentities: Whether sub-entities' objects are included (Core Data's default: yes).
    ///   - after: Only objects with `Z_PK` greater than this (resume point of a chunk).
    ///   - through: Only objects with `Z_PK` up to this, when given.
    ///   - condition: An SQL condition on the entity's columns with `?` placeholders, and its arguments.
    ///   - batchSize: Rows fetched per query (`LIMIT`); memory is bounded by one batch's row in flight.
    public func objects(
        of entityName: String, includingSubentities: Bool = true, after: Int64 = 0, through: Int64? = nil,
        condition: SQLCondition? = nil, batchSize: Int = 1000
    ) throws(StoreError) -> ObjectCursor {
        let entity = try entity(entityName)
        return ObjectCursor(
            database: database, layout: layout, entity: entity, includingSubentities: includingSubentities, after: after,
            through: through, condition: condition, batchSize: batchSize)
    }

    /// A writer that inserts objects in batches into this store (opened read-write or created).
    public func makeWriter() throws(StoreError) -> StoreWriter {
        try StoreWriter(database: database, layout: layout)
    }
}

@available(*, unavailable)
extension SQLiteStore: Sendable {}

/// An SQL condition with `?` placeholders and their arguments, as the expression compiler produces it.
///
/// ```swift
/// SQLCondition("ZAGE >= ?", [.int(18)])
/// ```
public struct SQLCondition: Sendable, Hashable {
    public var sql: String
    public var arguments: [Value]
    public init(_ sql: String, _ arguments: [Value] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}
