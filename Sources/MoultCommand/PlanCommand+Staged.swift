import Foundation
import MoultMigration
import MoultModel

extension PlanCommand {
    /// `moult plan STORE --model M --stages FILE`: the stages, checked, and where the store starts.
    func planStaged() async throws {
        if arguments.storeArgument == nil {
            return try await reportingFailures {
                let stages = try arguments.plannedStages()
                if json { return try StagesReport(stages: stages.enumerated().map { StagedReport.Stage($1, index: $0) }).printJSON() }
                print("the stages go \(stages.flatMap(\.versions).map(\.name).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }.joined(separator: " → ")), in place")
                printStages(stages)
            }
        }
        try await reportingFailures {
            let migration = try arguments.stagedMigration()
            if json {
                return try StagedPlanReport(
                    from: migration.storeVersion?.name, to: migration.targetVersion.name, upToDate: migration.isUpToDate, resuming: migration.isResuming,
                    stages: migration.stages.enumerated().map { StagedReport.Stage($1, index: $0) }
                ).printJSON()
            }
            if migration.isUpToDate {
                print("the store is already at version \(migration.targetVersion.name): nothing to migrate")
            } else if migration.isResuming {
                print("the store is in the middle of this staged migration: running it again resumes it")
            } else {
                print("the store is at version \(migration.storeVersion?.name ?? "?"); the stages go to \(migration.targetVersion.name), in place")
            }
            printStages(migration.stages)
        }
    }

    private func printStages(_ stages: [StagedMigration.PlannedStage]) {
        for (index, stage) in stages.enumerated() {
            print(StagedReport.line(stage, index: index))
            for line in StagedReport.lines(stage) { print(line) }
        }
    }

    /// `plan --model M --stages FILE --json` (no store): the stages, checked.
    struct StagesReport: JSONReport {
        let staged = true
        var stages: [StagedReport.Stage]
    }

    /// `plan STORE --model M --stages FILE --json`: where the store starts, and the stages.
    struct StagedPlanReport: JSONReport {
        let staged = true
        /// The store's version (`null` when no version of the model is the store's).
        @ExplicitNull var from: String?
        var to: String
        var upToDate: Bool
        var resuming: Bool
        var stages: [StagedReport.Stage]
    }
}
