import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult model extract STORE --output X.xcdatamodel[d]`, end to end: the model a store carries, written
/// as an Xcode model that `moult hash`, `create` and `migrate` take as the store's own.
@Suite struct ModelExtractCommandTests {
    static let sampleModel2 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"
    static let jeffreybergier = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"

    /// Tables with their columns, and indexes, by name (persistent history aside).
    static func schema(_ path: String) throws -> [String: String] {
        let database = try Database(url: URL(filePath: path), mode: .readOnly)
        defer { database.close() }
        let rows = try database.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'index')") {
            ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "", $0.string(at: 2) ?? "", $0.string(at: 3) ?? "")
        }
        var schema: [String: String] = [:]
        for (type, name, table, sql) in rows where !["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"].contains(table) {
            if type == "table" {
                let columns = try database.query("SELECT name, type FROM pragma_table_info(?)", [.string(name)]) { "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")" }
                schema[name] = columns.sorted().joined(separator: ", ")
            } else {
                schema[name] = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            }
        }
        return schema
    }

    static func hashes(_ result: MoultProcess.Result) throws -> [String: String] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let versions = try #require(root["versions"] as? [[String: Any]])
        return try #require(versions.first?["entities"] as? [String: String])
    }

    /// A version folder: the store's hashes, and `moult create` from it makes the store's schema.
    @Test func aVersionFolderHasTheStoresHashesAndSchema() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = Fixtures.url(Self.sampleModel2).path
        let output = directory.appending("Sample.xcdatamodel").path
        let result = try MoultProcess.run(["model", "extract", store, "--output", output])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("extracted \(output) from \(store) (6 entities; its version hashes are the store's)"))
        #expect(result.standardError.contains("moult: note: not in the Xcode model, which cannot hold it: Book.title: 2 validation rules set in code"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Sample.xcdatamodel"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: output) == ["contents"])

        let inspect = try MoultProcess.run(["inspect", store, "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(inspect.standardOutput.utf8)) as? [String: Any])
        let hash = try MoultProcess.run(["hash", output, "--json"])
        #expect(hash.exitCode == 0, "\(hash.standardError)")
        #expect(try Self.hashes(hash) == root["versionHashes"] as? [String: String])

        let created = directory.appending("new.sqlite").path
        let create = try MoultProcess.run(["create", created, "--model", output])
        #expect(create.exitCode == 0, "\(create.standardError)")
        let ours = try Self.schema(created), theirs = try Self.schema(store)
        #expect(ours == theirs)
        #expect(ours.keys.contains("Z_Author_UNIQUE_alias"))
    }

    /// A versioned model: one version named after the bundle, its current version. A team whose model
    /// source is lost adds its next version beside it and migrates.
    @Test func aVersionedModelTakesTheNextVersionAndMigrates() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = Fixtures.url("\(Self.jeffreybergier)/CoreDataMigrationTests/Example_v1.0.0.sqlite").path
        let bundle = directory.appending("Recovered.xcdatamodeld")
        let result = try MoultProcess.run(["model", "extract", store, "--output", bundle.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: bundle.path)) == [".xccurrentversion", "Recovered.xcdatamodel"])
        let hash = try MoultProcess.run(["hash", bundle.path])
        #expect(hash.exitCode == 0, "\(hash.standardError)")
        #expect(hash.standardOutput.contains("Recovered (current)"))
        let inspect = try MoultProcess.run(["inspect", store, "--model", bundle.path])
        #expect(inspect.standardOutput.contains("matching version: Recovered"), "\(inspect.standardOutput)")

        // The next version, from the fixture's own model, made current.
        let next = Fixtures.url("\(Self.jeffreybergier)/CoreDataMigration/Model.xcdatamodeld/v1.1.0.xcdatamodel")
        try FileManager.default.copyItem(at: next, to: bundle.appending(path: "v1.1.0.xcdatamodel"))
        let recovered = try VersionedModel(contentsOf: bundle)
        try VersionedModel(name: "Recovered", versions: recovered.versions, currentVersionName: "v1.1.0").write(to: bundle)
        let output = directory.appending("migrated.sqlite").path
        let migrate = try MoultProcess.run(["migrate", store, "--model", bundle.path, "--output", output, "--quiet"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let migrated = try MoultProcess.run(["inspect", output, "--model", bundle.path])
        #expect(migrated.standardOutput.contains("matching version: v1.1.0"), "\(migrated.standardOutput)")
    }

    /// An existing output is never replaced (74); a store without a model cache is bad input naming the
    /// store (65); an output that is not an Xcode model folder is bad usage (64). Nothing is left behind.
    @Test func refusals() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = Fixtures.url(Self.sampleModel2).path
        let existing = directory.appending("Taken.xcdatamodel")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: existing.appending(path: "contents"))
        let taken = try MoultProcess.run(["model", "extract", store, "--output", existing.path])
        #expect(taken.exitCode == 74)
        #expect(taken.standardError.contains("\(existing.path): already exists: a file or folder is already there"), "\(taken.standardError)")
        #expect(try String(contentsOf: existing.appending(path: "contents"), encoding: .utf8) == "mine")

        let bare = directory.appending("bare.sqlite").path
        let model = Fixtures.url("\(Self.jeffreybergier)/CoreDataMigration/Model.xcdatamodeld/v1.1.0.xcdatamodel").path
        #expect(try MoultProcess.run(["create", bare, "--model", model]).exitCode == 0)
        let database = try Database(url: URL(filePath: bare), mode: .readWrite)
        try database.execute("DELETE FROM Z_MODELCACHE")
        database.close()
        let none = try MoultProcess.run(["model", "extract", bare, "--output", directory.appending("None.xcdatamodel").path])
        #expect(none.exitCode == 65)
        #expect(none.standardError.contains("\(bare): not a Core Data store: the store carries no model to extract"), "\(none.standardError)")

        let wrong = try MoultProcess.run(["model", "extract", store, "--output", directory.appending("Model.json").path])
        #expect(wrong.exitCode == 64)
        #expect(wrong.standardError.contains("--output must be a .xcdatamodel or .xcdatamodeld folder"))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path)) == ["Taken.xcdatamodel", "bare.sqlite"])
    }
}
