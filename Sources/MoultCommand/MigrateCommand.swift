import ArgumentParser
import MoultModel

/// `moult migrate`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to another model version."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult migrate' is not built yet")
        }
    }
}
