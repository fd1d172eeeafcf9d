import Foundation
import MoultMapping
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The bulk-copied chunks of a mapping whose associations nothing reads write one row each instead of
/// their associations (see `UnreadAssociations`): the store is the same, a failure still names its
/// source object, and a resume that reads them writes them first.
@Suite struct UnreadAssociationsTests {
    static let steps: [(from: String, mapping: String?, to: String, unread: Set<String>)] = [
        ("v1", nil, "v3", ["PersonToPerson"]),
        ("v2", "v2-to-v3", "v3", ["PersonToPerson", "PersonToAddress"]),
        ("v3", "v3-to-v4", "v4", ["AddressToAddress", "PersonToAdult", "PersonToChild"]),
        // Every to-one is written at insert (companies and schools made first): nothing reads an
        // association, not even those of AdultToCompany and ChildToSchool (uniquing in SQL).
        ("v4", "v4-to-v5-builtin", "v5", ["AddressToAddress", "AdultToAdult", "ChildToChild", "AdultToCompany", "ChildToSchool"]),
        // Policies of the application's own may look anything up.
        ("v4", "v4-to-v5", "v5", []),
    ]

    static func migrator(
        _ step: (from: String, mapping: String?, to: String, unread: Set<String>), source: URL, options: MigrationOptions
    ) throws -> StreamingMigrator {
        StreamingMigrator(
            source: source, sourceModel: People.version(step.from), destinationModel: People.version(step.to),
            mappings: [try step.mapping.map { try People.mapping($0) } ?? MappingModel.inferred(from: step.from, to: step.to, in: People.model)],
            policies: People.policies, options: options)
    }

    /// The mappings whose chunks were recorded without associations in an interrupted run's destination.
    static func recorded(in output: URL, mappings: [String]) throws -> Set<String> {
        let database = try Database(url: URL(filePath: output.path + ".moult/destination.sqlite"), mode: .readOnly)
        defer { database.close() }
        guard try database.tableExists(UnreadAssociations.table) else { return [] }
        let plan = try Checkpoint.plan(in: database)
        let passes = try database.query("SELECT DISTINCT pass FROM \(UnreadAssociations.table)") { Int($0.int64(at: 0)) }
        return Set(passes.map { mappings[plan.passes[$0].mapping] })
    }

    @Test(arguments: steps.indices, [1, 37, 1_000])
    func sameStoreWithEveryAssociationWritten(step index: Int, chunkSize: Int) throws {
        let step = Self.steps[index]
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let before = try checksum(source)
        let mappings = try step.mapping.map { [try People.mapping($0)] } ?? []
        let skipped = directory.appending("skipped.sqlite")
        try People.migrate(source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: chunkSize), output: skipped)
        var options = MigrationOptions(chunkSize: chunkSize)
        options.skipUnreadAssociations = false
        let written = directory.appending("written.sqlite")
        try People.migrate(source, to: step.to, mappings: mappings, options: options, output: written)
        try expectIdentical(skipped, written, "\(step.from) → \(step.to), chunks of \(chunkSize)")
        #expect(try checksum(source) == before)
    }

    /// Which mappings write no associations, seen in the destination of a run stopped before its end
    /// (every create pass over), with and without the option.
    @Test(arguments: steps.indices)
    func theUnreadMappingsRecordTheirChunks(step index: Int) throws {
        let step = Self.steps[index]
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 120, in: directory)
        for skip in [true, false] {
            var options = MigrationOptions(chunkSize: 50)
            options.skipUnreadAssociations = skip
            let migrator = try Self.migrator(step, source: source, options: options)
            let output = directory.appending("out-\(skip).sqlite")
            var stage = MigrationStage.createObjects
            let error = try #require(throws: MigrationError.self) {
                try migrator.run(output: output, progress: { stage = $0.stage }, isCancelled: { stage == .createRelationships })
            }
            #expect(error.code == .interrupted)
            let names = try Session.mappingNames(of: migrator)
            #expect(try Self.recorded(in: output, mappings: names) == (skip ? step.unread : []), "\(step.from) → \(step.to), skip \(skip)")
            // The run ends as it would have.
            _ = try migrator.run(output: output)
        }
        try expectIdentical(directory.appending("out-true.sqlite"), directory.appending("out-false.sqlite"), "\(step.from) → \(step.to)")
    }

    /// A person that breaks the destination's rules is named with its source object, found through the
    /// recorded chunk, as with every association written: numbered afresh (the source's keys have gaps,
    /// so the two keys differ), and with the keys kept (a kept chunk is told by its source keys).
    @Test(arguments: [false, true])
    func aValidationFailureNamesItsSourceObject(keepKeys: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 60, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript(
            "DELETE FROM ZPERSON WHERE Z_PK IN (2, 3, 11, 30); UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK IN (9, 41); UPDATE ZPERSON SET ZNAME = '' WHERE Z_PK = 57")
        database.close()
        var failures: [[ValidationFailure]] = []
        for skip in [true, false] {
            var options = MigrationOptions(chunkSize: 8)
            options.skipUnreadAssociations = skip
            options.keepKeys = keepKeys
            let output = directory.appending("out-\(skip).sqlite")
            let error = try #require(throws: MigrationError.self) {
                try People.migrate(source, to: "v3", options: options, output: output)
            }
            #expect(error.code == .validationFailed)
            failures.append(error.failures.sorted { $0.primaryKey < $1.primaryKey })
        }
        #expect(failures[0] == failures[1])
        #expect(failures[0].map(\.primaryKey) == (keepKeys ? [9, 41, 57] : [7, 37, 53]), "\(failures[0])")
        #expect(failures[0].map(\.sourcePrimaryKey) == [9, 41, 57], "\(failures[0])")
        #expect(failures[0].allSatisfy { $0.sourceEntity == "Person" })
    }

    /// A run begun without writing some associations, resumed under options whose stage 2 reads them
    /// (both sides of a relationship written), writes them first; and the other way round.
    @Test(arguments: [true, false], [1, 3, 5])
    func resumedUnderOptionsThatReadThem(startSkipping: Bool, afterChunks: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 200, in: directory)
        func migrator(skipping: Bool) throws -> StreamingMigrator {
            var options = MigrationOptions(chunkSize: 37)
            options.skipRepeatedLinks = skipping
            return try Self.migrator(Self.steps[2], source: source, options: options)
        }
        let reference = directory.appending("reference.sqlite")
        _ = try migrator(skipping: false).run(output: reference)
        let output = directory.appending("resumed.sqlite")
        var polls = 0
        let error = try #require(throws: MigrationError.self) {
            try migrator(skipping: startSkipping).run(output: output, isCancelled: {
                polls += 1
                return polls > afterChunks
            })
        }
        #expect(error.code == .interrupted, "\(error)")
        let recorded = try Self.recorded(in: output, mappings: try Session.mappingNames(of: migrator(skipping: true)))
        #expect(recorded.contains("AddressToAddress") == startSkipping, "\(recorded)")
        let report = try migrator(skipping: !startSkipping).run(output: output)
        #expect(report.resumed)
        try expectIdentical(reference, output, "begun skipping \(startSkipping), cancelled after \(afterChunks) chunks")
    }

    /// The chunks of a uniquing mapping recorded without their associations: each holds its new
    /// objects' first holders in the key table, those that made none are recorded apart, and a resume
    /// under options that read the associations writes them from the source and the key table.
    @Test(arguments: [7, 50])
    func uniquingChunksRecordTheirFirstHolders(chunkSize: Int) throws {
        let step = Self.steps[3]
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 300, in: directory)
        let migrator = try Self.migrator(step, source: source, options: MigrationOptions(chunkSize: chunkSize))
        let names = try Session.mappingNames(of: migrator)
        let output = directory.appending("out.sqlite")
        var stage = MigrationStage.createObjects
        let error = try #require(throws: MigrationError.self) {
            try migrator.run(output: output, progress: { stage = $0.stage }, isCancelled: { stage == .createRelationships })
        }
        #expect(error.code == .interrupted)
        let company = try #require(names.firstIndex(of: "AdultToCompany"))
        let database = try Database(url: URL(filePath: output.path + ".moult/destination.sqlite"), mode: .readOnly)
        let plan = try Checkpoint.plan(in: database)
        let chunks = try EngineWorkTables.madeChunks(in: database).filter { plan.passes[$0.pass].mapping == company }
        let made = chunks.filter { $0.count > 0 }
        var holders: [Int64] = []
        for chunk in made {
            holders += try EngineKeyMap.firstHolders(from: chunk.first, count: Int(chunk.count), mapping: company, in: database)
        }
        database.close()
        // Every chunk of the pass is recorded; the companies, numbered in the order of their first
        // holders, each by the first adult that names it.
        #expect(chunks.count == plan.passes.first { $0.mapping == company && $0.stage == .createObjects }?.chunks.count)
        #expect(chunks.filter { $0.count == 0 }.allSatisfy { $0.first < 0 })
        let sourceDatabase = try Database(url: source, mode: .readOnly)
        let firsts = try sourceDatabase.query(
            "SELECT MIN(Z_PK) FROM ZPERSON WHERE ZCOMPANYNAME IS NOT NULL GROUP BY ZCOMPANYNAME ORDER BY MIN(Z_PK)") { $0.int64(at: 0) }
        sourceDatabase.close()
        #expect(!firsts.isEmpty && holders == firsts)
        // Resumed with every association written: the recorded chunks' associations are written first.
        var options = MigrationOptions(chunkSize: chunkSize)
        options.skipUnreadAssociations = false
        let report = try Self.migrator(step, source: source, options: options).run(output: output)
        #expect(report.resumed)
        let reference = directory.appending("reference.sqlite")
        _ = try Self.migrator(step, source: source, options: MigrationOptions(chunkSize: chunkSize)).run(output: reference)
        try expectIdentical(reference, output, "chunks of \(chunkSize)")
    }
}

extension Session {
    /// The names of a migrator's compiled mappings, by index.
    static func mappingNames(of migrator: StreamingMigrator) throws -> [String] {
        let store = try SQLiteStore(url: migrator.sourceURL, model: migrator.sourceModel, mode: .readOnly)
        defer { store.database.close() }
        return try Session(job: migrator.job, source: store, destination: nil).mappings.map(\.name)
    }
}
