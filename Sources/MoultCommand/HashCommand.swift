import ArgumentParser
import MoultModel

/// `moult hash PATH [--json]`: each version's entity hashes.
struct HashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the entity version hashes of each version of a model."
    )

    @Argument(help: "An .xcdatamodeld or .xcdatamodel folder.")
    var path: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            throw ModelError(.notFound, "not implemented yet", file: path)
        }
    }
}
