import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult inspect` shows the model a store carries (Z_MODELCACHE), in text and as
/// `"storeModel": {"entities": {name: hex}, …}`.
@Suite struct StoreModelCommandTests {
    static let store = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"

    @Test func inspectShowsTheStoresModel() throws {
        let path = Fixtures.url(Self.store).path
        let result = try MoultProcess.run(["inspect", path, "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let storeModel = try #require(root["storeModel"] as? [String: Any])
        let entities = try #require(storeModel["entities"] as? [String: String])
        #expect(entities == (root["versionHashes"] as? [String: String]))
        #expect(entities["Book"] == "33ac3733a780db28955479ba9f9989cd9acd0ee1dade9b545e4b746751730100")
        #expect(storeModel["matchesMetadata"] as? Bool == true)
        let text = try MoultProcess.run(["inspect", path])
        #expect(text.standardOutput.contains("store model (Z_MODELCACHE): 6 entities, its hashes are the metadata's"))
        #expect(text.standardOutput.contains("  GraphicNovel  7073b5a03ae1be6509a5e88664a1a68805503b112176c4cceee9f30fdcdb72cc\n"))
    }

    /// `--source-model store`: a store whose model version is not in --model migrates from the model
    /// it carries; without the option the store matches no version (66).
    @Test func migrateFromTheStoresOwnModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let base = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"
        let source = Fixtures.url("\(base)/CoreDataMigrationTests/Example_v1.0.0.sqlite").path
        let target = Fixtures.url("\(base)/CoreDataMigration/Model.xcdatamodeld/v1.1.0.xcdatamodel").path
        let output = directory.appending("out.sqlite").path
        let refused = try MoultProcess.run(["migrate", source, "--model", target, "--output", output])
        #expect(refused.exitCode == 66)
        let plan = try MoultProcess.run(["plan", source, "--model", target, "--source-model", "store", "--json"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("(store model)"))
        let migrated = try MoultProcess.run(["migrate", source, "--model", target, "--output", output, "--source-model", "store", "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let inspect = try MoultProcess.run(["inspect", output, "--model", target])
        #expect(inspect.exitCode == 0, "\(inspect.standardError)")
        #expect(inspect.standardOutput.contains("matching version: v1.1.0"))
        let bad = try MoultProcess.run(["migrate", source, "--model", target, "--output", output + "2", "--source-model", "cache"])
        #expect(bad.exitCode == 64)
    }
}

/// A migration into a model with a derived attribute: the destination has Core Data's triggers and
/// the derived values, computed while it is filled (from the model SampleModel2_V2.sqlite carries, to
/// that model plus one attribute).
@Suite struct DerivedMigrationCommandTests {
    @Test func derivedCountsAreComputedOnMigrate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Fixtures.url(StoreModelCommandTests.store).path
        let rebuilt = Fixtures.packageRoot.appending(path: "Tests/RebuiltModels/SampleModel2_V2.xcdatamodel/contents")
        var contents = try String(contentsOf: rebuilt, encoding: .utf8)
        contents = contents.replacingOccurrences(
            of: "<attribute name=\"rating\" attributeType=\"Double\"/>",
            with: "<attribute name=\"rating\" attributeType=\"Double\"/>\n    <attribute name=\"note\" optional=\"YES\" attributeType=\"String\"/>")
        let target = directory.appending("V3.xcdatamodel")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try contents.write(to: target.appending(path: "contents"), atomically: true, encoding: .utf8)
        let output = directory.appending("out.sqlite").path
        let result = try MoultProcess.run(["migrate", source, "--model", target.path, "--source-model", "store", "--output", output, "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        func counts(_ path: String) throws -> [String] {
            let database = try Database(url: URL(filePath: path), mode: .readOnly)
            defer { database.close() }
            return try database.query("SELECT Z_PK, Z_ENT, ZPAGESCOUNT FROM ZBOOK ORDER BY Z_PK") {
                "\($0.int64(at: 0)) \($0.int64(at: 1)) \($0.int64(at: 2))"
            }
        }
        let before = try counts(source)
        #expect(before.count == 3)
        #expect(try counts(output) == before)
        let database = try Database(url: URL(filePath: output), mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'Z\\_DA\\_%' ESCAPE '\\'") == .int(5))
    }
}

/// A target model whose store cannot be written as Core Data would is refused (65) before anything is
/// written, by create, plan and migrate, naming the attribute: never "nothing to migrate".
@Suite struct UnwritableTargetCommandTests {
    @Test func unconfirmedDerivationIsRefusedEverywhere() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let base = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"
        let source = Fixtures.url("\(base)/CoreDataMigrationTests/Example_v1.0.0.sqlite").path
        let original = try String(
            contentsOf: Fixtures.url("\(base)/CoreDataMigration/Model.xcdatamodeld/v1.1.0.xcdatamodel/contents"), encoding: .utf8)
        let contents = original.replacingOccurrences(
            of: "elementID=\"v1_0_0_name\"/>",
            with: "elementID=\"v1_0_0_name\"/><attribute name=\"stamp\" optional=\"YES\" attributeType=\"Date\" derived=\"YES\" derivationExpression=\"random()\"/>")
        #expect(contents != original)
        let target = directory.appending("T.xcdatamodel")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try contents.write(to: target.appending(path: "contents"), atomically: true, encoding: .utf8)
        let output = directory.appending("out.sqlite").path
        for arguments in [
            ["create", output, "--model", target.path],
            ["plan", source, "--model", target.path, "--source-model", "store"],
            ["migrate", source, "--model", target.path, "--source-model", "store", "--output", output],
            ["migrate", source, "--model", target.path, "--output", output],
        ] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 65, "\(arguments): \(result.standardOutput) \(result.standardError)")
            #expect(result.standardError.contains("'BasicEntity.stamp' ('random()')"), "\(result.standardError)")
            #expect(result.standardError.contains("T.xcdatamodel"), "\(result.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["T.xcdatamodel"])
    }
}
