import Foundation
import MoultMapping
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// To-ones whose looked-up mapping ran earlier are written with their row in stage 1 (see
/// `ToOnesAtInsert`): the store is the same, byte for byte, as when stage 2 writes them, whatever the
/// chunk size and whichever stage-1 path (the bulk `INSERT … SELECT` or object by object) runs.
@Suite struct ToOnesAtInsertTests {
    static func eligible(_ mapping: String, from: String, to: String) throws -> [String: [String]] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(from, persons: 20, in: directory)
        let migrator = StreamingMigrator(
            source: source, sourceModel: People.version(from), destinationModel: People.version(to), mappings: [try People.mapping(mapping)],
            policies: People.policies, options: MigrationOptions())
        let store = try SQLiteStore(url: source, model: People.version(from), mode: .readOnly)
        defer { store.database.close() }
        let session = try Session(migrator: migrator, source: store, destination: nil)
        let layout = try StoreLayout(model: People.version(to))
        var result: [String: [String]] = [:]
        for (index, names) in ToOnesAtInsert.eligible(in: session.mappings, destinationLayout: layout, destinationModel: People.version(to)) {
            result[session.mappings[index].name] = names
        }
        return result
    }

    @Test func peopleStepsWriteTheirAddressesAtInsert() throws {
        #expect(try Self.eligible("v3-to-v4", from: "v3", to: "v4") == ["PersonToAdult": ["address"], "PersonToChild": ["address"]])
        #expect(try Self.eligible("v4-to-v5-builtin", from: "v4", to: "v5") == ["AdultToAdult": ["address"], "ChildToChild": ["address"]])
        // PersonToPerson looks up PersonToAddress, which runs after it: stage 2 writes the address.
        #expect(try Self.eligible("v2-to-v3", from: "v2", to: "v3") == [:])
        // Policies of the application's own: nothing.
        #expect(try Self.eligible("v4-to-v5", from: "v4", to: "v5") == [:])
    }

    static let steps: [(from: String, mapping: String, to: String)] = [("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5-builtin", "v5")]

    @Test(arguments: steps, [1, 37, 1_000])
    func sameStoreAsInStage2(step: (from: String, mapping: String, to: String), chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let mappings = [try People.mapping(step.mapping)]
        let reference = directory.appending("stage2.sqlite")
        var options = MigrationOptions(chunkSize: chunkSize)
        options.toOnesAtInsert = false
        try People.migrate(source, to: step.to, mappings: mappings, options: options, output: reference)
        for bulkSQL in [true, false] {
            let output = directory.appending("insert-\(bulkSQL).sqlite")
            try People.migrate(source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: chunkSize, bulkSQL: bulkSQL), output: output)
            try expectIdentical(reference, output, "\(step.mapping), chunks of \(chunkSize), bulk SQL \(bulkSQL)")
        }
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
