import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// `moult inspect STORE [--model M] [--json]`.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a store's metadata, entity hashes and object counts.",
        discussion: "The store is opened read-only and never modified (its -wal file is read, not written)."
    )

    @Argument(help: "A Core Data SQLite store.")
    var store: String

    @Option(help: "An .xcdatamodeld or .xcdatamodel: name the version that made the store, and count objects.")
    var model: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let url = URL(filePath: store)
            let metadata = try StoreMetadata(contentsOf: url)
            var matching: VersionedModel.Version?
            var differences: [(version: String, differences: [HashDifference])] = []
            var versioned: VersionedModel?
            var counts: [String: Int] = [:]
            if let model {
                let versions = try VersionedModel(contentsOf: URL(filePath: model))
                versioned = versions
                matching = versions.version(matchingEntityHashes: metadata.entityHashes)
                if let matching {
                    let opened = try SQLiteStore(url: url, model: matching.model)
                    for entity in opened.layout.entities {
                        counts[entity.name] = try opened.count(of: entity.name, includingSubentities: false)
                    }
                } else {
                    // Each version's differences, as `migrate` gives them.
                    differences = versions.versions.map { ($0.name, $0.model.hashDifferences(from: metadata.entityHashes)) }
                }
            } else {
                // Without a model, count rows per Z_PRIMARYKEY entity by its Z_ENT.
                counts = try rawCounts(url, metadata: metadata)
            }
            let names = metadata.entityHashes.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            // The model the store carries (Z_MODELCACHE), when it has one.
            var storeModel: ObjectModel?
            var storeModelError: String?
            do throws(StoreError) {
                let database = try Database(url: url, mode: .readOnly, configuration: .init(pageCacheKiB: 256))
                defer { database.close() }
                storeModel = try ModelCache.model(in: database)
            } catch {
                storeModelError = error.message
            }
            let storeModelHashes = storeModel?.entityVersionHashes() ?? [:]
            let external = ExternalDataCount(store: url, model: matching?.model ?? (storeModelHashes == metadata.entityHashes ? storeModel : nil))
            if json {
                var object: [String: Any] = [
                    "storeUUID": metadata.storeUUID,
                    "storeType": metadata.storeType,
                    "versionIdentifiers": metadata.versionIdentifiers,
                    "versionHashes": metadata.entityHashes.mapValues(\.hex),
                    "entities": counts.mapValues { ["count": $0] },
                    "matchingVersion": model == nil ? NSNull() : (matching.map { $0.name as Any } ?? NSNull()),
                ]
                object["frameworkVersion"] = metadata.frameworkVersion ?? NSNull()
                if let pending = try? InPlaceMigration.pendingCleanup(in: metadata), !pending.isEmpty {
                    object["pendingCleanup"] = pending.map(\.description)
                }
                if let storeModel {
                    object["storeModel"] = [
                        "entities": storeModelHashes.mapValues(\.hex),
                        "matchesMetadata": storeModelHashes == metadata.entityHashes,
                        "uncomputable": storeModel.entitiesWithUncomputableHash,
                    ] as [String: Any]
                } else {
                    object["storeModel"] = NSNull()
                    if let storeModelError { object["storeModelError"] = storeModelError }
                }
                if model != nil && matching == nil {
                    object["differences"] = differences.flatMap { version in version.differences.map { "\(version.version): \($0)" } }
                    object["versionDifferences"] = Dictionary(
                        differences.map { ($0.version, $0.differences.map(\.description)) }, uniquingKeysWith: { $1 })
                }
                if !external.isEmpty { object["externalData"] = external.json }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("store UUID: \(metadata.storeUUID)")
                print("framework version: \(metadata.frameworkVersion.map(String.init) ?? "unknown")")
                print("version identifiers: \(metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))")
                if let pending = try? InPlaceMigration.pendingCleanup(in: metadata), !pending.isEmpty {
                    print("pending clean-up (moult finish): \(pending.map(\.description).joined(separator: ", "))")
                }
                print("entities:")
                for name in names {
                    let count = counts[name].map { "  \($0) objects" } ?? ""
                    print("  \(name)  \(metadata.entityHashes[name]!.hex)\(count)")
                }
                if !external.isEmpty { print(external.line) }
                if let storeModel {
                    let agreement = storeModelHashes == metadata.entityHashes ? "its hashes are the metadata's" : "its hashes differ from the metadata's"
                    print("store model (Z_MODELCACHE): \(storeModel.entities.count) entities, \(agreement)")
                    for name in storeModelHashes.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                        print("  \(name)  \(storeModelHashes[name]!.hex)")
                    }
                } else {
                    print("store model (Z_MODELCACHE): \(storeModelError.map { "unreadable: \($0)" } ?? "none")")
                }
                if model != nil {
                    if let matching {
                        print("matching version: \(matching.name)")
                    } else {
                        print("no version matches; each version's differences from the store:")
                        for version in differences {
                            print("  \(version.version): " + version.differences.map(\.description).joined(separator: "; "))
                        }
                    }
                }
            }
            if let versioned, matching == nil {
                // The same error, and exit code (66), as `migrate`.
                throw MigrationError(
                    .incompatibleStore,
                    "no version of \(versioned.name) matches the store \(url.path):\n"
                        + ProgressiveMigration.versionDifferences(versioned, metadata.entityHashes))
            }
        }
    }

    private func rawCounts(_ url: URL, metadata: StoreMetadata) throws -> [String: Int] {
        let database = try Database(url: url, mode: .readOnly)
        var counts: [String: Int] = [:]
        let rows = try database.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") { ($0.int64(at: 0), $0.string(at: 1) ?? "") }
        let tables = Set(try database.query("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.string(at: 0) ?? "" })
        for (number, name) in rows where metadata.entityHashes[name] != nil {
            // Z_NAME is a hint: count in every Z table holding rows of this Z_ENT.
            var total = 0
            for table in tables where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
                let hasEnt = try database.columns(of: table).contains("Z_ENT")
                guard hasEnt, case .int(let n) = try database.scalar("SELECT COUNT(*) FROM \(table) WHERE Z_ENT = ?", [.int(number)]) else { continue }
                total += Int(n)
            }
            counts[name] = total
        }
        return counts
    }
}
