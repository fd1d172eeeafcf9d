import Foundation
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
