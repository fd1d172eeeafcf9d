import Foundation
import MoultMapping
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A chain's intermediate stores are made by SQL where an in-place migration would run the step by SQL
/// (a copy of the step's input migrated in one transaction): the output holds what streaming every
/// step writes, a refused step leaves nothing, and a killed chain resumes to the same output.
@Suite struct IntermediateBySQLTests {
    /// v1 → v3 with the given v2 → v3 mapping (v1 → v2 inferred, then given), and v2 → v4 through two
    /// given mappings, by SQL and streamed: the same objects; only the store UUID, which follows from
    /// the intermediate store's, differs.
    @Test(arguments: [("v1", "v3", ["v2-to-v3"], true), ("v1", "v4", ["v2-to-v3", "v3-to-v4"], true), ("v2", "v4", ["v2-to-v3", "v3-to-v4"], false)], [7, 1_000])
    func sameObjectsAsStreamingEveryStep(chain: (from: String, to: String, mappings: [String], firstBySQL: Bool), chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(chain.from, persons: 150, in: directory)
        let before = try checksum(source)
        let mappings = try chain.mappings.map { try People.mapping($0) }
        var outputs: [URL] = []
        for bySQL in [true, false] {
            var options = MigrationOptions(chunkSize: chunkSize)
            options.intermediateStepsBySQL = bySQL
            let output = directory.appending("out-\(bySQL).sqlite")
            var inPlaceSteps: [Int] = []
            let migration = try ProgressiveMigration(
                store: source, model: People.model, to: chain.to, mappings: mappings, policies: People.policies, options: options)
            try migration.run(output: output, events: { event in
                if case .inPlaceStep(let step) = event, step.phase == .done { inPlaceSteps.append(step.step) }
            })
            #expect(inPlaceSteps == (bySQL && chain.firstBySQL ? [1] : []), "\(chain.from) → \(chain.to)")
            #expect(!FileManager.default.fileExists(atPath: migration.stepsDirectory(for: output).path))
            outputs.append(output)
        }
        try expectIdentical(outputs[0], outputs[1], ignoringStoreUUID: true, "\(chain.from) → \(chain.to), chunks of \(chunkSize)")
        #expect(try checksum(source) == before)
    }

    /// Items whose `title` becomes required in v2 without a default; v2 → v3 is given.
    static func rules() throws -> (VersionedModel, MappingModel) {
        let v1 = try ObjectModel { Entity("Item") { Attribute("title", .string); Attribute("n", .integer32) } }
        let v2 = try ObjectModel { Entity("Item") { Attribute("title", .string).required(); Attribute("n", .integer32) } }
        let v3 = try ObjectModel {
            Entity("Item") { Attribute("title", .string).required(); Attribute("n", .integer32); Attribute("note", .string) }
        }
        let model = try VersionedModel(name: "Rules", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2), .init(name: "v3", model: v3)])
        return (model, try MappingModel.inferred(from: "v2", to: "v3", in: model))
    }

    static func itemStore(in directory: TemporaryDirectory, titles: [String?], extraSQL: String? = nil) throws -> URL {
        let store = directory.appending("items.sqlite")
        let created = try SQLiteStore.create(at: store, model: try rules().0.version(named: "v1")!.model)
        let writer = try created.makeWriter()
        try writer.write {
            for (n, title) in titles.enumerated() { try writer.insert("Item", ["title": title.map(Value.string) ?? .null, "n": .int(Int64(n))]) }
        }
        if let extraSQL { try created.database.executeScript(extraSQL) }
        created.database.close()
        return store
    }

    /// An object that breaks the intermediate version's rules refuses the chain by SQL as streaming
    /// does (67), naming the object, with nothing left at the output or in the work folders.
    @Test(arguments: [true, false])
    func aRuleBrokenAtTheIntermediateVersionRefusesTheChain(bySQL: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (model, given) = try Self.rules()
        let store = try Self.itemStore(in: directory, titles: ["a", nil, "c"])
        let before = try checksum(store)
        var options = MigrationOptions(chunkSize: 2)
        options.intermediateStepsBySQL = bySQL
        let migration = try ProgressiveMigration(store: store, model: model, to: "v3", mappings: [given], options: options)
        #expect(migration.steps.count == 2)
        let output = directory.appending("out.sqlite")
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .validationFailed && error.category.exitCode == 67, "\(error)")
        #expect(error.failures.map(\.property) == ["title"] && error.failures.map(\.primaryKey) == [2], "\(error.failures)")
        #expect(error.description.contains("step 1 of 2"), "\(error)")
        #expect(error.description.contains("nothing was written at the output"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: migration.stepsDirectory(for: output).path))
        #expect(try checksum(store) == before)
    }

    /// A store with a table of the application's own: the SQL step keeps it in its copy (as in place),
    /// and the last step's new store, made from the model, is the same as a streamed chain's.
    @Test func aStoreWithItsOwnTableIsMigratedBySQL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (model, given) = try Self.rules()
        let store = try Self.itemStore(in: directory, titles: ["a", "b", "c"], extraSQL: "CREATE TABLE APPNOTES (id INTEGER PRIMARY KEY, body TEXT)")
        var outputs: [URL] = []
        for bySQL in [true, false] {
            var options = MigrationOptions(chunkSize: 2)
            options.intermediateStepsBySQL = bySQL
            let output = directory.appending("out-\(bySQL).sqlite")
            var inPlaceSteps = 0
            try ProgressiveMigration(store: store, model: model, to: "v3", mappings: [given], options: options)
                .run(output: output, events: { if case .inPlaceStep = $0 { inPlaceSteps += 1 } })
            #expect(inPlaceSteps == (bySQL ? 2 : 0), "the step's started and done events, by SQL")
            outputs.append(output)
        }
        try expectIdentical(outputs[0], outputs[1], ignoringStoreUUID: true, "own table")
    }

    /// A chain cancelled before its first step, or in its second, resumes to the output of an
    /// uninterrupted chain, store UUID included.
    @Test(arguments: [0, 4])
    func cancelledChainResumes(afterPolls: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 120, in: directory)
        let mappings = [try People.mapping("v2-to-v3")]
        func migration() throws -> ProgressiveMigration {
            try ProgressiveMigration(
                store: source, model: People.model, to: "v3", mappings: mappings, policies: People.policies, options: MigrationOptions(chunkSize: 25))
        }
        let reference = directory.appending("reference.sqlite")
        try migration().run(output: reference)
        let output = directory.appending("resumed.sqlite")
        var polls = 0
        let error = try #require(throws: MigrationError.self) {
            try migration().run(output: output, isCancelled: {
                polls += 1
                return polls > afterPolls
            })
        }
        #expect(error.code == .interrupted, "\(error)")
        let intermediate = try migration().stepsDirectory(for: output).appending(path: "step-1-v2.sqlite")
        #expect(FileManager.default.fileExists(atPath: intermediate.path) == (afterPolls > 0))
        try migration().run(output: output, resume: true)
        try expectIdentical(reference, output, "cancelled after \(afterPolls) polls")
    }
    /// A property mapping without a value takes the source's property of the same name, in a transform
    /// as in a copy (wibosco's Migration1to2 maps `postID` and `date` so): by SQL in place, as a chain's
    /// intermediate store, and streamed alike. The SQL steps once wrote nil.
    @Test func aPropertyMappingWithoutAValueCopiesTheSourcesProperty() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (model, given) = try Self.rules()
        var first = try MappingModel.inferred(from: "v1", to: "v2", in: model)
        first.entityMappings[0].mappingType = .transform
        first.entityMappings[0].attributeMappings = [PropertyMapping("title"), PropertyMapping("n")]
        let store = try Self.itemStore(in: directory, titles: ["a", "b", "c"])
        // Streamed, and as an intermediate store by SQL.
        var outputs: [URL] = []
        for bySQL in [false, true] {
            var options = MigrationOptions(chunkSize: 2)
            options.intermediateStepsBySQL = bySQL
            let output = directory.appending("out-\(bySQL).sqlite")
            try ProgressiveMigration(store: store, model: model, to: "v3", mappings: [first, given], options: options).run(output: output)
            outputs.append(output)
        }
        try expectIdentical(outputs[0], outputs[1], ignoringStoreUUID: true, "a chain")
        let graph = try ObjectGraph(outputs[1], model: try #require(model.version(named: "v3")).model)
        #expect(graph.objects("Item").map { $0["title"] } == [.string("a"), .string("b"), .string("c")])
        #expect(graph.objects("Item").map { $0["n"] } == [.int(0), .int(1), .int(2)])
        // In place, by SQL.
        let step = try ProgressiveMigration(store: store, model: model, to: "v2", mappings: [first])
        guard case .sql = try InPlaceMigration.method(for: step.steps[0]) else {
            Issue.record("the step is not SQL in place")
            return
        }
        try InPlaceMigration(chain: step, keepsBackup: false).run()
        let migrated = try ObjectGraph(store, model: try #require(model.version(named: "v2")).model)
        #expect(migrated.objects("Item").map { $0["title"] } == [.string("a"), .string("b"), .string("c")])
    }
    /// A chain killed after making its folder but before recording itself there (found by the crash
    /// harness: the next run refused the folder as another migration's) leaves a folder with no work
    /// in it: the next run takes it. A folder without the record but with a store in it is still refused.
    @Test func aChainFolderWithoutItsRecordIsTakenWhenEmpty() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 40, in: directory)
        let migration = try ProgressiveMigration(
            store: source, model: People.model, to: "v3", mappings: [try People.mapping("v2-to-v3")], policies: People.policies)
        let output = directory.appending("out.sqlite")
        let folder = migration.stepsDirectory(for: output)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try migration.run(output: output)
        #expect(!FileManager.default.fileExists(atPath: folder.path))

        let other = directory.appending("other.sqlite")
        let otherFolder = migration.stepsDirectory(for: other)
        try FileManager.default.createDirectory(at: otherFolder, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: otherFolder.appending(path: "step-1-v2.sqlite"))
        let error = try #require(throws: MigrationError.self) { try migration.run(output: other) }
        #expect(error.code == .checkpointMismatch, "\(error)")
        #expect(FileManager.default.fileExists(atPath: otherFolder.appending(path: "step-1-v2.sqlite").path))
    }
}
