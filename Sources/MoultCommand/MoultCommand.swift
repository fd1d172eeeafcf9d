public import ArgumentParser
import MoultModel

/// The `moult` command line, as a library: an app can build its own command with its own policies.
public struct MoultCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "moult",
        abstract: "Core Data model versioning and migration, streaming and resumable, for Linux.",
        discussion: """
            Exit codes:
              0   success
              1   internal error (a bug: please report it)
              64  bad usage (unknown option, missing argument)
              65  bad input (malformed model, mapping, expression or store)
              66  incompatible (no matching version, mapping can't be inferred, no migration path)
              67  validation failed (migrated data breaks the destination model's rules)
              74  I/O failure (cannot read, write, lock or create a file)
              75  interrupted but resumable (killed, cancelled, disk full: run again with --resume)
            """,
        version: "0.1.0",
        subcommands: MoultCommand.subcommands
    )

    public init() {}

    /// The subcommands; each lives in its own file.
    static var subcommands: [any ParsableCommand.Type] {
        [
            HashCommand.self, InspectCommand.self, CreateCommand.self, InferCommand.self, GenerateCommand.self,
            PlanCommand.self, MigrateCommand.self, MappingCommand.self,
        ]
    }
}

/// Runs a command's body, turning Moult's errors into a message on standard error and the
/// documented exit code.
func reportingFailures<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as any CategorizedError {
        printError("moult: error: \(error.description)")
        throw ExitCode(error.category.exitCode)
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    var stream = StandardError()
    print(line, to: &stream)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleWriter.standardError(string)
    }
}
