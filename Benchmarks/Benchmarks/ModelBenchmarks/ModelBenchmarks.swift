import Benchmark
import Foundation
import MoultModel

// MARK: - Fixture

/// Apple's Photos model (macOS 10.15.1: 53 entities, 930 attributes, 262 relationships), the largest real model
/// in the fixtures, so reading and hashing it is the worst case a user meets.
private let photosModel: URL = URL(filePath: #filePath)
    .deletingLastPathComponent()  // ModelBenchmarks
    .deletingLastPathComponent()  // Benchmarks (targets)
    .deletingLastPathComponent()  // Benchmarks (package)
    .deletingLastPathComponent()  // root
    .appending(path: "Tests/Fixtures/osxphotos__Photos-10.15.1/Photos.xcdatamodel")

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(5),
        maxIterations: 200
    )

    Benchmark("Read Photos model (xcdatamodel XML)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try VersionedModel(contentsOf: photosModel))
        }
    }

    Benchmark("Hash Photos model (every entity)") { benchmark in
        let model = try VersionedModel(contentsOf: photosModel).current.model
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(model.entityVersionHashes())
        }
    }

    Benchmark("Read and hash Photos model") { benchmark in
        for _ in benchmark.scaledIterations {
            let model = try VersionedModel(contentsOf: photosModel).current.model
            blackHole(VersionHashes.digest(model.entityVersionHashes()))
        }
    }
}
