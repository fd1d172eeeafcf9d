import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The change kinds that used to stream and now run in place by SQL: a to-many made ordered, a
/// to-many made to-one, integers widened to floating point or decimal, links that can reach a removed
/// entity. Each on a model of its own, with data that has the quirk, against the streaming copy.
@Suite struct InPlaceSQLKindsTests {
    typealias Case = InPlaceTests.Case

    /// Rows of a query on a store, as text.
    static func rows(_ url: URL, _ sql: String) throws -> [String] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        return try database.query(sql) { row in
            (0..<row.columnCount).map { index in
                switch row.value(at: index) {
                case .null: "null"
                case .int(let i): String(i)
                case .double(let d): "\(d)"
                case .string(let s): s
                case let other: "\(other)"
                }
            }.joined(separator: "|")
        }
    }

    // MARK: - Unordered → ordered

    @Test func aToManyStoredOnItsObjectsBecomesOrderedNumberedAsTheCopyNumbersIt() throws {
        let v1 = try ObjectModel {
            Entity("List") {
                Attribute("name", .string)
                Relationship("items", toMany: "Entry", inverse: "list")
            }
            Entity("Entry") {
                Attribute("text", .string)
                Relationship("list", to: "List", inverse: "items")
            }
        }
        let v2 = try ObjectModel {
            Entity("List") {
                Attribute("name", .string)
                Relationship("items", toMany: "Entry", inverse: "list").ordered()
            }
            Entity("Entry") {
                Attribute("text", .string)
                Relationship("list", to: "List", inverse: "items")
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            let lists = try (0..<3).map { try writer.insert("List", ["name": .string("l\($0)")]) }
            // Entries interleaved between lists, some in none; a list with no entry.
            for e in 0..<11 {
                try writer.insert("Entry", ["text": .string("e\(e)"), "list": e % 4 == 3 ? .null : .object(lists[e % 2])])
            }
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
        // The very numbers the copy writes (same keys here: one entity per table, none removed).
        let order = "SELECT Z_PK, ZLIST, Z_FOK_LIST FROM ZENTRY ORDER BY Z_PK"
        #expect(try Self.rows(result.inPlace, order) == Self.rows(result.streamed, order))
        #expect(try Self.rows(result.inPlace, "SELECT count(*) FROM ZENTRY WHERE ZLIST IS NULL AND Z_FOK_LIST IS NOT NULL") == ["0"])
        #expect(try Self.rows(result.inPlace, "SELECT count(*) FROM ZENTRY WHERE ZLIST IS NULL") == ["2"])
    }

    @Test func bothSidesOfAManyToManyBecomeOrdered() throws {
        let v1 = try ObjectModel {
            Entity("Song") {
                Attribute("title", .string)
                Relationship("playlists", toMany: "Playlist", inverse: "songs")
            }
            Entity("Playlist") {
                Attribute("name", .string)
                Relationship("songs", toMany: "Song", inverse: "playlists")
            }
        }
        let v2 = try ObjectModel {
            Entity("Song") {
                Attribute("title", .string)
                Relationship("playlists", toMany: "Playlist", inverse: "songs").ordered()
            }
            Entity("Playlist") {
                Attribute("name", .string)
                Relationship("songs", toMany: "Song", inverse: "playlists").ordered()
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            let songs = try (0..<7).map { try writer.insert("Song", ["title": .string("s\($0)")]) }
            for p in 0..<4 {
                let playlist = try writer.insert("Playlist", ["name": .string("p\(p)")])
                try writer.relate("songs", playlist, to: songs.enumerated().filter { ($0.offset * 3 + p) % 4 != 0 }.map(\.element).reversed())
            }
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
        let joinTable = try #require(try StoreLayout(model: v2).joinTables.first)
        let order = "SELECT * FROM \(joinTable.name) ORDER BY 1, 2"
        #expect(try Self.rows(result.inPlace, order) == Self.rows(result.streamed, order))
    }

    // MARK: - To-many → to-one

    @Test func aToManyWithoutInverseOnTheToOneSideBecomesToOneKeepingTheFirst() throws {
        let v1 = try ObjectModel {
            Entity("Person") {
                Attribute("name", .string)
                Relationship("phones", toMany: "Phone", inverse: "owner")
                Relationship("badges", toMany: "Badge").ordered()
                Relationship("clubs", toMany: "Club", inverse: "members")
            }
            Entity("Phone") {
                Attribute("number", .string)
                Relationship("owner", to: "Person", inverse: "phones")
            }
            Entity("Badge") { Attribute("label", .string) }
            Entity("Club") {
                Attribute("name", .string)
                Relationship("members", toMany: "Person", inverse: "clubs")
            }
        }
        let v2 = try ObjectModel {
            Entity("Person") {
                Attribute("name", .string)
                Relationship("phones", to: "Phone")
                Relationship("badges", to: "Badge")
                Relationship("clubs", to: "Club")
            }
            Entity("Phone") {
                Attribute("number", .string)
                Relationship("owner", to: "Person")
            }
            Entity("Badge") { Attribute("label", .string) }
            Entity("Club") {
                Attribute("name", .string)
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            let clubs = try (0..<3).map { try writer.insert("Club", ["name": .string("c\($0)")]) }
            let badges = try (0..<5).map { try writer.insert("Badge", ["label": .string("b\($0)")]) }
            for p in 0..<5 {
                let person = try writer.insert("Person", ["name": .string("p\(p)")])
                // Phones made in an order that is not each owner's key order.
                for n in 0..<(p % 3) { try writer.insert("Phone", ["number": .string("\(p)-\(n)"), "owner": .object(person)]) }
                if p != 4 { try writer.relate("badges", person, to: [badges[(p + 2) % 5], badges[p]]) }
                try writer.relate("clubs", person, to: clubs.enumerated().filter { ($0.offset + p) % 2 == 1 }.map(\.element).reversed())
            }
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
    }

    /// A one-to-many made a one-to-one (both sides carried): by SQL, each owner gets its object, equal
    /// to the copy where each owner had at most one. Where one had several, both refuse the store
    /// (InPlaceValidationTests). A to-one that gains an inverse it did not have still streams.
    @Test func aOneToManyMadeAOneToOneRunsBySQLAsTheCopyMakesIt() throws {
        let v1 = try ObjectModel {
            Entity("A") { Attribute("name", .string); Relationship("bs", toMany: "B", inverse: "a") }
            Entity("B") { Attribute("name", .string); Relationship("a", to: "A", inverse: "bs") }
        }
        let v2 = try ObjectModel {
            Entity("A") { Attribute("name", .string); Relationship("bs", to: "B", inverse: "a") }
            Entity("B") { Attribute("name", .string); Relationship("a", to: "A", inverse: "bs") }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            let owners = try (0..<4).map { try writer.insert("A", ["name": .string("a\($0)")]) }
            // a0 and a2 get one object each, in an order unlike their keys; a1 and a3 none; one object has no owner.
            try writer.insert("B", ["name": .string("b0"), "a": .object(owners[2])])
            try writer.insert("B", ["name": .string("b1"), "a": .null])
            try writer.insert("B", ["name": .string("b2"), "a": .object(owners[0])])
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
        let links = "SELECT a.ZNAME, b.ZNAME FROM ZA a LEFT JOIN ZB b ON b.Z_PK = a.ZBS ORDER BY a.Z_PK"
        #expect(try Self.rows(result.inPlace, links) == ["a0|b2", "a1|null", "a2|b0", "a3|null"])

        let gained = try InPlaceTests.method(
            ObjectModel {
                Entity("A") { Relationship("bs", toMany: "B") }
                Entity("B") { Attribute("name", .string) }
            },
            ObjectModel {
                Entity("A") { Relationship("bs", to: "B", inverse: "a") }
                Entity("B") { Attribute("name", .string); Relationship("a", to: "A", inverse: "bs") }
            })
        guard case .streaming = gained else { Issue.record("a to-one gaining a new inverse from a to-many streams"); return }
    }

    // MARK: - Widening

    /// Integers → Decimal (inferred: lossless in the model; the copy stores them through a double).
    /// Integer 64 → Double is neither inferred nor accepted in a mapping as a plain copy (it may
    /// round), so no lightweight step has it.
    @Test func integersToDecimalRunBySQLStoredAsTheCopyStoresThem() throws {
        let v1 = try ObjectModel {
            Entity("Sample") {
                Attribute("count", .integer64)
                Attribute("small", .integer32)
                Attribute("flag", .boolean)
            }
        }
        let v2 = try ObjectModel {
            Entity("Sample") {
                Attribute("count", .decimal)
                Attribute("small", .decimal)
                Attribute("flag", .integer32)
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Beyond 2^53 the copy's double rounds, and Int64.max becomes 2^63 (no integer): SQL must do alike.
        let counts: [Int64] = [0, -1, 42, 1 << 53, (1 << 53) + 1, (1 << 62) + 12345, Int64.max, Int64.min, -((1 << 55) + 3)]
        let result = try Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            for (i, count) in counts.enumerated() {
                try writer.insert(
                    "Sample",
                    ["count": .int(count), "small": i == 2 ? .null : .int(Int64(Int32.max) - Int64(i * 7919)), "flag": .bool(i % 2 == 0)])
            }
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
        let raw = "SELECT Z_PK, ZCOUNT, typeof(ZCOUNT), ZSMALL, typeof(ZSMALL), ZFLAG, typeof(ZFLAG) FROM ZSAMPLE ORDER BY Z_PK"
        #expect(try Self.rows(result.inPlace, raw) == Self.rows(result.streamed, raw))
    }

    /// An optional integer made a required Decimal: with a default, a nil becomes it (bound as the
    /// copy binds a Decimal, its double); without one, a nil is refused (67) by both, the store unchanged.
    static func decimalCase(default value: String?) throws -> (v1: ObjectModel, v2: ObjectModel) {
        let v1 = try ObjectModel { Entity("Sample") { Attribute("count", .integer32); Attribute("label", .string) } }
        var count = Attribute("count", .decimal).required()
        if let value { count = count.defaultValue(value) }
        let attribute = count
        let v2 = try ObjectModel { Entity("Sample") { attribute; Attribute("label", .string) } }
        return (v1, v2)
    }

    static func fillSamples(_ writer: StoreWriter) throws {
        for (i, count) in [Int64(3), -7, Int64(Int32.max)].enumerated() {
            try writer.insert("Sample", ["count": .int(count), "label": .string("s\(i)")])
        }
        try writer.insert("Sample", ["count": .null, "label": .string("none")])
    }

    @Test(arguments: ["2.5", "40"])
    func anIntegerMadeARequiredDecimalWithADefaultRunsBySQL(_ value: String) throws {
        let (v1, v2) = try Self.decimalCase(default: value)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceValidationTests.run(v1, v2, in: directory) { try Self.fillSamples($0) }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed == nil)
        #expect(result.inPlace == nil)
        let copy = directory.appending("copy.sqlite")
        try expectSameContent(result.store, copy, model: v2, "integer → required Decimal, default \(value)")
        let raw = "SELECT Z_PK, ZCOUNT, typeof(ZCOUNT), ZLABEL FROM ZSAMPLE ORDER BY Z_PK"
        #expect(try Self.rows(result.store, raw) == Self.rows(copy, raw))
        #expect(try Self.rows(result.store, "SELECT ZCOUNT FROM ZSAMPLE WHERE ZLABEL = 'none'") == [value == "40" ? "40" : "2.5"])
    }

    @Test func anIntegerMadeARequiredDecimalWithoutDefaultRefusesTheNilsAsTheCopyDoes() throws {
        let (v1, v2) = try Self.decimalCase(default: nil)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceValidationTests.run(v1, v2, in: directory) { try Self.fillSamples($0) }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed?.code == .validationFailed)
        let error = try #require(result.inPlace)
        #expect(error.code == .validationFailed)
        #expect(error.failures.map(\.property) == ["count"])
        #expect(error.failures.map(\.primaryKey) == [4])
        #expect(try InPlaceValidationTests.hashes(result.store) == InPlaceValidationTests.hex(StoreMetadata(model: v1).entityHashes))
        #expect(try Self.rows(result.store, "SELECT typeof(ZCOUNT) FROM ZSAMPLE WHERE Z_PK = 1") == ["integer"])
    }

    // MARK: - Links that can reach a removed entity

    static let zoo: ObjectModel = try! ObjectModel {
        Entity("Keeper") {
            Attribute("name", .string)
            Relationship("favourite", to: "Animal")
            Relationship("animals", toMany: "Animal", inverse: "keeper").ordered()
            Relationship("visits", toMany: "Animal", inverse: "visitors")
            Relationship("notes", toMany: "Note")
        }
        Entity("Animal") {
            Attribute("name", .string)
            Relationship("keeper", to: "Keeper", inverse: "animals")
            Relationship("visitors", toMany: "Keeper", inverse: "visits")
        }
        Entity("Fish", parent: "Animal") { Attribute("fins", .integer16) }
        Entity("Bird", parent: "Animal") { Attribute("wings", .integer16) }
        Entity("Note") {
            Attribute("text", .string)
            Relationship("about", to: "Animal")
        }
        Entity("Intern", parent: "Keeper") { Attribute("school", .string) }
    }

    /// The zoo without Fish (its objects and every link to them go) and without Intern (an owner of
    /// the to-manys stored on the animals' and notes' rows goes).
    static let zooWithoutFishOrInterns: ObjectModel = try! ObjectModel {
        Entity("Keeper") {
            Attribute("name", .string)
            Relationship("favourite", to: "Animal")
            Relationship("animals", toMany: "Animal", inverse: "keeper").ordered()
            Relationship("visits", toMany: "Animal", inverse: "visitors")
            Relationship("notes", toMany: "Note")
        }
        Entity("Animal") {
            Attribute("name", .string)
            Relationship("keeper", to: "Keeper", inverse: "animals")
            Relationship("visitors", toMany: "Keeper", inverse: "visits")
        }
        Entity("Bird", parent: "Animal") { Attribute("wings", .integer16) }
        Entity("Note") {
            Attribute("text", .string)
            Relationship("about", to: "Animal")
        }
    }

    static func fillZoo(_ writer: StoreWriter) throws {
        var animals: [ObjectID] = []
        for i in 0..<12 {
            let entity = ["Animal", "Fish", "Bird"][i % 3]
            var values: [String: Value] = ["name": .string("\(entity)\(i)")]
            if entity == "Fish" { values["fins"] = .int(Int64(i)) }
            if entity == "Bird" { values["wings"] = .int(2) }
            animals.append(try writer.insert(entity, values))
        }
        for k in 0..<6 {
            let keeper = try writer.insert(k % 3 == 2 ? "Intern" : "Keeper", ["name": .string("k\(k)"), "favourite": .object(animals[(k * 5) % 12])])
            try writer.relate("animals", keeper, to: [animals[k], animals[k + 6]].reversed())
            try writer.relate("visits", keeper, to: animals.enumerated().filter { ($0.offset + k) % 3 != 1 }.map(\.element))
            var notes: [ObjectID] = []
            for n in 0..<2 { notes.append(try writer.insert("Note", ["text": .string("n\(k).\(n)"), "about": .object(animals[(k + n * 4) % 12])])) }
            try writer.relate("notes", keeper, to: notes)
        }
    }

    @Test func linksToARemovedEntityAreClearedAndItsJoinRowsLeftOut() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try Case(v1: Self.zoo, v2: Self.zooWithoutFishOrInterns).run(in: directory) { writer, _ in try Self.fillZoo(writer) }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: Self.zooWithoutFishOrInterns)
        // Something was cleared: a favourite, a note's animal and a join row pointed at fish.
        #expect(try Self.rows(result.inPlace, "SELECT count(*) FROM ZNOTE WHERE ZABOUT IS NULL") == ["4"])
        let joinTable = try #require(try StoreLayout(model: Self.zooWithoutFishOrInterns).joinTables.first)
        #expect(try Self.rows(result.inPlace, "SELECT count(*) FROM \(joinTable.name)") == Self.rows(result.streamed, "SELECT count(*) FROM \(joinTable.name)"))
    }

    // MARK: - Required links that can reach a removed entity (SQL, then validation before commit)

    static let pets: ObjectModel = try! ObjectModel {
        Entity("Owner") {
            Attribute("name", .string)
            Relationship("pet", to: "Pet").required()
            // Required: an optional to-many may be empty whatever its minimum, as Core Data validates it.
            Relationship("fed", toMany: "Pet", inverse: "feeder").required().count(min: 1, max: 0)
        }
        Entity("Pet") {
            Attribute("name", .string)
            Relationship("feeder", to: "Owner", inverse: "fed")
        }
        Entity("Fish", parent: "Pet") { Attribute("fins", .integer16) }
    }

    static let petsWithoutFish: ObjectModel = try! ObjectModel {
        Entity("Owner") {
            Attribute("name", .string)
            Relationship("pet", to: "Pet").required()
            // Required: an optional to-many may be empty whatever its minimum, as Core Data validates it.
            Relationship("fed", toMany: "Pet", inverse: "feeder").required().count(min: 1, max: 0)
        }
        Entity("Pet") {
            Attribute("name", .string)
            Relationship("feeder", to: "Owner", inverse: "fed")
        }
    }

    /// Owners whose pet and fed pets are plain pets, fish left about (some fed by an owner who also
    /// feeds a pet); with `breaks`, one owner's pet is a fish (`pet`), another feeds only fish (`fed`).
    static func fillPets(_ writer: StoreWriter, breaks: Set<String>) throws {
        let pets = try (0..<4).map { try writer.insert("Pet", ["name": .string("p\($0)")]) }
        let fish = try (0..<4).map { try writer.insert("Fish", ["name": .string("f\($0)"), "fins": .int(Int64($0))]) }
        for o in 0..<3 {
            let pet = breaks.contains("pet") && o == 1 ? fish[0] : pets[o]
            let owner = try writer.insert("Owner", ["name": .string("o\(o)"), "pet": .object(pet)])
            let fed = breaks.contains("fed") && o == 2 ? [fish[2], fish[3]] : [pets[o], fish[o]]
            try writer.relate("fed", owner, to: fed)
        }
    }

    @Test func aRequiredLinkThatCanReachARemovedEntityRunsBySQLWhenNoObjectLosesIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceValidationTests.run(Self.pets, Self.petsWithoutFish, in: directory) { writer in
            try Self.fillPets(writer, breaks: [])
        }
        InPlaceTests.expectSQL(result.method)
        #expect(result.streamed == nil)
        #expect(result.inPlace == nil)
        try expectSameContent(result.store, directory.appending("copy.sqlite"), model: Self.petsWithoutFish, "required links, fish removed")
        // The fish fed went with them.
        #expect(try Self.rows(result.store, "SELECT count(*) FROM ZPET WHERE ZFEEDER IS NOT NULL") == ["3"])
    }

    @Test(arguments: ["pet", "fed"])
    func aRequiredLinkThatLosesItsObjectIsRefusedAsTheCopyRefusesIt(_ broken: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceValidationTests.run(Self.pets, Self.petsWithoutFish, in: directory) { writer in
            try Self.fillPets(writer, breaks: [broken])
        }
        InPlaceTests.expectSQL(result.method)
        let streamed = try #require(result.streamed)
        let inPlace = try #require(result.inPlace)
        #expect(streamed.code == .validationFailed)
        #expect(inPlace.code == .validationFailed)
        #expect(inPlace.category.exitCode == 67)
        #expect(Set(inPlace.failures.map(\.property)) == [broken])
        #expect(Set(inPlace.failures.map(\.property)) == Set(streamed.failures.map(\.property)))
        #expect(inPlace.failures.map(\.primaryKey) == [broken == "pet" ? 2 : 3])
        // Unchanged, at v1.
        #expect(try InPlaceValidationTests.hashes(result.store) == InPlaceValidationTests.hex(StoreMetadata(model: Self.pets).entityHashes))
        #expect(try Self.rows(result.store, "SELECT count(*) FROM ZPET") == ["8"])
    }
}

/// A schema with the triggers of a derived attribute (`Z_DA_`, a `toMany.@count`): in place, they are
/// dropped before the tables change, the counts computed, and the new version's triggers made.
@Suite struct InPlaceDerivedTriggerTests {
    static let v1: ObjectModel = try! ObjectModel {
        Entity("Book") {
            Attribute("title", .string)
            Attribute("pagesCount", .integer64).derived("pages.@count")
            Relationship("pages", toMany: "Page", inverse: "book")
        }
        Entity("Page") {
            Attribute("number", .integer32)
            Relationship("book", to: "Book", inverse: "pages")
        }
    }

    /// Page renamed Sheet (its table renamed: the triggers name it), a new attribute on Book, and a
    /// new sub-entity of Book (the table rebuilt: Book's rows get another `Z_ENT` numbering).
    static let v2: ObjectModel = try! ObjectModel {
        Entity("Atlas", parent: "Book") { Attribute("scale", .integer32) }
        Entity("Book") {
            Attribute("title", .string)
            Attribute("subtitle", .string).defaultValue("none")
            Attribute("pagesCount", .integer64).derived("pages.@count")
            Relationship("pages", toMany: "Sheet", inverse: "book")
        }
        Entity("Sheet") {
            Attribute("number", .integer32)
            Relationship("book", to: "Book", inverse: "pages")
        }
        .renamed(from: "Page")
    }

    static func triggers(_ url: URL) throws -> Set<String> {
        Set(try InPlaceSQLKindsTests.rows(url, "SELECT sql FROM sqlite_master WHERE type = 'trigger'"))
    }

    @Test func derivedAttributeTriggersAreDroppedAndMadeAgainAroundTheChange() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceTests.Case(v1: Self.v1, v2: Self.v2).run(in: directory) { writer, _ in
            for b in 0..<4 {
                let book = try writer.insert("Book", ["title": .string("b\(b)")])
                let pages = try (0..<b * 2).map { try writer.insert("Page", ["number": .int(Int64($0))]) }
                try writer.relate("pages", book, to: pages)
            }
            try writer.insert("Page", ["number": .int(99)])
        }
        guard case .sql(let script) = result.method else { Issue.record("\(result.method)"); return }
        #expect(script.changes.contains { $0.kind == .dropTriggers } && script.changes.contains { $0.kind == .createTriggers })
        try InPlaceTests.expectEquivalent(result, model: Self.v2)
        #expect(try Self.triggers(result.inPlace) == Self.triggers(result.streamed))
        #expect(try Self.triggers(result.inPlace).contains { $0.contains("Z_DA_ZSHEET_Book_pagesCount_") })
        let counts = "SELECT Z_PK, ZPAGESCOUNT FROM ZBOOK ORDER BY Z_PK"
        #expect(try InPlaceSQLKindsTests.rows(result.inPlace, counts) == ["1|0", "2|2", "3|4", "4|6"])
        // The new triggers keep the counts: a sheet moved, through a connection of Moult's.
        let database = try Database(url: result.inPlace, mode: .readWrite)
        defer { database.close() }
        try database.execute("UPDATE ZSHEET SET ZBOOK = 1 WHERE ZBOOK = 2")
        #expect(try database.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 1") == .int(2))
        #expect(try database.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 2") == .int(0))
    }

    /// A store with an application's trigger (as Photos' `ZT_` ones), the model's own `v1` made with
    /// `trigger` added, migrated in place.
    static func migrateWithTrigger(_ trigger: String, in directory: TemporaryDirectory) throws -> (report: InPlaceMigration.Report, store: URL) {
        let model = try VersionedModel(name: "Case", versions: [.init(name: "v1", model: Self.v1), .init(name: "v2", model: Self.v2)])
        let store = directory.appending("store.sqlite")
        let created = try SQLiteStore.create(at: store, model: Self.v1)
        let writer = try created.makeWriter()
        try writer.write {
            let book = try writer.insert("Book", ["title": .string("b")])
            try writer.relate("pages", book, to: [try writer.insert("Page", ["number": .int(1)])])
        }
        try created.database.executeScript(trigger)
        created.database.close()
        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        // Judged on the store (issue 40, item 7): a column of the application's own makes the step a
        // copy, whatever else the store holds.
        let hasOwnColumn = try InPlaceSQLKindsTests.rows(store, "SELECT name FROM pragma_table_info('ZBOOK') WHERE name = 'app_note'") == ["app_note"]
        #expect(migration.methods[0].isSQL == !hasOwnColumn)
        return (try migration.run(), store)
    }

    /// An application's trigger on a table that keeps every column it had (ZBOOK, rebuilt: it gains
    /// columns) is dropped around the change and made again, by SQL; it still fires.
    @Test func anApplicationsTriggerIsDroppedAndMadeAgainWhenItsTablesKeepTheirColumns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let trigger = "CREATE TRIGGER ZT_ZBOOK_ZTITLE_UPDATE AFTER UPDATE OF ZTITLE ON ZBOOK BEGIN UPDATE ZBOOK SET Z_OPT = Z_OPT + 1 WHERE Z_PK = NEW.Z_PK; END"
        let (report, store) = try Self.migrateWithTrigger(trigger, in: directory)
        #expect(report.ranBySQL == [true])
        #expect(try Self.triggers(store).contains(trigger))
        #expect(try InPlaceSQLKindsTests.rows(store, "SELECT ZPAGESCOUNT, ZSUBTITLE FROM ZBOOK") == ["1|none"])
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        let before = try database.scalar("SELECT Z_OPT FROM ZBOOK")
        try database.execute("UPDATE ZBOOK SET ZTITLE = 'c'")
        guard case .int(let old)? = before else { Issue.record("no Z_OPT"); return }
        #expect(try database.scalar("SELECT Z_OPT FROM ZBOOK") == .int(old + 1))
    }

    /// An application's trigger on a table the change renames (ZPAGE → ZSHEET): it cannot be made
    /// again as it was, and a copy made from the model would drop it: the run is refused (66) before
    /// anything is written, naming the trigger, and the store keeps it.
    @Test func anApplicationsTriggerOnATableThatGoesIsRefusedNotDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let trigger = "CREATE TRIGGER ZT_ZPAGE_TOUCH AFTER UPDATE OF ZNUMBER ON ZPAGE BEGIN SELECT 1; END"
        let error = #expect(throws: MigrationError.self) { try Self.migrateWithTrigger(trigger, in: directory) }
        #expect(error?.category.exitCode == 66)
        #expect(error?.description.contains("trigger ZT_ZPAGE_TOUCH") == true, "\(error?.description ?? "")")
        let store = directory.appending("store.sqlite")
        #expect(try Self.triggers(store).contains(trigger))
        #expect(try InPlaceSQLKindsTests.rows(store, "SELECT count(*) FROM ZPAGE") == ["1"])
    }

    /// A column added to a model's table: the store's tables are not the layout, so the step would be a
    /// copy made from the model, which keeps neither the column nor the application's table and view.
    /// The run is refused (66) naming each and why, the store untouched.
    @Test func anApplicationsColumnIsRefusedNotDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = #expect(throws: MigrationError.self) {
            try Self.migrateWithTrigger(
                "CREATE TABLE app_log (x); INSERT INTO app_log VALUES (1); CREATE VIEW app_view AS SELECT * FROM ZBOOK; ALTER TABLE ZBOOK ADD COLUMN app_note",
                in: directory)
        }
        #expect(error?.category.exitCode == 66)
        for name in ["column ZBOOK.app_note", "table app_log", "view app_view"] {
            #expect(error?.description.contains("\(name): step 1: cannot be kept: the step makes a new store from the model") == true, "\(error?.description ?? "")")
        }
        #expect(try InPlaceSQLKindsTests.rows(directory.appending("store.sqlite"), "SELECT x FROM app_log") == ["1"])
        #expect(!FileManager.default.fileExists(atPath: directory.appending("store~.sqlite").path))
    }
}

/// R-tree fetch indexes (`Z_RT_` virtual tables kept by triggers on the entity's table): in place, the
/// old ones and their triggers are dropped before the tables change, the new ones made after, filled
/// from every row of their table, and their triggers made, as a new store has them.
@Suite struct InPlaceRTreeTests {
    static func model(rTree: Bool, harbour: Bool) throws -> ObjectModel {
        let index = rTree
            ? """
                <fetchIndex name="boundedByRect">
                    <fetchIndexElement property="latitude" type="RTree" order="ascending"/>
                    <fetchIndexElement property="longitude" type="RTree" order="ascending"/>
                </fetchIndex>
            """ : ""
        let more = harbour
            ? """
            <entity name="Harbour" representedClassName="Harbour" parentEntity="Place" syncable="YES">
                <attribute name="depth" optional="YES" attributeType="Integer 32"/>
            </entity>
            """ : ""
        let note = harbour ? #"<attribute name="note" optional="YES" attributeType="String" defaultValueString="none"/>"# : ""
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Place" representedClassName="Place" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <attribute name="latitude" optional="YES" attributeType="Double"/>
                    <attribute name="longitude" optional="YES" attributeType="Double"/>
                    \(note)
                    \(index)
                </entity>
                \(more)
            </model>
            """
        return try ObjectModel(xcodeContents: Data(xml.utf8))
    }

    /// The R-tree fetch index's virtual table (`NSSQLRTreeIndex`'s name, `Z_<Entity>_<index>`).
    static let name = "Z_Place_boundedByRect"

    /// (index at v1, index at v2): kept across a rebuild (a new sub-entity renumbers the rows), added,
    /// removed.
    @Test(arguments: [(true, true), (false, true), (true, false)])
    func anRTreeIndexIsMadeAndFilledAsANewStoreHasIt(_ indexes: (Bool, Bool)) throws {
        let v1 = try Self.model(rTree: indexes.0, harbour: false)
        let v2 = try Self.model(rTree: indexes.1, harbour: true)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try InPlaceTests.Case(v1: v1, v2: v2).run(in: directory) { writer, _ in
            for i in 0..<9 {
                var values: [String: Value] = ["name": .string("p\(i)")]
                // A nil coordinate is stored as 0 by the R-tree, by either path; a value between floats rounds outwards.
                if i != 4 { values["latitude"] = .double(Double(i) * 10.1 - 40) }
                if i != 7 { values["longitude"] = .double(Double(i) / 3) }
                try writer.insert("Place", values)
            }
        }
        InPlaceTests.expectSQL(result.method)
        try InPlaceTests.expectEquivalent(result, model: v2)
        let schema = "SELECT type, name, sql FROM sqlite_master WHERE name LIKE '\(Self.name)%' ORDER BY name"
        #expect(try InPlaceSQLKindsTests.rows(result.inPlace, schema) == InPlaceSQLKindsTests.rows(result.streamed, schema))
        guard indexes.1 else {
            #expect(try InPlaceSQLKindsTests.rows(result.inPlace, schema).isEmpty)
            return
        }
        let content = "SELECT * FROM \(Self.name) ORDER BY Z_PK"
        #expect(try InPlaceSQLKindsTests.rows(result.inPlace, content).count == 9)
        #expect(try InPlaceSQLKindsTests.rows(result.inPlace, content) == InPlaceSQLKindsTests.rows(result.streamed, content))
        // Its triggers keep it current, in the migrated store as in a new one.
        let database = try Database(url: result.inPlace, mode: .readWrite)
        defer { database.close() }
        try database.execute("UPDATE ZPLACE SET ZLATITUDE = 12.5 WHERE Z_PK = 2")
        try database.execute("DELETE FROM ZPLACE WHERE Z_PK = 3")
        #expect(try database.scalar("SELECT ZLATITUDE_MIN FROM \(Self.name) WHERE Z_PK = 2") == .double(12.5))
        #expect(try database.scalar("SELECT COUNT(*) FROM \(Self.name)") == .int(8))
    }
}
