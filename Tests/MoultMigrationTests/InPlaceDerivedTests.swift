import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `fidelity/inplace-new-derived-attribute` (issue 22, item 3) for every derivation form Moult writes:
/// a step run in place by SQL computes each derived attribute added, or whose derivation changed, for
/// every existing row inside its transaction, and gives the values the streaming copy gives (whose new
/// store's triggers compute them). Before, in place left the new columns nil (only `@count` through a
/// one-to-many was computed), and kept stale values when a derivation changed.
@Suite struct InPlaceDerivedTests {
    /// The derivations of List's derived attributes, per version: none in v1, every form in v2, each
    /// one changed in v3. `Special` (a sub-entity sharing List's table) has its own in v2 and v3.
    static func model(_ version: Int) throws -> ObjectModel {
        let list: [(String, AttributeType, [String])] = [
            ("itemCount", .integer64, ["items.@count", "items.@count"]),
            ("total", .double, ["items.@sum.price", "items.@min.price"]),
            ("dearest", .double, ["items.@max.price", "items.@sum.price"]),
            ("tagCount", .integer64, ["tags.@count", "tags.@count"]),
            ("authorKey", .string, ["canonical:(author.name)", "lowercase:(author.name)"]),
            ("authorName", .string, ["author.name", "uppercase:(author.name)"]),
            ("titleLower", .string, ["lowercase:(title)", "uppercase:(title)"]),
            ("titleCopy", .string, ["title", "canonical:(title)"]),
        ]
        return try ObjectModel {
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
                if version > 1 {
                    for (name, type, derivations) in list { Attribute(name, type).derived(derivations[version - 2]) }
                }
            }
            Entity("Special", parent: "List") {
                Attribute("note", .string)
                Relationship("extras", toMany: "Extra", inverse: "special")
                if version > 1 {
                    Attribute("specialCount", .integer64).derived(version == 2 ? "extras.@count" : "extras.@sum.size")
                    Attribute("noteUpper", .string).derived(version == 2 ? "uppercase:(note)" : "lowercase:(note)")
                }
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("lists", toMany: "List", inverse: "tags")
            }
            Entity("Extra") {
                Attribute("size", .integer32)
                Relationship("special", to: "Special", inverse: "extras")
            }
        }
    }

    static let versioned: VersionedModel = try! VersionedModel(
        name: "Derived", versions: (1...3).map { .init(name: "v\($0)", model: try! model($0)) })

    /// Lists and Specials with authors (or none), items (some prices nil) and tags.
    static func makeStore(_ url: URL, version: Int) throws {
        let store = try SQLiteStore.create(at: url, model: model(version))
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            let authors = try ["Ève", "Zoë"].map { try writer.insert("Author", ["name": .string($0)]) }
            let tags = try ["x", "y", "z"].map { try writer.insert("Tag", ["name": .string($0)]) }
            for index in 1...14 {
                let entity = index % 3 == 0 ? "Special" : "List"
                var values: [String: Value] = ["title": index == 5 ? .null : .string("List Ünï \(index)")]
                if index % 4 != 0 { values["author"] = .object(authors[index % 2]) }
                if entity == "Special" { values["note"] = index == 6 ? .null : .string("nöte \(index)") }
                let list = try writer.insert(entity, values)
                let items = try (0..<(index % 5)).map { position in
                    try writer.insert("Item", ["price": position == 1 ? .null : .double(Double(index * 10 + position))])
                }
                try writer.relate("items", list, to: items)
                try writer.relate("tags", list, to: Array(tags.prefix(index % 4)))
                if entity == "Special" {
                    let extras = try (1...(index / 3)).map { try writer.insert("Extra", ["size": .int(Int64(index + $0))]) }
                    try writer.relate("extras", list, to: extras)
                }
            }
        }
    }

    /// Every List's and Special's stored values, keyed by title (primary keys may differ between the
    /// two ways), `Z_ENT` included.
    static func lists(_ url: URL, version: Int) throws -> [String] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let layout = try StoreLayout(model: model(version))
        let columns = layout.table(named: "ZLIST")!.columns.map(\.name).filter { !["Z_PK", "Z_OPT", "ZAUTHOR"].contains($0) }
        return try database.query("SELECT \(columns.joined(separator: ", ")) FROM ZLIST ORDER BY ZTITLE, ZNOTE") { row in
            zip(columns, (0..<columns.count).map { row.value(at: $0) }).map { "\($0)=\($1)" }.joined(separator: " ")
        }
    }

    /// Runs v`from` → v`to` both ways on a store made at v`from`; returns (in place, copy) rows, having
    /// checked the step ran in place by SQL.
    static func bothWays(from: Int, to: Int) throws -> (inPlace: [String], copy: [String]) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("source.sqlite")
        try makeStore(source, version: from)
        let output = directory.appending("output.sqlite")
        try ProgressiveMigration(store: source, model: versioned, to: "v\(to)", options: MigrationOptions(chunkSize: 5)).run(output: output)
        let inPlace = try directory.copyStore(source, as: "in-place.sqlite")
        let migration = try InPlaceMigration(store: inPlace, model: versioned, to: "v\(to)", keepsBackup: false)
        #expect(migration.methods.map(\.isSQL) == [true], "\(migration.methods)")
        let report = try migration.run()
        #expect(report.ranBySQL == [true])
        return (try lists(inPlace, version: to), try lists(output, version: to))
    }

    /// `fidelity/inplace-new-derived-attribute`, every form: derived attributes added by v2 are
    /// computed in place as in the copy (counts, sums, minimums and maximums through one-to-manys, a
    /// count through a many-to-many, a to-one's attribute and functions of it, the entity's own
    /// attributes and functions of them), a sub-entity's only for its rows.
    @Test func newDerivedAttributesOfEveryFormAreComputedInPlace() throws {
        let (inPlace, copy) = try Self.bothWays(from: 1, to: 2)
        #expect(copy.count == 14)
        #expect(inPlace == copy)
        // Not vacuous: the copy has the values. List 14: items 140, nil, 142, 143; author Ève; tags x, y.
        let fourteenth = try #require(copy.first { $0.contains("ZTITLE=\"List Ünï 14\"") })
        for expected in [
            "ZITEMCOUNT=4", "ZTOTAL=425.0", "ZDEAREST=143.0", "ZTAGCOUNT=2", "ZAUTHORKEY=\"eve\"", "ZAUTHORNAME=\"Ève\"",
            "ZTITLELOWER=\"list ünï 14\"", "ZTITLECOPY=\"List Ünï 14\"", "ZSPECIALCOUNT=nil",
        ] {
            #expect(fourteenth.contains(expected), "\(fourteenth)")
        }
        // Special 9 (a sub-entity): extras of sizes 10, 11, 12.
        let ninth = try #require(copy.first { $0.contains("ZTITLE=\"List Ünï 9\"") })
        #expect(ninth.contains("ZSPECIALCOUNT=3") && ninth.contains("ZNOTEUPPER=\"NÖTE 9\""), "\(ninth)")
    }

    /// `fidelity/inplace-new-derived-attribute`, "or whose derivation changed": v2 → v3 changes every
    /// derivation; in place recomputes each as the copy does, none left at its v2 value.
    @Test func changedDerivationsAreRecomputedInPlace() throws {
        let (inPlace, copy) = try Self.bothWays(from: 2, to: 3)
        #expect(copy.count == 14)
        #expect(inPlace == copy)
        let fourteenth = try #require(copy.first { $0.contains("ZTITLE=\"List Ünï 14\"") })
        for expected in [
            "ZTOTAL=140.0", "ZDEAREST=425.0", "ZAUTHORKEY=\"ève\"", "ZAUTHORNAME=\"ÈVE\"", "ZTITLELOWER=\"LIST ÜNÏ 14\"",
            "ZTITLECOPY=\"list uni 14\"",
        ] {
            #expect(fourteenth.contains(expected), "\(fourteenth)")
        }
        let ninth = try #require(copy.first { $0.contains("ZTITLE=\"List Ünï 9\"") })
        #expect(ninth.contains("ZSPECIALCOUNT=33") && ninth.contains("ZNOTEUPPER=\"nöte 9\""), "\(ninth)")
    }

    /// `now()`: the copy stamps every row as its triggers insert it; in place stamps every row too,
    /// inside the step.
    @Test func nowIsStampedOnEveryRowInPlace() throws {
        let v1 = try ObjectModel { Entity("Note") { Attribute("title", .string) } }
        let v2 = try ObjectModel {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("touched", .date).derived("now()")
            }
        }
        let model = try VersionedModel(name: "Notes", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("notes.sqlite")
        let created = try SQLiteStore.create(at: store, model: v1)
        let writer = try created.makeWriter()
        try writer.write { for index in 1...5 { _ = try writer.insert("Note", ["title": .string("n\(index)")]) } }
        created.database.close()
        let before = Date().timeIntervalSinceReferenceDate
        let migration = try InPlaceMigration(store: store, model: model, to: "v2", keepsBackup: false)
        #expect(migration.methods.map(\.isSQL) == [true])
        _ = try migration.run()
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        let stamps = try database.query("SELECT ZTOUCHED FROM ZNOTE") { $0.value(at: 0) }
        #expect(stamps.count == 5)
        for stamp in stamps {
            guard case .double(let seconds) = stamp else {
                Issue.record("no date: \(stamp)")
                continue
            }
            #expect(seconds >= before - 1 && seconds <= Date().timeIntervalSinceReferenceDate + 1, "\(seconds)")
        }
    }
}
