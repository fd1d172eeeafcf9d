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
}
