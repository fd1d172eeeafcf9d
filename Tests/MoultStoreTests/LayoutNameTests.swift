import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// SQL names: every identifier is quoted when it is not plain, indexes get one name each, an inherited
/// relationship listed again on a sub-entity is stored once, and SQLite's limits are checked first.
@Suite struct LayoutNameTests {
    @Test(arguments: [
        ("ZPERSON", "ZPERSON"), ("Z_1TAGS", "Z_1TAGS"), ("Z_A_1.5", "\"Z_A_1.5\""), ("ORDER", "\"ORDER\""), ("order", "\"order\""),
        ("1A", "\"1A\""), ("a\"b", "\"a\"\"b\""), ("", "\"\""), ("Z\u{C9}", "\"Z\u{C9}\""), ("a b", "\"a b\""),
        // A quote carrying a combining mark is still a quote byte to SQLite: doubled, so the name cannot end early.
        ("a\"\u{301}b", "\"a\"\"\u{301}b\""),
    ])
    func quotedOnlyWhenNotPlain(_ name: String, _ sql: String) {
        #expect(SQLName.quoted(name) == sql)
    }

    @Test func oddIndexNamesAreQuotedAndStoreIsCreated() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "A", attributes: [AttributeDescription(name: "x", type: .string), AttributeDescription(name: "y", type: .string)],
                uniquenessConstraints: [["x"], ["x"], ["x", "y"]],
                fetchIndexes: [
                    FetchIndexDescription(name: "by \"x\"; DROP TABLE ZA", elements: [.init(property: "x")]),
                    FetchIndexDescription(name: "select", elements: [.init(property: "y", ascending: false)]),
                ])
        ])
        let layout = try StoreLayout(model: model)
        let indexes = try #require(layout.table(named: "ZA")?.indexes)
        #expect(indexes.map(\.name) == ["Z_A_UNIQUE_x", "Z_A_UNIQUE_x_y", "Z_A_by \"x\"; DROP TABLE ZA", "Z_A_select"])
        #expect(indexes[2].createSQL == "CREATE INDEX \"Z_A_by \"\"x\"\"; DROP TABLE ZA\" ON ZA (ZX COLLATE BINARY ASC)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let names = try store.database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") {
            $0.string(at: 0) ?? ""
        }
        #expect(names == ["Z_A_UNIQUE_x", "Z_A_UNIQUE_x_y", "Z_A_by \"x\"; DROP TABLE ZA", "Z_A_select"])
        #expect(try store.database.tableExists("ZA"))
    }

    @Test func indexNamesThatCollideGetASuffix() throws {
        // Two fetch indexes with one name, different columns: both are kept, the second renamed.
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "A", attributes: [AttributeDescription(name: "x", type: .string), AttributeDescription(name: "y", type: .string)],
                fetchIndexes: [
                    FetchIndexDescription(name: "i", elements: [.init(property: "x")]),
                    FetchIndexDescription(name: "i", elements: [.init(property: "y")]),
                ])
        ])
        let layout = try StoreLayout(model: model)
        #expect(layout.table(named: "ZA")?.indexes.map(\.name) == ["Z_A_i", "Z_A_i_2"])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model).database.close()
    }

    @Test func aFetchIndexWithNoElementIsRefusedNamed() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .string)], fetchIndexes: [FetchIndexDescription(name: "empty", elements: [])])
        ])
        #expect {
            _ = try StoreLayout(model: model)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.category == .badInput && error.entity == "A" && error.message.contains("fetch index 'empty'")
        }
    }

    @Test func aUniquenessConstraintWithNoPropertyIsRefused() throws {
        // Found by CreateFuzzTests: `<uniquenessConstraint></uniquenessConstraint>` made `CREATE UNIQUE INDEX … ()`.
        let model = try ObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .string)], uniquenessConstraints: [[]])
        ])
        #expect {
            _ = try StoreLayout(model: model)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.category == .badInput && error.entity == "A" && error.message.contains("uniqueness constraint with no property")
        }
    }

    @Test func sqlitesColumnLimitIsCheckedBeforeCreating() throws {
        let limit = SQLite.limits.columns
        #expect(limit >= 100)
        // Z_PK, Z_ENT, Z_OPT and the attributes, spread over a root and a sub-entity (one table).
        func model(attributes: Int) throws -> ObjectModel {
            let half = attributes / 2
            return try ObjectModel(entities: [
                EntityDescription(name: "Root", attributes: (0..<half).map { AttributeDescription(name: "r\($0)", type: .integer64) }),
                EntityDescription(name: "Leaf", parent: "Root", attributes: (half..<attributes).map { AttributeDescription(name: "l\($0)", type: .string) }),
            ])
        }
        #expect(try StoreLayout(model: model(attributes: limit - 3)).table(named: "ZROOT")?.columns.count == limit)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try SQLiteStore.create(at: directory.appending("full.sqlite"), model: model(attributes: limit - 3)).database.close()
        #expect {
            _ = try SQLiteStore.create(at: directory.appending("over.sqlite"), model: model(attributes: limit - 2))
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.category == .badInput && error.entity == "Root" && error.message.contains("\(limit + 1) columns in table ZROOT")
                && error.message.contains("column limit")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("over.sqlite").path))
    }

    // MARK: - Inherited relationships listed again

    /// Base ↔ Tag many-to-many; Sub (a Base) lists `tags` again, as models rebuilt from a model cache do.
    static func redeclaringModel() throws -> ObjectModel {
        let tags = RelationshipDescription(name: "tags", destination: "Tag", inverse: "owners", isToMany: true)
        let title = AttributeDescription(name: "title", type: .string)
        return try ObjectModel(entities: [
            EntityDescription(name: "Base", attributes: [title], relationships: [tags]),
            EntityDescription(name: "Sub", parent: "Base", attributes: [title], relationships: [tags]),
            EntityDescription(name: "Tag", relationships: [RelationshipDescription(name: "owners", destination: "Base", inverse: "tags", isToMany: true)]),
        ])
    }

    @Test func anInheritedManyToManyListedAgainHasOneJoinTable() throws {
        let model = try Self.redeclaringModel()
        let layout = try StoreLayout(model: model)
        #expect(layout.joinTables.count == 1)
        let base = try #require(layout.entity(named: "Base"))
        let sub = try #require(layout.entity(named: "Sub"))
        #expect(sub.toManyRelationships == base.toManyRelationships && sub.toManyRelationships.count == 1)
        #expect(sub.attributes == base.attributes && sub.attributes.map(\.column) == ["ZTITLE"])
        #expect(layout.table(named: "ZBASE")?.columns.map(\.name) == ["Z_PK", "Z_ENT", "Z_OPT", "ZTITLE"])
        // The store is created, and a Sub relates to a Tag through the one join table.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            let item = try writer.insert("Sub", ["title": .string("a")])
            let tag = try writer.insert("Tag", [:])
            try writer.relate("tags", item, to: [tag])
        }
        let table = try #require(layout.joinTables.first?.name)
        #expect(try store.database.scalar("SELECT COUNT(*) FROM \(table)") == .int(1))
    }
}
