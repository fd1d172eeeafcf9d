import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Partitions (several passes into one destination), cancellation between chunks, progress.
@Suite struct PassesTests {
    /// Persons whose names start with A, then B, then the rest, each a pass (DESIGN.md §7, multiple
    /// passes): the same persons and addresses as one pass. Primary keys follow the passes' order, so
    /// the comparison is by content.
    @Test func partitionsMakeTheSameObjects() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 400, in: directory)
        let mapping = try People.mapping("v2-to-v3")
        let whole = directory.appending("whole.sqlite")
        let parted = directory.appending("parted.sqlite")
        try People.migrate(source, to: "v3", mappings: [mapping], options: MigrationOptions(chunkSize: 50), output: whole)
        let partitions = [#"name BEGINSWITH "A""#, #"name BEGINSWITH "B""#]
        let options = MigrationOptions(chunkSize: 50, partitions: partitions)
        let plan = try StreamingMigrator(
            source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"), mappings: [mapping],
            policies: People.policies, options: options
        ).plan()
        // Two mappings × (A, B, the rest) × two stages.
        #expect(plan.passes.count == 12)
        #expect(Set(plan.passes.compactMap(\.partition)).count == 3)
        try People.migrate(source, to: "v3", mappings: [mapping], options: options, output: parted)

        let wholeGraph = try ObjectGraph(whole, model: People.version("v3"))
        let partedGraph = try ObjectGraph(parted, model: People.version("v3"))
        #expect(partedGraph.counts == wholeGraph.counts)
        expectSamePersons(PersonFacts.all(in: partedGraph), PersonFacts.all(in: wholeGraph))
        // Each person keeps its source key whichever pass made it (the A persons are made first).
        let names = { (graph: ObjectGraph) in Dictionary(uniqueKeysWithValues: graph.objects("Person").map { ($0.id.primaryKey, $0["name"]) }) }
        #expect(names(partedGraph) == names(wholeGraph))
        #expect(names(partedGraph) == names(try ObjectGraph(source, model: People.version("v2"))))
    }

    /// A run cancelled between chunks stops with a resumable error; running again resumes and makes
    /// the store an uninterrupted run makes.
    @Test(arguments: [3, 17])
    func cancelledRunResumes(afterChunks: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 300, in: directory)
        let options = MigrationOptions(chunkSize: 25)
        let migrator = StreamingMigrator(
            source: source, sourceModel: People.version("v4"), destinationModel: People.version("v5"),
            mappings: [try People.mapping("v4-to-v5")], policies: People.policies, options: options)
        let reference = directory.appending("reference.sqlite")
        let full = try migrator.run(output: reference)
        #expect(!full.resumed && full.chunksRun == full.plan.chunkCount)

        let output = directory.appending("resumed.sqlite")
        var polls = 0
        let error = try #require(throws: MigrationError.self) {
            try migrator.run(output: output, isCancelled: {
                polls += 1
                return polls > afterChunks
            })
        }
        #expect(error.code == .interrupted && error.category.exitCode == 75, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(FileManager.default.fileExists(atPath: migrator.workDirectory(for: output).path))

        var fractions: [Double] = []
        let report = try migrator.run(output: output, progress: { fractions.append($0.fraction) })
        #expect(report.resumed)
        #expect(report.chunksRun > 0 && report.chunksRun < full.chunksRun)
        #expect(report.objectCounts == full.objectCounts)
        #expect(fractions.last == 1)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "progress never goes back")
        try expectIdentical(reference, output, "cancelled after \(afterChunks) chunks")
        #expect(!FileManager.default.fileExists(atPath: migrator.workDirectory(for: output).path))
    }

    /// Core Data's multiple passes: the v2 → v3 mapping split into two mapping models, persons first,
    /// then addresses that name the persons of the first pass as their residents. Same objects, same
    /// links as the single mapping.
    @Test func twoMappingModelsAreTwoPassesIntoOneDestination() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        let url = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let entityMappings = try #require(json["entityMappings"] as? [[String: Any]])
        var persons = try #require(entityMappings.first { $0["name"] as? String == "PersonToPerson" })
        persons["relationships"] = [[String: Any]]()
        let addresses = try #require(entityMappings.first { $0["name"] as? String == "PersonToAddress" })
        var passes: [MappingModel] = []
        for (index, entityMapping) in [persons, addresses].enumerated() {
            var pass = json
            pass["entityMappings"] = [entityMapping]
            let file = directory.appending("pass-\(index + 1).json")
            try JSONSerialization.data(withJSONObject: pass, options: [.sortedKeys]).write(to: file)
            passes.append(try MappingModel(contentsOf: file))
        }
        let single = directory.appending("single.sqlite")
        let twoPasses = directory.appending("passes.sqlite")
        try People.migrate(source, to: "v3", mappings: [People.mapping("v2-to-v3")], options: MigrationOptions(chunkSize: 40), output: single)
        let migration = try People.migrate(source, to: "v3", mappings: passes, options: MigrationOptions(chunkSize: 40), output: twoPasses)
        #expect(migration.steps.count == 1 && migration.steps[0].mappings.count == 2)
        let expected = try ObjectGraph(single, model: People.version("v3"))
        let graph = try ObjectGraph(twoPasses, model: People.version("v3"))
        #expect(graph.counts == expected.counts)
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: expected))
        try expectVersion(twoPasses, "v3")
    }
}
