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
        .library(name: "MoultAssociations", targets: ["MoultAssociations"]),
        .library(name: "MoultEngine", targets: ["MoultEngine"]),
        .library(name: "MoultMigration", targets: ["MoultMigration"]),
        .library(name: "MoultCommand", targets: ["MoultCommand"]),
        .library(name: "MoultFleet", targets: ["MoultFleet"]),
        .library(name: "MoultPeople", targets: ["MoultPeople"]),
        .library(name: "MoultGenerate", targets: ["MoultGenerate"]),
        .library(name: "MoultTesting", targets: ["MoultTesting"]),
        .executable(name: "moult", targets: ["moult"]),
        .executable(name: "moult-people", targets: ["moult-people"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
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
        .target(name: "MoultStore", dependencies: ["MoultModel", "MoultArchive", "MoultCSQLite"]),
        .target(name: "MoultAssociations", dependencies: ["MoultModel", "MoultCLMDB"]),
        // The engine: plan, partitioner, chunk evaluation and writing, checkpoints, policies, events.
        .target(
            name: "MoultEngine",
            dependencies: [
                "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The drivers: a copy into a new store, a chain, in place, staged, verify.
        .target(
            name: "MoultMigration",
            dependencies: [
                "MoultEngine", "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(name: "MoultFleet", dependencies: []),
        // Stores of any model filled with every kind of value, and random model pairs (`moult generate`).
        .target(name: "MoultGenerate", dependencies: ["MoultModel", "MoultArchive", "MoultStore"]),
        // Migration tests: every version by every path, checked and compared (`moult test`).
        .target(
            name: "MoultTesting",
            dependencies: ["MoultModel", "MoultStore", "MoultMapping", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "MoultPeople",
            dependencies: ["MoultModel", "MoultStore", "MoultMapping", "MoultMigration"],
            path: "Datasets/People/Swift"
        ),
        .target(
            name: "MoultCommand",
            dependencies: [
                "MoultModel", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations", "MoultEngine", "MoultMigration", "MoultFleet",
                "MoultGenerate", "MoultTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "Moult",
            dependencies: [
                "MoultModel", "MoultArchive", "MoultExpressions", "MoultMapping", "MoultStore", "MoultAssociations", "MoultMigration",
            ]
        ),
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
        .testTarget(name: "MoultMappingTests", dependencies: ["MoultMapping", "MoultArchive", "MoultTestSupport"]),
        .testTarget(name: "MoultStoreTests", dependencies: ["MoultStore", "MoultTestSupport"]),
        .testTarget(name: "MoultAssociationsTests", dependencies: ["MoultAssociations", "MoultTestSupport"]),
        .testTarget(name: "MoultMigrationTests", dependencies: ["MoultEngine", "MoultMigration", "MoultPeople", "MoultTestSupport"]),
        .testTarget(name: "MoultCommandTests", dependencies: ["MoultCommand", "MoultTestSupport"]),
        .testTarget(name: "MoultGenerateTests", dependencies: ["MoultGenerate", "MoultStore", "MoultTestSupport"]),
        .testTarget(name: "MoultTestingTests", dependencies: ["MoultTesting", "MoultGenerate", "MoultStore", "MoultModel", "MoultTestSupport"]),
    ]
)

// Swift 6 language mode and the upcoming features, for every target.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]
