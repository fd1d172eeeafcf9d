import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// A model built in code: inheritance with a companion column, one-to-many (ordered), many-to-many,
/// a to-many without inverse, and every attribute type.
func libraryModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "price", type: .decimal, isOptional: true),
                AttributeDescription(name: "published", type: .date, isOptional: true),
                AttributeDescription(name: "id", type: .uuid),
                AttributeDescription(name: "cover", type: .binary, isOptional: true),
                AttributeDescription(name: "pages", type: .integer32),
                AttributeDescription(name: "rating", type: .double, isOptional: true),
                AttributeDescription(name: "inPrint", type: .boolean),
            ],
            relationships: [
                RelationshipDescription(name: "chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", isToMany: true),
                RelationshipDescription(name: "notes", destination: "Note", isToMany: true),
            ],
            uniquenessConstraints: [["id"]]),
        EntityDescription(name: "Novel", parent: "Book", attributes: [AttributeDescription(name: "genre", type: .string, isOptional: true)]),
        EntityDescription(
            name: "Chapter", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "chapters")]),
        EntityDescription(
            name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
            relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", isToMany: true)]),
        EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
    ])
}

@Suite struct LayoutTests {
    @Test func libraryLayoutFollowsCoreDataRules() throws {
        let layout = try StoreLayout(model: libraryModel())
        #expect(layout.entities.map(\.name) == ["Book", "Novel", "Chapter", "Note", "Tag"])
        let chapter = try #require(layout.entity(named: "Chapter"))
        let book = try #require(chapter.toOne(named: "book"))
        #expect(book.column == "ZBOOK")
        #expect(book.entityColumn == "Z1_BOOK")
        let table = try #require(layout.table(named: "ZCHAPTER"))
        #expect(table.columns.map(\.name).contains("Z_FOK_BOOK"))
        #expect(layout.table(named: "ZNOTE")?.columns.map(\.name).contains("Z1NOTES") == true)
        // Book (1).tags ↔ Tag (5).books: columns Z_1BOOKS / Z_5TAGS, the first owns the table Z_1TAGS.
        #expect(layout.joinTables.map(\.name) == ["Z_1TAGS"])
        #expect(layout.joinTables.first?.columns == ["Z_1BOOKS", "Z_5TAGS"])
        #expect(layout.table(named: "ZBOOK")?.indexes.map(\.name).contains("Z_Book_UNIQUE_id") == true)
        #expect(layout.table(named: "ZBOOK")?.indexes.map(\.name).contains("ZBOOK_Z_ENT_INDEX") == true)
    }
}

@Suite struct WriteTests {
    @Test func writtenStoreReadsBack() throws {
        let directory = try TemporaryDirectory("moult-write")
        defer { directory.remove() }
        let model = try libraryModel()
        let url = directory.appending("Library.sqlite")
        let store = try SQLiteStore.create(at: url, model: model)
        let writer = try store.makeWriter()
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
        var novel = ObjectID(entity: 0, primaryKey: 0)
        var chapters: [ObjectID] = []
        try writer.write {
            novel = try writer.insert(
                "Novel",
                [
                    "title": "Dune", "price": .decimal(Decimal(string: "9.99")!), "published": .date(date), "id": .uuid(uuid),
                    "cover": .data([1, 2, 3]), "pages": 412, "rating": 4.5, "inPrint": true, "genre": "SF",
                ])
            for name in ["One", "Two", "Three"] {
                chapters.append(try writer.insert("Chapter", ["name": .string(name)]))
            }
            try writer.relate("chapters", novel, to: chapters.reversed())
            let tag = try writer.insert("Tag", ["label": "classic"])
            try writer.relate("tags", novel, to: [tag])
            try writer.relate("books", tag, to: [novel])  // the other side: no duplicate join row
            let note = try writer.insert("Note", ["text": "reread"])
            try writer.relate("notes", novel, to: [note])
        }
        #expect(novel == ObjectID(entity: 2, primaryKey: 1))
        let zmax = try store.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 3")
        #expect(zmax == .int(3))
        #expect(try store.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 2") == .int(0))
        #expect(try store.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == .int(1))
        #expect(try store.database.scalar("SELECT COUNT(*) FROM Z_1TAGS") == .int(1))

        // Read back.
        let cursor = try store.objects(of: "Book")
        let row = try #require(try cursor.next())
        #expect(try cursor.next() == nil)
        #expect(row.id == novel)
        #expect(row.version == 1)
        #expect(row["title"] == "Dune")
        #expect(row["price"] == .decimal(Decimal(string: "9.99")!))
        #expect(row["published"] == .date(date))
        #expect(row["id"] == .uuid(uuid))
        #expect(row["cover"] == .data([1, 2, 3]))
        #expect(row["pages"] == 412)
        #expect(row["rating"] == 4.5)
        #expect(row["inPrint"] == true)
        #expect(try store.objects(of: "Novel").next()?["genre"] == "SF")
        #expect(try store.toManyDestinations("chapters", of: "Book", sources: [1])[1] == chapters.reversed())
        #expect(try store.toManyDestinations("tags", of: "Book", sources: [1])[1]?.count == 1)
        #expect(try store.toManyDestinations("books", of: "Tag", sources: [1])[1] == [novel])
        #expect(try store.toManyDestinations("notes", of: "Book", sources: [1])[1]?.count == 1)
        let chapterRow = try #require(try store.objects(of: "Chapter").next())
        #expect(chapterRow["book"] == .object(novel))

        // Metadata: every key Core Data writes, hashes of the model.
        let metadata = try StoreMetadata(contentsOf: url)
        #expect(metadata.entityHashes == model.entityVersionHashes())
        #expect(metadata.hashesVersion == 3)
        #expect(metadata.hashesDigest == VersionHashes.digest(model.entityVersionHashes()))
        #expect(metadata.checksum == VersionHashes.checksum(model.entityVersionHashes()))
        #expect(metadata.frameworkVersion == StoreMetadata.defaultFrameworkVersion)
        #expect(metadata.versionIdentifiers == [""])
        #expect(metadata.additionalKeys["_NSAutoVacuumLevel"] == .string("2"))
    }

    @Test func failedBatchRollsBackRowsAndKeys() throws {
        let directory = try TemporaryDirectory("moult-rollback")
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: libraryModel())
        let writer = try store.makeWriter()
        let id = UUID()
        try writer.write { _ = try writer.insert("Book", ["title": "A", "id": .uuid(id), "pages": 1, "inPrint": false]) }
        #expect(throws: StoreError.self) {
            try writer.write {
                _ = try writer.insert("Book", ["title": "B", "id": .uuid(UUID()), "pages": 1, "inPrint": false])
                _ = try writer.insert("Book", ["title": "C", "id": .uuid(id), "pages": 1, "inPrint": false])  // unique id
            }
        }
        #expect(try store.count(of: "Book") == 1)
        #expect(try writer.lastPrimaryKey(for: "Book") == 1)
        #expect(try store.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == .int(1))
    }

    @Test func metadataKeepsApplicationKeysOnRewrite() throws {
        let directory = try TemporaryDirectory("moult-meta")
        defer { directory.remove() }
        let url = directory.appending("s.sqlite")
        let store = try SQLiteStore.create(at: url, model: libraryModel())
        var metadata = try store.metadata()
        metadata.additionalKeys["MyAppKey"] = .dictionary(["n": .integer(7), "flag": .bool(true)])
        try metadata.write(to: store.database)
        let reread = try store.metadata()
        #expect(reread.additionalKeys["MyAppKey"] == .dictionary(["n": .integer(7), "flag": .bool(true)]))
        #expect(reread == metadata)
    }
}

@Suite struct BadInputTests {
    @Test func notASQLiteFile() throws {
        let directory = try TemporaryDirectory("moult-bad")
        defer { directory.remove() }
        let url = directory.appending("text.sqlite")
        try Data("hello, this is not a database".utf8).write(to: url)
        let before = fileFingerprint(url)
        let error = try #require(throws: StoreError.self) { try StoreMetadata(contentsOf: url) }
        #expect(error.code == .notADatabase)
        #expect(error.category == .badInput)
        #expect(fileFingerprint(url) == before)
    }

    @Test func truncatedStore() throws {
        let directory = try TemporaryDirectory("moult-bad")
        defer { directory.remove() }
        let source = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite")
        let url = directory.appending("cut.sqlite")
        try Data(try Data(contentsOf: source).prefix(4096 * 3)).write(to: url)
        let before = fileFingerprint(url)
        let error = try #require(throws: StoreError.self) {
            let metadata = try StoreMetadata(contentsOf: url)
            let versioned = try VersionedModel(contentsOf: Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"))
            let version = try #require(versioned.version(matchingEntityHashes: metadata.entityHashes))
            let store = try SQLiteStore(url: url, model: version.model)
            for entity in store.layout.entities { _ = try store.count(of: entity.name) }
        }
        #expect(error.code == .corrupt)
        #expect(error.category == .badInput)
        #expect(fileFingerprint(url) == before)
    }

    @Test func sqliteButNotCoreData() throws {
        let directory = try TemporaryDirectory("moult-bad")
        defer { directory.remove() }
        let url = directory.appending("plain.sqlite")
        do {
            let db = try Database(url: url, mode: .create)
            try db.execute("CREATE TABLE t (x INTEGER)")
        }
        let before = fileFingerprint(url)
        let error = try #require(throws: StoreError.self) { try StoreMetadata(contentsOf: url) }
        #expect(error.code == .notCoreData, "\(error)")
        #expect(error.category == .badInput)
        #expect(fileFingerprint(url) == before)
    }

    @Test func lockedByAnotherWriter() throws {
        let directory = try TemporaryDirectory("moult-lock")
        defer { directory.remove() }
        // A rollback-journal store: a writer's exclusive lock keeps readers out.
        let url = try directory.copyStore(
            Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite"))
        let holder = try Database(url: url, mode: .readWrite)
        try holder.executeScript("BEGIN EXCLUSIVE")
        defer { try? holder.executeScript("ROLLBACK") }
        let error = try #require(throws: StoreError.self) {
            let db = try Database(url: url, mode: .readOnly, configuration: .init(busyTimeout: .milliseconds(50)))
            _ = try StoreMetadata(reading: db)
        }
        #expect(error.code == .locked)
        #expect(error.resultCode?.primary == .busy)
        #expect(error.category == .io)
    }

    @Test func createRefusesToOverwriteAndFailsInMissingFolder() throws {
        let directory = try TemporaryDirectory("moult-create")
        defer { directory.remove() }
        let url = directory.appending("exists.sqlite")
        try Data("keep me".utf8).write(to: url)
        let error = try #require(throws: StoreError.self) { try SQLiteStore.create(at: url, model: libraryModel()) }
        #expect(error.code == .alreadyExists)
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))
        let missing = directory.appending("exists.sqlite/inside.sqlite")  // parent is a file
        let error2 = try #require(throws: StoreError.self) { try SQLiteStore.create(at: missing, model: libraryModel()) }
        #expect(error2.category == .io)
    }

    @Test func readOnlyFileCannotBeWritten() throws {
        let directory = try TemporaryDirectory("moult-ro")
        defer { directory.remove() }
        let url = directory.appending("s.sqlite")
        _ = try SQLiteStore.create(at: url, model: libraryModel())
        let store = try SQLiteStore(url: url, model: libraryModel(), mode: .readOnly)
        let error = try #require(throws: StoreError.self) { try store.database.execute("DELETE FROM Z_PRIMARYKEY") }
        #expect(error.code == .readOnly)
        #expect(error.category == .io)
        #expect(error.sql == "DELETE FROM Z_PRIMARYKEY")
    }
}
