import MoultModel
import Testing

@testable import MoultStore

/// What a store's `CREATE TABLE` declares beyond its columns (issue 40, item 1).
@Suite struct TableDeclarationTests {
    @Test(arguments: [
        // Framework 637 (iOS 10): a uniqueness constraint as a table constraint.
        (
            "CREATE TABLE ZCONTINENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE INTEGER, ZDUMMY INTEGER, ZNAME VARCHAR, CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY))",
            ["CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY)"]
        ),
        // Core Data's layout today, and Moult's in-place rebuild (every name quoted): nothing beyond it.
        ("CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZMAKER VARCHAR, ZPRICE DECIMAL )", []),
        ("CREATE TABLE \"ZCAR\" ( \"Z_PK\" INTEGER PRIMARY KEY, \"Z_ENT\" INTEGER, \"ZNAME, A\" VARCHAR(255) )", []),
        // Column constraints, a quoted name holding a parenthesis and a comma, and a CHECK.
        (
            "CREATE TABLE ZA ( Z_PK INTEGER PRIMARY KEY, \"Z(X, Y\" INTEGER UNIQUE, ZB VARCHAR NOT NULL DEFAULT 'a,b', CHECK (ZB <> ''), UNIQUE (ZB) )",
            ["Z(X, Y: UNIQUE", "ZB: NOT NULL DEFAULT 'a,b'", "CHECK (ZB <> '')", "UNIQUE (ZB)"]
        ),
        ("CREATE TABLE ZA AS SELECT 1", []),
    ])
    func constraints(sql: String, expected: [String]) {
        #expect(TableDeclaration(sql: sql).constraints == expected)
    }

    /// A table declared otherwise is rebuilt by a step that changes it, and kept where it stands (with
    /// its declaration) by one that does not.
    @Test func rebuiltOnlyWhenChanged() throws {
        let v1 = try ObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "code", type: .integer64), AttributeDescription(name: "x", type: .integer64)]),
            EntityDescription(name: "B", attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)]),
        ])
        let v2 = try ObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "code", type: .integer64)]),
            EntityDescription(name: "B", attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)]),
        ])
        let (old, new) = (try StoreLayout(model: v1), try StoreLayout(model: v2))
        let correspondence = LayoutCorrespondence(
            entities: ["A": "A", "B": "B"], properties: ["A": ["code": "code"], "B": ["name": "name"]])
        guard case .script(let plain) = old.inPlaceChanges(to: new, correspondence: correspondence),
            case .script(let rebuilt) = old.inPlaceChanges(to: new, correspondence: correspondence, rebuilding: ["ZA", "ZB"])
        else {
            Issue.record("no script")
            return
        }
        #expect(plain.changes.contains { $0.kind == .dropColumn } && plain.rebuiltTables.isEmpty)
        #expect(!rebuilt.changes.contains { $0.kind == .dropColumn })
        #expect(rebuilt.changes.contains { $0.kind == .rebuildTable && $0.summary == "ZA from ZA" })
        #expect(rebuilt.rebuiltTables == ["ZA"])
    }
}
