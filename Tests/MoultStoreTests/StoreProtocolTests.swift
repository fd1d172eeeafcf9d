import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The store protocols, spoken to generically: what a second store type must do, shown on SQLite's.
@Suite struct StoreProtocolTests {
    struct Refused: Error {}

    /// Two books, a novel with chapters and a tag, written through `WritableStore` and `StoreWriting` only.
    static func write<Store: WritableStore>(_: Store.Type, at url: URL, model: ObjectModel) throws -> Store {
        let store = try Store.create(at: url, model: model, metadata: nil)
        let writer = try store.makeWriter()
        func book(_ entity: String, _ title: String, pages: Int64) throws -> ObjectID {
            let shape = ObjectShape(layoutOf: try #require(store.layout.entity(named: entity)))
            var values = [Value](repeating: .null, count: shape.names.count)
            values[try #require(shape.slot(of: "title"))] = .string(title)
            values[try #require(shape.slot(of: "pages"))] = .int(pages)
            values[try #require(shape.slot(of: "id"))] = .uuid(UUID())
            values[try #require(shape.slot(of: "inPrint"))] = .bool(true)
            return try writer.insert(entity, values: values, primaryKey: nil)
        }
        try writer.transaction {
            let first = try book("Book", "Walden", pages: 352)
            let novel = try book("Novel", "Emma", pages: 474)
            #expect(first.primaryKey == 1 && novel.primaryKey == 2, "one hierarchy, one key sequence")
            let chapters = try (1...3).map { try writer.insert("Chapter", values: [.string("Chapter \($0)"), .null], primaryKey: nil) }
            try writer.relate("chapters", novel, to: chapters.reversed())
            let tag = try writer.insert("Tag", values: [.string("classic")], primaryKey: nil)
            try writer.relate("tags", first, to: [tag])
            try writer.setToOne("book", of: chapters[0], to: novel)
            try writer.setAttribute("rating", of: first, to: .double(4.5))
        }
        // A transaction that throws leaves nothing, its keys included.
        #expect(throws: Refused.self) {
            try writer.transaction {
                _ = try writer.insert("Tag", values: [.string("dropped")], primaryKey: nil)
                throw Refused()
            }
        }
        #expect(try writer.lastPrimaryKey(for: "Tag") == 1)
        var metadata = StoreMetadata(model: model)
        metadata.storeUUID = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"
        try store.writeMetadata(metadata)
        try store.finish()
        return store
    }

    /// Every object of an entity through `StoreReading`, in key order.
    static func titles<Store: StoreReading>(of entity: String, in store: Store) throws -> [String] {
        let cursor = try store.objects(of: entity, includingSubentities: true, after: 0, through: nil, batchSize: 1)
        var titles: [String] = []
        while let row = try cursor.next() {
            if case .string(let title)? = row["title"] ?? row["name"] ?? row["label"] { titles.append(title) }
        }
        return titles
    }

    @Test func sqliteStoreIsWrittenAndReadThroughTheProtocols() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try libraryModel()
        let url = directory.appending("library.sqlite")
        let written = try Self.write(SQLiteStore.self, at: url, model: model)
        written.database.close()

        let store = try SQLiteStore(url: url, model: model)
        defer { store.database.close() }
        #expect(try store.metadata().storeUUID == "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        #expect(try Self.titles(of: "Book", in: store) == ["Walden", "Emma"])
        #expect(try store.count(of: "Book", includingSubentities: false) == 1)
        #expect(try Self.titles(of: "Tag", in: store) == ["classic"])
        // The ordered to-many keeps the order it was given; the to-one set afterwards points at the novel.
        let chapters = try store.toManyDestinations("chapters", of: "Book", sources: [2])[2]?.map(\.primaryKey)
        #expect(chapters == [3, 2, 1])
        let chapterOne = try #require(try store.objects(of: "Chapter", includingSubentities: true, after: 0, through: 1, batchSize: 10).next())
        #expect(chapterOne["book"] == .object(ObjectID(entity: 2, primaryKey: 2)))
        let walden = try #require(try store.objects(of: "Book", includingSubentities: false, after: 0, through: nil, batchSize: 10).next())
        #expect(walden["rating"] == .double(4.5))
        // The store is one file: `finish()` folded the write-ahead log in.
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        // The SQL capability is SQLite's: its cursor with a condition.
        let fast: any SQLFastPaths = store
        let long = try fast.objects(
            of: "Book", includingSubentities: true, after: 0, through: nil, condition: SQLCondition("ZPAGES > ?", [.int(400)]), batchSize: 10)
        #expect(try long.next()?["title"] == .string("Emma"))
        #expect(try long.next() == nil)
    }
}
