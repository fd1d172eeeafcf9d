import ArgumentParser
import MoultModel

/// `moult generate`.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a scenario store."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult generate' is not built yet")
        }
    }
}
