import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// `XMLStore`, the XML store read by key through its index, gives what the store's SQLite form gives
/// through `StoreReading`: the same rows in key order, counts, to-many destinations, chunk boundaries.
@Suite struct XMLStoreIndexTests {
    /// The every-kind store, written in the file order given, and its SQLite conversion.
    static func stores(_ directory: TemporaryDirectory, reversed: Bool) throws -> (XMLStore, SQLiteStore) {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        let objects = try XMLStoreRoundTripTests.objects(layout: layout)
        let xml = directory.appending("store.xml")
        try XMLStoreRoundTripTests.write(
            reversed ? objects.reversed() : objects, to: xml, layout: layout,
            info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        let sqlite = directory.appending("store.sqlite")
        try XMLStoreConversion.sqlite(from: xml, model: model, to: sqlite)
        return (try XMLStore(url: xml, layout: layout), try SQLiteStore(url: sqlite, model: model))
    }

    /// Every row of a reader's entity, in the cursor's order.
    static func rows(_ store: some StoreReading, _ entity: String, subentities: Bool, after: Int64 = 0, through: Int64? = nil) throws -> [ObjectRow] {
        let cursor = try store.objects(of: entity, includingSubentities: subentities, after: after, through: through, batchSize: 2)
        var rows: [ObjectRow] = []
        while let row = try cursor.next() { rows.append(row) }
        return rows
    }

    @Test(arguments: [false, true])
    func readsAsItsSQLiteFormWhateverTheFileOrder(reversed: Bool) throws {
        let directory = try TemporaryDirectory("xml-index")
        defer { directory.remove() }
        let (xml, sqlite) = try Self.stores(directory, reversed: reversed)
        defer { sqlite.database.close() }
        for entity in xml.layout.entities {
            for subentities in [false, true] {
                let expected = try Self.rows(sqlite, entity.name, subentities: subentities)
                #expect(try Self.rows(xml, entity.name, subentities: subentities) == expected, "\(entity.name)")
                #expect(try xml.count(of: entity.name, includingSubentities: subentities) == expected.count)
                // A key range: the objects after the first, up to the last but one.
                if expected.count > 2 {
                    let range = try Self.rows(
                        xml, entity.name, subentities: subentities, after: expected[0].id.primaryKey, through: expected[expected.count - 2].id.primaryKey)
                    #expect(range == Array(expected[1..<(expected.count - 1)]))
                }
            }
            let keys = try Self.rows(sqlite, entity.name, subentities: true).map(\.id.primaryKey)
            for toMany in entity.toManyRelationships {
                let expected = try sqlite.toManyDestinations(toMany.name, of: entity.name, sources: keys + [999])
                #expect(try xml.toManyDestinations(toMany.name, of: entity.name, sources: keys + [999]) == expected, "\(entity.name).\(toMany.name)")
            }
            for size in [1, 2, 3, 10] where !entity.isAbstract {
                #expect(try xml.keyBoundaries(of: entity.name, chunkSize: size) == sqlite.keyBoundaries(of: entity.name, chunkSize: size))
            }
        }
        #expect(try xml.metadata().storeUUID == sqlite.metadata().storeUUID)
        #expect(try xml.metadata().entityHashes == sqlite.metadata().entityHashes)
        #expect(try xml.primaryKeyMaxima().count == 6)
    }

    /// A second reader (`ReopenableStore`, for the engine's second thread) shares the index and reads
    /// what the first reads, interleaved with it; an SQLite store's second connection likewise.
    @Test func aSecondReaderReadsWhatTheFirstReads() throws {
        let directory = try TemporaryDirectory("xml-second-reader")
        defer { directory.remove() }
        let (xml, sqlite) = try Self.stores(directory, reversed: true)
        defer { sqlite.database.close() }
        let (xmlSecond, sqliteSecond) = (try xml.secondReader(), try sqlite.secondReader())
        for entity in xml.layout.entities {
            let first = try Self.rows(xml, entity.name, subentities: true)
            let cursor = try xmlSecond.objects(of: entity.name, includingSubentities: true, after: 0, through: nil, batchSize: 1)
            var second: [ObjectRow] = []
            // Interleaved: the first reader moves between the second's reads.
            while let row = try cursor.next() {
                second.append(row)
                _ = try Self.rows(xml, entity.name, subentities: false, after: 0, through: row.id.primaryKey)
            }
            #expect(second == first, "\(entity.name)")
            #expect(try Self.rows(sqliteSecond, entity.name, subentities: true) == Self.rows(sqlite, entity.name, subentities: true))
        }
        (sqliteSecond as? SQLiteStore)?.database.close()
    }

    /// An ordered to-many keeps the file's order; a to-one into a hierarchy names its object's entity.
    @Test func orderedToManysAndToOnesIntoAHierarchy() throws {
        let directory = try TemporaryDirectory("xml-index-kinds")
        defer { directory.remove() }
        let (xml, sqlite) = try Self.stores(directory, reversed: true)
        sqlite.database.close()
        #expect(try xml.toManyDestinations("items", of: "Person", sources: [105])[105]?.map(\.primaryKey) == [103, 102])
        let grace = try #require(try Self.rows(xml, "Employee", subentities: false).first)
        #expect(grace["pet"] == .object(ObjectID(entity: xml.layout.entity(named: "Dog")!.number, primaryKey: 111)))
    }

    /// A number used twice in one hierarchy is refused when indexing, naming it.
    @Test func aNumberUsedTwiceInAHierarchyIsRefused() throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        var objects = try XMLStoreRoundTripTests.objects(layout: layout)
        // The dog takes the cat's number: Animal and Dog share one hierarchy.
        objects[objects.count - 1].number = 110
        let directory = try TemporaryDirectory("xml-index-twice")
        defer { directory.remove() }
        let url = directory.appending("twice.xml")
        try XMLStoreRoundTripTests.write(objects, to: url, layout: layout, info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        let error = try #require(throws: XMLStoreError.self) { _ = try XMLStore(url: url, layout: layout) }
        #expect(error.code == .malformed && error.message.contains("z110"))
    }

    /// A number used by objects of two hierarchies is refused too: an XML store's ids are unique in the file.
    @Test func aNumberUsedTwiceAcrossHierarchiesIsRefused() throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        var objects = try XMLStoreRoundTripTests.objects(layout: layout)
        // The last tag takes the first item's number.
        let tag = try #require(objects.lastIndex { $0.entity == "Tag" })
        objects[tag].number = 102
        let directory = try TemporaryDirectory("xml-index-twice-roots")
        defer { directory.remove() }
        let url = directory.appending("twice.xml")
        try XMLStoreRoundTripTests.write(objects, to: url, layout: layout, info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        let error = try #require(throws: XMLStoreError.self) { _ = try XMLStore(url: url, layout: layout) }
        #expect(error.code == .malformed && error.message.contains("z102") && error.category == .badInput)
    }

    /// A damaged file is refused when indexing, with the line, as the single-pass reader refuses it.
    @Test func aDamagedFileIsRefusedWithItsLine() throws {
        let directory = try TemporaryDirectory("xml-index-damaged")
        defer { directory.remove() }
        let (_, sqlite) = try Self.stores(directory, reversed: false)
        sqlite.database.close()
        let text = try String(contentsOf: directory.appending("store.xml"), encoding: .utf8)
        let cut = directory.appending("cut.xml")
        try Data(text.prefix(text.count * 2 / 3).utf8).write(to: cut)
        let layout = try StoreLayout(model: XMLTestModels.everyKindModel())
        let error = try #require(throws: XMLStoreError.self) { _ = try XMLStore(url: cut, layout: layout) }
        #expect(error.code == .malformed && error.line != nil)
    }

    /// A reference to an object the file does not hold, or to an object of another entity, is refused
    /// when the store is opened (65), naming the line, the object and the id, as the conversion refuses
    /// it: a to-one, an ordered to-many, a many-to-many.
    @Test(arguments: ["to-one", "to-many", "many-to-many", "other entity"])
    func aDanglingReferenceIsRefusedWhenOpened(_ damage: String) throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        var objects = try XMLStoreRoundTripTests.objects(layout: layout)
        let person = try #require(objects.firstIndex { $0.entity == "Person" })
        let tag = try #require(objects.lastIndex { $0.entity == "Tag" })
        let damaged: Int
        switch damage {
        case "to-one":
            damaged = try #require(objects.firstIndex { $0.entity == "Animal" })
            let keeper = layout.entity(named: "Animal")!.attributes.count
            objects[damaged].values[keeper] = .object(ObjectID(entity: layout.entity(named: "Person")!.number, primaryKey: 999))
        case "to-many":
            damaged = person
            objects[person].toMany[0] = [103, 999]
        case "many-to-many":
            damaged = tag
            objects[tag].toMany[0] = [102, 999]
        default:
            // The person's items name a tag.
            damaged = person
            objects[person].toMany[0] = [103, objects[tag].number]
        }
        let directory = try TemporaryDirectory("xml-index-dangling")
        defer { directory.remove() }
        let url = directory.appending("dangling.xml")
        try XMLStoreRoundTripTests.write(objects, to: url, layout: layout, info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        let error = try #require(throws: XMLStoreError.self) { _ = try XMLStore(url: url, layout: layout) }
        #expect(error.category == .badInput && error.code == .invalidValue)
        #expect(error.objectID == objects[damaged].id && error.entity == objects[damaged].entity, "\(error)")
        let line = try #require(error.line)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[line - 1].contains("<relationship"), "\(error)")
        if damage == "other entity" {
            #expect(error.message.contains("z\(objects[tag].number)") && error.message.contains("not an object of Item"), "\(error)")
        } else {
            #expect(error.message.contains("z999") && error.message.contains("does not hold"), "\(error)")
        }
        // The conversion refuses the same file.
        #expect(throws: XMLStoreError.self) { try XMLStoreConversion.sqlite(from: url, model: model, to: directory.appending("s.sqlite")) }
    }

    /// A store written from an SQLite store whose keys repeat across inheritance roots (its metadata
    /// records each root's range) is read with the SQLite store's keys, as its conversion back gives them.
    @Test func keysComeBackAsTheSQLiteStoreHadThem() throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        let directory = try TemporaryDirectory("xml-index-ranges")
        defer { directory.remove() }
        let sqlite = directory.appending("store.sqlite")
        let store = try SQLiteStore.create(at: sqlite, model: model)
        let writer = try store.makeWriter()
        try writer.write {
            let red = try writer.insert("Tag", ["label": "red"])
            let blue = try writer.insert("Tag", ["label": "blue"])
            let person = try writer.insert("Person", ["name": "Ada"])
            let item = try writer.insert("Item", ["title": "x", "owner": .object(person)])
            try writer.relate("tags", item, to: [blue, red])
            try writer.relate("items", person, to: [item])
        }
        let xml = directory.appending("store.xml")
        try XMLStoreConversion.xml(from: sqlite, model: model, to: xml)
        let read = try XMLStore(url: xml, layout: layout)
        for entity in layout.entities {
            let expected = try Self.rows(store, entity.name, subentities: true)
            #expect(try Self.rows(read, entity.name, subentities: true) == expected, "\(entity.name)")
            let keys = expected.map(\.id.primaryKey)
            for toMany in entity.toManyRelationships {
                #expect(
                    try read.toManyDestinations(toMany.name, of: entity.name, sources: keys) == store.toManyDestinations(toMany.name, of: entity.name, sources: keys),
                    "\(entity.name).\(toMany.name)")
            }
        }
        // The keys repeat across roots (each counts from 1): the object numbers do not.
        #expect(try Self.rows(read, "Tag", subentities: false).map(\.id.primaryKey) == [1, 2])
        #expect(try Self.rows(read, "Item", subentities: false).map(\.id.primaryKey) == [1])
        store.database.close()
    }
}
