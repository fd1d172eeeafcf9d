import Foundation
import MoultEngine
import MoultModel
import MoultStore

/// A step run by SQL on a store (the store itself in place, or a copy a chain makes of its input): the
/// step's script, its validation and its new metadata in one transaction, so that the store is at the
/// step's first version or its last, never between. The in-place driver runs its SQL chains with it; a
/// chain run into `--output` runs its intermediate steps by SQL with it.
enum SQLSteps {
    /// A step of an SQL chain's transaction found the store's schema is not its layout: the whole
    /// transaction rolls back and the chain runs out of place (the step streamed).
    struct SchemaNotLaidOut: Error {}
}

extension SQLSteps {
    /// Runs a step's SQL and writes the new metadata, in one transaction.
    ///
    /// - Returns: false (nothing changed) when the store's schema is not the layout the script was made
    ///   for (a table, column or index Moult does not lay out, a trigger or a view).
    ///
    /// A `scratch` store is a copy Moult made (a chain's intermediate store): a refusal says that
    /// nothing was written at the output, not that the store is unchanged.
    static func run(
        _ script: InPlaceScript, pending: [InPlaceCleanup] = [], step: ProgressiveMigration.Step, store: URL, timeout: Duration,
        durable: Bool = false, scratch: Bool = false, externalData: URL? = nil, warn: (String) -> Void = { _ in }
    ) throws -> Bool {
        try run(
            [Step(script: script, pending: pending, step: step)], store: store, timeout: timeout, durable: durable, scratch: scratch,
            externalData: externalData, warn: warn)
    }

    /// One step of an SQL chain: its script, the clean-up it leaves pending (deferred), and the step.
    struct Step {
        var script: InPlaceScript
        var pending: [InPlaceCleanup]
        var step: ProgressiveMigration.Step
    }

    /// Runs the steps' SQL, each with its validation and new metadata, in one transaction: the store is
    /// at the first step's version or at the last one's, never between.
    ///
    /// - Parameters:
    ///   - externalData: the store beside which the external binary data files of the steps' input are
    ///     (the store itself by default), read into the rows of an attribute that stops allowing
    ///     external storage; `warn` is called with each value whose file is missing (it becomes nil).
    ///   - starting: called inside the transaction before each step, with its offset; what it throws
    ///     rolls the whole transaction back.
    ///   - beforeCommit: called inside the transaction after the last step.
    /// - Returns: false (nothing changed) when a step finds the store's schema is not the layout it was
    ///   made for (a table, column or index Moult does not lay out, a trigger it cannot keep, a view).
    static func run(
        _ steps: [Step], store: URL, timeout: Duration, durable: Bool = false, scratch: Bool = false, externalData: URL? = nil,
        warn: (String) -> Void = { _ in }, starting: (Int) throws -> Void = { _ in }, beforeCommit: (Database) throws -> Void = { _ in }
    ) throws -> Bool {
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 8 * 1024, busyTimeout: timeout))
        defer { database.close() }
        // Durable: the commit is on disk when it returns, even against a power loss (without it, a power
        // loss may take the store back to the old version, whole).
        if durable { try database.setSynchronous(.full) }
        let folder = ExternalDataReference.folder(besideStore: externalData ?? store)
        try database.registerExternalDataFunctions(folder: folder)
        do {
            try database.transaction(.immediate) {
                for (offset, sqlStep) in steps.enumerated() {
                    try starting(offset)
                    warnAboutMissingInlinedFiles(sqlStep.step, database: database, folder: folder, warn: warn)
                    try apply(sqlStep, database: database, store: store, scratch: scratch)
                }
                try beforeCommit(database)
            }
            return true
        } catch is SchemaNotLaidOut {
            return false
        } catch let error as StoreError where error.code == .locked {
            throw MigrationError(.io, "another process holds a lock on \(store.path); the store was not changed", underlying: error)
        } catch let error as StoreError where error.code == .diskFull {
            throw MigrationError(
                .interrupted, "the disk is full; the store was not changed: free some space and run the same command again", underlying: error)
        }
    }

    /// One step's SQL, validation and metadata, inside the caller's transaction.
    ///
    /// The store's own triggers never run inside Moult's SQL: they are dropped before the first
    /// statement and made again last, after `Z_PRIMARYKEY` and the metadata are written.
    ///
    /// - Throws: ``SchemaNotLaidOut`` when the store's schema is not the step's old layout.
    private static func apply(_ sqlStep: Step, database: Database, store: URL, scratch: Bool) throws {
        let (script, pending, step) = (sqlStep.script, sqlStep.pending, sqlStep.step)
        let oldLayout = try StoreLayout(model: step.from.model)
        let newLayout = try StoreLayout(model: step.to.model)
        guard try database.isLaidOut(as: oldLayout) else { throw SchemaNotLaidOut() }
        // The store's own objects (an application's triggers and views, indexes on entity tables):
        // dropped around the change and made again, when every table and column they name is still
        // there (an index that cannot be is dropped; anything else that cannot be makes the step a copy,
        // which the run refuses). Its own tables (persistent history, R-trees) are left as they are.
        let (again, history) = try InPlaceMigration.setAsideOwnObjects(database, step: step, old: oldLayout, new: newLayout)
        let metadata = try StoreMetadata(reading: database)
        guard step.from.model.hashDifferences(from: metadata.entityHashes).isEmpty else {
            throw MigrationError(.incompatibleStore, "the store \(store.path) is no longer at version \(step.from.name)")
        }
        for change in script.changes {
            // A named point per kind of change (`inplace-change-rebuildTable`, …), for the crash harness.
            FaultInjection.reach(.inPlaceChange, change.kind.rawValue)
            for statement in change.statements {
                FaultInjection.reach(.inPlaceStatement)
                try database.execute(statement)
            }
        }
        // Persistent history names entities by number: renumbered with them.
        if let history { try database.execute(history) }
        for object in again where object.kind != .trigger { try database.makeAgain(object) }
        try validate(step, layout: newLayout, database: database, store: store, scratch: scratch)
        var updated = metadata
        let fresh = StoreMetadata(model: step.to.model)
        updated.entityHashes = fresh.entityHashes
        updated.hashesVersion = fresh.hashesVersion
        updated.versionIdentifiers = fresh.versionIdentifiers
        updated.hashesDigest = fresh.hashesDigest
        updated.checksum = fresh.checksum
        if pending.isEmpty {
            updated.additionalKeys[InPlaceMigration.pendingCleanupKey] = nil
        } else {
            // The records name the version they are for: a copy of the metadata into another
            // store (a streamed output keeps an application's keys) finds them stale.
            updated.additionalKeys[InPlaceMigration.pendingCleanupKey] = .array(
                [.string(InPlaceMigration.versionRecordPrefix + VersionHashes.digest(fresh.entityHashes))] + pending.map { .string($0.record) })
        }
        try database.clearMetadata()
        try updated.write(to: database)
        // Last: nothing Moult writes after this point, so an application's trigger never fires on it.
        FaultInjection.reach(.inPlaceForeignTriggers)
        for object in again where object.kind == .trigger { try database.makeAgain(object) }
        FaultInjection.reach(.inPlaceBeforeCommit)
    }

    /// Checks, before the step's transaction commits, the rules of the destination model the step can
    /// break (``rulesTheStepCanBreak(_:source:destination:)``), as the streaming engine's stage 3 does.
    ///
    /// - Throws: ``MigrationError`` `.validationFailed` with the failures (up to a hundred listed); the
    ///   transaction is rolled back, and the store is as it was.
    static func validate(_ step: ProgressiveMigration.Step, layout: StoreLayout, database: Database, store: URL, scratch: Bool = false) throws {
        guard case .success(let correspondence) = step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model)
        else { return }
        let checked = rulesTheStepCanBreak(correspondence, source: step.from.model, destination: step.to.model)
        guard !checked.isEmpty else { return }
        var failures: [ValidationFailure] = []
        let validator = Validator(
            model: step.to.model, layout: layout, database: database, stopAtFirst: false,
            report: { failure in if failures.count < 100 { failures.append(failure) } },
            only: { entity, property in checked[entity]?.contains(property) == true })
        let count = try validator.run()
        guard count == 0 else {
            throw MigrationError(
                .validationFailed,
                scratch
                    ? "\(count) object(s) break version \(step.to.name)'s rules; nothing was written at the output"
                    : "\(count) object(s) would break version \(step.to.name)'s rules; the store was not changed (still at version \(step.from.name))",
                failures: failures)
        }
    }
}
