import ArgumentParser
import Foundation
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
