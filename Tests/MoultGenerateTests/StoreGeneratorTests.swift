import Foundation
import MoultGenerate
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

@Suite struct StoreGeneratorTests {
    static let model = Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld")

    static func version(_ name: String) throws -> ObjectModel {
        try #require(try VersionedModel(contentsOf: model).version(named: name)).model
    }

    @Test func sameSeedGivesTheSameStoreByteForByte() throws {
        let folder = try TemporaryDirectory("generator")
        defer { folder.remove() }
        let model = try Self.version("v1")
        let first = folder.appending("a.sqlite"), second = folder.appending("b.sqlite"), other = folder.appending("c.sqlite")
        try StoreGenerator(model: model, objects: 300, seed: 9).generate(at: first)
        var batched = StoreGenerator(model: model, objects: 300, seed: 9)
        batched.batchSize = 7
        try batched.generate(at: second)
        try StoreGenerator(model: model, objects: 300, seed: 10).generate(at: other)
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
        #expect(try Data(contentsOf: first) != Data(contentsOf: other))
    }

    @Test func fillsEveryEntityKindAndRelationship() throws {
        let folder = try TemporaryDirectory("generator")
        defer { folder.remove() }
        let url = folder.appending("s.sqlite")
        let summary = try StoreGenerator(model: try Self.version("v1"), objects: 700, seed: 3).generate(at: url)
        #expect(summary.objects == 700)
        #expect(Set(summary.objectsByEntity.keys) == ["Book", "Magazine", "Chapter", "Author", "Profile", "Tag"])
        #expect(summary.externalFiles > 0)
        let store = try SQLiteStore(url: url, model: try Self.version("v1"))
        defer { store.database.close() }
        // Sub-entities of the abstract Thing, read through it.
        #expect(try store.count(of: "Thing") == summary.objectsByEntity["Book"]! + summary.objectsByEntity["Magazine"]!)
        func scalar(_ sql: String) throws -> Int64 {
            guard case .int(let value) = try store.database.scalar(sql) else { return -1 }
            return value
        }
        // Ordered one-to-many through the inverse column, with its order; empty and full sides.
        #expect(try scalar("SELECT COUNT(*) FROM ZCHAPTER WHERE ZBOOK IS NOT NULL") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZCHAPTER WHERE ZBOOK IS NULL") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZCHAPTER WHERE ZBOOK IS NOT NULL AND Z_FOK_BOOK IS NULL") == 0)
        // The derived count equals the chapters each book has (computed by the store's triggers).
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING b WHERE b.Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book') AND IFNULL(b.ZCHAPTERCOUNT, 0) != (SELECT COUNT(*) FROM ZCHAPTER c WHERE c.ZBOOK = b.Z_PK)") == 0)
        // One-to-one both ways, and its own inverse: every spouse points back.
        #expect(try scalar("SELECT COUNT(*) FROM ZAUTHOR a JOIN ZPROFILE p ON a.ZPROFILE = p.Z_PK WHERE p.ZAUTHOR != a.Z_PK") == 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZAUTHOR a WHERE a.ZPROFILE IS NOT NULL") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZAUTHOR a JOIN ZAUTHOR b ON a.ZSPOUSE = b.Z_PK WHERE b.ZSPOUSE != a.Z_PK OR a.Z_PK = b.Z_PK") == 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZAUTHOR WHERE ZSPOUSE IS NOT NULL") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZAUTHOR WHERE ZMENTOR IS NOT NULL") > 0)
        // Unique names; a required, bounded integer inside its bounds.
        #expect(try scalar("SELECT COUNT(*) - COUNT(DISTINCT ZNAME) FROM ZAUTHOR") == 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book') AND (ZPAGES IS NULL OR ZPAGES < 1 OR ZPAGES > 5000)") == 0)
        // Edges: a NUL inside text, unicode, NaN, a date before 2001, external and inline blobs.
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE ZRATING IS NULL AND Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book')") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE ZPUBLISHED < 0") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE substr(ZCOVER, 1, 1) = x'02'") == Int64(summary.externalFiles))
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE substr(ZCOVER, 1, 1) = x'01'") > 0)
        #expect(try scalar("SELECT COUNT(*) FROM ZTHING WHERE ZBIG = 9223372036854775807 OR ZBIG = -9223372036854775808") > 0)
        let files = try FileManager.default.contentsOfDirectory(at: ExternalDataReference.folder(besideStore: url), includingPropertiesForKeys: nil)
        #expect(files.count == summary.externalFiles)
        // Many-to-many (join rows) and a to-many without inverse.
        #expect(summary.links > 0)
        for join in store.layout.joinTables { #expect(try scalar("SELECT COUNT(*) FROM \(join.name)") > 0) }
    }

    @Test func everyValueMatchesThePatternAndLengths() throws {
        let folder = try TemporaryDirectory("generator")
        defer { folder.remove() }
        let url = folder.appending("s.sqlite")
        try StoreGenerator(model: try Self.version("v1"), objects: 400, seed: 5).generate(at: url)
        let store = try SQLiteStore(url: url, model: try Self.version("v1"))
        defer { store.database.close() }
        let pattern = try NSRegularExpression(pattern: "^[A-Z][a-z]+$")
        let cursor = try store.objects(of: "Book")
        var checked = 0
        while let row = try cursor.next() {
            if case .string(let code) = row["code"] ?? .null {
                #expect(pattern.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil, "\(code)")
                checked += 1
            }
            if case .string(let title) = row["title"] ?? .null { #expect(title.count <= 40) }
        }
        #expect(checked > 0)
    }

    @Test func breaksExactlyTheRuleAsked() throws {
        let folder = try TemporaryDirectory("generator")
        defer { folder.remove() }
        let model = try Self.version("v1")
        var generator = StoreGenerator(model: model, objects: 100, seed: 1)
        let rule = try #require(generator.rules().first { $0.entity == "Book" && $0.attribute == "pages" && $0.kind == .maximum })
        generator.brokenRule = rule
        let url = folder.appending("s.sqlite")
        try generator.generate(at: url)
        let store = try SQLiteStore(url: url, model: model)
        defer { store.database.close() }
        #expect(try store.database.scalar("SELECT COUNT(*) FROM ZTHING WHERE ZPAGES > 5000") == .int(1))
        generator.brokenRule = StoreGenerator.Rule(entity: "Book", attribute: "nothing", kind: .required)
        #expect(throws: GeneratorError.self) { try generator.generate(at: folder.appending("t.sqlite")) }
    }
}
