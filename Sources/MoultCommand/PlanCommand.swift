import ArgumentParser
import Foundation
import MoultMigration
import MoultModel

/// `moult plan STORE --model M [--to V] [--mapping F]… [--chunk-size N] [--json]`.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the migration plan: steps, passes, chunks and estimated rows, without migrating.",
        discussion: "Only the first step reads the store; later steps run on the output of the one before and are listed with their mappings."
    )

    @OptionGroup var arguments: MigrationArguments

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let migration = try arguments.migration()
            let first = try migration.migrator(for: migration.steps[0], source: migration.store).plan()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let plan = String(decoding: try encoder.encode(first), as: UTF8.self)
                let steps = migration.steps.map { step in
                    "{\"from\":\(JSONText.string(step.from.name)),\"to\":\(JSONText.string(step.to.name)),\"inferred\":\(step.inferred)}"
                }
                print("{\"steps\":[\(steps.joined(separator: ","))],\"plan\":\(plan)}")
            } else {
                for (index, step) in migration.steps.enumerated() {
                    print("step \(index + 1): \(step.from.name) -> \(step.to.name)\(step.inferred ? " (inferred mapping)" : "")")
                }
                print(first)
            }
        }
    }
}
