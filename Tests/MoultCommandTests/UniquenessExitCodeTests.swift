import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 39, item 5: a uniqueness constraint the data breaks is a validation failure (67) on every
/// path, naming the entity, the attribute and the object, never SQLite's text about a work file (65).
@Suite struct UniquenessExitCodeTests {
    /// Places p1 → p2 narrows Continent's constraint from (code, dummy) to code: two continents with
    /// code 150 (dummy 0 and 1) are valid at p1 and break p2.
    static func store(in folder: TemporaryDirectory) throws -> (store: URL, model: String) {
        let model = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/fidelity/inplace-inline-unique-constraint-637/Places.xcdatamodeld")
        let p1 = try #require(try VersionedModel(contentsOf: model).version(named: "p1")).model
        let url = folder.appending("s.sqlite")
        let store = try SQLiteStore.create(at: url, model: p1)
        let entity = try #require(store.layout.entity(named: "Continent"))
        for (key, dummy, name) in [(1, 0, "Europe"), (2, 1, "Africa"), (3, 1, "Asia")] {
            try store.database.execute(
                "INSERT INTO ZCONTINENT (Z_PK, Z_ENT, Z_OPT, ZCODE, ZDUMMY, ZNAME) VALUES (?, ?, 1, ?, ?, ?)",
                [.int(Int64(key)), .int(Int64(entity.number)), .int(name == "Asia" ? 7 : 150), .int(Int64(dummy)), .string(name)])
        }
        try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Continent'")
        store.database.close()
        return (url, model.path)
    }

    @Test(arguments: ["output", "output without bulk SQL", "in place"])
    func aBrokenUniquenessConstraintIsAValidationFailure(path: String) throws {
        let folder = try TemporaryDirectory("uniqueness")
        defer { folder.remove() }
        let (store, model) = try Self.store(in: folder)
        var arguments = ["migrate", store.path, "--model", model, "--quiet"]
        if path.hasPrefix("output") { arguments += ["--output", folder.appending("out.sqlite").path] }
        if path == "output without bulk SQL" { arguments.append("--no-bulk-sql") }
        let result = try MoultProcess.run(arguments)
        #expect(result.exitCode == 67, "\(result.standardError)")
        #expect(result.standardError.contains("UNIQUE constraint failed: ZCONTINENT.ZCODE"), "\(result.standardError)")
        #expect(result.standardError.contains("Continent: the uniqueness constraint on code is broken"), "\(result.standardError)")
        if path.hasPrefix("output") {
            #expect(result.standardError.contains("code = 150"), "\(result.standardError)")
        } else {
            #expect(result.standardError.contains("objects share a value, (150): Z_PK 1, 2"), "\(result.standardError)")
        }
    }
}
