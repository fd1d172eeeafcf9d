import Foundation
@testable import MoultEngine
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A run on two threads (the next chunk's source rows read on the second while a chunk is evaluated
/// and written, or a bulk copy's SELECT run there while the chunk before it is inserted) makes the
/// file a run on one thread makes, byte for byte, at any chunk size, on the per-object path and the
/// bulk path, and across a kill and a resume on another number of threads.
@Suite struct ThreadsTests {
    static let steps: [(from: String, mapping: String?, to: String)] = [
        ("v1", nil, "v2"), ("v2", "v2-to-v3", "v3"), ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5", "v5"),
        // Uniquing in SQL: each chunk's guard runs ahead on the second thread.
        ("v4", "v4-to-v5-builtin", "v5"),
    ]

    @Test(arguments: [1, 37, 10_000])
    func twoThreadsMakeTheSameFile(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for step in Self.steps {
            let source = try People.generate(step.from, persons: chunkSize == 1 ? 120 : 400, in: directory)
            let mappings = try step.mapping.map { [try People.mapping($0)] } ?? []
            for bulkSQL in [false, true] {
                var files: [Data] = []
                for threads in [1, 2] {
                    var options = MigrationOptions(chunkSize: chunkSize, bulkSQL: bulkSQL)
                    options.threads = threads
                    let output = directory.appending("\(step.mapping ?? step.to)-\(chunkSize)-\(bulkSQL)-\(threads).sqlite")
                    try People.migrate(source, to: step.to, mappings: mappings, options: options, output: output)
                    files.append(try Data(contentsOf: output))
                }
                #expect(files[0] == files[1], "\(step.from) -> \(step.to), chunks of \(chunkSize), bulk SQL \(bulkSQL): threads 1 vs 2")
            }
            try FileManager.default.removeItem(at: source)
        }
    }

    /// Killed on two threads in the middle of the passes, resumed on one (and the other way round):
    /// the file of an uninterrupted run on one thread.
    /// With bulk SQL, the chunks' SELECTs ran on the second thread when it was killed (or run there on resuming).
    @Test(arguments: [
        ("2", "1", "chunk-start:6", false), ("1", "2", "after-rows:4", false), ("2", "2", "after-sqlite-commit:9", false),
        ("2", "1", "chunk-start:6", true), ("1", "2", "after-sqlite-commit:5", true), ("2", "2", "after-sqlite-commit:9", true),
    ])
    func killedAndResumedOnAnotherNumberOfThreads(killedOn: String, resumedOn: String, fault: String, bulk: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        func arguments(_ output: URL, threads: String) -> [String] {
            [
                "migrate", source.path, "--model", Fixtures.peopleModel.path, "--to", "v3", "--mapping",
                Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json").path, "--output", output.path, "--chunk-size", "20",
                "--threads", threads, "--quiet",
            ] + (bulk ? [] : ["--no-bulk-sql"])
        }
        let reference = directory.appending("reference.sqlite")
        let uninterrupted = try MoultProcess.run(arguments(reference, threads: "1"))
        #expect(uninterrupted.exitCode == 0, "\(uninterrupted.standardError)")
        let output = directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(arguments(output, threads: killedOn), environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): exit \(killed.exitCode) \(killed.standardError)")
        let resumed = try MoultProcess.run(arguments(output, threads: resumedOn) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        // A resumed run commits more transactions: SQLite's file change counter (header bytes 24-27)
        // and the version it is valid for (92-95) count them. Every other byte is the same.
        #expect(
            try Self.pagesIgnoringChangeCounter(reference) == Self.pagesIgnoringChangeCounter(output),
            "\(fault): killed on \(killedOn), resumed on \(resumedOn)")
        try expectIdentical(reference, output, "\(fault)")
    }

    /// The bulk path's chunks after the first of each pass are evaluated on the second thread (the
    /// identity tests above would pass were they never), and none on one thread.
    @Test func bulkChunksAreEvaluatedAhead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        // On two threads, also with the WAL checkpointed between every two chunks (a limit of 0 bytes).
        let lines = try ["1", "2"].map { try Self.bulkChunksLine(source, threads: $0, chunkSize: 20, in: directory) }
            + [try Self.bulkChunksLine(source, threads: "2", chunkSize: 20, in: directory, walCheckpointBytes: 0)]
        // 300 persons in chunks of 20 (PersonToPerson) and their addresses (PersonToAddress): the first
        // chunk of each pass is evaluated on the spot.
        let counts = lines.map { line in line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } }
        #expect(counts[0].count == 3 && counts[0][1] == 0 && counts[0][2] == 0, "\(lines[0])")
        #expect(counts[1].count == 3 && counts[1][0] == counts[0][0] && counts[1][1] == counts[1][0] - 2 && counts[1][2] == 0, "\(lines[1])")
        #expect(counts[2].count == 3 && counts[2][1] == counts[1][1] && counts[2][2] > 0, "\(lines[2])")
        try expectIdentical(directory.appending("out-1.sqlite"), directory.appending("out-2.sqlite"), "threads 1 vs 2")
        try expectIdentical(directory.appending("out-1.sqlite"), directory.appending("out-2-wal0.sqlite"), "threads 1 vs 2, WAL checkpointed")
    }

    /// A chunk whose rows would hold more than `BulkReadAhead.rowsLimit` in memory (here names of
    /// 10 KB, 10 MB a chunk) is not evaluated ahead: the writer streams it inside SQLite, and the file
    /// is the same.
    @Test func largeRowsAreLeftToTheWriter() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 3000, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZNAME = ZNAME || printf('%.10000c', 'x')")
        database.close()
        let lines = try ["1", "2"].map { try Self.bulkChunksLine(source, threads: $0, chunkSize: 1000, in: directory) }
        // The addresses' chunks are small and evaluated ahead after the first; the persons' are not.
        let counts = lines[1].split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(counts.count == 3 && counts[1] > 0 && counts[1] <= counts[0] - 4, "\(lines[1])")
        try expectIdentical(directory.appending("out-1.sqlite"), directory.appending("out-2.sqlite"), "threads 1 vs 2, large rows")
    }

    /// Migrates People v2 → v3 into `out-<threads>.sqlite` with `--profile`; returns its line counting
    /// the chunks copied in bulk and those evaluated ahead.
    static func bulkChunksLine(
        _ source: URL, threads: String, chunkSize: Int, in directory: TemporaryDirectory, walCheckpointBytes: Int? = nil
    ) throws -> String {
        let output = directory.appending("out-\(threads)\(walCheckpointBytes.map { "-wal\($0)" } ?? "").sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Fixtures.peopleModel.path, "--to", "v3", "--mapping",
            Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json").path, "--output", output.path,
            "--chunk-size", "\(chunkSize)", "--threads", threads, "--profile", "--quiet",
        ] + (walCheckpointBytes.map { ["--wal-checkpoint-bytes", "\($0)"] } ?? []))
        #expect(result.exitCode == 0, "\(result.standardError)")
        return result.standardError.split(separator: "\n").first { $0.contains("chunks copied in bulk") }.map(String.init) ?? ""
    }

    static func pagesIgnoringChangeCounter(_ url: URL) throws -> Data {
        var bytes = try Data(contentsOf: url)
        for offset in Array(24..<28) + Array(92..<96) where offset < bytes.count { bytes[offset] = 0 }
        return bytes
    }

    /// `--threads 0` is bad usage.
    @Test func noThreadsIsBadUsage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 10, in: directory)
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Fixtures.peopleModel.path, "--to", "v2", "--output", directory.appending("out.sqlite").path,
            "--threads", "0",
        ])
        #expect(result.exitCode == 64, "\(result.standardError)")
        #expect(result.standardError.contains("--threads must be at least 1"))
    }
}

/// The read-ahead itself: the rows it reads on its thread are the store's own, a request it was not
/// given is not answered from another's rows, and a failure on its thread reaches the caller.
@Suite struct SourceReadAheadTests {
    @Test func readsTheRowsAskedForAndNoOthers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try SQLiteStore(url: try People.generate("v2", persons: 50, in: directory), model: People.version("v2"))
        defer { source.database.close() }
        let readAhead = SourceReadAhead(store: try source.secondReader())
        defer { readAhead.close() }
        let request = SourceReadAhead.Request(entity: "Person", after: 10, through: 30, condition: nil)
        readAhead.start(request)
        var expected: [ObjectRow] = []
        let cursor = try source.objects(of: "Person", includingSubentities: false, after: 10, through: 30, batchSize: 7)
        while let row = try cursor.next() { expected.append(row) }
        #expect(expected.count == 20)
        #expect(try readAhead.take(request) == expected)
        // Taken once: a second take, or another request, reads nothing ahead.
        #expect(try readAhead.take(request) == nil)
        readAhead.start(request)
        #expect(try readAhead.take(SourceReadAhead.Request(entity: "Person", after: 0, through: 30, condition: nil)) == nil)
        // A filter in SQL is applied on the second thread.
        let filtered = SourceReadAhead.Request(entity: "Person", after: 0, through: 50, condition: SQLCondition("ZAGE > ?", [.int(200)]))
        readAhead.start(filtered)
        #expect(try readAhead.take(filtered) == [])
        // An entity the model does not have fails where the engine would have: at the take.
        let unknown = SourceReadAhead.Request(entity: "Nobody", after: 0, through: 10, condition: nil)
        readAhead.start(unknown)
        #expect(throws: StoreError.self) { try readAhead.take(unknown) }
    }
}
