public import Foundation
import MoultModel
public import MoultStore

/// Core Data's XML store read by primary key, as the engine reads a source
/// (``/MoultStore/StoreReading``): no SQLite copy is made.
///
/// Opening the store reads the whole file once, through ``XMLStoreReader``, checking every object
/// against the model as the reader does (a damaged file fails here, with its line), and keeps an index:
/// for each entity, each object's number (its primary key) and the byte offset of its `<object>`
/// element, sorted by number. That is 16 bytes per object, whatever the objects hold: a store of ten
/// million objects takes 160 MB (up to twice that while the index is built, as its arrays grow). An
/// object is then read by going back to its element, so the objects of an entity come in key order
/// whatever the file's order, and to-many relationships are read from their source objects.
///
/// ```swift
/// let store = try XMLStore(url: storeURL, layout: StoreLayout(model: version.model))
/// let cursor = try store.objects(of: "Person", includingSubentities: false, after: 0, through: nil, batchSize: 1_000)
/// while let person = try cursor.next() { print(person.id, person["name"] ?? .null) }
/// ```
///
/// Keys are those of the SQLite store the conversion makes (``XMLStoreConversion``): the file's object
/// numbers (`z102` is 102), less the offset of the object's inheritance root when the store was written
/// from an SQLite store whose keys repeat across roots (``XMLStoreConversion/primaryKeyRangesKey``); a
/// to-one into an entity with sub-entities names the entity its object is of. Opening the store checks
/// every reference as the conversion does, in a second pass over the file that reads relationships only:
/// one to an object the file does not hold, or not of the relationship's destination, is refused. A
/// store is confined to one thread.
public final class XMLStore {
    /// The layout of the store's model.
    public let layout: StoreLayout
    /// The store's header.
    public let info: XMLStoreInfo
    /// The file.
    public let path: String

    /// One object of the index: its number and where its element begins (16 bytes).
    struct Entry {
        var key: Int64
        var offset: Int64
    }

    /// Entity number → its objects (not its sub-entities'), by key.
    private var index: [Int32: [Entry]] = [:]
    /// Opens another reader of the same file or bytes, positioned at will (``secondReader()``).
    private let openReader: () throws(XMLStoreError) -> XMLStoreReader
    /// The reader that goes back to an object's element.
    private let objectReader: XMLStoreReader
    /// Each entity's row shape, by number.
    private let shapes: [Int32: ObjectShape]
    /// How object numbers become keys.
    private let keys: XMLStoreConversion.PrimaryKeyRanges

    /// Opens an XML store and indexes its objects.
    ///
    /// - Parameters:
    ///   - url: The XML store.
    ///   - layout: The layout of the model version whose hashes the store's metadata has.
    /// - Throws: ``XMLStoreError`` naming the line: a file that is not an XML store, malformed XML, an
    ///   object the model does not allow, an object number used twice.
    public convenience init(url: URL, layout: StoreLayout) throws(XMLStoreError) {
        try self.init(indexing: XMLStoreReader(url: url), layout: layout) { () throws(XMLStoreError) in try XMLStoreReader(url: url) }
    }

    /// Opens an XML store held in memory (the fuzz harness's entrance).
    ///
    /// - Parameters:
    ///   - bytes: The store's file.
    ///   - path: The name errors give it.
    ///   - layout: The layout of the model version of its objects.
    /// - Throws: ``XMLStoreError``, as ``init(url:layout:)``.
    public convenience init(bytes: [UInt8], path: String = "<memory>", layout: StoreLayout) throws(XMLStoreError) {
        try self.init(indexing: XMLStoreReader(bytes: bytes, path: path), layout: layout) { () throws(XMLStoreError) in
            try XMLStoreReader(bytes: bytes, path: path)
        }
    }

    private init(
        indexing: XMLStoreReader, layout: StoreLayout, openReader: @escaping () throws(XMLStoreError) -> XMLStoreReader
    ) throws(XMLStoreError) {
        self.layout = layout
        info = indexing.info
        path = indexing.path
        self.openReader = openReader
        let objects = try openReader()
        objectReader = objects
        shapes = Dictionary(uniqueKeysWithValues: layout.entities.map { ($0.number, ObjectShape(layoutOf: $0)) })
        keys = try XMLStoreConversion.PrimaryKeyRanges(info: indexing.info, layout: layout, path: indexing.path)
        try indexing.bind(to: layout)
        try objects.bind(to: layout)
        while let object = try indexing.next() {
            guard let entity = layout.entity(named: object.entity) else { continue }
            let key = try keys.ownKey(of: object, root: entity.rootNumber, line: indexing.objectLine)
            index[entity.number, default: []].append(Entry(key: key, offset: indexing.objectOffset))
        }
        for number in Array(index.keys) { index[number]!.sort { $0.key < $1.key } }
        try checkUniqueNumbers()
        try checkReferences(try openReader())
    }

    /// A second store over the same file sharing this one's index (no second indexing pass), with a
    /// reader of its own: for another thread (see ``/MoultStore/ReopenableStore``).
    private init(sharingIndexOf store: XMLStore) throws(XMLStoreError) {
        layout = store.layout
        info = store.info
        path = store.path
        openReader = store.openReader
        index = store.index
        shapes = store.shapes
        keys = store.keys
        objectReader = try openReader()
        try objectReader.bind(to: layout)
    }

    /// A second reader of the store, sharing its index (see ``/MoultStore/ReopenableStore``).
    ///
    /// - Throws: ``XMLStoreError`` when the file cannot be opened again.
    public func reopened() throws(XMLStoreError) -> XMLStore {
        try XMLStore(sharingIndexOf: self)
    }

    /// Refuses an object number used twice: each object of an XML store has its own, whatever its
    /// entity (two in one hierarchy would also have one primary key).
    private func checkUniqueNumbers() throws(XMLStoreError) {
        var all: [(number: Int64, entity: Int32)] = []
        all.reserveCapacity(index.values.reduce(0) { $0 + $1.count })
        for (entity, entries) in index {
            let offset = keys.offset(root: layout.entity(number: entity)?.rootNumber ?? entity)
            for entry in entries { all.append((entry.key + offset, entity)) }
        }
        all.sort { $0.number < $1.number }
        for position in all.indices.dropFirst() where all[position].number == all[position - 1].number {
            let number = all[position].number
            let names = [all[position - 1].entity, all[position].entity].compactMap { layout.entity(number: $0)?.name }
            throw XMLStoreError(
                .malformed, "the object id z\(number) is used twice (objects of \(names.joined(separator: " and "))): each object of an XML store has its own",
                path: path, entity: names.last, objectID: "z\(number)")
        }
    }

    /// The second pass, as the conversion's: every to-one and to-many of every object names an object
    /// the file holds, of the relationship's destination (an entity of its hierarchy).
    ///
    /// - Throws: ``XMLStoreError`` (`.invalidValue`, exit 65) naming the line, the object and the id.
    private func checkReferences(_ reader: XMLStoreReader) throws(XMLStoreError) {
        try reader.bind(to: layout)
        reader.decodesAttributes = false
        while let object = try reader.next() {
            guard let entity = layout.entity(named: object.entity) else { continue }
            for (index, toOne) in entity.toOneRelationships.enumerated() {
                guard case .object(let target) = object.values[entity.attributes.count + index] else { continue }
                _ = try resolve(target.primaryKey, to: toOne.destinationNumber, by: toOne.name, of: object, line: reader.relationshipLines[index])
            }
            for (index, toMany) in entity.toManyRelationships.enumerated() {
                let line = reader.relationshipLines[entity.toOneRelationships.count + index]
                guard let destination = layout.entity(named: toMany.destination) else { continue }
                for number in object.toMany[index] { _ = try resolve(number, to: destination.number, by: toMany.name, of: object, line: line) }
            }
        }
    }

    /// The object numbered `number`, which a relationship (`name`, of `object`, on `line`) to entity
    /// `destination` names: its key and entity (of `destination`'s hierarchy).
    ///
    /// - Throws: ``XMLStoreError`` (`.invalidValue`) when the file holds no such object, or one of another entity.
    func resolve(_ number: Int64, to destination: Int32, by name: String, of object: XMLStoreObject, line: Int) throws(XMLStoreError)
        -> ObjectID
    {
        let target = layout.entity(number: destination)
        let root = target?.rootNumber ?? destination
        if let key = keys.key(of: number, root: root), let found = locate(key, in: target?.hierarchyNumbers ?? [destination]) {
            return ObjectID(entity: found.entity, primaryKey: key)
        }
        // Another entity's object, or none.
        let other = layout.entities.first { entity in
            keys.key(of: number, root: entity.rootNumber).map { locate($0, in: [entity.number]) != nil } ?? false
        }
        let message =
            other.map { "relationship '\(name.lowercased())' refers to z\(number), an object of \($0.name), which is not an object of \(target?.name ?? "its destination")" }
            ?? "relationship '\(name.lowercased())' refers to z\(number), which the store does not hold"
        throw XMLStoreError(.invalidValue, message, path: path, line: line, entity: object.entity, objectID: object.id)
    }

    // MARK: - The index

    /// The objects of one entity (not its sub-entities'), by key; nil when it has none.
    func indexed(entity number: Int32) -> [Entry]? { index[number] }

    /// The objects of entities `numbers` with `after < key <= through`, in key order.
    func entries(of numbers: [Int32], after: Int64, through: Int64?) -> MergedEntries {
        var lists: [MergedEntries.List] = []
        for number in numbers {
            guard let entries = index[number], !entries.isEmpty else { continue }
            let start = Self.firstIndex(in: entries, above: after)
            let end = through.map { Self.firstIndex(in: entries, above: $0) } ?? entries.count
            if start < end { lists.append(MergedEntries.List(entity: number, entries: entries, next: start, end: end)) }
        }
        return MergedEntries(lists: lists)
    }

    /// The first position in `entries` whose key is greater than `key`.
    static func firstIndex(in entries: [Entry], above key: Int64) -> Int {
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key <= key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The object numbered `key` among the objects of entities `numbers`, and its entity.
    func locate(_ key: Int64, in numbers: [Int32]) -> (entity: Int32, entry: Entry)? {
        for number in numbers {
            guard let entries = index[number] else { continue }
            // (Keys are positive: `key - 1` cannot overflow for a key the store holds.)
            guard key > 0 else { return nil }
            let position = Self.firstIndex(in: entries, above: key - 1)
            if position < entries.count, entries[position].key == key { return (number, entries[position]) }
        }
        return nil
    }

    /// An entity by name, or `.unknownName`.
    func entity(_ name: String) throws(StoreError) -> EntityLayout {
        guard let entity = layout.entity(named: name) else {
            throw StoreError(.unknownName, "the model has no entity '\(name)'", path: path, entity: name)
        }
        return entity
    }

    // MARK: - Objects

    /// `body`'s result; its error as a file changed since it was indexed (``/MoultStore/StoreError``, `.corrupt`).
    func changedFile<T>(_ entry: Entry, _ body: () throws(XMLStoreError) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw StoreError(
                .corrupt, "\(error.message) (in the object at byte \(entry.offset), read again after the file was indexed)", path: path,
                entity: error.entity, primaryKey: entry.key)
        }
    }

    /// The object of entity `number` whose element begins at `entry`'s offset, read again.
    ///
    /// - Throws: ``/MoultStore/StoreError`` (`.corrupt`) when it no longer reads as it did when indexed
    ///   (the file changed since).
    func object(_ entry: Entry, entity number: Int32) throws(StoreError) -> (XMLStoreObject, EntityLayout) {
        let object = try changedFile(entry) { () throws(XMLStoreError) in try objectReader.object(at: entry.offset) }
        guard let layout = layout.entity(named: object.entity), layout.number == number,
            keys.key(of: object.number, root: layout.rootNumber) == entry.key
        else {
            throw StoreError(
                .corrupt, "the object at byte \(entry.offset) is not z\(entry.key) any more: the file changed after it was indexed", path: path,
                primaryKey: entry.key)
        }
        return (object, layout)
    }

    /// The row of an object in the shape of entity `read` (the entity a cursor reads, which a
    /// sub-entity's object is seen as, as SQLite's cursor sees it): its attributes, then its to-ones,
    /// each naming the entity its object is of.
    func row(_ entry: Entry, entity number: Int32, as read: EntityLayout) throws(StoreError) -> ObjectRow {
        let (object, layout) = try object(entry, entity: number)
        var values = object.values
        for slot in layout.attributes.indices where layout.attributes[slot].type == .decimal && values[slot] != .null {
            // A Decimal as the SQLite cursor gives it, so that a run reads the same values from either form.
            guard let decimal = XMLValueCoding.foundationDecimal(values[slot]) else {
                throw StoreError(
                    .invalidValue, "attribute '\(layout.attributes[slot].name)' holds \(values[slot]), beyond the range of a Decimal",
                    path: path, entity: layout.name, primaryKey: entry.key)
            }
            values[slot] = decimal
        }
        for (index, toOne) in layout.toOneRelationships.enumerated() {
            let slot = layout.attributes.count + index
            guard case .object(let target) = values[slot] else { continue }
            // Checked when the store was opened: only a file changed since fails here.
            let found = try changedFile(entry) { () throws(XMLStoreError) in
                try resolve(target.primaryKey, to: toOne.destinationNumber, by: toOne.name, of: object, line: 0)
            }
            values[slot] = .object(toOne.entityColumn == nil ? ObjectID(entity: toOne.destinationNumber, primaryKey: found.primaryKey) : found)
        }
        let id = ObjectID(entity: number, primaryKey: entry.key)
        guard read.number != number, let shape = shapes[read.number], let own = shapes[number] else {
            return ObjectRow(id: id, version: 1, values: values, of: shapes[number]!)
        }
        return ObjectRow(id: id, version: 1, values: shape.names.map { name in own.slot(of: name).map { values[$0] } ?? .null }, of: shape)
    }
}

// MARK: - Several entities in key order

/// The index entries of several entities (an entity and its sub-entities) merged into key order,
/// without copying them.
struct MergedEntries {
    /// One entity's entries still to give.
    struct List {
        var entity: Int32
        var entries: [XMLStore.Entry]
        var next: Int
        var end: Int
    }

    var lists: [List]

    /// The entry with the smallest key left, and its entity; nil at the end.
    mutating func next() -> (entity: Int32, entry: XMLStore.Entry)? {
        var best: Int?
        for index in lists.indices where lists[index].next < lists[index].end {
            if let current = best, lists[current].entries[lists[current].next].key <= lists[index].entries[lists[index].next].key { continue }
            best = index
        }
        guard let best else { return nil }
        let entry = lists[best].entries[lists[best].next]
        lists[best].next += 1
        return (lists[best].entity, entry)
    }
}

@available(*, unavailable)
extension XMLStore: Sendable {}
