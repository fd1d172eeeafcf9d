import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultPeople

/// The options `moult migrate` and `moult plan` share.
struct MigrationArguments: ParsableArguments {
    @Argument(help: "The source store (never modified).")
    var store: String

    @Option(help: "The versioned model (.xcdatamodeld) or a single version (.xcdatamodel).")
    var model: String

    @Option(help: "The target version (default: the model's current version).")
    var to: String?

    @Option(name: .customLong("mapping"), help: "A mapping model (.json or .xcmappingmodel); repeat for several steps or passes.")
    var mappings: [String] = []

    @Option(help: "Source objects per chunk.")
    var chunkSize: Int = 10_000

    @Option(help: "Where the associations live: lmdb (on disk, flat memory) or memory.")
    var association: String = "lmdb"

    @Option(name: .customLong("partition"), help: "A predicate splitting every pass (e.g. 'name BEGINSWITH \"A\"'); repeat, in order.")
    var partitions: [String] = []

    @Flag(help: "Evaluate every object in Swift, even where stage 1 could run inside SQLite (same result; for comparison).")
    var noBulkSQL = false

    @Option(help: "SQLite's page cache per connection, in KiB.")
    var pageCache: Int = 4 * 1024

    func validate() throws {
        guard MigrationOptions.AssociationStorage(rawValue: association) != nil else {
            throw ValidationError("--association must be lmdb or memory, not '\(association)'")
        }
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
        guard pageCache >= 64 else { throw ValidationError("--page-cache must be at least 64 KiB") }
    }

    func options(durable: Bool = false, validate: Bool = true, stopAtFirst: Bool = false) -> MigrationOptions {
        MigrationOptions(
            chunkSize: chunkSize, associations: MigrationOptions.AssociationStorage(rawValue: association) ?? .lmdb, durable: durable, pageCacheKiB: pageCache, validate: validate,
            stopAtFirstValidationFailure: stopAtFirst, partitions: partitions, bulkSQL: !noBulkSQL)
    }

    /// The migration these arguments describe, with the People policies registered.
    func migration(durable: Bool = false, validate: Bool = true, stopAtFirst: Bool = false) throws -> ProgressiveMigration {
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        let mappingModels = try mappings.map { try MappingModel(contentsOf: URL(filePath: $0)) }
        var policies = PolicyRegistry()
        PeoplePolicies.register(in: &policies)
        return try ProgressiveMigration(
            store: URL(filePath: store), model: versioned, to: to, mappings: mappingModels, policies: policies,
            options: options(durable: durable, validate: validate, stopAtFirst: stopAtFirst), mappingLabels: mappings)
    }
}
