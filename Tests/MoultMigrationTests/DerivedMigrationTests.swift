import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A migration into a model with derived attributes of every form computes their values: the
/// destination store's triggers compute them as the rows and links are written, in the migrator's order.
@Suite struct DerivedMigrationTests {
    static func model(derived: Bool) throws -> ObjectModel {
        try ObjectModel {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("lists", toMany: "List", inverse: "author")
            }
            Entity("Item") {
                Attribute("price", .double)
                Relationship("list", to: "List", inverse: "items")
            }
            Entity("List") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "lists")
                Relationship("items", toMany: "Item", inverse: "list")
                Relationship("tags", toMany: "Tag", inverse: "lists")
                if derived {
                    Attribute("itemCount", .integer64).derived("items.@count")
                    Attribute("total", .double).derived("items.@sum.price")
                    Attribute("dearest", .double).derived("items.@max.price")
                    Attribute("tagCount", .integer64).derived("tags.@count")
                    Attribute("authorKey", .string).derived("canonical:(author.name)")
                    Attribute("titleLower", .string).derived("lowercase:(title)")
                    Attribute("touched", .date).derived("now()")
                }
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("lists", toMany: "List", inverse: "tags")
            }
        }
    }

    @Test func valuesAreComputedOnMigrate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("source.sqlite")
        let store = try SQLiteStore.create(at: source, model: Self.model(derived: false))
        let writer = try store.makeWriter()
        try writer.write {
            let author = try writer.insert("Author", ["name": .string("Ève")])
            let tags = try ["x", "y", "z"].map { try writer.insert("Tag", ["name": .string($0)]) }
            for index in 1...20 {
                let list = try writer.insert("List", ["title": .string("List \(index)"), "author": .object(author)])
                let items = try (1...index).map { try writer.insert("Item", ["price": .double(Double($0))]) }
                try writer.relate("items", list, to: items)
                try writer.relate("tags", list, to: Array(tags.prefix(index % 4)))
            }
        }
        store.database.close()
        let model = try VersionedModel(
            name: "Derived", versions: [.init(name: "v1", model: Self.model(derived: false)), .init(name: "v2", model: Self.model(derived: true))])
        let output = directory.appending("out.sqlite")
        try ProgressiveMigration(store: source, model: model, to: "v2", options: MigrationOptions(chunkSize: 7)).run(output: output)
        let migrated = try Database(url: output, mode: .readOnly)
        defer { migrated.close() }
        let rows = try migrated.query("SELECT ZTITLE, ZITEMCOUNT, ZTOTAL, ZDEAREST, ZTAGCOUNT, ZAUTHORKEY, ZTITLELOWER, ZTOUCHED FROM ZLIST") {
            [$0.string(at: 0) ?? "", $0.value(at: 1), $0.value(at: 2), $0.value(at: 3), $0.value(at: 4), $0.value(at: 5), $0.value(at: 6), $0.value(at: 7)]
                as [Any]
        }
        #expect(rows.count == 20)
        for row in rows {
            let index = Int((row[0] as! String).dropFirst(5))!
            #expect(row[1] as? Value == .int(Int64(index)), "\(row)")
            #expect(row[2] as? Value == .double(Double(index * (index + 1) / 2)), "\(row)")
            #expect(row[3] as? Value == .double(Double(index)), "\(row)")
            #expect(row[4] as? Value == .int(Int64(index % 4)), "\(row)")
            #expect(row[5] as? Value == .string("eve"), "\(row)")
            #expect(row[6] as? Value == .string("list \(index)"), "\(row)")
            guard case .double = row[7] as? Value else {
                Issue.record("now() gave no date: \(row)")
                continue
            }
        }
        #expect(try StoreMetadata(contentsOf: output).entityHashes == StoreMetadata(model: Self.model(derived: true)).entityHashes)
    }

    /// A migrated store carries its new model in `Z_MODELCACHE`, streamed or in place.
    @Test func aMigratedStoreCarriesItsNewModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let v1 = try ObjectModel { Entity("Note") { Attribute("title", .string) } }
        let v2 = try ObjectModel { Entity("Note") { Attribute("title", .string); Attribute("body", .string) } }
        let model = try VersionedModel(name: "Notes", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let source = directory.appending("source.sqlite")
        let store = try SQLiteStore.create(at: source, model: v1)
        let writer = try store.makeWriter()
        try writer.write { _ = try writer.insert("Note", ["title": .string("a")]) }
        store.database.close()
        func carried(_ url: URL) throws -> ObjectModel? {
            let database = try Database(url: url, mode: .readOnly)
            defer { database.close() }
            return try ModelCache.model(in: database)
        }
        #expect(try carried(source)?.entityVersionHashes() == v1.entityVersionHashes())
        let streamed = directory.appending("streamed.sqlite")
        try ProgressiveMigration(store: source, model: model, to: "v2").run(output: streamed)
        #expect(try carried(streamed)?.entityVersionHashes() == v2.entityVersionHashes())
        let inPlace = try directory.copyStore(source, as: "in-place.sqlite")
        try InPlaceMigration(store: inPlace, model: model, to: "v2", keepsBackup: false).run()
        #expect(try carried(inPlace)?.entityVersionHashes() == v2.entityVersionHashes())
        #expect(try StoreMetadata(contentsOf: inPlace).entityHashes == v2.entityVersionHashes())
    }
}
