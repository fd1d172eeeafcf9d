// swift-tools-version: 6.1
import PackageDescription

// Moult's benchmarks: a nested package, so that a library user never resolves the benchmark
// dependency. Run them from this folder:
//
//     swift package benchmark                       # every target
//     swift package benchmark --target ModelBenchmarks
//
// The side-by-side scripts (moult against the sqlite3 shell, memory, crash harness) are in scripts/.

/// The root package's identity: its folder's name, which varies with the clone (`moult`, `Moult`,
/// `wt-bench`…), so it is derived from this file's path rather than written down.
let rootPackage: String = {
    let components = #filePath.split(separator: "/", omittingEmptySubsequences: true)
    // …/<root>/Benchmarks/Package.swift
    precondition(components.count >= 3, "Benchmarks/Package.swift is not inside the Moult package")
    return String(components[components.count - 3])
}()

/// A benchmark target following ordo-one/benchmark's layout: `Benchmarks/<Name>/`.
func benchmarkTarget(_ name: String, _ modules: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark")]
            + modules.map { .product(name: $0, package: rootPackage) },
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "MoultBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "moult-bench", targets: ["MoultBench"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // `moult-bench store-read|store-write`: MoultStore against the sqlite3 shell (scripts/store-floor.sh).
        .executableTarget(
            name: "MoultBench",
            dependencies: [
                .product(name: "MoultModel", package: rootPackage),
                .product(name: "MoultStore", package: rootPackage),
            ]
        ),
        benchmarkTarget("ModelBenchmarks", ["MoultModel"]),
        benchmarkTarget("AssociationBenchmarks", ["MoultModel", "MoultAssociations"]),
        benchmarkTarget("StoreBenchmarks", ["MoultModel", "MoultStore"]),
        benchmarkTarget("ExpressionBenchmarks", ["MoultModel", "MoultExpressions"]),
    ]
)

// Swift 6 language mode and the upcoming features, for every target (as the root package does).
for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]
