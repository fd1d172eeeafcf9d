import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 39, item 5: a uniqueness constraint the data breaks is a validation failure (67) on every
/// path, naming the entity, the attribute and the object, never SQLite's text about a work file (65).
@Suite struct UniquenessExitCodeTests {
    /// Places p1 → p2 narrows Continent's constraint from (code, dummy) to code: two continents with
    /// code 150 (dummy 0 and 1) are valid at p1 and break p2; two without a code break nothing (a NULL
    /// never breaks a unique index).
    static func store(in folder: TemporaryDirectory) throws -> (store: URL, model: String) {
        let model = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/fidelity/inplace-inline-unique-constraint-637/Places.xcdatamodeld")
        let p1 = try #require(try VersionedModel(contentsOf: model).version(named: "p1")).model
        let url = folder.appending("s.sqlite")
        let store = try SQLiteStore.create(at: url, model: p1)
        let entity = try #require(store.layout.entity(named: "Continent"))
        let codes: [String: Value] = ["Asia": .int(7), "Oceania": .null, "Antarctica": .null]
        for (key, dummy, name) in [(1, 0, "Europe"), (2, 1, "Africa"), (3, 1, "Asia"), (4, 0, "Oceania"), (5, 0, "Antarctica")] {
            try store.database.execute(
                "INSERT INTO ZCONTINENT (Z_PK, Z_ENT, Z_OPT, ZCODE, ZDUMMY, ZNAME) VALUES (?, ?, 1, ?, ?, ?)",
                [.int(Int64(key)), .int(Int64(entity.number)), codes[name] ?? .int(150), .int(Int64(dummy)), .string(name)])
        }
        try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 5 WHERE Z_NAME = 'Continent'")
        store.database.close()
        return (url, model.path)
    }

    @Test(arguments: ["output", "output without bulk SQL", "in place", "in place, streamed"])
    func aBrokenUniquenessConstraintIsAValidationFailure(path: String) throws {
        let folder = try TemporaryDirectory("uniqueness")
        defer { folder.remove() }
        let (store, model) = try Self.store(in: folder)
        var arguments = ["migrate", store.path, "--model", model, "--quiet"]
        if path.hasPrefix("output") { arguments += ["--output", folder.appending("out.sqlite").path] }
        if path == "output without bulk SQL" { arguments.append("--no-bulk-sql") }
        if path == "in place, streamed" {
            // An expression for code: the step streams into a new store, then swaps it in.
            let mapping = try TestCommandTrustTests.inferredMapping(model, from: "p1", to: "p2", in: folder, named: "mapping.json") { continent in
                var attributes = continent["attributes"] as? [[String: Any]] ?? []
                for slot in attributes.indices where attributes[slot]["name"] as? String == "code" { attributes[slot]["value"] = "$source.code + 0" }
                continent["attributes"] = attributes
                continent["type"] = "transform"
            }
            let plan = try MoultProcess.run(["plan", store.path, "--model", model, "--mapping", mapping])
            #expect(plan.standardOutput.contains("in place: streamed"), "\(plan.standardOutput)")
            arguments += ["--mapping", mapping]
        }
        let result = try MoultProcess.run(arguments)
        #expect(result.exitCode == 67, "\(result.standardError)")
        #expect(result.standardError.contains("UNIQUE constraint failed: ZCONTINENT.ZCODE"), "\(result.standardError)")
        #expect(result.standardError.contains("Continent: the uniqueness constraint on code is broken"), "\(result.standardError)")
        if path != "in place" {
            // Both objects, by the keys the user knows: the source's.
            #expect(result.standardError.contains("code = 150 is held by more than one Continent (the objects made from source Z_PK 2, source Z_PK 1)"), "\(result.standardError)")
        } else {
            #expect(result.standardError.contains("objects share a value, (150): Z_PK 1, 2 ("), "\(result.standardError)")
            #expect(!result.standardError.contains("(nil)"), "\(result.standardError)")
        }
    }

    /// `moult test` says the same on every path: a model whose v2 makes Room.label unique, and a v1
    /// store the generator fills with labels that repeat (the empty string, one of its edges).
    @Test func moultTestReportsTheViolationOnEveryPath() throws {
        let folder = try TemporaryDirectory("uniqueness")
        defer { folder.remove() }
        let model = folder.appending("R.xcdatamodeld")
        for (version, constraint) in [("v1", ""), ("v2", #"<uniquenessConstraints><uniquenessConstraint><constraint value="label"/></uniquenessConstraint></uniquenessConstraints>"#)] {
            let contents = model.appending(path: "\(version).xcdatamodel/contents")
            try FileManager.default.createDirectory(at: contents.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                    <entity name="Room" syncable="YES">
                        <attribute name="label" optional="YES" attributeType="String"/>
                        <attribute name="dues" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                        \(constraint)
                    </entity>
                </model>
                """.utf8
            ).write(to: contents)
        }
        let result = try MoultProcess.run(["test", model.path, "--to", "v2", "--objects", "30", "--seed", "1"])
        #expect(result.exitCode == 67, "\(result.standardError)")
        for path in ["output", "in place", "resumed"] {
            let line = result.standardOutput.split(separator: "\n").first { $0.hasPrefix("  \(path): ") } ?? ""
            #expect(line.contains("FAILED: moult migrate") && line.contains("exited 67"), "\(path): \(result.standardOutput)")
        }
        #expect(result.standardOutput.components(separatedBy: "Room: the uniqueness constraint on label is broken").count >= 4, "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("exited 65"), "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("(nil)"), "\(result.standardOutput)")
    }
}
