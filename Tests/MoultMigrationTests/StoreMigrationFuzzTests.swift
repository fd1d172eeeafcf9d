import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Fuzzing of whole stores through a small migration: People v2 stores damaged by SQL (values of every
/// wrong kind, dropped tables and columns, broken numbering and metadata) and by page-aware byte edits,
/// migrated to v3 with the scenario's mapping (bulk SQL and per object, in turn). For each input: no
/// trap, an outcome sorted by exit code, the source byte for byte unchanged with nothing created
/// beside it, and nothing left at the output when the run fails for bad input.
///
/// A long run: `MOULT_FUZZ_ITERATIONS=20000 swift test --skip-build --filter StoreMigrationFuzzTests`.
@Suite struct StoreMigrationFuzzTests {
    static let damage: [String] = {
        let odd = ["1e308", "-1e999", "'text'", "x'00FF'", "x''", "''", "9223372036854775807", "-9223372036854775808", "0.5", "NULL", "CAST(x'C328' AS TEXT)", "100000"]
        var scripts: [String] = [
            "DROP TABLE ZPERSON", "ALTER TABLE ZPERSON DROP COLUMN ZSTATE", "ALTER TABLE ZPERSON RENAME TO ZOLD; CREATE VIEW ZPERSON AS SELECT * FROM ZOLD",
            "UPDATE ZPERSON SET Z_ENT = 9 WHERE Z_PK % 3 = 0", "UPDATE Z_PRIMARYKEY SET Z_MAX = -5", "UPDATE Z_PRIMARYKEY SET Z_NAME = 'Nobody'",
            "DELETE FROM Z_PRIMARYKEY", "UPDATE Z_METADATA SET Z_PLIST = substr(Z_PLIST, 1, 40)", "DELETE FROM ZPERSON",
            "UPDATE ZPERSON SET Z_PK = Z_PK * 1000003", "UPDATE ZPERSON SET Z_OPT = 'x'",
        ]
        for (index, column) in ["ZAGE", "ZNAME", "ZSTATE", "ZSTREET"].enumerated() {
            for (offset, value) in odd.enumerated() where (offset + index) % 2 == 0 {
                scripts.append("UPDATE ZPERSON SET \(column) = \(value) WHERE Z_PK % \(2 + offset % 3) = 0")
            }
        }
        return scripts
    }()

    static func corpus(in directory: TemporaryDirectory, version: String = "v2") throws -> [[UInt8]] {
        let clean = try People.generate(version, persons: 40, in: directory, name: "clean.sqlite")
        var corpus: [[UInt8]] = [Array(try Data(contentsOf: clean))]
        for (index, script) in damage.enumerated() {
            let copy = directory.appending("damaged-\(index).sqlite")
            try FileManager.default.copyItem(at: clean, to: copy)
            let database = try Database(url: copy, mode: .readWrite)
            guard (try? database.executeScript(script)) != nil else { continue }
            try database.executeScript("PRAGMA wal_checkpoint(TRUNCATE)")
            database.close()
            corpus.append(Array(try Data(contentsOf: copy)))
        }
        return corpus
    }

    struct SourceTouched: Error, CustomStringConvertible {
        var description: String
    }

    @Test func mutatedStoresMigrateSafely() throws {
        let mapping = try People.mapping("v2-to-v3")
        let (v2, v3) = (People.version("v2"), People.version("v3"))
        let policies = People.policies
        try Self.fuzz(version: "v2", name: "stores through a migration") { store, output, count in
            let migrator = StreamingMigrator(
                source: store, sourceModel: v2, destinationModel: v3, mappings: [mapping], policies: policies,
                options: MigrationOptions(chunkSize: 16, associations: .memory, bulkSQL: count.isMultiple(of: 2)))
            _ = try migrator.run(output: output)
        }
    }

    /// People v1 stores through the chain v1 → v2 → v3 (v1 → v2 inferred, its intermediate store made
    /// by SQL from a copy of the source, then the given v2 → v3, streamed); every other input streams
    /// every step, for comparison.
    @Test func mutatedStoresThroughAChainMigrateSafely() throws {
        let mapping = try People.mapping("v2-to-v3")
        try Self.fuzz(version: "v1", name: "stores through a chain") { store, output, count in
            var options = MigrationOptions(chunkSize: 16, associations: .memory)
            options.intermediateStepsBySQL = count.isMultiple(of: 2)
            let migration = try ProgressiveMigration(
                store: store, model: People.model, to: "v3", mappings: [mapping], policies: People.policies, options: options)
            try migration.run(output: output)
        }
    }

    static func fuzz(version: String, name: String, migrate: @escaping (URL, URL, Int) throws -> Void) throws {
        let directory = try TemporaryDirectory("moult-migration-fuzz")
        defer { directory.remove() }
        let corpus = try Self.corpus(in: directory, version: version)
        #expect(corpus.count > Self.damage.count / 4)
        var fuzzer = Fuzzer(name: name, corpus: corpus)
        fuzzer.slowInputLimit = .seconds(5)
        let plain = fuzzer
        fuzzer.mutator = { input, random in StoreMutation.mutate(input, &random, plain) }

        let shm = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
        let base = (FileManager.default.fileExists(atPath: shm.path) ? shm : directory.url)
            .appending(path: "moult-migration-fuzz-\(UUID().uuidString)", directoryHint: .isDirectory)
        let source = base.appending(path: "src", directoryHint: .isDirectory)
        let out = base.appending(path: "out", directoryHint: .isDirectory)
        defer { try? FileManager.default.removeItem(at: base) }
        var count = 0
        let manager = FileManager.default

        let report = fuzzer.run(smokeIterations: 60) { input in
            count += 1
            for folder in [source, out] {
                try? manager.removeItem(at: folder)
                try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            let store = source.appending(path: "people.sqlite")
            try Data(input).write(to: store)
            let output = out.appending(path: "v3.sqlite")
            var failure: (any Error)?
            do { try migrate(store, output, count) } catch { failure = error }
            let names = (try? manager.contentsOfDirectory(atPath: source.path)) ?? []
            guard names == ["people.sqlite"] else { throw SourceTouched(description: "files beside the source: \(names.sorted())") }
            guard manager.contents(atPath: store.path) == Data(input) else { throw SourceTouched(description: "the source's bytes changed") }
            if let failure {
                // A run refused for bad input or validation leaves nothing at the output.
                let left = (try? manager.contentsOfDirectory(atPath: out.path)) ?? []
                if let categorized = failure as? any CategorizedError, [.badInput, .validationFailed].contains(categorized.category), !left.isEmpty {
                    throw SourceTouched(description: "a failed run (\(categorized.category)) left \(left.sorted()) at the output")
                }
                throw failure
            }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] > 0, "\(report)")
        #expect(report.exitCodes[65, default: 0] > 0, "\(report)")
    }
}
