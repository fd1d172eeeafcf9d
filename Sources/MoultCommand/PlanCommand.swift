import ArgumentParser
import MoultModel

/// `moult plan`.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the migration plan: passes, chunks and estimated rows."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult plan' is not built yet")
        }
    }
}
