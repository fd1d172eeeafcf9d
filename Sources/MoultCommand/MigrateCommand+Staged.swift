import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel

extension MigrateCommand {
    /// `moult migrate STORE --model M --stages FILE`: the stages run in place.
    func runStaged() async throws {
        if outputOption != nil {
            throw ValidationError("--stages migrates STORE in place (as Core Data's staged migration does): --output does not apply")
        }
        if arguments.strict {
            throw ValidationError("--strict does not apply to --stages: a stage's handler may change any value, so what a staged run drops is not known before it runs")
        }
        guard control.maxRate == nil, !deferCleanup, !noValidation, !stopAtFirstFailure else {
            throw ValidationError("--stages does not take --max-rate, --defer-cleanup, --no-validation or --stop-at-first-failure")
        }
        let status = StatusFile(output: URL(filePath: arguments.store))
        try await events.withLog { log in
            do {
                try migrateStaged(log: log, status: status)
            } catch {
                status.record(.failed(MigrationEvent.Failure(error, seconds: log?.seconds ?? 0)))
                throw error
            }
        }
    }

    /// The environment variable `moult test` sets in its staged children: seconds since 1970, what the
    /// handlers' `now()` gives on a first run (a resumed run keeps its record's).
    static let stagesNowVariable = "MOULT_STAGES_NOW"

    private func migrateStaged(log: EventLog?, status: StatusFile) throws {
        // A run killed while it wrote a rollback-journal store left a hot journal: roll it back before
        // anything reads the store read-only.
        try StagedMigration.rollBackUnfinishedTransaction(of: URL(filePath: arguments.store))
        var migration = try arguments.stagedMigration(durable: durable, keepsBackup: !noBackup)
        // What `now()` gives in the handlers when `moult test` runs the stages: the instant its reference uses.
        if let now = ProcessInfo.processInfo.environment[Self.stagesNowVariable].flatMap(Double.init) {
            migration.startDate = Date(timeIntervalSince1970: now)
        }
        if migration.isUpToDate {
            // What an earlier run killed after its last step left: its status file, lock file and work folder.
            Self.removeStatusOfAFinishedRun(URL(filePath: arguments.store))
            _ = RunFolder.inPlace(URL(filePath: arguments.store)).cleanUp()
            log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
            return try printUpToDate(
                UpToDateReport(store: arguments.store, staged: true, written: false, to: migration.targetVersion.name, stagesRun: []), log: log)
        }
        // The pause file is honoured where a stop request is: between a handler's chunks and before each step.
        let observer = self.observer(status: status, log: log)
        // The to-ones naming an object that does not exist, counted before and after as in place and
        // `--output` count them (a resumed run counts them in the store as the earlier run left it).
        let dangling = migration.storeVersion.map { DanglingReferences(store: migration.store, model: $0.model) }
        if let line = dangling?.warning { observer.warn(line) }
        let result = try migration.run(
            progress: { progress in
                observer.handle(.staged(.init(stage: progress.stage, stages: progress.stages, activity: progress.activity, objects: progress.objects)))
            },
            isCancelled: {
                observer.waitWhilePaused()
                return observer.isCancelled
            })
        if let line = dangling?.outcome(in: DanglingReferences(store: migration.store, model: migration.targetVersion.model)) { observer.warn(line) }
        let seconds = observer.finish()
        observer.handle(.finished(MigrationEvent.Finished(outcome: .migrated, resumed: result.resumed, seconds: seconds)))
        let report = StagedMigrationReport(
            store: arguments.store, to: migration.targetVersion.name, stagesRun: result.stagesRun.map { $0 + 1 }, resumed: result.resumed,
            handlerObjects: result.handlerObjects, backup: result.backup?.path, seconds: seconds.roundedToMilliseconds)
        try printResult(report, log: log) {
            var lines = [
                "migrated \(arguments.store) to \(report.to) in place through \(result.stagesRun.count) stage(s)"
                    + "\(result.resumed ? " (resumed)" : ""), \(String(format: "%.3f", seconds)) s"
            ]
            lines += result.stagesRun.map { StagedReport.line(migration.stages[$0], index: $0) }
            if result.handlerObjects > 0 { lines.append("handlers read \(result.handlerObjects) object(s)") }
            if let backup = report.backup { lines.append("the original is kept as \(backup)") }
            return lines
        }
    }
}

/// How `migrate` and `plan` print a staged migration's stages.
enum StagedReport {
    static func line(_ stage: StagedMigration.PlannedStage, index: Int) -> String {
        let versions = stage.versions.map(\.name).joined(separator: " → ")
        let label = stage.stage.label.map { " \($0)" } ?? ""
        return "stage \(index + 1)\(label): \(stage.isCustom ? "custom" : "lightweight") \(versions)"
    }

    static func lines(_ stage: StagedMigration.PlannedStage) -> [String] {
        var lines: [String] = []
        if let handler = stage.willMigrate { lines += handlerLines(handler, "willMigrate", at: stage.versions[0].name) }
        for step in stage.steps {
            lines.append("  step \(step.from.name) → \(step.to.name): \(step.inferred ? "inferred" : "mapping \(step.mappingLabels.first ?? "given")")")
            lines += StepReport.origins(step).map { "    " + $0 }
            for warning in step.warnings { lines.append("    warning: \(warning)") }
            lines += InPlaceReport.lines(step).map { "  " + $0 }
        }
        if let handler = stage.didMigrate { lines += handlerLines(handler, "didMigrate", at: stage.versions.last!.name) }
        return lines
    }

    static func handlerLines(_ handler: StageHandler, _ which: String, at version: String) -> [String] {
        guard let operations = handler.operations else {
            return ["  \(which) at \(version): \(handler.name) (Swift\(handler.isResumable ? "" : ", not resumable: reruns from its start"))"]
        }
        return ["  \(which) at \(version):"] + operations.enumerated().map { "    \($0 + 1). \($1)" }
    }
}

extension StagedReport {
    /// A stage as `plan --json` gives it.
    struct Stage: Encodable {
        /// A step of the stage, and how it runs in place (`null` when that cannot be found).
        struct Step: Encodable {
            var from: String
            var to: String
            var inferred: Bool
            /// Each entity mapping, given or inferred.
            var entityMappings: [StepReport.Step.EntityMappingOrigin]
            @ExplicitNull var inPlace: InPlaceReport.Method?
        }

        /// From 1.
        var stage: Int
        /// `custom` or `lightweight`.
        var kind: String
        var versions: [String]
        /// The handler's operations (empty for one in Swift); `null` without a handler.
        @ExplicitNull var willMigrate: [String]?
        var steps: [Step]
        @ExplicitNull var didMigrate: [String]?

        init(_ stage: StagedMigration.PlannedStage, index: Int) {
            self.stage = index + 1
            kind = stage.isCustom ? "custom" : "lightweight"
            versions = stage.versions.map(\.name)
            willMigrate = stage.willMigrate.map { ($0.operations ?? []).map(\.description) }
            steps = stage.steps.map {
                Step(
                    from: $0.from.name, to: $0.to.name, inferred: $0.inferred, entityMappings: StepReport.Step.EntityMappingOrigin.all(of: $0),
                    inPlace: InPlaceReport.Method($0))
            }
            didMigrate = stage.didMigrate.map { ($0.operations ?? []).map(\.description) }
        }
    }
}
