import Foundation
import MoultModel
import MoultStore

// MARK: - An intermediate store made by SQL

extension ProgressiveMigration {
    /// Makes an intermediate store of the chain by SQL, as an in-place migration would, instead of
    /// streaming every object through the engine: a page-by-page copy of the step's input (SQLite's
    /// backup, from a read-only connection: the input is never written), the step's SQL and its
    /// validation in one transaction on the copy, then the copy renamed into place. A run killed
    /// before the rename leaves only the copy, which the next run makes again; after it, the step is
    /// done. The next step streams from the result and numbers its objects in the same order, so the
    /// chain's output is the one streaming every step makes (only the intermediate store's primary keys
    /// and store UUID differ, and the output's store UUID, which follows from them).
    ///
    /// - Returns: false (nothing made) when the copy's schema is not the layout the step's SQL was made
    ///   for (an application's own tables, views or triggers), or when the copy cannot be made or
    ///   migrated for another reason than a full disk (a damaged input): the step is streamed.
    /// - Throws: ``MigrationError``: `.interrupted` when cancelled or the disk is full,
    ///   `.validationFailed` when the step's objects break the version's rules.
    func intermediateBySQL(
        _ step: Step, _ script: InPlaceScript, offset: Int, input: URL, output: URL, externalData home: URL? = nil, isCancelled: () -> Bool,
        events: ((MigrationEvent) -> Void)?
    ) throws -> Bool {
        let copy = RunNames.copying(for: output)
        let companions = ["", "-wal", "-shm", "-journal"].map { URL(filePath: copy.path + $0) }
        let removeCopy = { for file in companions { try? FileOperations.removeTree(file) } }
        removeCopy()
        if isCancelled() {
            throw MigrationError(.interrupted, "stopped before step \(offset + 1) (\(step.from.name) → \(step.to.name)); run the same command again to go on")
        }
        let start = ContinuousClock.now
        func event(_ phase: MigrationEvent.InPlaceStep.Phase) {
            events?(
                .inPlaceStep(
                    MigrationEvent.InPlaceStep(
                        step: offset + 1, steps: steps.count, from: step.from.name, to: step.to.name, phase: phase, method: .sql,
                        changes: script.changes.count, schemaOnly: script.isSchemaOnly,
                        seconds: phase == .done ? (ContinuousClock.now - start) / .seconds(1) : 0)))
        }
        event(.started)
        do {
            let source = try Database(url: input, mode: .readOnly)
            defer { source.close() }
            try source.copy(to: copy)
        } catch {
            let full = error.code == .diskFull || RunFiles.isNearlyFull(output.deletingLastPathComponent())
            removeCopy()
            if full {
                throw MigrationError(.interrupted, "the disk is full: no room for a copy of \(input.path); free some space and run the same command again", underlying: error)
            }
            // Not the disk (a damaged input, say): the step streams, reading and judging every object.
            return false
        }
        FaultInjection.reach(.chainStepCopied)
        let ran: Bool
        var warnings: [String] = []
        do {
            ran = try SQLSteps.run(
                script, step: step, store: copy, timeout: .seconds(2), durable: options.durable, scratch: true, externalData: home ?? input,
                warn: { warnings.append($0) })
            if ran {
                // One file, whatever the input's journal mode: the rename moves the whole store.
                let database = try Database(url: copy, mode: .readWrite)
                defer { database.close() }
                try database.useRollbackJournal()
            }
        } catch {
            removeCopy()
            let code = MigrationError.classifying(error).code
            // SQLite says "disk full" or fails to read a damaged copy: when the disk has room, the
            // input is to blame, and the streamed step says what is wrong with it.
            if code == .interrupted || code == .io, !RunFiles.isNearlyFull(output.deletingLastPathComponent()) { return false }
            throw error
        }
        guard ran else {
            removeCopy()
            return false
        }
        FaultInjection.reach(.chainStepMigrated)
        for warning in warnings { events?(.warning(MigrationEvent.Warning(message: warning))) }
        // In place (`home`), the files stay in the store's folder: checked there, not carried.
        try carryExternalData(of: copy, step: step, input: home ?? input, output: home ?? output, events: events)
        if options.durable { try RunFiles.sync(copy) }
        try RunFiles.rename(copy, to: output)
        if options.durable { try RunFiles.sync(output.deletingLastPathComponent()) }
        event(.done)
        return true
    }
}
