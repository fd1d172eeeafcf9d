import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

extension MigrateCommand {
    /// `--no-backup` and `--defer-cleanup` mean nothing with `--output`: bad usage (64).
    func checkInPlaceFlagsUnused() throws {
        let flags = [noBackup ? "--no-backup" : nil, deferCleanup ? "--defer-cleanup" : nil].compactMap { $0 }
        if !flags.isEmpty {
            throw ValidationError("\(flags.joined(separator: " and ")) \(flags.count == 1 ? "applies" : "apply") to a migration in place (without --output)")
        }
    }

    /// `moult migrate STORE --model M [--to V]` without `--output`: the store migrated where it stands.
    /// `--events`, the status file (STORE.moult-status.json, for `moult status STORE`), `--max-rate`
    /// and `--pause-file` work as with `--output`: per chunk in streamed steps; an SQL step is one
    /// transaction, paused before it (the rate ceiling paces chunks only).
    func runInPlace() async throws {
        try await events.withLog { log in try migrateInPlace(log: log) }
    }

    private func migrateInPlace(log: EventLog?) throws {
        let chain = try arguments.migration(durable: durable, validate: !noValidation, stopAtFirst: stopAtFirstFailure)
        if chain.isUpToDate {
            Self.removeStatusOfAFinishedRun(chain.store)
            log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
            switch RunFolder.inPlace(chain.store).cleanUp() {
            case .missing(let backup)?:
                printError("moult: warning: an earlier, interrupted run of this migration kept the original store as \(backup.path), which is no longer there; the store itself is complete at version \(chain.targetVersion.name)")
            case .present(let backup)?:
                if !quiet && !json { print("the original store is kept as \(backup.path) (by the earlier, interrupted run)") }
            case nil:
                break
            }
            return try printUpToDate(
                UpToDateReport(
                    store: arguments.store, inPlace: true, written: false, from: chain.sourceVersion.name, to: chain.targetVersion.name,
                    nothingToMigrate: true, steps: []),
                log: log)
        }
        try chain.checkPolicies()
        let losses = DataLossGuard(chain)
        if arguments.strict { try losses.refuseUnderStrict() }
        var migration = try InPlaceMigration(chain: chain, keepsBackup: !noBackup)
        migration.defersCleanup = deferCleanup
        let observer = self.observer(status: StatusFile(output: chain.store), log: log)
        // In place, the steps run in one go: what they drop is said before they start.
        observer.warn(about: losses)
        let dangling = DanglingReferences(store: chain.store, model: chain.sourceVersion.model)
        if let line = dangling.warning { observer.warn(line) }
        let result = try migration.run(isCancelled: { observer.isCancelled }, beforeStep: observer.waitWhilePaused, events: observer.handle)
        if let line = dangling.outcome(in: DanglingReferences(store: chain.store, model: chain.targetVersion.model)) { observer.warn(line) }
        let seconds = observer.finish()
        MetricsFile.current?.recordBytes(of: chain.store)
        let reasons = chain.steps.indices.map { InPlaceReport.streamedBecause(migration.methods[$0], ranBySQL: result.ranBySQL[$0]) }
        let steps = zip(chain.steps, zip(result.ranBySQL, reasons)).map { step, ran in
            InPlaceMigrationReport.Step(from: step.from.name, to: step.to.name, method: ran.0 ? "sql" : "streaming", reasons: ran.1)
        }
        let report = InPlaceMigrationReport(
            store: arguments.store, from: chain.sourceVersion.name, to: chain.targetVersion.name, backup: result.backup?.path, steps: steps,
            seconds: seconds.roundedToMilliseconds)
        try printResult(report, log: log) {
            var lines = [
                "migrated \(arguments.store) (\(report.from)) to \(report.to) in place, \(chain.steps.count) step(s), \(String(format: "%.3f", seconds)) s"
            ]
            for (index, step) in chain.steps.enumerated() {
                let streamed = ": streamed, then swapped in" + (reasons[index].map { ", because " + $0.joined(separator: "; ") } ?? "")
                lines.append(StepReport.line(index, step) + (result.ranBySQL[index] ? ": by SQL" : streamed))
            }
            if let backup = report.backup {
                let first = RunNames.backup(of: chain.store).path
                lines.append("the original is kept as \(backup)" + (backup == first ? "" : " (\(first) is an earlier migration's original, left as it was)"))
            }
            let pending = (try? InPlaceMigration.pendingCleanup(in: StoreMetadata(contentsOf: chain.store))) ?? []
            if !pending.isEmpty { lines.append("clean-up left for `moult finish`: \(pending.map(\.description).joined(separator: ", "))") }
            return lines
        }
    }
}

/// How each step of a plan would run in place (`moult migrate` without `--output`).
enum InPlaceReport {
    /// What an in-place run does with what the store holds beyond its model (one line each), or why
    /// that could not be read.
    static func ownObjectLines(_ chain: ProgressiveMigration, inPlace: InPlaceMigration? = nil) -> [String] {
        do {
            let outcomes = try (inPlace ?? InPlaceMigration(chain: chain)).ownObjectOutcomes()
            guard !outcomes.isEmpty else { return [] }
            // What is kept, counted by kind; what is dropped or cannot be kept, one line each with why.
            let kept = outcomes.filter { $0.fate == .kept || $0.fate == .madeAgain }
            var lines = ["in place, what the store holds beyond its model:"]
            for kind in ["table", "view", "trigger", "index", "column"] {
                let names = kept.filter { $0.object.kind.rawValue == kind }.map(\.object.name)
                guard !names.isEmpty else { continue }
                let shown = names.prefix(4).joined(separator: ", ") + (names.count > 4 ? ", …" : "")
                lines.append("  kept: \(names.count) \(kind == "index" ? "indexes" : kind + "s") (\(shown))")
            }
            return lines + outcomes.filter { $0.fate != .kept && $0.fate != .madeAgain }.map { "  \($0)" }
        } catch {
            return ["in place: the store's own objects could not be read: \(error)"]
        }
    }

    /// How `step` runs in place: `method` when it was judged on the store (``/MoultMigration/InPlaceMigration/methods``),
    /// else as its models say.
    static func lines(_ step: ProgressiveMigration.Step, method: InPlaceMigration.Method? = nil) -> [String] {
        guard let method = method ?? (try? InPlaceMigration.method(for: step)) else { return [] }
        switch method {
        case .sql(let script):
            let reads = InPlaceMigration.rowsRead(step, script: script)
            return ["  in place: by SQL, \(script.isSchemaOnly ? "schema only (no row is copied)" : "rows copied inside SQLite"): "
                + script.changes.filter { $0.kind != .primaryKeys && $0.kind != .modelCache }.map(\.description).joined(separator: "; "),
                reads.isEmpty
                    ? "  reads no object: its time does not grow with the number of objects"
                    : "  reads objects: " + reads.joined(separator: "; ")]
        case .streaming(let reasons):
            return ["  in place: streamed, then swapped in, because " + reasons.joined(separator: "; ")]
        }
    }
}

extension InPlaceReport {
    /// Why a step of a run streamed: the reasons its method gives, or, for a step planned by SQL that
    /// streamed all the same, what the run found; nil for a step that ran by SQL.
    static func streamedBecause(_ method: InPlaceMigration.Method, ranBySQL: Bool) -> [String]? {
        guard !ranBySQL else { return nil }
        if case .streaming(let reasons) = method { return reasons }
        return ["the store's schema was not the layout of its version when the step ran (a trigger, view, table or column of its own)"]
    }

    /// How a step runs in place, as `--json` gives it: by SQL, with its changes, or streamed, with why.
    struct Method: Encodable {
        /// `sql` or `streaming`.
        var method: String
        /// By SQL: whether no row is copied.
        var schemaOnly: Bool?
        var changes: [String]?
        /// Streamed: why.
        var reasons: [String]?
        /// By SQL: what it reads object by object, and why (empty: its time does not grow with the objects).
        var rowsRead: [String]?

        /// Nil when the step's method cannot be found (the plan says why); `method` when it was judged
        /// on the store.
        init?(_ step: ProgressiveMigration.Step, method: InPlaceMigration.Method? = nil) {
            guard let method = method ?? (try? InPlaceMigration.method(for: step)) else { return nil }
            switch method {
            case .sql(let script):
                self.method = "sql"
                schemaOnly = script.isSchemaOnly
                changes = script.changes.map(\.description)
                rowsRead = InPlaceMigration.rowsRead(step, script: script)
            case .streaming(let reasons):
                self.method = "streaming"
                self.reasons = reasons
            }
        }
    }
}

extension MigrateCommand {
    /// Removes the status file of an earlier run killed after its last step (its process gone), or one a
    /// power loss left empty or torn (nothing can read it), unless a live run holds the store.
    static func removeStatusOfAFinishedRun(_ store: URL) {
        if RunLock.holder(of: store) == nil, StatusFile.read(output: store).map({ !$0.processIsAlive }) ?? true {
            StatusFile(output: store).remove()
        }
    }
}
