public import Foundation
public import MoultModel
public import MoultStore

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
/// root, in the order of the model's tables, recorded in the metadata (``primaryKeyRangesKey``) so that
/// converted back it has every primary key and `Z_MAX` it had. Values come back as SQLite held them
/// (every double's 64 bits); a string XML 1.0 cannot carry, a reference to an object the file does not
/// hold and an object id used twice are refused (``XMLStoreError``, exit 65), never written.
public enum XMLStoreConversion {
    /// Objects read per SQLite transaction.
    static let batchSize = 5_000

    /// The metadata key of an XML store written from an SQLite store whose keys could not be its object
    /// numbers: each inheritance root's name → `[offset, Z_MAX]`, an object's number being its key plus
    /// its root's offset. Read back when the store becomes SQLite again, so that every primary key and
    /// `Z_MAX` comes back; never written into an SQLite store's metadata.
    public static let primaryKeyRangesKey = "MoultPrimaryKeyRanges"

    // MARK: - XML → SQLite

    /// Converts an XML store into a new SQLite store at `destination` (written under a temporary name
    /// and renamed into place when complete).
    ///
    /// - Parameters:
    ///   - source: The XML store.
    ///   - model: The model version of its objects.
    ///   - destination: The SQLite store to create (must not exist).
    ///   - configuration: Its connection's settings: the value size limit a value is refused over
    ///     (``/MoultStore/Database/Configuration/maxValueBytes``, ``/MoultStore/StoreError/valueLimit``).
    /// - Returns: The number of objects.
    /// - Throws: ``XMLStoreError`` for the XML store (with its line): malformed, a reference to an object
    ///   it does not hold or not of the relationship's destination, an object id used twice;
    ///   ``/MoultStore/StoreError`` for the SQLite one.
    @discardableResult
    public static func sqlite(
        from source: URL, model: ObjectModel, to destination: URL, configuration: Database.Configuration = .init()
    ) throws -> Int {
        let path = destination.path(percentEncoded: false)
        guard !FileOperations.exists(path) else {
            throw XMLStoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: path)
        }
        let support = ExternalDataReference.supportFolder(besideStore: destination).path(percentEncoded: false)
        guard !FileOperations.exists(support) else {
            throw XMLStoreError(.alreadyExists, "an external data folder is already there; Moult does not overwrite it", path: support)
        }
        let temporary = URL(filePath: FileOperations.temporaryPath(for: path))
        // The external files are written beside the temporary store, and their folder renamed into place
        // before the store is.
        let temporarySupport = ExternalDataReference.supportFolder(besideStore: temporary).path(percentEncoded: false)
        func removeTemporary() {
            for suffix in ["", "-wal", "-shm", "-journal"] { FileOperations.remove(temporary.path(percentEncoded: false) + suffix) }
            if !FileOperations.isSymbolicLink(temporarySupport) { try? FileOperations.removeTree(temporarySupport) }
        }
        removeTemporary()
        let count: Int
        do {
            count = try writeSQLite(from: source, model: model, to: temporary, configuration: configuration)
            try FileOperations.sync(temporary.path(percentEncoded: false))
            if FileOperations.exists(temporarySupport) {
                FileOperations.syncDirectory(ExternalDataReference.folder(besideStore: temporary).path(percentEncoded: false))
                try FileOperations.rename(temporarySupport, to: support, durable: true)
            }
            try FileOperations.rename(temporary.path(percentEncoded: false), to: path, durable: true)
        } catch {
            removeTemporary()
            throw error
        }
        return count
    }

    private static func writeSQLite(from source: URL, model: ObjectModel, to destination: URL, configuration: Database.Configuration) throws -> Int {
        let reader = try XMLStoreReader(url: source)
        let path = source.path(percentEncoded: false)
        let store = try SQLiteStore.create(at: destination, model: model, metadata: try reader.info.sqliteMetadata(), configuration: configuration)
        defer { store.database.close() }
        let layout = store.layout
        try reader.bind(to: layout)
        let keys = try PrimaryKeyRanges(info: reader.info, layout: layout, path: path)
        try store.database.write {
            for (root, maximum) in keys.maxima { try store.setRootPrimaryKeyMaximum(root, to: maximum) }
        }
        let writer = try store.makeWriter()
        let marked = externalStorageSlots(layout)
        var externalFiles = ExternalDataWriter(store: destination)
        var objects = ObjectTable(path: path, expected: reader.info.nextObjectID - XMLStoreInfo.firstObjectNumber + 1, fileSize: fileSize(source))
        var references = false
        try forEachObject(of: reader, in: writer) { object in
            var object = object
            let entity = layout.entity(named: object.entity)!
            objects.add(object.number, entity: entity.number, line: reader.objectLine)
            if !references { references = object.toMany.contains { !$0.isEmpty } || object.values[entity.attributes.count...].contains { $0 != .null } }
            for (index, toOne) in entity.toOneRelationships.enumerated() {
                let slot = entity.attributes.count + index
                guard case .object(let target) = object.values[slot] else { continue }
                // A to-one whose destination has sub-entities needs its Z_ENT, known once every object is:
                // set in the second pass, which also checks every reference.
                let key = keys.key(of: target.primaryKey, root: layout.entity(number: toOne.destinationNumber)?.rootNumber ?? 0)
                object.values[slot] = toOne.entityColumn == nil ? key.map { .object(ObjectID(entity: target.entity, primaryKey: $0)) } ?? .null : .null
            }
            for slot in marked[entity.number] ?? [] {
                if case .data(let bytes) = object.values[slot] { object.values[slot] = .data(try externalFiles.column(bytes)) }
            }
            let key = try keys.ownKey(of: object, root: entity.rootNumber, line: reader.objectLine)
            do {
                try writer.insert(object.entity, values: object.values, primaryKey: key)
            } catch let error as StoreError where error.code == .constraint {
                // Two objects of one hierarchy with one number have one primary key.
                try objects.refuseEarlierUse(of: object.number, line: reader.objectLine)
                throw error
            }
        }
        // Two objects of different hierarchies with one number are found once every number is known.
        try objects.seal()
        // A file whose objects refer to none has no reference to check or write: no second pass.
        if references { try relate(from: source, store: store, writer: writer, keys: keys, objects: objects) }
        try store.database.write { try store.raiseRootPrimaryKeyMaxima(to: reader.info.nextObjectID, except: Array(keys.maxima.keys)) }
        return objects.count
    }

    /// The second pass: every reference checked (it names an object of the file, of the relationship's
    /// destination), to-ones needing their destination's `Z_ENT` set, and to-manys that no inverse to-one
    /// already recorded (no inverse, an order to keep, a join table) written.
    private static func relate(from source: URL, store: SQLiteStore, writer: StoreWriter, keys: PrimaryKeyRanges, objects: ObjectTable) throws {
        let layout = store.layout
        let plan = SecondPass(layout: layout)
        let reader = try XMLStoreReader(url: source)
        try reader.bind(to: layout)
        reader.decodesAttributes = false
        try forEachObject(of: reader, in: writer) { object in
            let entity = layout.entity(named: object.entity)!
            let id = ObjectID(entity: entity.number, primaryKey: try keys.ownKey(of: object, root: entity.rootNumber, line: reader.objectLine))
            func destination(_ number: Int64, of name: String, to entityName: String, line: Int) throws -> ObjectID {
                let target = try objects.entity(
                    of: number, kindOf: plan.kinds[entityName] ?? [], expected: entityName, relationship: name, from: object, line: line)
                let root = layout.entity(number: target)?.rootNumber ?? 0
                guard let key = keys.key(of: number, root: root) else { throw keys.outOfRange(number, root: root, line: line) }
                return ObjectID(entity: target, primaryKey: key)
            }
            for (index, toOne) in entity.toOneRelationships.enumerated() {
                guard case .object(let target) = object.values[entity.attributes.count + index] else { continue }
                let destination = try destination(target.primaryKey, of: toOne.name, to: toOne.destination, line: reader.relationshipLines[index])
                if toOne.entityColumn != nil { try writer.setToOne(toOne.name, of: id, to: destination) }
            }
            for (index, toMany) in entity.toManyRelationships.enumerated() where !object.toMany[index].isEmpty {
                let line = reader.relationshipLines[entity.toOneRelationships.count + index]
                let destinations = try object.toMany[index].map { number in try destination(number, of: toMany.name, to: toMany.destination, line: line) }
                if plan.relatedToManys[entity.number]?.contains(index) == true { try writer.relate(toMany.name, id, to: destinations) }
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

    /// Which relationships of each entity the second pass writes, and which entities each destination admits.
    struct SecondPass {
        /// Entity number → indexes of to-manys to write with `relate`.
        var relatedToManys: [Int32: Set<Int>] = [:]
        /// Entity name → the numbers of it and its sub-entities: what a relationship to it may name.
        var kinds: [String: Set<Int32>] = [:]

        init(layout: StoreLayout) {
            let firstJoinColumns = Dictionary(layout.joinTables.map { ($0.name, $0.columns.first ?? "") }, uniquingKeysWith: { a, _ in a })
            for entity in layout.entities {
                kinds[entity.name] = Set(entity.hierarchyNumbers)
                guard !entity.isAbstract else { continue }
                let toManys = entity.toManyRelationships.indices.filter { index in
                    let toMany = entity.toManyRelationships[index]
                    switch toMany.storage {
                    case .joinTable(let table, let sourceColumn, _, let orderColumn):
                        // One side of a join table writes its rows; an ordered side writes its order
                        // into them too (both orders of a many-to-many ordered on both sides).
                        return firstJoinColumns[table] == sourceColumn || orderColumn != nil
                    case .destinationColumn(_, _, _, let orderColumn):
                        // The inverse to-one (when there is one) already wrote the column; an order needs this side.
                        let inverse = layout.model.relationship(named: toMany.name, of: entity.name).flatMap { layout.model.inverse(of: $0) }
                        return orderColumn != nil || inverse == nil || inverse?.isToMany == true
                    }
                }
                if !toManys.isEmpty { relatedToManys[entity.number] = Set(toManys) }
            }
        }
    }

    /// Every object number of the file with its entity and line, as the first pass meets them, sorted
    /// once it ends: a number used twice is refused then (or when SQLite refuses its second primary key),
    /// a reference to a number the file does not hold in the second pass, by binary search. 16 bytes an
    /// object.
    struct ObjectTable {
        private struct Entry {
            var number: Int64
            var entity: Int32
            var line: Int32
        }

        private var entries: [Entry] = []
        private var sorted = true
        let path: String

        /// - Parameters:
        ///   - expected: How many objects the header says there may be (room is made for them, up to what
        ///     the file's size allows).
        ///   - fileSize: The file's size in bytes.
        init(path: String, expected: Int64, fileSize: Int64) {
            self.path = path
            entries.reserveCapacity(Int(max(0, min(expected, fileSize / 64, Int64(Int32.max)))))
        }

        var count: Int { entries.count }

        mutating func add(_ number: Int64, entity: Int32, line: Int) {
            if let last = entries.last, number <= last.number { sorted = false }
            entries.append(Entry(number: number, entity: entity, line: Int32(clamping: line)))
        }

        private func duplicate(_ number: Int64, lines: (Int32, Int32)) -> XMLStoreError {
            XMLStoreError(
                .malformed, "the object id z\(number) is used twice, on line \(lines.0) and on line \(lines.1): each object of an XML store has its own",
                path: path, line: Int(lines.1), objectID: "z\(number)")
        }

        /// Refuses the object just added when an earlier one has its number.
        func refuseEarlierUse(of number: Int64, line: Int) throws(XMLStoreError) {
            guard let earlier = entries.dropLast().first(where: { $0.number == number }) else { return }
            throw duplicate(number, lines: (earlier.line, Int32(clamping: line)))
        }

        /// Sorts the numbers, refusing one used twice.
        mutating func seal() throws(XMLStoreError) {
            if !sorted { entries.sort { ($0.number, $0.line) < ($1.number, $1.line) } }
            sorted = true
            for index in entries.indices.dropFirst() where entries[index].number == entries[index - 1].number {
                throw duplicate(entries[index].number, lines: (entries[index - 1].line, entries[index].line))
            }
        }

        /// The entity of the object `number`, which a relationship to `expected` (whose entities are `kinds`) names.
        func entity(
            of number: Int64, kindOf kinds: Set<Int32>, expected: String, relationship: String, from object: XMLStoreObject, line: Int
        ) throws(XMLStoreError) -> Int32 {
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].number < number { low = middle + 1 } else { high = middle }
            }
            guard low < entries.count, entries[low].number == number else {
                throw XMLStoreError(
                    .invalidValue, "relationship '\(relationship.lowercased())' refers to z\(number), which the store does not hold",
                    path: path, line: line, entity: object.entity, objectID: object.id)
            }
            let entry = entries[low]
            guard kinds.contains(entry.entity) else {
                throw XMLStoreError(
                    .invalidValue, "relationship '\(relationship.lowercased())' refers to z\(number) (line \(entry.line)), which is not an object of \(expected)",
                    path: path, line: line, entity: object.entity, objectID: object.id)
            }
            return entry.entity
        }
    }

    /// The size of a file, 0 when it cannot be found.
    static func fileSize(_ url: URL) -> Int64 {
        FileOperations.size(of: url.path(percentEncoded: false)) ?? 0
    }

    /// How object numbers become primary keys: unchanged, or, for a store written from an SQLite store
    /// whose keys repeat across inheritance roots, less the root's offset its metadata records
    /// (``primaryKeyRangesKey``), so that every key (and so every object URI) comes back.
    struct PrimaryKeyRanges {
        /// Root entity number → what is subtracted from a number.
        private(set) var offsets: [Int32: Int64] = [:]
        /// Root entity number → its recorded `Z_MAX`.
        private(set) var maxima: [Int32: Int64] = [:]
        let path: String

        init(info: XMLStoreInfo, layout: StoreLayout, path: String) throws(XMLStoreError) {
            self.path = path
            guard let value = info.metadata[XMLStoreConversion.primaryKeyRangesKey] else { return }
            guard let ranges = value.dictionaryValue else {
                throw XMLStoreError(.malformed, "the metadata's \(XMLStoreConversion.primaryKeyRangesKey) is not a dictionary", path: path)
            }
            for (name, range) in ranges {
                guard let root = layout.entity(named: name), root.number == root.rootNumber, let pair = range.arrayValue, pair.count == 2,
                    let offset = pair[0].integerValue, let maximum = pair[1].integerValue, offset >= 0, maximum >= 0
                else {
                    throw XMLStoreError(
                        .malformed, "the metadata's \(XMLStoreConversion.primaryKeyRangesKey) has '\(name.prefix(80))', which is not a root entity with [offset, Z_MAX]",
                        path: path)
                }
                offsets[root.number] = offset
                maxima[root.number] = maximum
            }
        }

        /// What is subtracted from an object number of the hierarchy of `root` to make its key.
        func offset(root: Int32) -> Int64 { offsets[root] ?? 0 }

        /// The key of the number `number` in the hierarchy of `root`; nil below its range.
        func key(of number: Int64, root: Int32) -> Int64? {
            let key = number - (offsets[root] ?? 0)
            return key >= 1 ? key : nil
        }

        func ownKey(of object: XMLStoreObject, root: Int32, line: Int) throws(XMLStoreError) -> Int64 {
            guard let key = key(of: object.number, root: root) else { throw outOfRange(object.number, root: root, line: line) }
            return key
        }

        func outOfRange(_ number: Int64, root: Int32, line: Int) -> XMLStoreError {
            XMLStoreError(
                .malformed, "the object id z\(number) lies below the range \(XMLStoreConversion.primaryKeyRangesKey) gives its entity (from \((offsets[root] ?? 0) + 1))",
                path: path, line: line, objectID: "z\(number)")
        }
    }
}
