import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel

/// `--stages FILE`: a staged migration (Core Data's `NSStagedMigrationManager`), in place.
extension MigrationArguments {
    /// The stages `--stages` describes, checked against `--model` (no store needed).
    func plannedStages() throws -> [StagedMigration.PlannedStage] {
        guard let stages else { throw ValidationError("--stages is missing") }
        try refuseOptionsStagesDoNotTake()
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        var policies = MoultCommand.policies
        for (className, binding) in try bindings() { policies.bind(className, to: binding) }
        return try StagedMigration.plan(try StagesFile(contentsOf: URL(filePath: stages)).stages, model: versioned, policies: policies)
    }

    func refuseOptionsStagesDoNotTake() throws {
        var refused: [String] = []
        if to != nil { refused.append("--to (the last stage is the target)") }
        if !mappings.isEmpty { refused.append("--mapping (a custom stage names its mapping in the stages file)") }
        if !partitions.isEmpty { refused.append("--partition") }
        if sourceModel != "model" { refused.append("--source-model") }
        if !refused.isEmpty { throw ValidationError("--stages does not take \(refused.joined(separator: ", "))") }
    }

    /// The staged migration `--stages` describes, checked; refuses the options it does not take.
    func stagedMigration(durable: Bool = false, keepsBackup: Bool = true) throws -> StagedMigration {
        guard let stages else { throw ValidationError("--stages is missing") }
        try refuseOptionsStagesDoNotTake()
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        let file = try StagesFile(contentsOf: URL(filePath: stages))
        var policies = MoultCommand.policies
        for (className, binding) in try bindings() { policies.bind(className, to: binding) }
        return try StagedMigration(
            store: URL(filePath: store), model: versioned, stages: file.stages, policies: policies, options: options(durable: durable),
            keepsBackup: keepsBackup)
    }
}

extension MigrateCommand {
    /// `moult migrate STORE --model M --stages FILE`: the stages run in place.
    func runStaged() async throws {
        if outputOption != nil {
            throw ValidationError("--stages migrates STORE in place (as Core Data's staged migration does): --output does not apply")
        }
        guard control.maxRate == nil, !deferCleanup, !noValidation, !stopAtFirstFailure else {
            throw ValidationError("--stages does not take --max-rate, --defer-cleanup, --no-validation or --stop-at-first-failure")
        }
        let status = StatusFile(output: URL(filePath: arguments.store))
        try await withEventLog { log in
            do {
                try migrateStaged(log: log, status: status)
            } catch {
                status.record(.failed(MigrationEvent.Failure(error, seconds: log?.seconds ?? 0)))
                throw error
            }
        }
    }

    private func migrateStaged(log: EventLog?, status: StatusFile) throws {
        // A run killed while it wrote a rollback-journal store left a hot journal: roll it back before
        // anything reads the store read-only.
        try StagedMigration.rollBackUnfinishedTransaction(of: URL(filePath: arguments.store))
        let migration = try arguments.stagedMigration(durable: durable, keepsBackup: !noBackup)
        if migration.isUpToDate {
            // What an earlier run killed after its last step left: its status file, lock file and work folder.
            Self.removeStatusOfAFinishedRun(URL(filePath: arguments.store))
            _ = InPlaceMigration.cleanUp(URL(filePath: arguments.store))
            log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
            if log?.toStandardOutput == true {
                // The events on standard output end with `finished`, which says so.
            } else if json {
                print("{\"store\":\(JSONText.string(arguments.store)),\"staged\":true,\"written\":false,\"to\":\(JSONText.string(migration.targetVersion.name)),\"stagesRun\":[]}")
            } else {
                print("the store \(arguments.store) is already at version \(migration.targetVersion.name): nothing to migrate, nothing written")
            }
            return
        }
        Interruption.install()
        let display = ProgressDisplay(enabled: !quiet && !json)
        let start = ContinuousClock.now
        // The pause file is honoured where a stop request is: between a handler's chunks and
        // before each step.
        let pacer = MigrationPacer(
            maxRate: nil, pauseFile: control.pauseFile.map { URL(filePath: $0) }, isCancelled: { Interruption.requested },
            emit: { event in
                // The status file first: a reader that saw the event's line finds the status it set.
                status.record(event)
                log?.write(event)
                display.show(event)
            })
        let report = try migration.run(
            progress: { progress in
                let event = MigrationEvent.staged(
                    .init(stage: progress.stage, stages: progress.stages, activity: progress.activity, objects: progress.objects))
                display.show(event)
                // The status file first: a reader that saw the event's line finds the status it set.
                status.record(event)
                log?.write(event)
            },
            isCancelled: {
                pacer.waitWhilePaused()
                return Interruption.requested
            })
        display.finish()
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let finished = MigrationEvent.Finished(outcome: .migrated, resumed: report.resumed, seconds: seconds)
        log?.write(.finished(finished))
        status.record(.finished(finished))
        if log?.toStandardOutput == true {
            // The events on standard output end with `finished`.
        } else if json {
            print(
                "{\"store\":\(JSONText.string(arguments.store)),\"staged\":true,\"to\":\(JSONText.string(migration.targetVersion.name)),"
                    + "\"stagesRun\":[\(report.stagesRun.map { String($0 + 1) }.joined(separator: ","))],\"resumed\":\(report.resumed),"
                    + "\"handlerObjects\":\(report.handlerObjects),\"backup\":\(report.backup.map { JSONText.string($0.path) } ?? "null"),"
                    + "\"seconds\":\(String(format: "%.3f", seconds))}")
        } else {
            print(
                "migrated \(arguments.store) to \(migration.targetVersion.name) in place through \(report.stagesRun.count) stage(s)"
                    + "\(report.resumed ? " (resumed)" : ""), \(String(format: "%.3f", seconds)) s")
            for index in report.stagesRun { print(StagedReport.line(migration.stages[index], index: index)) }
            if report.handlerObjects > 0 { print("handlers read \(report.handlerObjects) object(s)") }
            if let backup = report.backup { print("the original is kept as \(backup.path)") }
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

    static func json(_ stage: StagedMigration.PlannedStage, index: Int) -> String {
        func handler(_ handler: StageHandler?) -> String {
            guard let handler else { return "null" }
            return "[\((handler.operations ?? []).map { JSONText.string($0.description) }.joined(separator: ","))]"
        }
        let steps = stage.steps.map { step in
            "{\"from\":\(JSONText.string(step.from.name)),\"to\":\(JSONText.string(step.to.name)),\"inferred\":\(step.inferred),\"inPlace\":\(InPlaceReport.json(step))}"
        }
        return "{\"stage\":\(index + 1),\"kind\":\"\(stage.isCustom ? "custom" : "lightweight")\",\"versions\":[\(stage.versions.map { JSONText.string($0.name) }.joined(separator: ","))],"
            + "\"willMigrate\":\(handler(stage.willMigrate)),\"steps\":[\(steps.joined(separator: ","))],\"didMigrate\":\(handler(stage.didMigrate))}"
    }
}

extension PlanCommand {
    /// `moult plan STORE --model M --stages FILE`: the stages, checked, and where the store starts.
    func planStaged() async throws {
        if arguments.storeArgument == nil {
            return try await reportingFailures {
                let stages = try arguments.plannedStages()
                if json {
                    print("{\"staged\":true,\"stages\":[\(stages.enumerated().map { StagedReport.json($1, index: $0) }.joined(separator: ","))]}")
                    return
                }
                print("the stages go \(stages.flatMap(\.versions).map(\.name).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }.joined(separator: " → ")), in place")
                for (index, stage) in stages.enumerated() {
                    print(StagedReport.line(stage, index: index))
                    for line in StagedReport.lines(stage) { print(line) }
                }
            }
        }
        try await reportingFailures {
            let migration = try arguments.stagedMigration()
            if json {
                print(
                    "{\"staged\":true,\"from\":\(migration.storeVersion.map { JSONText.string($0.name) } ?? "null"),\"to\":\(JSONText.string(migration.targetVersion.name)),"
                        + "\"upToDate\":\(migration.isUpToDate),\"resuming\":\(migration.isResuming),"
                        + "\"stages\":[\(migration.stages.enumerated().map { StagedReport.json($1, index: $0) }.joined(separator: ","))]}")
                return
            }
            if migration.isUpToDate {
                print("the store is already at version \(migration.targetVersion.name): nothing to migrate")
            } else if migration.isResuming {
                print("the store is in the middle of this staged migration: running it again resumes it")
            } else {
                print("the store is at version \(migration.storeVersion?.name ?? "?"); the stages go to \(migration.targetVersion.name), in place")
            }
            for (index, stage) in migration.stages.enumerated() {
                print(StagedReport.line(stage, index: index))
                for line in StagedReport.lines(stage) { print(line) }
            }
        }
    }
}
