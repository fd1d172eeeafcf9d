import CoreData
import Foundation
import MoultEngine
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A policy that takes objects out of every kind of relationship after `super` set them
/// (`PruningPolicy`): a to-one set back to nil (one-to-one, without inverse, and through the to-one of
/// an ordered one-to-many), a one-to-one given a new object, to-manys given fewer objects (one-to-many,
/// many-to-many, without inverse, ordered one-to-many and ordered many-to-many, reordered). The
/// destination's rows, read with the `sqlite3` shell, are what the policy's rules give from the data
/// the test wrote: inverse columns and join rows in step, ordered positions `1, 2, 3…` in the new order.
@Suite struct RelationshipRemovalTests {
    static func models() throws -> VersionedModel {
        func entities(remark: Bool) throws -> ObjectModel {
            try ObjectModel(versionIdentifier: remark ? "2" : "1") {
                Entity("Owner") {
                    Attribute("name", .string)
                    Attribute("rank", .integer32)
                    if remark { Attribute("remark", .string) }
                    MoultModel.Relationship("pets", toMany: "Pet", inverse: "owner")
                    MoultModel.Relationship("tags", toMany: "Tag", inverse: "owners")
                    MoultModel.Relationship("chapters", toMany: "Chapter", inverse: "owner").ordered()
                    MoultModel.Relationship("badge", to: "Badge", inverse: "holder")
                    MoultModel.Relationship("favorite", to: "Pet")
                    MoultModel.Relationship("notes", toMany: "Note")
                    MoultModel.Relationship("songs", toMany: "Song", inverse: "listeners").ordered()
                }
                Entity("Pet") {
                    Attribute("name", .string)
                    MoultModel.Relationship("owner", to: "Owner", inverse: "pets")
                }
                Entity("Tag") {
                    Attribute("name", .string)
                    MoultModel.Relationship("owners", toMany: "Owner", inverse: "tags")
                }
                Entity("Chapter") {
                    Attribute("title", .string)
                    MoultModel.Relationship("owner", to: "Owner", inverse: "chapters")
                }
                Entity("Badge") {
                    Attribute("title", .string)
                    MoultModel.Relationship("holder", to: "Owner", inverse: "badge")
                }
                Entity("Note") { Attribute("text", .string) }
                Entity("Song") {
                    Attribute("title", .string)
                    MoultModel.Relationship("listeners", toMany: "Owner", inverse: "songs")
                }
            }
        }
        return try VersionedModel(name: "Shelf", versions: [.init(name: "v1", model: entities(remark: false)), .init(name: "v2", model: entities(remark: true))])
    }

    /// Every relationship set from the Owner side only, so that no later mapping sets it again.
    static let mapping = MappingModel(source: .init(name: "v1"), destination: .init(name: "v2")) {
        let lookup = { (mapping: String, key: String) in MoultMapping.Relationship(key, mapping: mapping, sourceKeyPath: key) }
        EntityMapping(name: "OwnerToOwner", type: .custom, source: "Owner", destination: "Owner", policy: "PruningPolicy") {
            PropertyMapping("name", "$source.name")
            PropertyMapping("rank", "$source.rank")
            lookup("PetToPet", "pets")
            lookup("TagToTag", "tags")
            lookup("ChapterToChapter", "chapters")
            lookup("BadgeToBadge", "badge")
            lookup("PetToPet", "favorite")
            lookup("NoteToNote", "notes")
            lookup("SongToSong", "songs")
        }
        EntityMapping(name: "PetToPet", type: .transform, source: "Pet", destination: "Pet") { PropertyMapping("name", "$source.name") }
        EntityMapping(name: "TagToTag", type: .transform, source: "Tag", destination: "Tag") { PropertyMapping("name", "$source.name") }
        EntityMapping(name: "ChapterToChapter", type: .transform, source: "Chapter", destination: "Chapter") { PropertyMapping("title", "$source.title") }
        EntityMapping(name: "BadgeToBadge", type: .transform, source: "Badge", destination: "Badge") { PropertyMapping("title", "$source.title") }
        EntityMapping(name: "NoteToNote", type: .transform, source: "Note", destination: "Note") { PropertyMapping("text", "$source.text") }
        EntityMapping(name: "SongToSong", type: .transform, source: "Song", destination: "Song") { PropertyMapping("title", "$source.title") }
    }

    // MARK: - The data, and what the policy's rules make of it

    static let owners = 0..<8
    static let tagNames = ["red", "blue", "green", "teal", "ochre", "pink"]
    static func petNames(_ owner: Int) -> [String] { (0...(owner % 4)).map { "p\(owner)\($0)" + String(repeating: "x", count: (owner + $0) % 3) } }
    static func tags(_ owner: Int) -> [String] { tagNames.indices.filter { ($0 + owner) % 3 != 0 }.map { tagNames[$0] } }
    static func chapters(_ owner: Int) -> [String] { (0..<5).map { $0 == 2 && owner % 2 == 0 ? "c\(owner)-x\($0)" : "c\(owner)-\($0)" } }
    static func notes(_ owner: Int) -> [String] { (0..<3).map { "n\(owner)\($0)" + String(repeating: "y", count: (owner * $0 + $0) % 2) } }
    static func songs(_ owner: Int) -> [String] { [owner % 5, (owner + 1) % 5, (owner + 2) % 5].map { "S\($0)" } }

    static func fill(_ writer: StoreWriter, _ database: Database) throws {
        let songs = try (0..<5).map { try writer.insert("Song", ["title": .string("S\($0)")]) }
        let tags = try tagNames.map { try writer.insert("Tag", ["name": .string($0)]) }
        for owner in owners {
            let pets = try petNames(owner).map { try writer.insert("Pet", ["name": .string($0)]) }
            let badge = owner == 5 ? nil : try writer.insert("Badge", ["title": .string("b\(owner)")])
            let made = try writer.insert(
                "Owner", ["name": .string("O\(owner)"), "rank": .int(Int64(owner)), "badge": badge.map(Value.object) ?? .null, "favorite": .object(pets[0])])
            if let badge { try database.execute("UPDATE ZBADGE SET ZHOLDER = ? WHERE Z_PK = ?", [.int(made.primaryKey), .int(badge.primaryKey)]) }
            try writer.relate("pets", made, to: pets)
            try writer.relate("tags", made, to: Self.tags(owner).map { tags[tagNames.firstIndex(of: $0)!] })
            try writer.relate("chapters", made, to: try chapters(owner).map { try writer.insert("Chapter", ["title": .string($0)]) })
            try writer.relate("notes", made, to: try notes(owner).map { try writer.insert("Note", ["text": .string($0)]) })
            try writer.relate("songs", made, to: Self.songs(owner).map { songs[Int($0.dropFirst())!] })
        }
    }

    /// Each query's rows as the policy's rules make them (`""` for NULL).
    static func expected() -> [String: [[String]]] {
        var pets: [[String]] = [], tags: [[String]] = [], chapters: [[String]] = [], badges: [[String]] = [], holders: [[String]] = []
        var favorites: [[String]] = [], notes: [[String]] = [], songs: [[String]] = []
        // Every other chapter kept, reversed, less the one titled x; owner 7 takes c3-2 last.
        var lists = owners.map { owner in
            let all = Self.chapters(owner)
            return [all[4], all[2], all[0]].filter { !$0.contains("x") }
        }
        lists[3].removeAll { $0 == "c3-2" }
        lists[7].append("c3-2")
        var listOf: [String: (owner: String, position: Int)] = [:]
        for owner in owners { for (offset, title) in lists[owner].enumerated() { listOf[title] = ("O\(owner)", offset + 1) } }
        // Badges: none for an odd rank, a new one for ranks 2 and 6, b0 taken by owner 4.
        var badgeOf = Dictionary(uniqueKeysWithValues: owners.map { ("O\($0)", $0 % 2 == 1 ? "" : $0 % 4 == 2 ? "new-b\($0)" : "b\($0)") })
        badgeOf["O0"] = ""
        badgeOf["O4"] = "b0"
        let holderOf = Dictionary(uniqueKeysWithValues: badgeOf.filter { !$0.value.isEmpty }.map { ($0.value, $0.key) })
        for owner in owners {
            let name = "O\(owner)"
            pets += petNames(owner).map { [$0, $0.count % 2 == 0 ? name : ""] }
            tags += Self.tags(owner).filter { $0.count % 2 == 0 }.map { [name, $0] }
            chapters += Self.chapters(owner).map { title in listOf[title].map { [title, $0.owner, "\($0.position)"] } ?? [title, "", ""] }
            badges.append([name, badgeOf[name]!])
            for title in (owner == 5 ? [] : ["b\(owner)"]) + (owner % 4 == 2 ? ["new-b\(owner)"] : []) { holders.append([title, holderOf[title] ?? ""]) }
            favorites.append([name, owner % 3 == 0 ? "" : petNames(owner)[0]])
            notes += Self.notes(owner).map { [$0, $0.count % 2 == 0 ? name : ""] }
            let listened = Self.songs(owner)
            songs += [[name, listened[2], "1"], [name, listened[1], "2"]]
        }
        let sorted = { (rows: [[String]]) in rows.sorted { $0.lexicographicallyPrecedes($1) } }
        return [
            "pets": sorted(pets), "tags": sorted(tags), "chapters": sorted(chapters), "badges": sorted(badges), "holders": sorted(holders),
            "favorites": sorted(favorites), "notes": sorted(notes), "songs": sorted(songs),
        ]
    }

    /// The same relationships read from a store with SQL (the layout's names: Owner is Z_ENT 4, Song 6, Tag 7).
    static func found(_ store: URL) throws -> [String: [[String]]] {
        let queries = [
            "pets": "SELECT p.ZNAME, IFNULL(o.ZNAME, '') FROM ZPET p LEFT JOIN ZOWNER o ON o.Z_PK = p.ZOWNER",
            "tags": "SELECT o.ZNAME, t.ZNAME FROM Z_4TAGS j JOIN ZOWNER o ON o.Z_PK = j.Z_4OWNERS JOIN ZTAG t ON t.Z_PK = j.Z_7TAGS",
            "chapters": "SELECT c.ZTITLE, IFNULL(o.ZNAME, ''), IFNULL(c.Z_FOK_OWNER, '') FROM ZCHAPTER c LEFT JOIN ZOWNER o ON o.Z_PK = c.ZOWNER",
            "badges": "SELECT o.ZNAME, IFNULL(b.ZTITLE, '') FROM ZOWNER o LEFT JOIN ZBADGE b ON b.Z_PK = o.ZBADGE",
            "holders": "SELECT b.ZTITLE, IFNULL(o.ZNAME, '') FROM ZBADGE b LEFT JOIN ZOWNER o ON o.Z_PK = b.ZHOLDER",
            "favorites": "SELECT o.ZNAME, IFNULL(p.ZNAME, '') FROM ZOWNER o LEFT JOIN ZPET p ON p.Z_PK = o.ZFAVORITE",
            "notes": "SELECT n.ZTEXT, IFNULL(o.ZNAME, '') FROM ZNOTE n LEFT JOIN ZOWNER o ON o.Z_PK = n.Z4NOTES",
            "songs": "SELECT o.ZNAME, s.ZTITLE, j.Z_FOK_6SONGS FROM Z_4SONGS j JOIN ZOWNER o ON o.Z_PK = j.Z_4LISTENERS JOIN ZSONG s ON s.Z_PK = j.Z_6SONGS",
        ]
        return try queries.mapValues { try StoreRows.query(store, $0).sorted { $0.lexicographicallyPrecedes($1) } }
    }

    static func migrate(_ source: URL, chunkSize: Int, output: URL) throws {
        var policies = PolicyRegistry()
        policies.register(PruningPolicy.self, module: nil)
        try ProgressiveMigration(
            store: source, model: try models(), to: "v2", mappings: [mapping], policies: policies, options: MigrationOptions(chunkSize: chunkSize)
        ).run(output: output)
    }

    @Test func objectsTakenOutOfRelationshipsLeaveEverySideInStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("v1.sqlite")
        let store = try SQLiteStore.create(at: source, model: try #require(try Self.models().version(named: "v1")?.model))
        let writer = try store.makeWriter()
        try writer.write { try Self.fill(writer, store.database) }
        store.database.close()
        // The data as written: every relationship full, so that what the policy takes out was there.
        let before = try Self.found(source)
        #expect(before["tags"]?.count == 32 && before["songs"]?.count == 24 && before["holders"]?.allSatisfy { !$0[1].isEmpty } == true)

        let expected = Self.expected()
        var dumps: [Int: [String]] = [:]
        for chunkSize in [1, 3, 10_000] {
            let output = directory.appending("v2-\(chunkSize).sqlite")
            try Self.migrate(source, chunkSize: chunkSize, output: output)
            let found = try Self.found(output)
            for (name, rows) in expected.sorted(by: { $0.key < $1.key }) {
                #expect(found[name] == rows, "chunk size \(chunkSize): \(name)")
            }
            dumps[chunkSize] = try StoreRows.dump(output)
        }
        #expect(dumps[1] == dumps[10_000] && dumps[3] == dumps[10_000], "chunks of 1, 3 and one chunk give the same store")
    }
}
