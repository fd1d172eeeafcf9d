import Foundation
import MoultMapping
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// To-ones whose looked-up mapping ran earlier are written with their row in stage 1 (see
/// `ToOnesAtInsert`): the store is the same, byte for byte, as when stage 2 writes them, whatever the
/// chunk size and whichever stage-1 path (the bulk `INSERT … SELECT` or object by object) runs.
@Suite struct ToOnesAtInsertTests {
    /// The to-ones written at insert by mapping name, and the create passes' order by mapping name.
    static func eligible(_ mapping: String, from: String, to: String, reorder: Bool = true) throws -> (atInsert: [String: [String]], order: [String]) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(from, persons: 20, in: directory)
        var options = MigrationOptions()
        options.reorderCreatePasses = reorder
        let migrator = StreamingMigrator(
            source: source, sourceModel: People.version(from), destinationModel: People.version(to), mappings: [try People.mapping(mapping)],
            policies: People.policies, options: options)
        let store = try SQLiteStore(url: source, model: People.version(from), mode: .readOnly)
        defer { store.database.close() }
        let session = try Session(job: migrator.job, source: store, destination: nil)
        let layout = try StoreLayout(model: People.version(to))
        let position = Dictionary(uniqueKeysWithValues: session.createOrder.enumerated().map { ($0.element, $0.offset) })
        var result: [String: [String]] = [:]
        for (index, names) in ToOnesAtInsert.eligible(
            in: session.mappings, position: position, destinationLayout: layout, destinationModel: People.version(to))
        {
            result[session.mappings[index].name] = names
        }
        // The plan's create passes follow the order.
        let plan = try session.makePlan()
        var planned: [String] = []
        for pass in plan.passes where pass.stage == .createObjects && !planned.contains(session.mappings[pass.mapping].name) {
            planned.append(session.mappings[pass.mapping].name)
        }
        #expect(planned == session.createOrder.map { session.mappings[$0].name }.filter { planned.contains($0) })
        return (result, session.createOrder.map { session.mappings[$0].name })
    }

    @Test func peopleStepsWriteTheirAddressesAtInsert() throws {
        let v3v4 = try Self.eligible("v3-to-v4", from: "v3", to: "v4")
        #expect(v3v4.atInsert == ["PersonToAdult": ["address"], "PersonToChild": ["address"]])
        #expect(v3v4.order == ["AddressToAddress", "PersonToAdult", "PersonToChild"])
        // Companies and schools are made first too (a built-in uniquing policy makes at most one object
        // per adult or child): each adult's company and each child's school is written at insert.
        let v4v5 = try Self.eligible("v4-to-v5-builtin", from: "v4", to: "v5")
        #expect(v4v5.atInsert == ["AdultToAdult": ["address", "company"], "ChildToChild": ["address", "school"]])
        #expect(v4v5.order == ["AddressToAddress", "AdultToCompany", "AdultToAdult", "ChildToSchool", "ChildToChild"], "\(v4v5.order)")
        // PersonToPerson looks up PersonToAddress, which its mapping model orders after it: made first,
        // so that the address is written at insert (Person and Address are numbered in their own tables).
        let v2v3 = try Self.eligible("v2-to-v3", from: "v2", to: "v3")
        #expect(v2v3.atInsert == ["PersonToPerson": ["address"]])
        #expect(v2v3.order == ["PersonToAddress", "PersonToPerson"])
        // In the mapping model's order, stage 2 writes it.
        let kept = try Self.eligible("v2-to-v3", from: "v2", to: "v3", reorder: false)
        #expect(kept.atInsert == [:])
        #expect(kept.order == ["PersonToPerson", "PersonToAddress"])
        // Policies of the application's own: nothing, and the order is the mapping model's.
        #expect(try Self.eligible("v4-to-v5", from: "v4", to: "v5").atInsert == [:])
    }

    static let steps: [(from: String, mapping: String, to: String)] = [
        ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5-builtin", "v5"), ("v2", "v2-to-v3", "v3"),
    ]

    @Test(arguments: steps, [1, 37, 1_000])
    func sameStoreAsInStage2(step: (from: String, mapping: String, to: String), chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let mappings = [try People.mapping(step.mapping)]
        let reference = directory.appending("stage2.sqlite")
        var options = MigrationOptions(chunkSize: chunkSize)
        options.toOnesAtInsert = false
        options.reorderCreatePasses = false
        try People.migrate(source, to: step.to, mappings: mappings, options: options, output: reference)
        for bulkSQL in [true, false] {
            let output = directory.appending("insert-\(bulkSQL).sqlite")
            try People.migrate(source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: chunkSize, bulkSQL: bulkSQL), output: output)
            try expectIdentical(reference, output, "\(step.mapping), chunks of \(chunkSize), bulk SQL \(bulkSQL)")
        }
        // Reordered create passes alone (to-ones in stage 2).
        options.reorderCreatePasses = true
        let reordered = directory.appending("reordered.sqlite")
        try People.migrate(source, to: step.to, mappings: mappings, options: options, output: reordered)
        try expectIdentical(reference, reordered, "\(step.mapping), chunks of \(chunkSize), reordered, to-ones in stage 2")
    }

    /// A run is cancelled, then resumed under other options (to-ones in stage 2, both sides of a link
    /// written, no bulk SQL, or the other way round): the resume does what its run began with, and the
    /// store is the one an uninterrupted run makes.
    @Test(arguments: [true, false], [4, 21])
    func resumeUnderOtherOptions(startAtInsert: Bool, afterChunks: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 300, in: directory)
        func migrator(atInsert: Bool) throws -> StreamingMigrator {
            var options = MigrationOptions(chunkSize: 25, bulkSQL: atInsert)
            options.toOnesAtInsert = atInsert
            options.skipRepeatedLinks = atInsert
            return StreamingMigrator(
                source: source, sourceModel: People.version("v3"), destinationModel: People.version("v4"),
                mappings: [try People.mapping("v3-to-v4")], policies: People.policies, options: options)
        }
        let reference = directory.appending("reference.sqlite")
        _ = try migrator(atInsert: true).run(output: reference)
        let output = directory.appending("resumed.sqlite")
        var polls = 0
        let error = try #require(throws: MigrationError.self) {
            try migrator(atInsert: startAtInsert).run(output: output, isCancelled: {
                polls += 1
                return polls > afterChunks
            })
        }
        #expect(error.code == .interrupted, "\(error)")
        let report = try migrator(atInsert: !startAtInsert).run(output: output)
        #expect(report.resumed)
        try expectIdentical(reference, output, "begun with to-ones at insert \(startAtInsert), cancelled after \(afterChunks) chunks")
    }

    /// v2 → v3 cancelled, then resumed with the create passes' order and to-ones at insert turned the
    /// other way: the resume keeps its run's plan and decision, the store is an uninterrupted run's.
    @Test(arguments: [true, false], [1, 5, 14])
    func reorderedResumeUnderOtherOptions(startReordered: Bool, afterChunks: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        func migrator(reordered: Bool) throws -> StreamingMigrator {
            var options = MigrationOptions(chunkSize: 37, bulkSQL: reordered)
            options.reorderCreatePasses = reordered
            options.toOnesAtInsert = reordered
            return StreamingMigrator(
                source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"),
                mappings: [try People.mapping("v2-to-v3")], policies: People.policies, options: options)
        }
        let reference = directory.appending("reference.sqlite")
        _ = try migrator(reordered: false).run(output: reference)
        let output = directory.appending("resumed.sqlite")
        var polls = 0
        let error = try #require(throws: MigrationError.self) {
            try migrator(reordered: startReordered).run(output: output, isCancelled: {
                polls += 1
                return polls > afterChunks
            })
        }
        #expect(error.code == .interrupted, "\(error)")
        let report = try migrator(reordered: !startReordered).run(output: output)
        #expect(report.resumed)
        let first = report.plan.passes.first.map { report.plan.mappings[$0.mapping].name }
        #expect(first == (startReordered ? "PersonToAddress" : "PersonToPerson"))
        try expectIdentical(reference, output, "begun reordered \(startReordered), cancelled after \(afterChunks) chunks")
    }

    /// A source whose to-one keys are odd: dangling (no address of that key), stored as text, as a
    /// real. The chunk that holds them takes the per-object path; the store (or the error) is the one
    /// stage 2 makes.
    @Test func oddSourceKeys() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 200, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript(
            "UPDATE ZPERSON SET ZADDRESS = 987654 WHERE Z_PK = 3; UPDATE ZPERSON SET ZADDRESS = '5' WHERE Z_PK = 40; UPDATE ZPERSON SET ZADDRESS = 7.0 WHERE Z_PK = 41")
        database.close()
        let mappings = [try People.mapping("v3-to-v4")]
        var outcomes: [String] = []
        for atInsert in [false, true] {
            var options = MigrationOptions(chunkSize: 30)
            options.toOnesAtInsert = atInsert
            let output = directory.appending("out-\(atInsert).sqlite")
            do {
                let migration = try ProgressiveMigration(store: source, model: People.model, to: "v4", mappings: mappings, policies: People.policies, options: options)
                try migration.run(output: output)
                outcomes.append("ok")
            } catch {
                outcomes.append("\(error)")
            }
        }
        #expect(outcomes[0] == outcomes[1])
        if outcomes == ["ok", "ok"] {
            try expectIdentical(directory.appending("out-false.sqlite"), directory.appending("out-true.sqlite"), "odd keys")
        }
    }
}
