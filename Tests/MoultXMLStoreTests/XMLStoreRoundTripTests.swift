import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// Every attribute type and every kind of relationship, through the XML writer and reader, and through
/// SQLite and back.
@Suite struct XMLStoreRoundTripTests {
    /// Objects of the every-kind model, numbered as Core Data numbers them (from 102), each relationship
    /// recorded on both sides as Core Data writes it.
    static func objects(layout: StoreLayout) throws -> [XMLStoreObject] {
        func object(_ number: Int64, _ entity: String, _ values: [String: Value], toMany: [String: [Int64]] = [:]) throws -> XMLStoreObject {
            let entityLayout = try #require(layout.entity(named: entity))
            let shape = ObjectShape(layoutOf: entityLayout)
            var slots = [Value](repeating: .null, count: shape.names.count)
            for (name, value) in values { slots[try #require(shape.slot(of: name))] = value }
            let lists = entityLayout.toManyRelationships.map { toMany[$0.name] ?? [] }
            return XMLStoreObject(number: number, entity: entity, values: slots, toMany: lists)
        }
        let person = try #require(layout.entity(named: "Person"))
        let animal = try #require(layout.entity(named: "Animal"))
        return [
            try object(
                102, "Item",
                [
                    "small": .int(-32768), "medium": .int(2_147_483_647), "large": .int(-9_000_000_000_000_000_000 / 1000),
                    "price": .double(12345.678901), "ratio": .double(-0.1), "weight": .double(Double(Float(3.25))),
                    "title": .string("<&> \"quoted\" 'single'\ttab\nline\r\u{7F}\u{85}é 🐢"), "done": .bool(true),
                    "created": .date(Date(timeIntervalSinceReferenceDate: 273_512_152.850_763_022_899_627_685_55)),
                    "blob": .data(Array(0...255) + Array(repeating: 7, count: 300)), "identifier": .uuid(UUID(uuidString: "090C1ECA-A3D9-4191-B00C-29CD4EA95FB0")!),
                    "link": .string("https://example.com/a?b=c&d"), "archived": .data([0x62, 0x70]),
                    "owner": .object(ObjectID(entity: person.number, primaryKey: 105)),
                ], toMany: ["tags": [108, 109]]),
            try object(
                103, "Item", ["title": .string(""), "done": .bool(false), "blob": .data([]), "owner": .object(ObjectID(entity: person.number, primaryKey: 105))],
                toMany: ["tags": [109]]),
            try object(104, "Item", ["owner": .object(ObjectID(entity: person.number, primaryKey: 106))]),
            try object(105, "Person", ["name": .string("Ada"), "pet": .object(ObjectID(entity: animal.number, primaryKey: 110))], toMany: ["items": [103, 102]]),
            try object(
                106, "Employee", ["name": .string("Grace"), "badge": .int(7), "pet": .object(ObjectID(entity: animal.number, primaryKey: 111))],
                toMany: ["items": [104]]),
            try object(108, "Tag", ["label": .string("red")], toMany: ["items": [102]]),
            try object(109, "Tag", ["label": .string("blue")], toMany: ["items": [102, 103]]),
            try object(110, "Animal", ["name": .string("Cat"), "keeper": .object(ObjectID(entity: person.number, primaryKey: 105))]),
            try object(111, "Dog", ["name": .string("Rex"), "breed": .string("collie"), "keeper": .object(ObjectID(entity: person.number, primaryKey: 106))]),
        ]
    }

    /// Writes a whole store; returns the finished writer.
    @discardableResult
    static func write(_ objects: [XMLStoreObject], to url: URL, layout: StoreLayout, info: XMLStoreInfo) throws -> XMLStoreWriter {
        let writer = try XMLStoreWriter(url: url, layout: layout, info: info)
        for object in objects { try writer.write(object) }
        try writer.finish()
        return writer
    }

    /// Reads a whole store.
    static func readAll(_ url: URL, layout: StoreLayout) throws -> (XMLStoreInfo, [XMLStoreObject]) {
        let reader = try XMLStoreReader(url: url)
        try reader.bind(to: layout)
        var objects: [XMLStoreObject] = []
        while let object = try reader.next() { objects.append(object) }
        return (reader.info, objects)
    }

    @Test func everyAttributeTypeAndRelationshipKindReadsBackAsWritten() throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        let objects = try Self.objects(layout: layout)
        let directory = try TemporaryDirectory("xml-round-trip")
        defer { directory.remove() }
        let url = directory.appending("store.xml")
        let info = XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 112)
        try Self.write(objects, to: url, layout: layout, info: info)
        let (readInfo, read) = try Self.readAll(url, layout: layout)
        #expect(readInfo == info)
        #expect(read == objects)
        let text = try String(contentsOf: url, encoding: .utf8)
        // The forms seen in files Core Data wrote.
        #expect(text.contains(#"<attribute name="created" type="date">273512152.85076302289962768555</attribute>"#))
        #expect(text.contains(#"<attribute name="done" type="bool">1</attribute>"#))
        #expect(text.contains(#"<object type="EMPLOYEE" id="z106">"#))
        #expect(text.contains(#"<relationship name="items" type="0/0" destination="ITEM" idrefs="z103 z102"></relationship>"#))
        #expect(text.contains(#"<relationship name="tags" type="0/0" destination="TAG"></relationship>"#))
        #expect(text.contains("&#xD;") && text.contains("&lt;&amp;&gt;"))
    }

    @Test func xmlToSQLiteAndBackKeepsObjectsIdsAndNextObjectID() throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        let objects = try Self.objects(layout: layout)
        let directory = try TemporaryDirectory("xml-sqlite-xml")
        defer { directory.remove() }
        let xml = directory.appending("store.xml")
        try Self.write(objects, to: xml, layout: layout, info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))

        let sqlite = directory.appending("store.sqlite")
        #expect(try XMLStoreConversion.sqlite(from: xml, model: model, to: sqlite) == objects.count)
        // In SQLite: the ordered to-many's order, the many-to-many's rows, the sub-entity's Z_ENT.
        let store = try SQLiteStore(url: sqlite, model: model)
        let items = try store.toManyDestinations("items", of: "Person", sources: [105])
        #expect(items[105]?.map(\.primaryKey) == [103, 102])
        let tags = try store.toManyDestinations("tags", of: "Item", sources: [102, 103])
        #expect(tags[102]?.map(\.primaryKey) == [108, 109] && tags[103]?.map(\.primaryKey) == [109])
        let keeper = try #require(try store.objects(of: "Animal").next())
        #expect(keeper["keeper"] == .object(ObjectID(entity: layout.entity(named: "Person")!.number, primaryKey: 105)))
        let rex = try #require(try store.objects(of: "Employee").next())
        #expect(rex["pet"] == .object(ObjectID(entity: layout.entity(named: "Dog")!.number, primaryKey: 111)))
        #expect(try store.metadata().storeUUID == (try XMLStoreReader(url: xml).info.uuid))
        store.database.close()

        let back = directory.appending("back.xml")
        #expect(try XMLStoreConversion.xml(from: sqlite, model: model, to: back) == objects.count)
        let (info, read) = try Self.readAll(back, layout: layout)
        #expect(info.nextObjectID == 120)
        #expect(info == (try XMLStoreReader(url: xml).info))
        // Objects come back entity by entity; the same objects, ids and values.
        #expect(read.sorted { $0.number < $1.number } == objects.map { Self.declared($0, layout: layout) })
    }

    /// An object as the reader gives it: to-ones with the declared destination's entity number.
    static func declared(_ object: XMLStoreObject, layout: StoreLayout) -> XMLStoreObject {
        var copy = object
        let entity = layout.entity(named: object.entity)!
        for (index, toOne) in entity.toOneRelationships.enumerated() {
            if case .object(let id) = copy.values[entity.attributes.count + index] {
                copy.values[entity.attributes.count + index] = .object(ObjectID(entity: toOne.destinationNumber, primaryKey: id.primaryKey))
            }
        }
        return copy
    }

    @Test func anSQLiteStoreWhoseKeysRepeatAcrossRootsGetsNumbersFrom102() throws {
        let model = try XMLTestModels.everyKindModel()
        let directory = try TemporaryDirectory("sqlite-numbering")
        defer { directory.remove() }
        let sqlite = directory.appending("store.sqlite")
        let store = try SQLiteStore.create(at: sqlite, model: model)
        let writer = try store.makeWriter()
        try writer.write {
            let tag = try writer.insert("Tag", ["label": "a"])
            let item = try writer.insert("Item", ["title": "x"])
            try writer.relate("tags", item, to: [tag])
        }
        store.database.close()
        let xml = directory.appending("store.xml")
        try XMLStoreConversion.xml(from: sqlite, model: model, to: xml)
        let (info, objects) = try Self.readAll(xml, layout: try StoreLayout(model: model))
        #expect(Set(objects.map(\.number)).count == 2)
        #expect(objects.allSatisfy { $0.number >= 102 })
        #expect(info.nextObjectID == objects.map(\.number).max())
        let item = try #require(objects.first { $0.entity == "Item" })
        let tag = try #require(objects.first { $0.entity == "Tag" })
        #expect(item.toMany[0] == [tag.number] && tag.toMany[0] == [item.number])
    }

    /// XML → SQLite refuses an id used by objects of two hierarchies (each table would take it) and a
    /// to-many naming an object the file does not hold, with the lines; nothing is left at the destination.
    @Test(arguments: ["twice", "dangling"])
    func anIdUsedTwiceOrADanglingToManyIsRefused(_ damage: String) throws {
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        var objects = try Self.objects(layout: layout)
        let tag = try #require(objects.lastIndex { $0.entity == "Tag" })
        if damage == "twice" { objects[tag].number = 102 } else { objects[tag].toMany[0] = [102, 999] }
        let directory = try TemporaryDirectory("xml-refused-\(damage)")
        defer { directory.remove() }
        let xml = directory.appending("store.xml")
        try Self.write(objects, to: xml, layout: layout, info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        let sqlite = directory.appending("store.sqlite")
        let error = try #require(throws: XMLStoreError.self) { try XMLStoreConversion.sqlite(from: xml, model: model, to: sqlite) }
        #expect(error.category == .badInput && error.line != nil)
        if damage == "twice" {
            #expect(error.message.contains("z102 is used twice"), "\(error)")
        } else {
            #expect(error.message.contains("z999") && error.objectID == "z\(objects[tag].number)", "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["store.xml"])
    }
}
