import Benchmark
import Foundation
import MoultAssociations
import MoultModel

// The association tables as a migration uses them: stage 1 records one association per migrated
// object, in ascending source order, in chunks of 10,000 (one LMDB write transaction each); stage 2
// looks the destinations up again, walking the sources forward, one by one or a chunk at a time.
// Each benchmark iteration handles 1,000,000 associations; the figures are per association
// (scalingFactor .mega), so "throughput" reads as associations per second.

// MARK: - Workload

private let chunkSize = 10_000
private let personEntity: Int32 = 2
private let addressEntity: Int32 = 1

private func makeTable(lmdb: Bool) throws -> any AssociationTable {
    guard lmdb else { return InMemoryAssociationTable() }
    let directory = FileManager.default.temporaryDirectory
        .appending(path: "moult-association-benchmark-\(UUID().uuidString)", directoryHint: .isDirectory)
    return try LMDBAssociationTable(directory: directory)
}

/// Records `count` associations person n -> address n in chunks, as stage 1 does.
private func fill(_ table: any AssociationTable, count: Int) throws {
    var source: Int64 = 1
    while source <= Int64(count) {
        try table.beginChunk()
        let end = min(source + Int64(chunkSize), Int64(count) + 1)
        while source < end {
            try table.associate(
                source: ObjectID(entity: personEntity, primaryKey: source),
                destination: ObjectID(entity: addressEntity, primaryKey: source),
                mapping: 1)
            source += 1
        }
        try table.commitChunk(durable: false)
    }
}

private func associationBenchmarks(lmdb: Bool) {
    let name = lmdb ? "LMDB" : "in-memory"
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .peakMemoryResident, .mallocCountTotal],
        scalingFactor: .mega,
        maxDuration: .seconds(20),
        maxIterations: 5
    )

    Benchmark("associate, chunks of 10,000 (\(name))", configuration: configuration) { benchmark in
        let table = try makeTable(lmdb: lmdb)
        defer { try? table.removeStorage() }
        benchmark.startMeasurement()
        try fill(table, count: benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        let recorded = try table.count()
        precondition(recorded == benchmark.scaledIterations.count, "\(recorded) associations recorded")
    }

    Benchmark("destinations(forMapping:source:), forward (\(name))", configuration: configuration) { benchmark in
        let table = try makeTable(lmdb: lmdb)
        defer { try? table.removeStorage() }
        try fill(table, count: benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for source in benchmark.scaledIterations {
            blackHole(try table.destinations(forMapping: 1, source: Int64(source + 1)))
        }
    }

    Benchmark("destinations(forMapping:sources:), batches of 10,000 (\(name))", configuration: configuration) { benchmark in
        let table = try makeTable(lmdb: lmdb)
        defer { try? table.removeStorage() }
        let count = benchmark.scaledIterations.count
        try fill(table, count: count)
        benchmark.startMeasurement()
        var first: Int64 = 1
        while first <= Int64(count) {
            let sources = Array(first..<min(first + Int64(chunkSize), Int64(count) + 1))
            blackHole(try table.destinations(forMapping: 1, sources: sources))
            first += Int64(chunkSize)
        }
    }
}

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    associationBenchmarks(lmdb: true)
    associationBenchmarks(lmdb: false)
}
