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

    @Flag(help: "Print only the digest of the store's content (what a reader of it sees: the identity a run records for its source).")
    var digest = false

    func run() async throws {
        try await reportingFailures {
            if digest {
                // SQLite: its pages as the -wal last committed them; XML: its bytes. Times and size play no part.
                let content = try StoreContentDigest(of: URL(filePath: store))
                return print(json ? "{\"contentDigest\":\"\(content.hex)\"}" : "content digest: \(content.hex)")
            }
            if try inspectXMLStore() { return }
            let url = URL(filePath: store)
            let inspection = try Inspection(store: url, model: model)
            if json {
                try Report(inspection).printJSON()
            } else {
                for line in inspection.lines { print(line) }
            }
            if let versioned = inspection.versioned, inspection.matching == nil {
                // The same error, and exit code (66), as `migrate`.
                throw MigrationError(
                    .incompatibleStore,
                    "no version of \(versioned.name) matches the store \(url.path):\n"
                        + versioned.versionDifferences(from: inspection.metadata.entityHashes))
            }
        }
    }

    /// What `inspect` finds in a store.
    struct Inspection {
        var metadata: StoreMetadata
        /// `--model`.
        var versioned: VersionedModel?
        /// The version of `--model` whose hashes are the store's.
        var matching: VersionedModel.Version?
        /// With `--model` and no version matching: each version's differences, as `migrate` gives them.
        var differences: [(version: String, differences: [HashDifference])] = []
        /// Objects per entity: with the matching version, or per Z_PRIMARYKEY entity without `--model`.
        var counts: [String: Int] = [:]
        /// The model the store carries (Z_MODELCACHE), when it has one, or why it cannot be read.
        var storeModel: ObjectModel?
        var storeModelError: String?
        var external: ExternalDataCount
        var pendingCleanup: [String]

        /// Reads the store at `url` (read-only), and `model` if given.
        init(store url: URL, model: String?) throws {
            let metadata = try StoreMetadata(contentsOf: url)
            self.metadata = metadata
            versioned = try model.map { try VersionedModel(contentsOf: URL(filePath: $0)) }
            if let versioned {
                matching = versioned.version(matchingEntityHashes: metadata.entityHashes)
                if let matching {
                    let opened = try SQLiteStore(url: url, model: matching.model)
                    for entity in opened.layout.entities {
                        counts[entity.name] = try opened.count(of: entity.name, includingSubentities: false)
                    }
                } else {
                    differences = versioned.versions.map { ($0.name, $0.model.hashDifferences(from: metadata.entityHashes)) }
                }
            } else {
                counts = try InspectCommand.rawCounts(url, metadata: metadata)
            }
            do throws(StoreError) {
                let database = try Database(url: url, mode: .readOnly, configuration: .init(pageCacheKiB: 256))
                defer { database.close() }
                storeModel = try ModelCache.model(in: database)
            } catch {
                storeModelError = error.message
            }
            let carriesItsHashes = storeModel?.entityVersionHashes() == metadata.entityHashes
            external = ExternalDataCount(store: url, model: matching?.model ?? (carriesItsHashes ? storeModel : nil))
            pendingCleanup = ((try? InPlaceMigration.pendingCleanup(in: metadata)) ?? []).map(\.description)
        }

        var storeModelHashes: [String: VersionHash] { storeModel?.entityVersionHashes() ?? [:] }

        /// What `inspect` prints without `--json`.
        var lines: [String] {
            var lines = [
                "store UUID: \(metadata.storeUUID)",
                "framework version: \(metadata.frameworkVersion.map(String.init) ?? "unknown")",
                "version identifiers: \(metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))",
            ]
            if !pendingCleanup.isEmpty { lines.append("pending clean-up (moult finish): \(pendingCleanup.joined(separator: ", "))") }
            lines.append("entities:")
            for name in metadata.entityHashes.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                lines.append("  \(name)  \(metadata.entityHashes[name]!.hex)\(counts[name].map { "  \($0) objects" } ?? "")")
            }
            if !external.isEmpty { lines.append(external.line) }
            let storeModelHashes = storeModelHashes
            if let storeModel {
                let agreement = storeModelHashes == metadata.entityHashes ? "its hashes are the metadata's" : "its hashes differ from the metadata's"
                lines.append("store model (Z_MODELCACHE): \(storeModel.entities.count) entities, \(agreement)")
                for name in storeModelHashes.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    lines.append("  \(name)  \(storeModelHashes[name]!.hex)")
                }
            } else {
                lines.append("store model (Z_MODELCACHE): \(storeModelError.map { "unreadable: \($0)" } ?? "none")")
            }
            guard versioned != nil else { return lines }
            if let matching { return lines + ["matching version: \(matching.name)"] }
            lines.append("no version matches; each version's differences from the store:")
            return lines + differences.map { "  \($0.version): " + $0.differences.map(\.description).joined(separator: "; ") }
        }
    }

    /// `inspect --json`.
    struct Report: JSONReport {
        static let isPrettyPrinted = true

        /// The model the store carries.
        struct StoreModel: Encodable {
            var entities: [String: String]
            var matchesMetadata: Bool
            var uncomputable: [String]
        }

        var storeUUID: String
        var storeType: String
        var versionIdentifiers: [String]
        var versionHashes: [String: String]
        /// `{"count": n}` per entity.
        var entities: [String: [String: Int]]
        /// `null` without `--model`, or when no version matches.
        @ExplicitNull var matchingVersion: String?
        @ExplicitNull var frameworkVersion: Int?
        /// Left out when there is none.
        var pendingCleanup: [String]?
        @ExplicitNull var storeModel: StoreModel?
        /// Left out unless the store carries a model that cannot be read.
        var storeModelError: String?
        /// With `--model` and no version matching: each difference, and each version's.
        var differences: [String]?
        var versionDifferences: [String: [String]]?
        /// Left out when the store has none.
        var externalData: ExternalDataCount.Report?

        init(_ inspection: Inspection) {
            let metadata = inspection.metadata
            storeUUID = metadata.storeUUID
            storeType = metadata.storeType
            versionIdentifiers = metadata.versionIdentifiers
            versionHashes = metadata.entityHashes.mapValues(\.hex)
            entities = inspection.counts.mapValues { ["count": $0] }
            matchingVersion = inspection.matching?.name
            frameworkVersion = metadata.frameworkVersion
            pendingCleanup = inspection.pendingCleanup.isEmpty ? nil : inspection.pendingCleanup
            if let model = inspection.storeModel {
                let hashes = inspection.storeModelHashes
                storeModel = StoreModel(
                    entities: hashes.mapValues(\.hex), matchesMetadata: hashes == metadata.entityHashes, uncomputable: model.entitiesWithUncomputableHash)
            } else {
                storeModelError = inspection.storeModelError
            }
            if inspection.versioned != nil, inspection.matching == nil {
                differences = inspection.differences.flatMap { version in version.differences.map { "\(version.version): \($0)" } }
                versionDifferences = Dictionary(inspection.differences.map { ($0.version, $0.differences.map(\.description)) }, uniquingKeysWith: { $1 })
            }
            externalData = inspection.external.isEmpty ? nil : inspection.external.report
        }
    }

    private static func rawCounts(_ url: URL, metadata: StoreMetadata) throws -> [String: Int] {
        let database = try Database(url: url, mode: .readOnly)
        var counts: [String: Int] = [:]
        let rows = try database.primaryKeyEntities()
        let tables = Set(try database.tableNames())
        for (number, name) in rows where metadata.entityHashes[name] != nil {
            // Z_NAME is a hint: count in every Z table holding rows of this Z_ENT.
            var total = 0
            for table in tables where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
                guard let n = try database.rowCount(in: table, entityNumber: number) else { continue }
                total += Int(n)
            }
            counts[name] = total
        }
        return counts
    }
}
