import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// `moult finish STORE --model M`: the clean-up a `migrate --defer-cleanup` left.
struct FinishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finish",
        abstract: "Do the clean-up an in-place migration with --defer-cleanup left (dropped columns and tables, new indexes).",
        discussion: """
            The store is usable at its new version before this runs; its metadata lists what is pending \
            (`moult inspect` shows it). The clean-up runs in one transaction, each step made from the layout \
            of the store's version (found with --model by its entity hashes). Nothing pending is success. \
            Busy (73) while another run holds the store.
            """
    )

    @Argument(help: "The store.")
    var store: String

    @Option(help: "The versioned model (.xcdatamodeld) or a single version (.xcdatamodel).")
    var model: String

    func run() async throws {
        // The store's folder, held for the run (``HeldFolders``).
        let held = HeldFolders.hold(foldersOf: [store])
        defer { held.release() }
        try await reportingFailures {
            let url = URL(filePath: store)
            // One run per store: a migration of it, or another `finish`, makes this one busy (73), nothing touched.
            let lock = try RunLock.acquire(for: url, purpose: "finishing its deferred clean-up")
            defer { lock.release() }
            let versioned = try VersionedModel(contentsOf: URL(filePath: model))
            let metadata = try StoreMetadata(contentsOf: url)
            guard let version = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
                throw MigrationError(
                    .incompatibleStore,
                    "no version of \(versioned.name) matches the store \(store):\n" + versioned.versionDifferences(from: metadata.entityHashes))
            }
            let done = try InPlaceMigration.finishPendingCleanup(of: url, layout: StoreLayout(model: version.model))
            print(done == 0 ? "nothing pending in \(store)" : "finished \(done) pending clean-up step(s) in \(store) (\(version.name))")
        }
    }
}
