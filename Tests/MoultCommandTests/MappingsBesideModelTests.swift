import Foundation
import MoultTestSupport
import Testing

/// Without `--mapping`, the app's own mapping models are found beside its model, as Core Data looks in
/// the app's bundle before it infers (the honest-figures issue, item 4): wibosco's example app, whose
/// `Migration1to2.xcmappingmodel` renames `Post.color` to `hexColor`, which inference would drop.
@Suite struct MappingsBesideModelTests {
    static let app = "wibosco__CoreDataMigration-Example"
    static let modelPath = "CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    static let mappingPath = "CoreDataMigration-Example/CoreData/Migration/Mappings/Migration1to2.xcmappingmodel"
    static let storePath = "CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite"

    /// The app's repository copied into a folder of its own (`.git` marks its root), its version 1 store
    /// beside it.
    static func repository(in directory: TemporaryDirectory, git: Bool = true) throws -> (app: URL, store: URL) {
        let app = directory.appending("app")
        try FileManager.default.copyItem(at: Fixtures.url(Self.app), to: app)
        if git { try FileManager.default.createDirectory(at: app.appending(path: ".git"), withIntermediateDirectories: false) }
        return (app, try directory.copyStore(app.appending(path: Self.storePath), as: "s.sqlite"))
    }

    static func migrate(_ store: URL, model: URL, output: URL, _ extra: [String] = []) throws -> MoultProcess.Result {
        try MoultProcess.run(
            ["migrate", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 2", "--output", output.path, "--quiet"] + extra)
    }

    static func hexColors(_ store: URL) throws -> Int {
        try MigrateCommandTests.count(store, "SELECT COUNT(*) FROM ZPOST WHERE ZHEXCOLOR IS NOT NULL;")
    }

    @Test func theAppsMappingModelIsFoundAndUsed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (app, store) = try Self.repository(in: directory)
        let model = app.appending(path: Self.modelPath)
        let found = app.appending(path: Self.mappingPath).path

        let plan = try MoultProcess.run(["plan", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("step 1: CoreDataMigration_Example -> CoreDataMigration_Example 2 (\(found))"), "\(plan.standardOutput)")
        #expect(plan.standardError.contains("using the mapping model \(found), found beside the model"), "\(plan.standardError)")

        let output = directory.appending("found.sqlite")
        let migrated = try Self.migrate(store, model: model, output: output)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let colors = try MigrateCommandTests.count(store, "SELECT COUNT(*) FROM ZPOST WHERE ZCOLOR IS NOT NULL;")
        #expect(try Self.hexColors(output) == colors && colors > 0)

        // `--infer` infers, as before: the colour is not carried.
        let inferred = directory.appending("inferred.sqlite")
        let run = try Self.migrate(store, model: model, output: inferred, ["--infer"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(try Self.hexColors(inferred) == 0)
        #expect(!run.standardError.contains("found beside the model"))
    }

    /// Without a repository, the model's own folder is searched (and its subfolders): the mapping model
    /// of wibosco's app sits in a sibling folder of the model's, so none is found there and the step is
    /// inferred; a mapping model of another app in the folder is not this model's and is left alone.
    @Test func withoutARepositoryOnlyTheModelsFolderIsSearched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (app, store) = try Self.repository(in: directory, git: false)
        let model = app.appending(path: Self.modelPath)
        let other = Fixtures.url("jdspoone__CoreDataMigrationExample/CoreDataMigration/v1.0-to-v1.1.xcmappingmodel")
        try FileManager.default.copyItem(at: other, to: model.deletingLastPathComponent().appending(path: "other.xcmappingmodel"))
        let output = directory.appending("d.sqlite")
        let run = try Self.migrate(store, model: model, output: output)
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(!run.standardError.contains("found beside the model"), "\(run.standardError)")
        #expect(try Self.hexColors(output) == 0)

        // Moved into the model's folder, the app's mapping model is found.
        try FileManager.default.moveItem(
            at: app.appending(path: Self.mappingPath), to: model.deletingLastPathComponent().appending(path: "Migration1to2.xcmappingmodel"))
        let again = directory.appending("e.sqlite")
        let found = try Self.migrate(store, model: model, output: again)
        #expect(found.exitCode == 0, "\(found.standardError)")
        #expect(try Self.hexColors(again) > 0)
    }

    /// Two mapping models found for one step: refused (65 or the unusable-mapping code), naming both and
    /// the ways out; nothing written.
    @Test func twoFoundForOneStepAreRefusedNamingBoth() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (app, store) = try Self.repository(in: directory)
        let model = app.appending(path: Self.modelPath)
        try FileManager.default.copyItem(at: app.appending(path: Self.mappingPath), to: app.appending(path: "Copy1to2.xcmappingmodel"))
        let output = directory.appending("d.sqlite")
        let run = try Self.migrate(store, model: model, output: output)
        #expect(run.exitCode != 0 && run.exitCode != 74, "\(run.exitCode) \(run.standardError)")
        #expect(run.standardError.contains("Copy1to2.xcmappingmodel") && run.standardError.contains("--infer"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A mapping model that names none of the model's entities is another model's, and is not read: a
    /// damaged one of those goes unmentioned, while a damaged one naming the app's entities is read and
    /// told as unreadable. (Reading one decodes the two models it embeds: in a repository with many
    /// mapping models, that was most of a run's start.)
    @Test func aMappingModelNamingNoneOfTheModelsEntitiesIsNotRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (app, store) = try Self.repository(in: directory)
        let model = app.appending(path: Self.modelPath)
        /// A copy of `mapping` at `name` in the app whose embedded source model is damaged.
        func damaged(_ mapping: URL, as name: String) throws {
            let copy = app.appending(path: name)
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
            let xml = try String(contentsOf: mapping.appending(path: "xcmapping.xml"), encoding: .utf8)
            let broken = try #require(try Regex(#"(name="sourcemodeldata" type="binary">)[^<]*"#).firstMatch(in: xml))
            try Data(xml.replacingCharacters(in: broken.range, with: #"name="sourcemodeldata" type="binary">AAAA"#).utf8)
                .write(to: copy.appending(path: "xcmapping.xml"))
        }
        let other = Fixtures.url("objcio__issue-4-core-data-migration/BookMigration/Model2_to_Model3_User.xcmappingmodel")
        try damaged(other, as: "Books.xcmappingmodel")
        let plan = try MoultProcess.run(["plan", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(!plan.standardError.contains("Books.xcmappingmodel"), "\(plan.standardError)")
        #expect(plan.standardError.contains("found beside the model"), "the app's own is still used: \(plan.standardError)")

        try damaged(app.appending(path: Self.mappingPath), as: "Posts.xcmappingmodel")
        let again = try MoultProcess.run(["plan", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 2"])
        #expect(again.standardError.contains("Posts.xcmappingmodel found beside the model cannot be read"), "\(again.standardError)")
        #expect(!again.standardError.contains("Books.xcmappingmodel"), "\(again.standardError)")
    }

    /// A fleet's line that gives no mappings finds the app's, as `migrate` does; `--infer` infers.
    @Test func aFleetFindsThemToo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (app, store) = try Self.repository(in: directory)
        let model = app.appending(path: Self.modelPath).path
        let manifest = directory.appending("fleet.jsonl")
        try ("{\"store\":\"\(store.path)\",\"model\":\"\(model)\",\"to\":\"CoreDataMigration_Example 2\",\"output\":\"found.sqlite\"}\n")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let run = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path, "--quiet"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(try Self.hexColors(directory.appending("found.sqlite")) > 0)

        let inferredManifest = directory.appending("inferred.jsonl")
        try ("{\"store\":\"\(store.path)\",\"model\":\"\(model)\",\"to\":\"CoreDataMigration_Example 2\",\"output\":\"by-inference.sqlite\"}\n")
            .write(to: inferredManifest, atomically: true, encoding: .utf8)
        let inferred = try MoultProcess.run(["fleet", "migrate", "--manifest", inferredManifest.path, "--quiet", "--infer"])
        #expect(inferred.exitCode == 0, "\(inferred.standardError)")
        #expect(try Self.hexColors(directory.appending("by-inference.sqlite")) == 0)
    }
}
