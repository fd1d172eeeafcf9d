import ArgumentParser
import MoultModel

/// `moult infer`.
struct InferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Infer a lightweight mapping model between two model versions."
    )

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "'moult infer' is not built yet")
        }
    }
}
