public import Foundation
public import MoultMapping
public import MoultModel
public import MoultStore

/// Migrates a store where it stands, as Core Data's default migration process does: on success the
/// store at its own URL is the migrated one, and (by default) the original is kept beside it as
/// `NAME~.EXT` (`people.sqlite` → `people~.sqlite`).
///
/// Each step of the chain (see ``ProgressiveMigration``) runs one of two ways:
/// - **by SQL** when it is lightweight (an inferred mapping, or a given one that only renames, adds
///   and removes): no object is read; the schema changes in one SQLite transaction, so a kill at any
///   instant leaves the store at the old version or the new one. Primary keys, the store UUID and
///   custom metadata are kept.
/// - **streaming** otherwise (expressions, filters, policies, several passes, or a change SQL cannot
///   make with the same result): ``StreamingMigrator`` copies the store into a work folder beside it,
///   resumably, and the result replaces the store by one atomic rename.
///
/// ```swift
/// let migration = try InPlaceMigration(store: url, model: people, to: "v2")
/// for (step, method) in zip(migration.steps, migration.methods) { print(step.to.name, method) }
/// try migration.run()
/// ```
public struct InPlaceMigration {
    /// How one step runs.
    public enum Method: Sendable, CustomStringConvertible {
        /// By these SQL changes, in one transaction.
        case sql(InPlaceScript)
        /// Through the streaming engine, for these reasons.
        case streaming([String])

        public var description: String {
            switch self {
            case .sql(let script):
                "in place by SQL (\(script.changes.count) changes\(script.isSchemaOnly ? ", schema only" : ", rows copied"))"
            case .streaming(let reasons): "streaming copy, then swap: \(reasons.joined(separator: "; "))"
            }
        }

        public var isSQL: Bool {
            if case .sql = self { return true }
            return false
        }
    }

    /// What a run did.
    public struct Report: Sendable {
        /// Per step: whether it ran by SQL (false: streaming).
        public var ranBySQL: [Bool]
        /// Where the original was kept, if it was.
        public var backup: URL?
    }

    public let chain: ProgressiveMigration
    public var steps: [ProgressiveMigration.Step] { chain.steps }
    /// Each step's method, in order.
    public let methods: [Method]
    /// Keep the original as `NAME~.EXT`.
    public var keepsBackup: Bool
    /// Leave the clean-up that can wait (dropped columns and tables, new indexes) for later, as Core
    /// Data's `NSPersistentStoreDeferredLightweightMigrationOptionKey`: the store is at the new version
    /// at once, its metadata lists the pending statements (``pendingCleanupKey``), and
    /// ``finishPendingCleanup(of:layout:timeout:)`` (`moult finish`) runs them. Only the chain's last step defers;
    /// pending clean-up of an earlier run is done before any step.
    public var defersCleanup = false
    /// How long to wait for another connection's lock before refusing the store.
    public var lockTimeout: Duration = .milliseconds(500)

    /// Finds the store's version, the steps to `target`, and how each step runs. Nothing is written.
    ///
    /// - Throws: as ``ProgressiveMigration/init(store:model:to:mappings:policies:options:mappingLabels:)``.
    public init(
        store: URL, model: VersionedModel, to target: String? = nil, mappings: [MappingModel] = [],
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions(), keepsBackup: Bool = true
    ) throws {
        try self.init(
            chain: ProgressiveMigration(store: store, model: model, to: target, mappings: mappings, policies: policies, options: options),
            keepsBackup: keepsBackup)
    }

    /// The chain of a progressive migration, run in place.
    ///
    /// Each step runs as the chain's plan says, on this store: a table the store declares otherwise
    /// than its version's layout (an older Core Data's table constraint, ``/MoultStore/TableDeclaration``)
    /// is rebuilt by the first step by SQL that changes it, never altered where it stands.
    public init(chain: ProgressiveMigration, keepsBackup: Bool = true) throws {
        self.chain = chain
        self.keepsBackup = keepsBackup
        var planned = try chain.steps.indices.map { try chain.chainPlan.inPlaceMethod(ofStep: $0) }
        // The first step reads the store itself: judged on it, as the run will find it.
        if let first = planned.first, first.isSQL, let why = Self.schemaDifference(of: chain) {
            planned[0] = .streaming([Self.notLaidOutReason(why, version: chain.sourceVersion.name)])
        }
        methods = try Self.methods(planned, steps: chain.steps, declaredOtherwise: Self.tablesDeclaredOtherwise(in: chain))
    }

    /// How the store's tables differ from the layout of its version (`Database.differenceFromLayout(_:)`),
    /// nil when they do not, or when the store cannot be read (the run says why).
    private static func schemaDifference(of chain: ProgressiveMigration) -> String? {
        guard let database = try? Database(url: chain.store, mode: .readOnly) else { return nil }
        defer { database.close() }
        guard let layout = try? StoreLayout(model: chain.sourceVersion.model) else { return nil }
        return (try? database.differenceFromLayout(layout)) ?? nil
    }

    /// Why a step the models would run by SQL streams: the store's schema is not its version's layout.
    static func notLaidOutReason(_ why: String, version: String) -> String {
        "the store's schema is not the one version \(version) lays out (\(why)): SQL made for that layout cannot run on it"
    }

    /// The entity tables of the store whose declaration holds constraints beyond the layout of its
    /// version (none when the chain has no step, or when the store cannot be read: the run says why).
    private static func tablesDeclaredOtherwise(in chain: ProgressiveMigration) -> Set<String> {
        guard !chain.steps.isEmpty, let database = try? Database(url: chain.store, mode: .readOnly) else { return [] }
        defer { database.close() }
        guard let layout = try? StoreLayout(model: chain.sourceVersion.model),
            let own = try? StoreOwnObjects(reading: database, layout: layout)
        else { return [] }
        return Set(own.objects.filter { $0.kind == .constraint }.map(\.table))
    }

    /// The planned methods, each step by SQL made again to rebuild the tables declared otherwise that
    /// reach it (an SQL step that keeps such a table passes it on; a streamed step makes every table anew).
    private static func methods(_ planned: [Method], steps: [ProgressiveMigration.Step], declaredOtherwise: Set<String>) throws -> [Method] {
        var remaining = declaredOtherwise
        var methods: [Method] = []
        for (step, method) in zip(steps, planned) {
            guard case .sql = method, !remaining.isEmpty else {
                methods.append(method)
                if !method.isSQL { remaining = [] }
                continue
            }
            let remade = try Self.method(for: step, rebuilding: remaining)
            if case .sql(let script) = remade { remaining.subtract(script.rebuiltTables) } else { remaining = [] }
            methods.append(remade)
        }
        return methods
    }

    /// How a step runs: by SQL when its mapping is lightweight and the layouts' difference is SQL.
    ///
    /// - Parameters:
    ///   - step: the step.
    ///   - rebuilding: old tables the store declares otherwise than the layout, rebuilt when the step
    ///     changes them (``/MoultStore/StoreLayout/inPlaceChanges(to:correspondence:rebuilding:)``).
    public static func method(for step: ProgressiveMigration.Step, rebuilding: Set<String> = []) throws -> Method {
        guard step.mappings.count == 1 else { return .streaming(["the step has \(step.mappings.count) passes"]) }
        let correspondence: LayoutCorrespondence
        switch step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model) {
        case .success(let value): correspondence = value
        case .failure(let reasons): return .streaming(reasons.reasons)
        }
        let old = try StoreLayout(model: step.from.model)
        let new = try StoreLayout(model: step.to.model)
        // SQL steps make tables, indexes and the triggers of derived attributes (R-tree indexes are
        // refused by the layouts' difference); a schema with anything else is made by the streaming
        // engine's new store.
        let others = old.schemaBeyondTablesIndexesAndTriggers + new.schemaBeyondTablesIndexesAndTriggers
        if !others.isEmpty {
            return .streaming(["the schema has more than tables and indexes (\(others[0].prefix(60))…): the new store is made whole"])
        }
        switch old.inPlaceChanges(to: new, correspondence: correspondence, rebuilding: rebuilding) {
        case .script(let script): return .sql(convertingExternalData(script, old: old, new: new, correspondence: correspondence))
        case .unsupported(let reasons): return .streaming(reasons)
        }
    }

    /// `NAME~.EXT` beside the store: Core Data's name for the original kept by a migration; with a
    /// `number` above 1, `NAME~2.EXT`, `NAME~3.EXT`…: the names of the originals later migrations keep.
    public static func backupURL(for store: URL, number: Int = 1) -> URL {
        RunNames.backup(of: store, number: number)
    }

    /// The name the next backup of `store` takes: `NAME~.EXT`, or when an earlier migration's backup
    /// holds that name, the first free `NAME~N.EXT`. A backup is never replaced; a name anything holds
    /// (a link, even one to nothing, included) is not free.
    public static func freeBackupURL(for store: URL) -> URL {
        var number = 1
        // (Its support folder too: one already there, with files of its own, is not this run's to fill or remove.)
        while (try? FileManager.default.attributesOfItem(atPath: backupURL(for: store, number: number).path)) != nil
            || (try? FileManager.default.attributesOfItem(atPath: ExternalDataReference.supportFolder(besideStore: backupURL(for: store, number: number)).path)) != nil
        {
            number += 1
        }
        return backupURL(for: store, number: number)
    }

    /// The work folder of streaming steps: `.NAME.moult-inplace` beside the store.
    public static func workFolder(for store: URL) -> URL {
        RunNames.inPlaceWork(for: store)
    }

    // MARK: - Run

    /// Runs every step. The store changes once, atomically, or not at all (see the in-place article):
    /// a run killed at any instant leaves the store at its old version or at the target one, its backup
    /// complete or absent; running it again finishes the chain (a streaming step resumes from its last
    /// chunk). A refused run leaves the store's files byte for byte as they were.
    ///
    /// - Parameters:
    ///   - progress: called after every chunk of a streamed step.
    ///   - isCancelled: polled before each step and between the chunks of a streamed step; when it
    ///     returns true the run stops there with `.interrupted` (resumable): an SQL step is one
    ///     transaction, so it stops at its boundary.
    ///   - beforeStep: called before each step (where a pause file is honoured for SQL steps).
    ///   - events: the run's ``/MoultEngine/MigrationEvent``s: `inPlaceStep` when each step starts and ends, a
    ///     streamed step's own events (plan, stages, chunks) between, and `finished` or `failed` last.
    /// - Throws: ``/MoultEngine/MigrationError``: `.io` when another process holds a lock on the store (nothing is
    ///   changed) or a file cannot be written; `.interrupted` (resumable) when the disk is full (the
    ///   store is as it was) or the run was cancelled; what a streaming step throws.
    @discardableResult
    public func run(
        progress: ((MigrationProgress) -> Void)? = nil, isCancelled: () -> Bool = { false }, beforeStep: (() -> Void)? = nil,
        events: ((MigrationEvent) -> Void)? = nil
    ) throws -> Report {
        let start = ContinuousClock.now
        let seconds = { (ContinuousClock.now - start) / .seconds(1) }
        do {
            // One run per store: a second one fails here (busy), having touched nothing.
            let lock = try StreamingMigrator.runLock(for: chain.store, purpose: "migrating it in place")
            defer { lock.release() }
            let (report, objects) = try runSteps(progress: progress, isCancelled: isCancelled, beforeStep: beforeStep, events: events)
            events?(.finished(MigrationEvent.Finished(outcome: chain.steps.isEmpty ? .alreadyCurrent : .migrated, objects: objects, seconds: seconds())))
            return report
        } catch {
            events?(.failed(MigrationEvent.Failure(error, seconds: seconds())))
            throw error
        }
    }

    // MARK: - SQL steps

    /// Opens the store for writing and checks that no other connection holds a lock, then checkpoints
    /// its WAL into the main file (so that a copy of the main file is the whole store).
    static func checkpoint(_ store: URL, timeout: Duration) throws {
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 1024, busyTimeout: timeout))
        defer { database.close() }
        do {
            try database.transaction(.immediate) {}
        } catch let error as StoreError where error.code == .locked {
            throw MigrationError(.io, "another process holds a lock on \(store.path); the store was not changed", underlying: error)
        }
        guard try database.checkpointWALIfInWALMode() else {
            throw MigrationError(.io, "another process is reading \(store.path): its WAL cannot be checkpointed; the store was not changed")
        }
    }

    /// Copies the checkpointed store to `NAME~.EXT` (through a temporary name, so the backup appears
    /// whole or not at all), synced before the store changes.
    static func copyBackup(of store: URL, to target: URL? = nil) throws -> URL {
        let target = target ?? freeBackupURL(for: store)
        let temporary = RunNames.temporaryBackup(for: target)
        let manager = FileManager.default
        try? manager.removeItem(at: temporary)
        do {
            try FileOperations.copyFile(store.path(percentEncoded: false), toNew: temporary.path(percentEncoded: false), durable: true)
        } catch {
            // Whether the disk is full is seen before the partial copy frees its space.
            let full = StreamingMigrator.isNearlyFull(store.deletingLastPathComponent()) || error.code == .diskFull
            try? manager.removeItem(at: temporary)
            if full {
                throw MigrationError(.interrupted, "the disk is full: no room for the backup \(target.path); the store was not changed", underlying: error)
            }
            throw MigrationError(.io, "cannot copy the store to \(target.path): \(error.localizedDescription)", underlying: error)
        }
        FaultInjection.reach(.inPlaceBackupCopied)
        try rename(temporary, to: target)
        return target
    }

    /// Renames `from` over `to`, the folder synced after it (a store swapped in, a backup named).
    static func rename(_ from: URL, to: URL) throws {
        do {
            try FileOperations.rename(from.path(percentEncoded: false), to: to.path(percentEncoded: false), durable: true)
        } catch {
            throw MigrationError(.io, "cannot rename \(from.path) to \(to.path): \(error.message)")
        }
    }

    /// Runs a step's SQL and writes the new metadata, in one transaction.
    ///
    /// - Returns: false (nothing changed) when the store's schema is not the layout the script was made
    ///   for (a table, column or index Moult does not lay out, a trigger or a view).
    ///
    /// A `scratch` store is a copy Moult made (a chain's intermediate store): a refusal says that
    /// nothing was written at the output, not that the store is unchanged.
    static func runSQL(
        _ script: InPlaceScript, pending: [InPlaceCleanup] = [], step: ProgressiveMigration.Step, store: URL, timeout: Duration,
        durable: Bool = false, scratch: Bool = false, externalData: URL? = nil, warn: (String) -> Void = { _ in }
    ) throws -> Bool {
        try runSQL(
            [SQLStep(script: script, pending: pending, step: step)], store: store, timeout: timeout, durable: durable, scratch: scratch,
            externalData: externalData, warn: warn)
    }

    /// One step of an SQL chain: its script, the clean-up it leaves pending (deferred), and the step.
    struct SQLStep {
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
    static func runSQL(
        _ steps: [SQLStep], store: URL, timeout: Duration, durable: Bool = false, scratch: Bool = false, externalData: URL? = nil,
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
    private static func apply(_ sqlStep: SQLStep, database: Database, store: URL, scratch: Bool) throws {
        let (script, pending, step) = (sqlStep.script, sqlStep.pending, sqlStep.step)
        let oldLayout = try StoreLayout(model: step.from.model)
        let newLayout = try StoreLayout(model: step.to.model)
        guard try database.isLaidOut(as: oldLayout) else { throw SchemaNotLaidOut() }
        // The store's own objects (an application's triggers and views, indexes on entity tables):
        // dropped around the change and made again, when every table and column they name is still
        // there (an index that cannot be is dropped; anything else that cannot be makes the step a copy,
        // which the run refuses). Its own tables (persistent history, R-trees) are left as they are.
        let (again, history) = try setAsideOwnObjects(database, step: step, old: oldLayout, new: newLayout)
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
            updated.additionalKeys[pendingCleanupKey] = nil
        } else {
            // The records name the version they are for: a copy of the metadata into another
            // store (a streamed output keeps an application's keys) finds them stale.
            updated.additionalKeys[pendingCleanupKey] = .array(
                [.string(versionRecordPrefix + VersionHashes.digest(fresh.entityHashes))] + pending.map { .string($0.record) })
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

    // MARK: - Deferred clean-up

    /// The metadata key listing the clean-up statements a deferred in-place migration left.
    public static let pendingCleanupKey = "MoultPendingCleanup"
    /// The first record: the digest of the entity hashes of the version the records are for.
    static let versionRecordPrefix = "for-version "

    /// The clean-up a store's metadata says is pending (empty when none).
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.invalidMapping` (bad input) when a record is not one Moult writes.
    public static func pendingCleanup(in metadata: StoreMetadata) throws -> [InPlaceCleanup] {
        guard let value = metadata.additionalKeys[pendingCleanupKey] else { return [] }
        guard let list = value.arrayValue, let version = list.first?.stringValue, version.hasPrefix(versionRecordPrefix) else {
            throw MigrationError(
                .invalidMapping, "the store's metadata key \(pendingCleanupKey) is not a list of clean-up records for a version")
        }
        // Records made for another version (the metadata copied into a store of another version) are stale.
        guard version.dropFirst(versionRecordPrefix.count) == VersionHashes.digest(metadata.entityHashes) else { return [] }
        return try list.dropFirst().map { record in
            guard let text = record.stringValue, let cleanup = InPlaceCleanup(record: text) else {
                throw MigrationError(.invalidMapping, "the store's metadata key \(pendingCleanupKey) holds \(record), which is not a clean-up record")
            }
            return cleanup
        }
    }

    /// Runs the clean-up a deferred in-place migration left, and removes it from the metadata, in one
    /// transaction. Each record is made into SQL from `layout` (the layout of the store's version);
    /// one that names a table, column or index the layout still uses is refused.
    ///
    /// - Returns: the number of clean-up records done (0 when nothing was pending).
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when another process holds a lock, `.interrupted` when the disk
    ///   is full, `.invalidMapping` (bad input) for a record that must not run (the store as it was).
    @discardableResult
    public static func finishPendingCleanup(of store: URL, layout: StoreLayout, timeout: Duration = .milliseconds(500)) throws -> Int {
        let current = try StoreMetadata(contentsOf: store)
        guard current.additionalKeys[pendingCleanupKey] != nil else { return 0 }
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 8 * 1024, busyTimeout: timeout))
        defer { database.close() }
        do {
            return try database.transaction(.immediate) {
                var metadata = try StoreMetadata(reading: database)
                let pending = try pendingCleanup(in: metadata)
                for cleanup in pending {
                    guard let statement = cleanup.statement(in: layout) else {
                        throw MigrationError(
                            .invalidMapping, "the pending clean-up '\(cleanup)' of \(store.path) names what its version still uses: nothing was done")
                    }
                    if case .dropColumn(let table, let column) = cleanup, !(try database.columns(of: table).contains(column)) { continue }
                    FaultInjection.reach(.inPlaceCleanupStatement)
                    try database.execute(statement)
                }
                metadata.additionalKeys[pendingCleanupKey] = nil
                // An application's triggers do not fire on Moult's metadata write: dropped, made again after.
                let foreign = try database.triggers(notMadeBy: layout)
                for trigger in foreign { try database.drop(trigger) }
                try database.clearMetadata()
                try metadata.write(to: database)
                for trigger in foreign { try database.make(trigger) }
                return pending.count
            }
        } catch let error as StoreError where error.code == .locked {
            throw MigrationError(.io, "another process holds a lock on \(store.path); the store was not changed", underlying: error)
        } catch let error as StoreError where error.code == .diskFull {
            throw MigrationError(
                .interrupted, "the disk is full; the store was not changed: free some space and run the same command again", underlying: error)
        } catch {
            throw StreamingMigrator.classify(error)
        }
    }
}
