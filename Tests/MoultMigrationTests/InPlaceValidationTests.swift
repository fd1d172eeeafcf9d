import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// An SQL step checks, before it commits, the rules the step itself can break, as the streaming
/// engine's validation does: a store the copy would refuse (67) is refused in place too, unchanged,
/// with no backup or work folder left by the refused run.
@Suite struct InPlaceValidationTests {
    static func model(_ v1: ObjectModel, _ v2: ObjectModel) throws -> VersionedModel {
        try VersionedModel(name: "Rules", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
    }

    /// Makes a v1 store with `fill`, then runs the step in place (keeping a backup, as the CLI does by
    /// default) and by the streaming copy; returns both outcomes.
    static func run(
        _ v1: ObjectModel, _ v2: ObjectModel, in directory: TemporaryDirectory, fill: (StoreWriter) throws -> Void
    ) throws -> (inPlace: MigrationError?, streamed: MigrationError?, store: URL, method: InPlaceMigration.Method) {
        let store = directory.appending("store.sqlite")
        let created = try SQLiteStore.create(at: store, model: v1)
        let writer = try created.makeWriter()
        try writer.write { try fill(writer) }
        created.database.close()
        let versions = try model(v1, v2)

        var streamed: MigrationError?
        do {
            try ProgressiveMigration(store: store, model: versions, to: "v2").run(output: directory.appending("copy.sqlite"))
        } catch let error as MigrationError { streamed = error }

        let migration = try InPlaceMigration(store: store, model: versions, to: "v2", keepsBackup: true)
        var inPlace: MigrationError?
        do { try migration.run() } catch let error as MigrationError { inPlace = error }
        return (inPlace, streamed, store, migration.methods[0])
    }

    static func hashes(_ store: URL) throws -> [String: String] {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return hex(try StoreMetadata(reading: database).entityHashes)
    }

    static func hex(_ hashes: [String: VersionHash]) -> [String: String] {
        hashes.mapValues { $0.bytes.map { String(format: "%02x", $0) }.joined() }
    }

    @Test func anAttributeMadeRequiredWithoutDefaultRefusesTheNilsAsTheCopyDoes() throws {
        let v1 = try ObjectModel { Entity("Item") { Attribute("title", .string); Attribute("n", .integer32) } }
        let v2 = try ObjectModel { Entity("Item") { Attribute("title", .string).required(); Attribute("n", .integer32) } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Self.run(v1, v2, in: directory) { writer in
            try writer.insert("Item", ["title": .string("a"), "n": .int(1)])
            try writer.insert("Item", ["title": .null, "n": .int(2)])
        }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed?.code == .validationFailed)
        let error = try #require(result.inPlace)
        #expect(error.code == .validationFailed)
        #expect(error.category.exitCode == 67)
        #expect(error.failures.map(\.property) == ["title"])
        #expect(error.failures.first?.primaryKey == 2)
        // Unchanged, at v1, and nothing of the refused run beside it.
        #expect(try Self.hashes(result.store) == Self.hex(StoreMetadata(model: v1).entityHashes))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!left.contains("store~.sqlite"), "\(left)")
        #expect(!left.contains { $0.hasPrefix(".store.sqlite") }, "\(left)")
    }

    @Test func anAttributeMadeRequiredMigratesWhenNoObjectHasANil() throws {
        let v1 = try ObjectModel { Entity("Item") { Attribute("title", .string) } }
        let v2 = try ObjectModel { Entity("Item") { Attribute("title", .string).required() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Self.run(v1, v2, in: directory) { writer in
            try writer.insert("Item", ["title": .string("a")])
        }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed == nil)
        #expect(result.inPlace == nil)
        #expect(FileManager.default.fileExists(atPath: directory.appending("store~.sqlite").path))
    }

    @Test func newBoundsAreCheckedAndUnchangedOnesAreNotRescanned() throws {
        // `count` gains a maximum the data breaks; `name` keeps its bounds (its values were valid
        // under them already); a new required attribute with a default fills every object.
        let v1 = try ObjectModel {
            Entity("Shelf") { Attribute("name", .string).range(min: "1", max: "20"); Attribute("count", .integer64) }
        }
        let v2 = try ObjectModel {
            Entity("Shelf") {
                Attribute("name", .string).range(min: "1", max: "20")
                Attribute("count", .integer64).range(max: "10")
                Attribute("kind", .string).required().defaultValue("plain")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Self.run(v1, v2, in: directory) { writer in
            try writer.insert("Shelf", ["name": .string("a"), "count": .int(3)])
            try writer.insert("Shelf", ["name": .string("b"), "count": .int(12)])
        }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed?.code == .validationFailed)
        let error = try #require(result.inPlace)
        #expect(error.code == .validationFailed)
        #expect(error.failures.map(\.property) == ["count"])
        #expect(error.failures.map(\.primaryKey) == [2])
    }

    @Test func aToOneMadeRequiredRefusesTheObjectsWithout() throws {
        let v1 = try ObjectModel {
            Entity("Book") { Attribute("title", .string); Relationship("author", to: "Author", inverse: "books") }
            Entity("Author") { Attribute("name", .string); Relationship("books", toMany: "Book", inverse: "author") }
        }
        let v2 = try ObjectModel {
            Entity("Book") { Attribute("title", .string); Relationship("author", to: "Author", inverse: "books").required() }
            Entity("Author") { Attribute("name", .string); Relationship("books", toMany: "Book", inverse: "author") }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Self.run(v1, v2, in: directory) { writer in
            let author = try writer.insert("Author", ["name": .string("x")])
            try writer.insert("Book", ["title": .string("kept"), "author": .object(author)])
            try writer.insert("Book", ["title": .string("orphan"), "author": .null])
        }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed?.code == .validationFailed)
        #expect(result.inPlace?.code == .validationFailed)
        #expect(result.inPlace?.failures.map(\.property) == ["author"])
    }

    /// A to-many made a one-to-one: where an object had several, the copy would leave them all naming
    /// it while it names one of them, a one-to-one that is not one. Validation refuses it (67), in
    /// place (by SQL) as in the copy; where each had at most one, both migrate.
    @Test func aToManyMadeAOneToOneIsRefusedWhereAnObjectHadSeveral() throws {
        let v1 = try ObjectModel {
            Entity("Owner") { Attribute("name", .string); Relationship("items", toMany: "Item", inverse: "owner") }
            Entity("Item") { Attribute("name", .string); Relationship("owner", to: "Owner", inverse: "items") }
        }
        let v2 = try ObjectModel {
            Entity("Owner") { Attribute("name", .string); Relationship("items", to: "Item", inverse: "owner") }
            Entity("Item") { Attribute("name", .string); Relationship("owner", to: "Owner", inverse: "items") }
        }
        for several in [true, false] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let result = try Self.run(v1, v2, in: directory) { writer in
                let a = try writer.insert("Owner", ["name": .string("a")])
                let b = try writer.insert("Owner", ["name": .string("b")])
                try writer.insert("Item", ["name": .string("i1"), "owner": .object(a)])
                try writer.insert("Item", ["name": .string("i2"), "owner": .object(several ? a : b)])
                try writer.insert("Item", ["name": .string("i3"), "owner": .null])
            }
            InPlaceTests.expectSQL(result.method)
            if several {
                #expect(result.streamed?.code == .validationFailed)
                #expect(result.inPlace?.code == .validationFailed)
                #expect(result.inPlace?.failures.contains { $0.rule.contains("does not point back") } == true, "\(result.inPlace?.failures ?? [])")
                #expect(try Self.hashes(result.store) == Self.hex(StoreMetadata(model: v1).entityHashes))
            } else {
                #expect(result.streamed == nil, "\(result.streamed?.description ?? "")")
                #expect(result.inPlace == nil, "\(result.inPlace?.description ?? "")")
            }
        }
    }

    /// A partial fetch index added in place (with an attribute: a fetch index alone changes no hash)
    /// is made as a new store makes it, with its `WHERE`.
    @Test func aPartialIndexAddedInPlaceKeepsItsWhere() throws {
        let v1 = try ObjectModel { Entity("Item") { Attribute("state", .string) } }
        let v2 = try ObjectModel {
            Entity("Item") { Attribute("state", .string); Attribute("note", .string); FetchIndex("byState", "state").partial("state != nil") }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Self.run(v1, v2, in: directory) { writer in try writer.insert("Item", ["state": .string("a")]) }
        InPlaceTests.expectSQL(result.method)
        #expect(result.inPlace == nil)
        let sql = "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%byState%'"
        let inPlace = try InPlaceSQLKindsTests.rows(result.store, sql)
        #expect(inPlace.count == 1 && inPlace.allSatisfy { $0.contains("WHERE") }, "\(inPlace)")
        #expect(try inPlace == InPlaceSQLKindsTests.rows(directory.appending("copy.sqlite"), sql))
    }

    /// `--defer-cleanup` never defers a new unique index: a store whose rows break it is refused (67)
    /// as without deferring, not left at the new version breaking its rule.
    @Test func aDeferredCleanupDoesNotDeferAUniqueIndex() throws {
        let v1 = try ObjectModel { Entity("Tag") { Attribute("name", .string) } }
        let v2 = try ObjectModel { Entity("Tag") { Attribute("name", .string); Unique("name") } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("tags.sqlite")
        let created = try SQLiteStore.create(at: store, model: v1)
        let writer = try created.makeWriter()
        try writer.write {
            try writer.insert("Tag", ["name": .string("a")])
            try writer.insert("Tag", ["name": .string("a")])
        }
        created.database.close()
        var migration = try InPlaceMigration(store: store, model: Self.model(v1, v2), to: "v2", keepsBackup: false)
        migration.defersCleanup = true
        #expect(throws: (any Error).self) { try migration.run() }
        #expect(try Self.hashes(store) == Self.hex(StoreMetadata(model: v1).entityHashes))
    }
}
