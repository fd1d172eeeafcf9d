import Foundation
import MoultModel
import MoultStore

// MARK: - Running the chain

/// The store changes once, atomically, or not at all:
/// - a chain of SQL steps runs in one transaction on the store (every step, its validation and its
///   metadata), so a refusal or a kill at any step leaves the store as it was;
/// - a chain with a streamed step (or a WAL store whose `-wal` holds data) runs out of place, in the work
///   folder: its SQL steps on page copies, its streamed steps from the store's read-only view, and the
///   last step's result replaces the store by one rename. Until that rename, the store's files are not
///   opened for writing: a refusal leaves them byte for byte as they were.
extension InPlaceMigration {
    func runSteps(
        progress: ((MigrationProgress) -> Void)?, isCancelled: () -> Bool, beforeStep: (() -> Void)?, events: ((MigrationEvent) -> Void)?
    ) throws -> (Report, [String: Int]) {
        let store = chain.store
        let manager = FileManager.default
        let folder = RunFolder.inPlace(store)
        let work = folder.work
        // A link or a file at the work folder's name is refused before anything is read or written.
        let foundWork = try folder.exists()
        // External files an earlier run left to remove once its step had committed.
        if foundWork { ExternalDataBackup.completeRemovals(of: store, work: work) }
        var madeBackup: URL?
        do {
            // What can be refused from a read-only view is refused before anything is written.
            try refuseLosingTheStoresOwnObjects(warn: { events?(.warning(MigrationEvent.Warning(message: "in place, \($0)"))) })
            var backup = keepsBackup ? folder.recordedBackup : nil
            if methods.allSatisfy(\.isSQL), !RunFiles.walHoldsData(store) {
                try RunFiles.checkpoint(store, timeout: lockTimeout)
                try Self.finishPendingCleanup(of: store, layout: StoreLayout(model: chain.sourceVersion.model), timeout: lockTimeout)
                beforeStep?()
                if isCancelled() { throw stopped(before: 0) }
                if keepsBackup && backup == nil {
                    // Its name recorded first: a rerun after a kill in the copy takes the same name.
                    let target = folder.backupTarget()
                    try folder.recordBackup(target)
                    backup = try RunFolder.copyBackup(of: store, to: target)
                    madeBackup = backup
                }
                if try keepingExternalData(backup: backup, folder: folder, { try runAllBySQL(isCancelled: isCancelled, events: events, beforeCommit: $0) }) {
                    if FileOperations.exists(work.path) { folder.remove() }
                    return (Report(ranBySQL: methods.map { _ in true }, backup: backup), [:])
                }
            }
            let (ranBySQL, objects) = try runOutOfPlace(
                folder: folder, backup: &backup, progress: progress, isCancelled: isCancelled, beforeStep: beforeStep, events: events)
            if FileOperations.exists(work.path) { folder.remove() }
            return (Report(ranBySQL: ranBySQL, backup: backup), objects)
        } catch {
            var classified = MigrationError.classifying(error)
            // Refused (not resumable): the store was not changed, and nothing of this run is kept.
            if (classified.category != .interrupted && classified.category != .io) || classified.code == .sourceChangedWhileRead {
                if let madeBackup {
                    try? FileOperations.removeTree(madeBackup)
                    ExternalDataBackup.remove(besideCopy: madeBackup)
                }
                // (Work made from a state of the store that is gone is of no use to a rerun either.)
                if !foundWork || classified.code == .sourceChangedWhileRead, FileOperations.exists(work.path) {
                    folder.remove()
                }
                let unchanged = "the store \(store.path) was not changed (still at version \(chain.sourceVersion.name))"
                if classified.message.contains("nothing was written at the output") {
                    classified.message = classified.message.replacingOccurrences(of: "nothing was written at the output", with: unchanged)
                } else if !classified.message.contains("not changed") && !classified.message.contains("Nothing was changed") {
                    classified.message += "; \(unchanged)"
                }
            }
            throw classified
        }
    }

    private func stopped(before offset: Int) -> MigrationError {
        let step = chain.steps[offset]
        return MigrationError(
            .interrupted,
            "stopped before step \(offset + 1) (\(step.from.name) → \(step.to.name)); the store is at version \(chain.sourceVersion.name), as it was: run the same command again to go on")
    }

    // MARK: - SQL chain, one transaction

    /// Every step by SQL, in one transaction on the store.
    ///
    /// - Returns: false (nothing changed) when a step finds the store's schema is not its layout.
    private func runAllBySQL(isCancelled: () -> Bool, events: ((MigrationEvent) -> Void)?, beforeCommit: (Database) throws -> Void) throws -> Bool {
        var sqlSteps: [SQLSteps.Step] = []
        for (offset, (step, method)) in zip(chain.steps, methods).enumerated() {
            guard case .sql(var script) = method else { return false }
            var pending: [InPlaceCleanup] = []
            if defersCleanup && offset == chain.steps.count - 1 { (script, pending) = script.deferringCleanup() }
            sqlSteps.append(SQLSteps.Step(script: script, pending: pending, step: step))
        }
        let start = ContinuousClock.now
        var stepStarts: [ContinuousClock.Instant] = []
        var warnings: [String] = []
        let ran = try SQLSteps.run(
            sqlSteps, store: chain.store, timeout: lockTimeout, durable: chain.options.durable, warn: { warnings.append($0) },
            starting: { offset in
                if offset > 0, isCancelled() { throw stopped(before: offset) }
                stepStarts.append(ContinuousClock.now)
                events?(.inPlaceStep(stepEvent(offset, .started, methods[offset], since: start)))
            }, beforeCommit: beforeCommit)
        guard ran else { return false }
        for warning in warnings { events?(.warning(MigrationEvent.Warning(message: warning))) }
        for offset in chain.steps.indices {
            events?(.inPlaceStep(stepEvent(offset, .done, methods[offset], since: stepStarts[offset])))
        }
        return true
    }

    private func stepEvent(
        _ offset: Int, _ phase: MigrationEvent.InPlaceStep.Phase, _ method: Method, since start: ContinuousClock.Instant
    ) -> MigrationEvent.InPlaceStep {
        let step = chain.steps[offset]
        var event = MigrationEvent.InPlaceStep(
            step: offset + 1, steps: chain.steps.count, from: step.from.name, to: step.to.name, phase: phase,
            method: method.isSQL ? .sql : .streaming, seconds: phase == .done ? (ContinuousClock.now - start) / .seconds(1) : 0)
        switch method {
        case .sql(let script):
            event.changes = script.changes.count
            event.schemaOnly = script.isSchemaOnly
            event.rowsRead = Self.rowsRead(step, script: script)
        case .streaming(let reasons):
            event.reasons = reasons
        }
        return event
    }

    // MARK: - Out of place, then one swap

    /// Whether `result` is the chain's last result, its UUID already set to the store's (see ``swapIn``).
    private func hasTheStoresUUID(_ result: URL, at version: VersionedModel.Version) -> Bool {
        guard let mine = try? StoreMetadata(contentsOf: result), let theirs = try? StoreMetadata(contentsOf: chain.store) else { return false }
        return mine.storeUUID == theirs.storeUUID && version.holdsStore(at: result)
    }

    /// Gives the chain's result the store's UUID, as Core Data's migrations in place keep it (object IDs an
    /// app saved stay valid); the rest of its metadata is the migration's.
    private func keepTheStoresUUID(in result: URL) throws {
        let original = try StoreMetadata(contentsOf: chain.store)
        let database = try Database(url: result, mode: .readWrite)
        defer { database.close() }
        var metadata = try StoreMetadata(reading: database)
        guard metadata.storeUUID != original.storeUUID else { return }
        metadata.storeUUID = original.storeUUID
        try database.write { try metadata.write(to: database) }
        try database.checkpointWAL()
    }

    /// Runs every step in the work folder, the first reading the store, each next one the result of
    /// the one before; then swaps the last result in. Resumes at the last step an earlier run finished.
    private func runOutOfPlace(
        folder: RunFolder, backup: inout URL?, progress: ((MigrationProgress) -> Void)?, isCancelled: () -> Bool, beforeStep: (() -> Void)?,
        events: ((MigrationEvent) -> Void)?
    ) throws -> ([Bool], [String: Int]) {
        let store = chain.store
        let work = folder.work
        try folder.make()
        // The store's state when the chain began reading it: a rerun never goes on from work made from
        // another state of it, and the swap never replaces a store another program wrote to meanwhile.
        // (Its content included: times and sizes may change with no write, as when a reader checkpoints
        // its `-wal`, and stay the same through one, as when an edit's time is put back.)
        let startState = try StoreFileState(of: store, content: true)
        try folder.beginOrResume(record: storeStateFile, current: startState, source: store)
        let steps = chain.steps
        var loop = ChainLoop(
            chain: chain, folder: folder,
            streamedResult: { offset in RunNames.inPlaceStep(from: steps[offset].from.name, to: steps[offset].to.name, bySQL: false, in: work) },
            sqlResult: { offset in RunNames.inPlaceStep(from: steps[offset].from.name, to: steps[offset].to.name, bySQL: true, in: work) })
        loop.sourceContent = startState.content
        // The external files stay in the store's folder: read there, never carried into the work folder.
        loop.externalDataHome = store
        // The last result, once its UUID is the store's (``swapIn``), is the chain's finished one.
        loop.isFinishedByDriver = { offset, result in offset == steps.count - 1 && hasTheStoresUUID(result, at: steps[offset].to) }
        loop.script = { offset, _ in
            guard case .sql(let script) = methods[offset] else { return nil }
            return script
        }
        loop.willRun = { _, _ in beforeStep?() }
        loop.stopped = { offset in stopped(before: offset) }
        var start = ContinuousClock.now
        // A new store made from the model: nothing of the input's own may be in it.
        loop.willStream = { offset, input in
            try Self.refuseStreamingOwnObjects(from: input, step: steps[offset], offset: offset)
            start = ContinuousClock.now
            events?(.inPlaceStep(stepEvent(offset, .started, streamedMethod(offset), since: start)))
        }
        loop.didStream = { offset in events?(.inPlaceStep(stepEvent(offset, .done, streamedMethod(offset), since: start))) }
        let outcome = try loop.run(progress: progress, isCancelled: isCancelled, events: events)
        let input = outcome.result
        // Steps an earlier run finished: reported by the method planned for them.
        let ranBySQL = methods[..<outcome.first].map(\.isSQL) + outcome.ranBySQL
        // Object counts are those of a streamed last step (an SQL step reads no object).
        let objects = outcome.reports.last.flatMap { $0.offset == steps.count - 1 ? $0.report.objectCounts : nil } ?? [:]
        let changes = try StoreFileState(of: store, content: true).differences(from: startState)
        guard changes.isEmpty else {
            throw MigrationError(
                .sourceChangedWhileRead,
                "another program wrote to the store \(store.path) while it was migrated (\(changes.joined(separator: ", "))): "
                    + "its migrated copy would lose those writes, so it was not swapped in; run again when nothing writes to the store (quit the app)")
        }
        try keepingExternalData(swapping: input, backup: backup, folder: folder) {
            try swapIn(input, backup: &backup, folder: folder, content: startState.content)
        }
        return (ranBySQL, objects)
    }

    /// How step `offset` is said to run when it streams: its planned method, or why a step planned by
    /// SQL streams after all (its input's schema is not its version's layout).
    private func streamedMethod(_ offset: Int) -> Method {
        guard methods[offset].isSQL else { return methods[offset] }
        return .streaming(["the store's schema is not the one version \(chain.steps[offset].from.name) lays out (a trigger, view, table or column of its own)"])
    }

    /// The record, in the work folder, of the store's state when the chain began reading it.
    /// (Named for this chain: a work folder a run of another chain left, killed after its swap, as a staged
    /// run's earlier stage may, holds that chain's record, which says nothing of this one.)
    var storeStateFile: String { "store-state-\(chain.sourceVersion.name)-to-\(chain.targetVersion.name)" }

    /// Replaces the store by the chain's result: the store checkpointed (no other connection may hold
    /// a lock), the original kept by a hard link (its name appears at once, complete), one rename.
    private func swapIn(_ result: URL, backup: inout URL?, folder: RunFolder, content: StoreContentDigest?) throws {
        let store = chain.store
        try keepTheStoresUUID(in: result)
        try RunFiles.checkpoint(result, timeout: lockTimeout)
        // Only now, the run known to succeed, is the store opened for writing.
        try RunFiles.checkpoint(store, timeout: lockTimeout)
        // Its checkpoint moved its -wal into its main file (the same content, other files): a rerun after
        // a kill from here on compares the store with this state (its content is the one checked above).
        var checkpointed = try StoreFileState(of: store)
        checkpointed.content = content
        try folder.write(storeStateFile, checkpointed.text, durable: chain.options.durable)
        if keepsBackup && backup == nil {
            // Its name recorded first: a rerun after a kill here takes the same name.
            backup = try folder.linkBackup(of: store)
        }
        if chain.options.durable { try RunFiles.sync(result) }
        FaultInjection.reach(.inPlaceBeforeSwap)
        try RunFiles.rename(result, to: store)
        if chain.options.durable { try RunFiles.sync(store.deletingLastPathComponent()) }
        FaultInjection.reach(.inPlaceAfterSwap)
        for suffix in ["-wal", "-shm", "-journal"] {
            try? FileOperations.removeTree(URL(filePath: result.path + suffix))
        }
    }
}
