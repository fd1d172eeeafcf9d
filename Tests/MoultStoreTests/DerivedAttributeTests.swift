import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Derived attributes as Core Data stores them, held against CoreDataPlus' SampleModel2_V2.sqlite (a real
/// store with `Book.pagesCount = pages.@count`, inherited by `GraphicNovel`) and its model, rebuilt from
/// that store's model cache (Tests/RebuiltModels).
@Suite struct DerivedAttributeTests {
    static let storePath = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
    static let modelURL = Fixtures.packageRoot.appending(path: "Tests/RebuiltModels/SampleModel2_V2.xcdatamodel")

    static func model() throws -> ObjectModel { try ObjectModel(contentsOf: modelURL) }

    /// The version hash rule of CORE-DATA-FORMATS.md §4 gives the store's own hashes, derived ones included.
    @Test func hashesAreTheStoresOwn() throws {
        let model = try Self.model()
        let metadata = try StoreMetadata(contentsOf: Fixtures.url(Self.storePath))
        #expect(metadata.entityHashes.count == 6)
        #expect(model.entitiesWithUncomputableHash == [])
        for (entity, hash) in metadata.entityHashes {
            #expect(try model.versionHash(ofEntity: entity) == hash, "\(entity)")
        }
        let pagesCount = try #require(model.attribute(named: "pagesCount", of: "GraphicNovel"))
        #expect(pagesCount.isDerived)
        #expect(try DerivationExpression(try #require(pagesCount.derivationExpression)).printed == "count:(pages)")
        // Its hash is the printed expression's and nothing else.
        #expect(try pagesCount.derivedVersionHash().hex == "50081597fb1d6648429c1b37f73bc6bf63299d160cd6f0d555919fd143a9296e")  // SHA-256 of "count:(pages)"
        #expect(StoreMetadata(model: model).entityHashes == metadata.entityHashes)
    }

    /// The created store has the real store's tables, indexes and triggers, text for text (persistent
    /// history left out: Moult does not write it).
    @Test func schemaAndTriggersAreTheStoresOwn() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let created = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.model())
        defer { created.database.close() }
        let real = try Database(url: Fixtures.url(Self.storePath), mode: .readOnly)
        defer { real.close() }
        func schema(_ database: Database) throws -> Set<String> {
            Set(
                try database.query(
                    "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name NOT IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING')"
                ) { $0.string(at: 0) ?? "" })
        }
        let ours = try schema(created.database)
        let theirs = try schema(real)
        // Core Data orders columns its own way (a nicety): tables are compared as column sets, the
        // rest (indexes, triggers) as text.
        #expect(ours.filter { !$0.hasPrefix("CREATE TABLE") } == theirs.filter { !$0.hasPrefix("CREATE TABLE") })
        #expect(ours.filter { $0.contains("Z_DA_") }.count == 5)
        for table in ["ZBOOK", "ZPAGE", "ZWRITER", "ZFEEDBACK"] {
            let columns = { (database: Database) in
                Set(try database.query("SELECT name || ' ' || type FROM pragma_table_info(?)", [.string(table)]) { $0.string(at: 0) ?? "" })
            }
            #expect(try columns(created.database) == columns(real), "\(table)")
        }
    }

    /// The triggers keep the counts while a store is filled, whatever the order of the rows; the
    /// functions they call are registered on Moult's connections.
    @Test func countsStayCurrent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.model())
        defer { store.database.close() }
        let db = store.database
        // A page before its book, then the book, then two more pages, one moved, one deleted.
        try db.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z1_BOOK) VALUES (1, 4, 1, 1, 1, 2)")
        try db.execute("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (1, 2, 1, 'graphic')")
        try db.execute("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (2, 1, 1, 'plain')")
        #expect(try db.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 1") == .int(1))
        #expect(try db.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 2") == .int(0))
        try db.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z1_BOOK) VALUES (2, 4, 1, 2, 1, 2), (3, 4, 1, 3, 1, 2)")
        try db.execute("UPDATE ZPAGE SET ZBOOK = 2, Z1_BOOK = 1 WHERE Z_PK = 3")
        try db.execute("DELETE FROM ZPAGE WHERE Z_PK = 1")
        #expect(try db.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 1") == .int(1))
        #expect(try db.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 2") == .int(1))
        // Through Moult's writer too: objects and relationships as a migration writes them.
        let writer = try store.makeWriter()
        try writer.write {
            // (The rows above were put in with SQL, past the writer's keys: it is given its own.)
            let book = try writer.insert("Book", ["title": .string("written"), "uniqueID": .uuid(UUID())], primaryKey: 10)
            var pages: [ObjectID] = []
            for number in 1...3 { pages.append(try writer.insert("Page", ["number": .int(Int64(number))], primaryKey: Int64(10 + number))) }
            try writer.relate("pages", book, to: pages)
            #expect(try db.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [.int(book.primaryKey)]) == .int(3))
        }
    }

    /// Core Data's own store takes an insert through Moult's connection (the trigger functions exist).
    @Test func theRealStoreTakesAnInsert() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let copy = try directory.copyStore(Fixtures.url(Self.storePath))
        let database = try Database(url: copy, mode: .readWrite)
        defer { database.close() }
        let book = try #require(try database.scalar("SELECT ZBOOK FROM ZPAGE WHERE ZBOOK IS NOT NULL LIMIT 1"))
        let before = try database.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [book])
        try database.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK) VALUES (100000, 4, 1, 9, ?)", [book])
        guard case .int(let count) = before else {
            Issue.record("a count was expected, got \(String(describing: before))")
            return
        }
        #expect(try database.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [book]) == .int(count + 1))
    }

    @Test(arguments: [
        ("pages.@count", "count:(pages)"), (" author.name ", "author.name"), ("a.b.@count", "count:(a.b)"), ("title", "title"),
        ("now()", "now()"), ("canonical:(name)", "canonical:(name)"), ("lowercase:( owner.name )", "lowercase:(owner.name)"),
        ("items.@sum.price", "sum:(items.price)"), ("sum:(items.price)", "sum:(items.price)"), ("items.@max.price", "max:(items.price)"),
        ("count:(pages)", "count:(pages)"),
    ])
    func printedAsFoundationPrints(_ text: String, _ printed: String) throws {
        #expect(try DerivationExpression(text).printed == printed)
    }
}
