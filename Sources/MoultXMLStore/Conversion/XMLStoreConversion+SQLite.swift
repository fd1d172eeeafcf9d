public import Foundation
public import MoultModel
import MoultStore

/// Conversion between Core Data's XML store and its SQLite store, both ways, streamed: the same
/// objects, the same metadata and UUID, in another file type (Core Data's
/// `migratePersistentStore(_:to:options:type:)` with the same model).
///
/// ```swift
/// let count = try XMLStoreConversion.sqlite(from: xmlURL, model: version.model, to: sqliteURL)
/// try XMLStoreConversion.xml(from: sqliteURL, model: version.model, to: backURL)
/// ```
///
/// Object numbers become primary keys and back: an XML store converted to SQLite and back has the
/// same object ids and the same `nextObjectID` (kept as the roots' `Z_MAX`). An SQLite store whose keys
/// repeat across inheritance roots (each root counts from 1) gets numbers from 102 up, one range per
/// root, in the order of the model's tables.
public enum XMLStoreConversion {
    /// Objects read per SQLite transaction.
    static let batchSize = 5_000

    // MARK: - XML → SQLite

    /// Converts an XML store into a new SQLite store at `destination` (written under a temporary name
    /// and renamed into place when complete).
    ///
    /// - Parameters:
    ///   - source: The XML store.
    ///   - model: The model version of its objects.
    ///   - destination: The SQLite store to create (must not exist).
    /// - Returns: The number of objects.
    /// - Throws: ``XMLStoreError`` for the XML store (with its line), ``/MoultStore/StoreError`` for the SQLite one.
    @discardableResult
    public static func sqlite(from source: URL, model: ObjectModel, to destination: URL) throws -> Int {
        let path = destination.path(percentEncoded: false)
        guard !FileManager.default.fileExists(atPath: path) else {
            throw XMLStoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: path)
        }
        let temporary = URL(filePath: FileOperations.temporaryPath(for: path))
        for suffix in ["", "-wal", "-shm", "-journal"] { FileOperations.remove(temporary.path(percentEncoded: false) + suffix) }
        let count: Int
        do {
            count = try writeSQLite(from: source, model: model, to: temporary)
            try FileOperations.sync(temporary.path(percentEncoded: false))
            try FileOperations.rename(temporary.path(percentEncoded: false), to: path, durable: true)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { FileOperations.remove(temporary.path(percentEncoded: false) + suffix) }
            throw error
        }
        return count
    }

    private static func writeSQLite(from source: URL, model: ObjectModel, to destination: URL) throws -> Int {
        let reader = try XMLStoreReader(url: source)
        let store = try SQLiteStore.create(at: destination, model: model, metadata: try reader.info.sqliteMetadata())
        defer { store.database.close() }
        let layout = store.layout
        try reader.bind(to: layout)
        let plan = SecondPass(layout: layout)
        let writer = try store.makeWriter()
        var count = 0
        try forEachObject(of: reader, in: writer) { object in
            var object = object
            let entity = layout.entity(named: object.entity)!
            // To-ones whose destination has sub-entities need its Z_ENT: set in the second pass.
            for index in plan.deferredToOnes[entity.number] ?? [] { object.values[entity.attributes.count + index] = .null }
            try writer.insert(object.entity, values: object.values, primaryKey: object.number)
            count += 1
        }
        if !plan.isEmpty { try relate(from: source, store: store, writer: writer, plan: plan) }
        try store.database.write { try store.raiseRootPrimaryKeyMaxima(to: reader.info.nextObjectID) }
        return count
    }

    /// The second pass: to-ones needing their destination's entity, and to-manys that no inverse to-one
    /// already recorded (no inverse, an order to keep, a join table).
    private static func relate(from source: URL, store: SQLiteStore, writer: StoreWriter, plan: SecondPass) throws {
        let reader = try XMLStoreReader(url: source)
        try reader.bind(to: store.layout)
        try forEachObject(of: reader, in: writer) { object in
            let entity = store.layout.entity(named: object.entity)!
            let id = ObjectID(entity: entity.number, primaryKey: object.number)
            for index in plan.deferredToOnes[entity.number] ?? [] {
                guard case .object(let target) = object.values[entity.attributes.count + index] else { continue }
                let name = entity.toOneRelationships[index].name
                guard try store.setToOne(name, of: id, toKey: target.primaryKey) else {
                    throw XMLStoreError(
                        .invalidValue, "relationship '\(name.lowercased())' refers to z\(target.primaryKey), which the store does not hold",
                        path: source.path(percentEncoded: false), entity: entity.name, objectID: object.id)
                }
            }
            for index in plan.relatedToManys[entity.number] ?? [] where !object.toMany[index].isEmpty {
                let destinations = object.toMany[index].map { ObjectID(entity: 0, primaryKey: $0) }
                try writer.relate(entity.toManyRelationships[index].name, id, to: destinations)
            }
        }
    }

    /// Runs `body` on every object the reader gives, ``batchSize`` objects per transaction.
    private static func forEachObject(of reader: XMLStoreReader, in writer: StoreWriter, _ body: (XMLStoreObject) throws -> Void) throws {
        var done = false
        while !done {
            try writer.write {
                for _ in 0..<batchSize {
                    guard let object = try reader.next() else {
                        done = true
                        return
                    }
                    try body(object)
                }
            }
        }
    }

    /// Which relationships of each entity the second pass writes.
    struct SecondPass {
        /// Entity number → indexes of to-ones with a `Z_ENT` companion column.
        var deferredToOnes: [Int32: [Int]] = [:]
        /// Entity number → indexes of to-manys to write with `relate`.
        var relatedToManys: [Int32: [Int]] = [:]

        var isEmpty: Bool { deferredToOnes.isEmpty && relatedToManys.isEmpty }

        init(layout: StoreLayout) {
            let firstJoinColumns = Dictionary(layout.joinTables.map { ($0.name, $0.columns.first ?? "") }, uniquingKeysWith: { a, _ in a })
            for entity in layout.entities where !entity.isAbstract {
                let toOnes = entity.toOneRelationships.indices.filter { entity.toOneRelationships[$0].entityColumn != nil }
                if !toOnes.isEmpty { deferredToOnes[entity.number] = toOnes }
                let toManys = entity.toManyRelationships.indices.filter { index in
                    let toMany = entity.toManyRelationships[index]
                    switch toMany.storage {
                    case .joinTable(let table, let sourceColumn, _, _):
                        // One side of a join table writes its rows.
                        return firstJoinColumns[table] == sourceColumn
                    case .destinationColumn(_, _, _, let orderColumn):
                        // The inverse to-one (when there is one) already wrote the column; an order needs this side.
                        let inverse = layout.model.relationship(named: toMany.name, of: entity.name).flatMap { layout.model.inverse(of: $0) }
                        return orderColumn != nil || inverse == nil || inverse?.isToMany == true
                    }
                }
                if !toManys.isEmpty { relatedToManys[entity.number] = toManys }
            }
        }
    }
}
