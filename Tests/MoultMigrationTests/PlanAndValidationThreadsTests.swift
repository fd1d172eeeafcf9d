import Foundation
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The work before the first chunk and after the last on two threads: the plan's chunks are cut two
/// mappings at a time, one on each connection to the source, and validation scans two tables at a
/// time. Both give what one thread gives, and what the objects themselves say.
@Suite struct PlanAndValidationThreadsTests {
    static func job(_ step: String, from: String, to: String, chunkSize: Int, threads: Int, partitions: [String] = [], source: URL) throws
        -> MigrationJob
    {
        var options = MigrationOptions(chunkSize: chunkSize, partitions: partitions)
        options.threads = threads
        return StreamingMigrator(
            source: source, sourceModel: People.version(from), destinationModel: People.version(to),
            mappings: [try People.mapping(step)], policies: People.policies, options: options
        ).job
    }

    /// The chunks a pass should have, from the keys of the objects it takes read one by one: each full
    /// chunk ends at every `chunkSize`-th key, the rest in one last chunk.
    static func expectedChunks(keys: [Int64], chunkSize: Int) -> [MigrationPlan.Chunk] {
        var chunks: [MigrationPlan.Chunk] = []
        var lower: Int64 = 0
        for start in stride(from: 0, to: keys.count, by: chunkSize) {
            let end = min(start + chunkSize, keys.count)
            chunks.append(MigrationPlan.Chunk(lowerBound: lower, upperBound: keys[end - 1], estimatedRows: end - start))
            lower = keys[end - 1]
        }
        return chunks
    }

    /// People v3 → v4 splits persons by age with two filters (one taking most persons, one few) and
    /// copies every address: each pass's chunks are those the keys give, on one thread and on two,
    /// for chunks of one object, of a few, of exactly the adults' number and of more than all.
    @Test(arguments: [1, 7, 37, 10_000])
    func chunksAreThoseTheKeysGiveOnOneAndTwoThreads(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try People.generate("v3", persons: 300, in: directory)
        let source = try SQLiteStore(url: url, model: People.version("v3"))
        defer { source.database.close() }
        let ages = try source.database.query("SELECT Z_PK, ZAGE FROM ZPERSON ORDER BY Z_PK") { ($0.int64(at: 0), $0.int64(at: 1)) }
        let addresses = try source.database.query("SELECT Z_PK FROM ZADDRESS ORDER BY Z_PK") { $0.int64(at: 0) }
        let keys = [
            "AddressToAddress": addresses,
            "PersonToAdult": ages.filter { $0.1 >= 18 }.map(\.0),
            "PersonToChild": ages.filter { $0.1 < 18 }.map(\.0),
        ]
        // A chunk as large as the adults: one full chunk, then none left.
        let sizes = chunkSize == 37 ? [37, keys["PersonToAdult"]!.count] : [chunkSize]
        for size in sizes {
            var plans: [MigrationPlan] = []
            for threads in [1, 2] {
                let job = try Self.job("v3-to-v4", from: "v3", to: "v4", chunkSize: size, threads: threads, source: url)
                plans.append(try Session(job: job, source: source, destination: nil).makePlan(fingerprint: "same"))
            }
            #expect(plans[0].passes == plans[1].passes)
            for pass in plans[1].passes where pass.stage == .createObjects {
                let name = plans[1].mappings[pass.mapping].name
                #expect(pass.chunks == Self.expectedChunks(keys: keys[name] ?? [], chunkSize: size), "\(name), chunks of \(size)")
            }
            // The mappings cut on two connections, the second surely used: the same chunks.
            let job = try Self.job("v3-to-v4", from: "v3", to: "v4", chunkSize: size, threads: 2, source: url)
            let mappings = try Session(job: job, source: source, destination: nil).mappings
            var opened = 0
            let chunks = try Partitioner(chunkSize: size, partitions: []).chunks(of: mappings, source: source.database) {
                opened += 1
                return try source.database.scanningReader(pageCacheKiB: 64)
            }
            #expect(opened == 1)
            #expect(chunks == mappings.map { mapping in plans[0].passes.first { $0.mapping == mapping.index && $0.stage == .createObjects }?.chunks ?? [] })
        }
    }

    /// A filter that takes no object gives a pass without chunks (one scan finds it), and partitions
    /// cut the same chunks on one thread and on two.
    @Test func aFilterThatTakesNothingAndPartitionsGiveTheSameChunks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try People.generate("v2", persons: 120, in: directory)
        let database = try Database(url: url, mode: .readWrite)
        try database.execute("UPDATE ZPERSON SET ZSTREET = NULL, ZSTATE = NULL")
        database.close()
        let source = try SQLiteStore(url: url, model: People.version("v2"))
        defer { source.database.close() }
        let partitions = [#"name BEGINSWITH "A""#, #"name BEGINSWITH "B""#]
        for partitions in [[], partitions] {
            var plans: [MigrationPlan] = []
            for threads in [1, 2] {
                let job = try Self.job("v2-to-v3", from: "v2", to: "v3", chunkSize: 9, threads: threads, partitions: partitions, source: url)
                plans.append(try Session(job: job, source: source, destination: nil).makePlan(fingerprint: "same"))
            }
            #expect(plans[0].passes == plans[1].passes)
            let addresses = plans[1].passes.filter { plans[1].mappings[$0.mapping].name == "PersonToAddress" }
            #expect(!addresses.isEmpty && addresses.allSatisfy(\.chunks.isEmpty))
            let persons = plans[1].passes.filter { plans[1].mappings[$0.mapping].name == "PersonToPerson" && $0.stage == .createObjects }
            #expect(persons.count == partitions.count + 1)
            #expect(persons.flatMap(\.chunks).map(\.estimatedRows).reduce(0, +) == 120)
        }
    }

    /// Objects that break rules in two tables, one of them holding two entities (adults and children
    /// share the persons' table): the same failures, in the same order, on one thread and on two.
    @Test func validationFindsTheSameFailuresOnOneAndTwoThreads() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try People.generate("v3", persons: 200, in: directory)
        let database = try Database(url: url, mode: .readWrite)
        // v4 wants names of at least one character, ages within 0…150: a nameless adult, an adult above
        // the maximum, a child aged below zero.
        let adults = try database.query("SELECT Z_PK FROM ZPERSON WHERE ZAGE >= 18 ORDER BY Z_PK LIMIT 2") { $0.int64(at: 0) }
        let child = try #require(try database.query("SELECT Z_PK FROM ZPERSON WHERE ZAGE < 18 ORDER BY Z_PK LIMIT 1") { $0.int64(at: 0) }.first)
        try database.execute("UPDATE ZPERSON SET ZNAME = '' WHERE Z_PK = \(adults[0])")
        try database.execute("UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK = \(adults[1])")
        try database.execute("UPDATE ZPERSON SET ZAGE = -3 WHERE Z_PK = \(child)")
        // And the last person, in the last of the ranges of keys two threads cut the table in.
        try database.execute("UPDATE ZPERSON SET ZNAME = '' WHERE Z_PK = (SELECT MAX(Z_PK) FROM ZPERSON)")
        database.close()
        var failures: [[String]] = []
        for threads in [1, 2] {
            var options = MigrationOptions(chunkSize: 16)
            options.threads = threads
            let output = directory.appending("v4-\(threads).sqlite")
            let error = try #require(throws: MigrationError.self) {
                try People.migrate(url, to: "v4", mappings: [People.mapping("v3-to-v4")], options: options, output: output)
            }
            #expect(error.code == .validationFailed)
            failures.append(error.failures.map { "\($0.entity) \($0.primaryKey) \($0.property ?? "-") \($0.rule)" })
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
        #expect(failures[0] == failures[1])
        #expect(failures[1].count == 4, "\(failures[1])")
        #expect(Set(failures[1].map { $0.split(separator: " ")[0] }) == ["Adult", "Child"], "\(failures[1])")

        // The validator itself, on a store migrated without validation, with a second connection surely
        // given (its tables cut in four ranges of keys) and without: the same failures in the same order.
        var options = MigrationOptions(chunkSize: 16)
        options.validate = false
        let unvalidated = directory.appending("v4-unvalidated.sqlite")
        try People.migrate(url, to: "v4", mappings: [People.mapping("v3-to-v4")], options: options, output: unvalidated)
        let store = try SQLiteStore(url: unvalidated, model: People.version("v4"))
        defer { store.database.close() }
        var found: [[String]] = []
        for twoConnections in [false, true] {
            var list: [String] = []
            var validator = Validator(
                model: People.version("v4"), layout: store.layout, database: store.database, stopAtFirst: false,
                report: { list.append("\($0.entity) \($0.primaryKey) \($0.property ?? "-") \($0.rule)") })
            validator.second = twoConnections ? try store.database.scanningReader(pageCacheKiB: 64) : nil
            defer { validator.second?.close() }
            #expect(try validator.run() == 4)
            found.append(list)
        }
        #expect(found[0] == found[1])
        #expect(found[1] == failures[1], "\(found[1])")
    }
}
