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
            let lock = try RunFolder.claim(chain.store, purpose: "migrating it in place")
            defer { lock.release() }
            let (report, objects) = try runSteps(progress: progress, isCancelled: isCancelled, beforeStep: beforeStep, events: events)
            events?(.finished(MigrationEvent.Finished(outcome: chain.steps.isEmpty ? .alreadyCurrent : .migrated, objects: objects, seconds: seconds())))
            return report
        } catch {
            events?(.failed(MigrationEvent.Failure(error, seconds: seconds())))
            throw error
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
            throw MigrationError.classifying(error)
        }
    }
}
