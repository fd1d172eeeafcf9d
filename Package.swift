// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Moult",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Moult", targets: ["Moult"]),
        .library(name: "MoultModel", targets: ["MoultModel"]),
        .library(name: "MoultArchive", targets: ["MoultArchive"]),
        .library(name: "MoultExpressions", targets: ["MoultExpressions"]),
        .library(name: "MoultMapping", targets: ["MoultMapping"]),
        .library(name: "MoultStore", targets: ["MoultStore"]),
        .library(name: "MoultXMLStore", targets: ["MoultXMLStore"]),
        .library(name: "MoultAssociations", targets: ["MoultAssociations"]),
        .library(name: "MoultEngine", targets: ["MoultEngine"]),
        .library(name: "MoultMigration", targets: ["MoultMigration"]),
        .library(name: "MoultCommand", targets: ["MoultCommand"]),
        .library(name: "MoultFleet", targets: ["MoultFleet"]),
        .library(name: "MoultTelemetry", targets: ["MoultTelemetry"]),
        .library(name: "MoultPeople", targets: ["MoultPeople"]),
        .library(name: "MoultGenerate", targets: ["MoultGenerate"]),
        .library(name: "MoultTesting", targets: ["MoultTesting"]),
        // Core Data's migration API over the engine: an app's `import CoreData` resolves to it on Linux.
        .library(name: "CoreData", targets: ["CoreData"]),
        .executable(name: "moult", targets: ["moult"]),
        .executable(name: "moult-people", targets: ["moult-people"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Logging and metrics for a server that embeds the library; Prometheus's text format for the CLI's --metrics.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // `swift package generate-documentation` (make docs); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.0.0"),
    ],
    targets: [
        // MARK: - C libraries
        .systemLibrary(
            name: "MoultCSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "MoultCLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),

        // MARK: - Libraries
        .target(
            name: "MoultModel",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "MoultArchive", dependencies: ["MoultModel"]),
        .target(name: "MoultExpressions", dependencies: ["MoultModel"]),
        .target(name: "MoultMapping", dependencies: ["MoultModel", "MoultExpressions", "MoultArchive"]),
        .target(
            name: "MoultStore",
            dependencies: ["MoultModel", "MoultArchive", "MoultCSQLite", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "MoultAssociations", dependencies: ["MoultModel", "MoultStore", "MoultCLMDB"]),
        // Core Data's XML store: a streaming reader and writer, and conversion to and from SQLite.
        .target(name: "MoultXMLStore", dependencies: ["MoultModel", "MoultArchive", "MoultStore"]),
        // The engine: plan, partitioner, chunk evaluation and writing, checkpoints, policies, events.
        .target(
            name: "MoultEngine",
            dependencies: [
                "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The drivers: a copy into a new store (from an SQLite or an XML source), a chain, in place, staged, verify.
        .target(
            name: "MoultMigration",
            dependencies: [
                "MoultEngine", "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultXMLStore", "MoultAssociations",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(name: "MoultFleet", dependencies: []),
        // A run's events as swift-log messages (debug and trace) and swift-metrics metrics.
        .target(
            name: "MoultTelemetry",
            dependencies: [
                "MoultEngine", "MoultModel", .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Stores of any model filled with every kind of value, and random model pairs (`moult generate`).
        .target(name: "MoultGenerate", dependencies: ["MoultModel", "MoultArchive", "MoultStore"]),
        // Migration tests: every version by every path, checked and compared (`moult test`).
        .target(
            name: "MoultTesting",
            dependencies: ["MoultModel", "MoultStore", "MoultMapping", "MoultExpressions", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "MoultPeople",
            dependencies: ["MoultModel", "MoultStore", "MoultMapping", "MoultMigration"],
            path: "Datasets/People/Swift"
        ),
        .target(
            name: "MoultCommand",
            dependencies: [
                "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultXMLStore", "MoultAssociations", "MoultEngine", "MoultMigration", "MoultFleet",
                "MoultTelemetry", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
                "MoultGenerate", "MoultTesting", "MoultPolicyBuild", "MoultPolicySource",
            ]
        ),
        .target(
            name: "Moult",
            dependencies: [
                "MoultModel", "MoultArchive", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations", "MoultMigration",
                "MoultTelemetry", "MoultXMLStore",
            ]
        ),
        // Core Data's migration API (NSEntityMigrationPolicy, NSMigrationManager, NSManagedObject…) over
        // the engine, so an app's policy files compile unchanged on Linux.
        .target(name: "CoreData", dependencies: ["MoultEngine", "MoultModel", "MoultMapping", "MoultExpressions", "MoultStore"]),
        // `moult policies`: an app's policy files rewritten where Linux's compiler refuses them, and registered.
        // Reading and rewriting an app's policy files (Foundation only: the plugin's host tool builds it).
        .target(name: "MoultPolicySource"),
        .target(name: "MoultPolicyBuild", dependencies: ["MoultPolicySource", "MoultModel", "MoultStore"]),
        // The policy build inside this package, for a target listing app policy files (CoreDataPolicyTests):
        // its tool is the generator alone, so the host build does not compile the package a second time.
        .executableTarget(name: "moult-policy-generate", dependencies: ["MoultPolicySource"]),
        .plugin(name: "PolicyBuildPlugin", capability: .buildTool(), dependencies: ["moult-policy-generate"]),
        .executableTarget(
            name: "moult",
            dependencies: ["MoultCommand", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The People scenario's own command: moult with its policies compiled in, and its generator.
        .executableTarget(
            name: "moult-people",
            dependencies: [
                "MoultCommand", "MoultPeople", "MoultMigration", "MoultModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Datasets/People/CLI"
        ),

        // The Swift examples of the README and the DocC articles, compiled and run by DocExamplesTests.
        .executableTarget(name: "doc-examples", dependencies: ["Moult", "MoultPeople"], path: "Examples/DocExamples"),

        // MARK: - Tests
        .target(
            name: "MoultTestSupport",
            dependencies: ["MoultModel"],
            path: "Tests/MoultTestSupport"
        ),
        .testTarget(
            name: "MoultModelTests",
            dependencies: ["MoultModel", "MoultTestSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "MoultArchiveTests", dependencies: ["MoultArchive", "MoultTestSupport"]),
        .testTarget(name: "MoultExpressionsTests", dependencies: ["MoultExpressions", "MoultTestSupport"]),
        .testTarget(name: "MoultMappingTests", dependencies: ["MoultMapping", "MoultArchive", "MoultExpressions", "MoultTestSupport"]),
        .testTarget(name: "MoultStoreTests", dependencies: ["MoultStore", "MoultTestSupport"]),
        .testTarget(name: "MoultXMLStoreTests", dependencies: ["MoultXMLStore", "MoultStore", "MoultTestSupport"]),
        .testTarget(name: "MoultAssociationsTests", dependencies: ["MoultAssociations", "MoultTestSupport"]),
        .testTarget(name: "MoultMigrationTests", dependencies: ["MoultEngine", "MoultMigration", "MoultPeople", "MoultXMLStore", "MoultTestSupport"]),
        .testTarget(name: "MoultCommandTests", dependencies: ["MoultCommand", "MoultStore", "MoultTesting", "MoultXMLStore", "MoultTestSupport"]),
        .testTarget(name: "DocExamplesTests", dependencies: ["MoultTestSupport"]),
        .testTarget(
            name: "MoultTelemetryTests",
            dependencies: [
                "MoultTelemetry", "MoultEngine", "MoultMapping", "MoultModel", "MoultTestSupport", .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The five public policy files, built by the policy build (the plugin) against the CoreData module, and run.
        .testTarget(
            name: "CoreDataPolicyTests",
            dependencies: ["CoreData", "MoultEngine", "MoultMigration", "MoultModel", "MoultStore", "MoultPolicyBuild", "MoultGenerate", "MoultPeople", "MoultTestSupport"],
            exclude: ["policy-sources.txt"],
            plugins: ["PolicyBuildPlugin"]
        ),
        .testTarget(name: "MoultGenerateTests", dependencies: ["MoultGenerate", "MoultStore", "MoultTestSupport"]),
        .testTarget(name: "MoultTestingTests", dependencies: ["MoultTesting", "MoultGenerate", "MoultStore", "MoultModel", "MoultTestSupport"]),
    ]
)

// Swift 6 language mode and the upcoming features, for every target.
for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]
