import ArgumentParser
import MoultModel

/// `moult create`.
struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a new empty store for a model version."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult create' is not built yet")
        }
    }
}
