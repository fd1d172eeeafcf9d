import ArgumentParser
import MoultModel

/// `moult inspect`.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a store's metadata, entity hashes and object counts."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult inspect' is not built yet")
        }
    }
}
