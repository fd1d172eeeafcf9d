import ArgumentParser
import Foundation
import MoultCommand
import MoultModel
import MoultPeople

/// `moult-people generate STORE --model-version N --objects N [--seed S] [--model M]`.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a People store (deterministic for a seed).",
        discussion: "The model is Datasets/People/People.xcdatamodeld (under the current directory unless --model says where)."
    )

    @Argument(help: "The store to create (must not exist).")
    var store: String

    @Option(help: "The model version to generate (1…5 or v1…v5).")
    var modelVersion: String = "1"

    @Option(help: "How many persons.")
    var objects: Int = 1_000

    @Option(help: "The random seed.")
    var seed: UInt64 = 1

    @Option(help: "The People model (default: Datasets/People/People.xcdatamodeld under the current directory).")
    var model: String?

    func validate() throws {
        guard objects >= 0 else { throw ValidationError("--objects must be 0 or more") }
    }

    func run() async throws {
        try await MoultCommand.reportingFailures {
            let modelURL = model.map { URL(filePath: $0) }
                ?? PeopleGenerator.bundledModelURL(relativeTo: URL(filePath: FileManager.default.currentDirectoryPath))
            let versioned = try VersionedModel(contentsOf: modelURL)
            let generator = PeopleGenerator(model: versioned, seed: seed)
            let url = URL(filePath: store)
            let partial = url.deletingLastPathComponent().appending(path: ".\(url.lastPathComponent).generating")
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw ModelError(.unwritable, "\(store) already exists; Moult never overwrites a store")
            }
            try? FileManager.default.removeItem(at: partial)
            do {
                try generator.generate(version: modelVersion, persons: objects, at: partial)
                guard rename(partial.path, url.path) == 0 else {
                    throw ModelError(.unwritable, "cannot move the generated store to \(store) (errno \(errno))")
                }
            } catch {
                try? FileManager.default.removeItem(at: partial)
                throw error
            }
            print("generated \(objects) persons at version \(modelVersion) in \(store)")
        }
    }
}
