import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 4: the chain follows the order of versions the mapping models give, not the names'
/// (`CyfaceModel`, `2`, `3` sort with the first version last), and `--order` overrides it.
@Suite struct VersionOrderCommandTests {
    static let folder = Fixtures.packageRoot.appending(path: "Tests/ChainModels")
    static var model: String { folder.appending(path: "Cyface.xcdatamodeld").path }
    static var mapping: String { folder.appending(path: "Cyface-CyfaceModel-to-2.json").path }

    /// A store at CyfaceModel, one track.
    static func store(in directory: TemporaryDirectory) throws -> URL {
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model + "/CyfaceModel.xcdatamodel"])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.executeScript(
            "INSERT INTO ZTRACK VALUES (1, 1, 1, 'a', 'x'); UPDATE Z_PRIMARYKEY SET Z_MAX = 1; PRAGMA wal_checkpoint(TRUNCATE)")
        return store
    }

    @Test func theMappingsOrderTheVersions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--mapping", Self.mapping])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("versions in the order the chain follows (from the mapping models): CyfaceModel, 2, 3"))
        #expect(plan.standardOutput.contains("step 1: CyfaceModel -> 2 (\(Self.mapping))"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("step 2: 2 -> 3 (inferred mapping)"), "\(plan.standardOutput)")

        let output = directory.appending("o.sqlite")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--mapping", Self.mapping, "--output", output.path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let inspected = try MoultProcess.run(["inspect", output.path, "--model", Self.model])
        #expect(inspected.standardOutput.contains("matching version: 3"), "\(inspected.standardOutput)")
    }

    /// `--order` gives the order by hand; without the mapping, the step that cannot be inferred is named.
    @Test func orderByHandAndTheMissingEdge() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let ordered = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--mapping", Self.mapping, "--order", "CyfaceModel,2,3"])
        #expect(ordered.exitCode == 0, "\(ordered.standardError)")
        #expect(ordered.standardOutput.contains("versions in the order the chain follows (--order): CyfaceModel, 2, 3"))
        let missing = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--order", "CyfaceModel,2,3"])
        #expect(missing.exitCode == 66)
        #expect(missing.standardError.contains("stuck at CyfaceModel → 2"), "\(missing.standardError)")
        let unknown = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--order", "CyfaceModel,7"])
        #expect(unknown.exitCode == 64)
        #expect(unknown.standardError.contains("--order: the model has no version '7'"), "\(unknown.standardError)")
    }
}
