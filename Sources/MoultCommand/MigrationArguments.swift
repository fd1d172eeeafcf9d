import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore

/// The options `moult migrate` and `moult plan` share: the chain (``ChainArguments``, which `verify`
/// takes alone), then how the run goes.
struct MigrationArguments: ParsableArguments {
    @OptionGroup var chain: ChainArguments

    @Option(help: "A stages file (JSON): a staged migration, in place, through these stages (see the MoultMigration documentation's \"The stages file\").")
    var stages: String?

    @Option(help: "Source objects per chunk.")
    var chunkSize: Int = 10_000

    @Option(help: "Where the associations live: lmdb (on disk, flat memory) or memory.")
    var association: String = "lmdb"

    @Option(name: .customLong("partition"), help: "A predicate splitting every pass (e.g. 'name BEGINSWITH \"A\"'); repeat, in order.")
    var partitions: [String] = []

    @Flag(help: "Refuse (exit 66), before anything is written, a migration that drops data: an entity's objects or a property's non-nil values that no mapping reads.")
    var strict = false

    @Option(help: ArgumentHelp(
        "Threads to use: with 2, the next chunk is read (and, when copied in bulk, evaluated by its SELECT) while the chunk before it is written (the same store byte for byte; default: the cores available). A migration policy runs on one thread whatever the number, one object after another.",
        valueName: "n"))
    var threads: Int?

    @Flag(help: "Evaluate every object in Swift, even where stage 1 could run inside SQLite (same result; for comparison).")
    var noBulkSQL = false

    // For benchmarks and tests that compare the engine's paths (the result is the same either way):
    // hidden from --help.
    @Flag(help: .hidden) var perObjectStage2 = false
    @Flag(help: .hidden) var keepRepeatedLinks = false
    @Flag(help: .hidden) var toOnesInStage2 = false
    @Flag(help: .hidden) var keepPassOrder = false
    @Flag(help: .hidden) var writeAllAssociations = false
    @Flag(help: .hidden) var uniquePerObject = false
    /// A policy's fetches in the destination evaluated in Swift, object by object (for comparison).
    @Flag(help: .hidden) var fetchesInSwift = false
    /// The destination's WAL size over which it is checkpointed between chunks on two threads (tests: 0).
    @Option(help: .hidden) var walCheckpointBytes: Int64?
    @Flag(help: .hidden) var streamEveryStep = false
    @Flag(help: .hidden) var copyExternalData = false
    @Flag(help: .hidden) var profile = false

    func validate() throws {
        guard MigrationOptions.AssociationStorage(rawValue: association) != nil else {
            throw ValidationError("--association must be lmdb or memory, not '\(association)'")
        }
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
    }

    // The chain's arguments, as every command reads them.
    var storeArgument: String? {
        get { chain.storeArgument }
        set { chain.storeArgument = newValue }
    }
    var modelOption: String? { chain.modelOption }
    var store: String { chain.store }
    var model: String { chain.model }
    var to: String? {
        get { chain.to }
        set { chain.to = newValue }
    }
    var mappings: [String] { chain.mappings }
    var sourceModel: String { chain.sourceModel }
    func requireStoreAndModel() throws { try chain.requireStoreAndModel() }
    func bindings() throws -> [(className: String, binding: PolicyRegistry.Binding)] { try chain.bindings() }

    func options(durable: Bool = false, validate: Bool = true, stopAtFirst: Bool = false) -> MigrationOptions {
        var options = MigrationOptions(
            chunkSize: chunkSize, associations: MigrationOptions.AssociationStorage(rawValue: association) ?? .lmdb, durable: durable, pageCacheKiB: chain.pageCache, validate: validate,
            stopAtFirstValidationFailure: stopAtFirst, partitions: partitions, bulkSQL: !noBulkSQL)
        options.maxValueBytes = chain.maxValueSize
        options.setRelationships = !perObjectStage2
        options.skipRepeatedLinks = !keepRepeatedLinks
        options.toOnesAtInsert = !toOnesInStage2
        options.reorderCreatePasses = !keepPassOrder
        options.skipUnreadAssociations = !writeAllAssociations
        options.uniqueInSQL = !uniquePerObject
        options.fetchesInSQL = !fetchesInSwift
        if let walCheckpointBytes { options.walLimitBytes = walCheckpointBytes }
        options.intermediateStepsBySQL = !streamEveryStep
        options.linksExternalData = !copyExternalData
        options.profile = profile
        options.threads = threads ?? ProcessInfo.processInfo.activeProcessorCount
        return options
    }

    /// The files a run of these arguments reads, which nothing it writes may name (``OutputPathCheck``).
    var reads: [OutputPathCheck.Named] { [.store("STORE", chain.storeArgument), .file("--stages", stages)] }

    /// The migration these arguments describe (``ChainArguments/migration(options:)``).
    func migration(durable: Bool = false, validate: Bool = true, stopAtFirst: Bool = false, store: String? = nil) throws -> ProgressiveMigration {
        try chain.migration(options: options(durable: durable, validate: validate, stopAtFirst: stopAtFirst), store: store)
    }
}
