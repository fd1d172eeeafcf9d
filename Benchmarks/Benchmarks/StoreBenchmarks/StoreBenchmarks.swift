import Benchmark
import Foundation
import MoultModel
import MoultStore

// MoultStore's two hot paths, in process: reading objects through a single-pass cursor and writing
// them in batches (10,000 inserts per transaction), on People v2 persons (name, age, state, street).
// Each iteration handles 1,000,000 objects (scalingFactor .mega): times are per object and
// "throughput" reads as objects per second. The side-by-side figure against the sqlite3 shell is
// scripts/store-floor.sh's.

// MARK: - Workload

private let batchSize = 10_000

private let peopleV2: ObjectModel = {
    let url = URL(filePath: #filePath)
        .deletingLastPathComponent()  // StoreBenchmarks
        .deletingLastPathComponent()  // Benchmarks (targets)
        .deletingLastPathComponent()  // Benchmarks (package)
        .deletingLastPathComponent()  // root
        .appending(path: "Datasets/People/People.xcdatamodeld")
    do {
        guard let version = try VersionedModel(contentsOf: url).version(named: "v2") else {
            fatalError("Datasets/People/People.xcdatamodeld has no version v2")
        }
        return version.model
    } catch {
        fatalError("cannot read \(url.path): \(error)")
    }
}()

private func temporaryStore() -> URL {
    FileManager.default.temporaryDirectory.appending(path: "moult-store-benchmark-\(UUID().uuidString).sqlite")
}

private func remove(_ url: URL) {
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: url.path + suffix)
    }
}

/// Writes `count` persons into a new store at `url`, `batchSize` per transaction.
private func writePersons(_ count: Int, to url: URL) throws {
    let store = try SQLiteStore.create(at: url, model: peopleV2)
    let writer = try store.makeWriter()
    let shape = try writer.shape(of: "Person")
    let states = ["CA", "NY", "TX", "WA", "OR"]
    var values = [Value](repeating: .null, count: shape.names.count)
    let name = shape.slot(of: "name")!, age = shape.slot(of: "age")!
    let state = shape.slot(of: "state")!, street = shape.slot(of: "street")!
    var written = 0
    while written < count {
        try writer.write {
            for _ in 0..<min(batchSize, count - written) {
                written += 1
                values[name] = .string("Person \(written)")
                values[age] = .int(Int64(written % 100))
                values[state] = written % 5 == 0 ? .null : .string(states[written % states.count])
                values[street] = written % 5 == 0 ? .null : .string("\(written) Main Street")
                try writer.insert("Person", values: values)
            }
        }
    }
}

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .peakMemoryResident, .mallocCountTotal],
        scalingFactor: .mega,
        maxDuration: .seconds(30),
        maxIterations: 5
    )

    Benchmark("cursor read, 1M persons", configuration: configuration) { benchmark in
        let url = temporaryStore()
        defer { remove(url) }
        try writePersons(benchmark.scaledIterations.count, to: url)
        let store = try SQLiteStore(url: url, model: peopleV2)
        benchmark.startMeasurement()
        let cursor = try store.objects(of: "Person", batchSize: batchSize)
        var rows = 0
        while let row = try cursor.next() {
            rows += 1
            blackHole(row)
        }
        benchmark.stopMeasurement()
        precondition(rows == benchmark.scaledIterations.count, "read \(rows) rows")
    }

    Benchmark("batched write, 1M persons, 10,000 per transaction", configuration: configuration) { benchmark in
        let url = temporaryStore()
        defer { remove(url) }
        benchmark.startMeasurement()
        try writePersons(benchmark.scaledIterations.count, to: url)
    }
}
