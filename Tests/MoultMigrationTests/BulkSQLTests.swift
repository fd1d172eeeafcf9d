import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Stage 1 inside SQLite (`INSERT … SELECT` per chunk) and stage 2's keys-only reads make the same
/// store as the per-object path, byte for byte in every table and the metadata.
@Suite struct BulkSQLTests {
    static let steps: [(from: String, mapping: String?, to: String)] = [
        ("v1", nil, "v2"), ("v2", "v2-to-v3", "v3"), ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5", "v5"),
    ]

    @Test(arguments: steps)
    func sameStoreEitherWay(step: (from: String, mapping: String?, to: String)) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 500, in: directory)
        let mappings = try step.mapping.map { [try People.mapping($0)] } ?? []
        let perObject = directory.appending("per-object.sqlite")
        try People.migrate(
            source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: 37, bulkSQL: false), output: perObject)
        // On two threads, the chunks' SELECTs run on the second (`BulkReadAhead`).
        for threads in [1, 2] {
            let bulk = directory.appending("bulk-\(threads).sqlite")
            var options = MigrationOptions(chunkSize: 37)
            options.threads = threads
            try People.migrate(source, to: step.to, mappings: mappings, options: options, output: bulk)
            try expectIdentical(bulk, perObject, "\(step.from) -> \(step.to): bulk SQL on \(threads) thread(s) vs per object")
        }
    }

    /// Rows whose stored values the per-object path converts or refuses (a REAL and a text in an
    /// integer column, a blob in a string column, a row of another entity in a table of one): the bulk
    /// insert's guard refuses the chunk that holds each, which takes the per-object path; the outcome
    /// is the per-object path's, store or error, and the chunks around it are still copied in bulk.
    @Test(arguments: [
        "UPDATE ZPERSON SET ZAGE = 31.0 WHERE Z_PK = 5",
        "UPDATE ZPERSON SET ZAGE = 31.5 WHERE Z_PK = 5",
        "UPDATE ZPERSON SET ZAGE = '12' WHERE Z_PK = 20",
        "UPDATE ZPERSON SET ZNAME = x'41' WHERE Z_PK = 40",
        "UPDATE ZPERSON SET Z_ENT = 9 WHERE Z_PK = 60",
    ])
    func oddValuesTakeThePerObjectPath(change: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 100, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript(change)
        database.close()
        var outcomes: [String] = []
        // Bulk on one thread, bulk on two (the guard then refuses on the second thread), per object.
        for (bulkSQL, threads) in [(true, 1), (true, 2), (false, 1)] {
            let output = directory.appending("out-\(bulkSQL)-\(threads).sqlite")
            var options = MigrationOptions(chunkSize: 16, bulkSQL: bulkSQL)
            options.threads = threads
            do {
                let migration = try ProgressiveMigration(store: source, model: People.model, to: "v2", options: options)
                try migration.run(output: output)
                outcomes.append("ok")
            } catch let error as MigrationError {
                outcomes.append("\(error.code) \(error.message)")
            }
        }
        #expect(outcomes[0] == outcomes[2] && outcomes[1] == outcomes[2], "\(change): \(outcomes)")
        if outcomes == ["ok", "ok", "ok"] {
            for bulk in ["out-true-1.sqlite", "out-true-2.sqlite"] {
                try expectIdentical(directory.appending(bulk), directory.appending("out-false-1.sqlite"), "\(change): \(bulk)")
            }
        }
    }

    /// A value of exactly the value size limit is copied by the bulk insert as it is; one byte more is
    /// refused by the insert's guard, so that the chunk takes the per-object path, which refuses it (65):
    /// the same error either way, on one thread or two. Without the guard the bulk copy would take it.
    @Test(arguments: [1000, 999])
    func theValueSizeLimitIsTheSameInBulk(limit: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 100, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZNAME = '\(String(repeating: "n", count: 1000))' WHERE Z_PK = 30")
        database.close()
        var outcomes: [String] = []
        for (bulkSQL, threads) in [(true, 1), (true, 2), (false, 1)] {
            var options = MigrationOptions(chunkSize: 16, bulkSQL: bulkSQL)
            options.threads = threads
            options.maxValueBytes = limit
            do {
                try ProgressiveMigration(store: source, model: People.model, to: "v2", options: options)
                    .run(output: directory.appending("out-\(bulkSQL)-\(threads).sqlite"))
                outcomes.append("ok")
            } catch let error as MigrationError {
                outcomes.append("\(error.code) \(error.message)")
            }
        }
        #expect(outcomes[0] == outcomes[2] && outcomes[1] == outcomes[2], "\(outcomes)")
        #expect(limit == 1000 ? outcomes[2] == "ok" : outcomes[2].contains("a value of 1000 bytes, more than the limit of 999 bytes"), "\(outcomes)")
        if limit == 1000 {
            for bulk in ["out-true-1.sqlite", "out-true-2.sqlite"] {
                try expectIdentical(directory.appending(bulk), directory.appending("out-false-1.sqlite"), bulk)
            }
        }
    }

    /// A mapping whose attribute is computed (not a plain copy) or whose filter runs in Swift takes the
    /// per-object path for that mapping only; the store is the same.
    @Test func computedValuesStayInSwift() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        var mapping = try People.mapping("v2-to-v3")
        let index = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToPerson" })
        mapping.entityMappings[index].attributeMappings = mapping.entityMappings[index].attributeMappings.map { property in
            var property = property
            if property.name == "name" { property.valueExpression = "uppercase:($source.name)" }
            return property
        }
        mapping.entityMappings[index].filterPredicate = "name MATCHES '.*a.*'"
        let bulk = directory.appending("bulk.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        try People.migrate(source, to: "v3", mappings: [mapping], options: MigrationOptions(chunkSize: 50), output: bulk)
        try People.migrate(source, to: "v3", mappings: [mapping], options: MigrationOptions(chunkSize: 50, bulkSQL: false), output: perObject)
        try expectIdentical(bulk, perObject, "computed values")
        let dump = try StoreDump(bulk)
        let names = try #require(dump.tables["ZPERSON"]).count
        #expect(names > 0 && names < 300)
    }
}
