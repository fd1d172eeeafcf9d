public import ArgumentParser
public import MoultMigration
import MoultModel
import Foundation
import MoultStore

/// The `moult` command line, as a library: an app can build its own command with its own policies.
///
/// `moult` itself registers no policy class: a mapping naming one is refused unless `--policy` binds
/// the class to a built-in policy or to Core Data's default one. An app whose mapping models name
/// classes of its own runs the same command line with them registered:
///
/// ```swift
/// @main
/// struct MyAppMigrate: AsyncParsableCommand {
///     static let configuration = MoultCommand.makeConfiguration(
///         commandName: "myapp-migrate", abstract: "Migrates MyApp's stores.")
///
///     static func main() async {
///         var policies = PolicyRegistry()
///         policies.register("MyApp.CompanyPolicy") { CompanyPolicy() }
///         await MoultCommand.runCommandLine(Self.self, policies: policies)
///     }
/// }
/// ```
///
/// Datasets/People/CLI (`moult-people`) is a complete example.
public struct MoultCommand: AsyncParsableCommand {
    /// The tool's version (`moult --version`).
    public static let version = "0.1.0"

    public static let configuration = makeConfiguration(
        commandName: "moult", abstract: "Core Data model versioning and migration, streaming and resumable, for Linux.")

    public init() {}

    /// The subcommands every command built on Moult has; each lives in its own file.
    public static var subcommands: [any ParsableCommand.Type] {
        [
            HashCommand.self, InspectCommand.self, CreateCommand.self, InferCommand.self, PlanCommand.self, MigrateCommand.self,
            MappingCommand.self, FinishCommand.self, StatusCommand.self, AbandonCommand.self, VerifyCommand.self, FleetCommand.self, ModelCommand.self,
            FaultPointsCommand.self,
            ConvertCommand.self,
            GenerateCommand.self, GenerateModelsCommand.self,
            TestCommand.self,
            PoliciesCommand.self,
        ]
    }

    /// The configuration of a command line built on Moult: Moult's subcommands (but those whose names
    /// `extraSubcommands` take), then `extraSubcommands`, the exit codes and `--version` in the help.
    ///
    /// The configuration carries no version: ArgumentParser would then list a second `--version` in the
    /// help of `moult test`, whose `--version V` names a model version (and a flag of the root's would
    /// take `test`'s option from it). ``runCommandLine(_:policies:arguments:)`` answers a bare
    /// `--version` after any command itself (`asksForVersion`).
    public static func makeConfiguration(
        commandName: String, abstract: String, discussion: String? = nil, adding extraSubcommands: [any ParsableCommand.Type] = []
    ) -> CommandConfiguration {
        CommandConfiguration(
            commandName: commandName,
            abstract: abstract,
            discussion: (discussion.map { $0 + "\n\n" } ?? "") + """
                Exit codes:
                  0   success
                  1   internal error (a bug: please report it)
                  64  bad usage (unknown option, missing argument)
                  65  bad input (malformed model, mapping, expression or store)
                  66  incompatible (no matching version, no inferable mapping, no
                      migration path, an unbound policy class; --strict: data lost)
                  67  validation failed (the data breaks the target model's rules)
                  73  busy (another Moult run holds the store or destination;
                      nothing was touched: run again later)
                  74  I/O failure (cannot read, write, lock or create a file)
                  75  interrupted but resumable (killed, cancelled, disk full):
                      run the same command again
                64 to 67 and 73 leave every file as the run found it; 74 and 75
                keep only the work a rerun resumes (moult abandon removes it).

                --version, after the command or any of its subcommands, prints
                Moult's version (\(version)); `test --version V` names a model
                version to test.
                """,
            // A command of the app's own with a name Moult uses (moult-people's People `generate`) takes its place.
            subcommands: subcommands.filter { moult in !extraSubcommands.contains { $0._commandName == moult._commandName } } + extraSubcommands
        )
    }

    /// The policies of the command line being run (see ``runCommandLine(_:policies:arguments:)``).
    @TaskLocal static var policies = PolicyRegistry()

    /// The arguments of the command line being run (see ``runCommandLine(_:policies:arguments:)``):
    /// `migrate --manifest` reads them as `fleet migrate` does.
    @TaskLocal static var commandLine = Array(CommandLine.arguments.dropFirst())

    /// Runs a command line built on Moult with `policies` registered: parses the arguments (the
    /// process's when nil), runs the subcommand, and exits with Moult's exit codes.
    ///
    /// `--policy CLASS=…` on the command line binds a class over what is registered here.
    public static func runCommandLine<Root: AsyncParsableCommand>(
        _ root: Root.Type = MoultCommand.self, policies: PolicyRegistry = PolicyRegistry(), arguments: [String]? = nil
    ) async {
        let arguments = arguments ?? Array(CommandLine.arguments.dropFirst())
        if let message = unknownHelpTopic(root, arguments) ?? unknownSubcommand(root, arguments) {
            printError("\(root.configuration.commandName ?? "moult"): error: \(message)")
            root.exit(withError: ExitCode(FailureCategory.usage.exitCode))
        }
        if asksForVersion(arguments) {
            // `moult test --version V` names a version to test; a bare `--version` asks for Moult's.
            print(version)
            root.exit(withError: nil)
        }
        do {
            try armHarnessHooks(ProcessInfo.processInfo.environment)
        } catch {
            printError("\(root.configuration.commandName ?? "moult"): error: \((error as? FaultInjection.UnknownPoint)?.message ?? "\(error)")")
            root.exit(withError: ExitCode(FailureCategory.usage.exitCode))
        }
        if ProcessInfo.processInfo.environment[ParentWatch.variable] == "1" { ParentWatch.start() }
        // SIGTERM and SIGINT end any command with 75, a run blocked in I/O included (`moult test` passes
        // them on to its children instead: ChildStop).
        Interruption.install()
        await $policies.withValue(policies) {
            await $commandLine.withValue(arguments) {
                await root.main(arguments)
            }
        }
    }

    /// The test harnesses' hooks, the only environment the library's behaviour depends on, read here and
    /// nowhere else: `MOULT_FAULT=<point>[:<n>]` (``FaultInjection``: `moult fault-points` lists the
    /// points), the power-loss harness's `MOULT_FILE_TRACE=<file>`, `MOULT_FILE_CRASH=<n>` and
    /// `MOULT_FILE_KEEP=<folder>` (``FileOperations/armHarness(tracePath:crashBefore:keepFolder:)``), the
    /// folder-swap harness's `MOULT_FILE_PAUSE=<n>:<fifo>` (``FileOperations/armPause(before:fifo:)``), and
    /// `moult test`'s `MOULT_TEST_HOLD=<fifo>` (``ChildProcess/holdVariable``).
    static func armHarnessHooks(_ environment: [String: String]) throws {
        if let fault = environment["MOULT_FAULT"] { try FaultInjection.arm(fault) }
        if let fifo = environment[ChildProcess.holdVariable] { ChildProcess.armHold(fifo) }
        let (trace, crash, keep) = (environment["MOULT_FILE_TRACE"], environment["MOULT_FILE_CRASH"], environment["MOULT_FILE_KEEP"])
        if trace != nil || crash != nil || keep != nil {
            FileOperations.armHarness(tracePath: trace, crashBefore: crash.flatMap { Int($0) }, keepFolder: keep)
        }
        if let pause = environment["MOULT_FILE_PAUSE"], let colon = pause.firstIndex(of: ":"), let count = Int(pause[..<colon]) {
            FileOperations.armPause(before: count, fifo: String(pause[pause.index(after: colon)...]))
        }
    }

    /// Whether the arguments ask for Moult's version: `--version` after the command or any subcommand
    /// (before a `--`), but for `test`'s `--version V`, which names a model version: there only a bare
    /// `--version` (the last argument, or followed by an option) asks for Moult's.
    static func asksForVersion(_ arguments: [String]) -> Bool {
        let options = arguments.prefix { $0 != "--" }
        guard let index = options.lastIndex(of: "--version") else { return false }
        guard options.first == "test" else { return true }
        return index + 1 == options.count || options[index + 1].hasPrefix("-")
    }

    /// `help <name>…` naming no subcommand: what to say (ArgumentParser would print the root's help and
    /// succeed).
    static func unknownHelpTopic(_ root: any ParsableCommand.Type, _ arguments: [String]) -> String? {
        guard arguments.first == "help" else { return nil }
        var configuration = Self.configuration(of: root)
        var path = [configuration.commandName ?? "moult"]
        for name in arguments.dropFirst() where !name.hasPrefix("-") {
            var next: CommandConfiguration?
            var names: [String] = []
            for subcommand in configuration.subcommands {
                let candidate = Self.configuration(of: subcommand)
                if let commandName = candidate.commandName, candidate.shouldDisplay { names.append(commandName) }
                if candidate.commandName == name || candidate.aliases.contains(name) {
                    next = candidate
                    break
                }
            }
            guard let next else {
                let command = path.joined(separator: " ")
                return names.isEmpty
                    ? "'\(command)' has no subcommand '\(name)'"
                    : "'\(command)' has no subcommand '\(name)' (it has: \(names.joined(separator: ", ")))"
            }
            configuration = next
            path.append(name)
        }
        return nil
    }

    /// A first argument that is neither an option nor a subcommand (`moult migrte STORE`): what to say,
    /// with the nearest subcommand's name (ArgumentParser would say "2 unexpected arguments").
    static func unknownSubcommand(_ root: any ParsableCommand.Type, _ arguments: [String]) -> String? {
        guard let name = arguments.first, !name.hasPrefix("-"), name != "help" else { return nil }
        let subcommands = Self.configuration(of: root).subcommands.map { Self.configuration(of: $0) }
        guard !subcommands.isEmpty, !subcommands.contains(where: { $0.commandName == name || $0.aliases.contains(name) }) else { return nil }
        let names = subcommands.filter(\.shouldDisplay).compactMap(\.commandName)
        let nearest = names.map { ($0, editDistance($0, name)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
        return "unknown command '\(name)'" + (nearest.map { " (did you mean '\($0)'?)" } ?? "") + "; the commands: \(names.joined(separator: ", "))"
    }

    /// The number of single-character insertions, deletions and substitutions between two words.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous + (a[i - 1] == b[j - 1] ? 0 : 1)
                previous = row[j]
                row[j] = min(substitution, row[j] + 1, row[j - 1] + 1)
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    private static func configuration<Command: ParsableCommand>(of command: Command.Type) -> CommandConfiguration {
        command.configuration
    }

    /// Runs a command's body, turning Moult's errors into a message on standard error and the
    /// documented exit code: for subcommands of a command line built on Moult.
    public static func reportingFailures<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as any CategorizedError {
            printError("moult: error: \(error.description)")
            if let hint = ValueSizeOption.hint(for: error) { printError("moult: \(hint)") }
            throw ExitCode(error.category.exitCode)
        }
    }
}

/// Runs a command's body, turning Moult's errors into a message on standard error and the
/// documented exit code.
func reportingFailures<T>(_ body: () async throws -> T) async throws -> T {
    try await MoultCommand.reportingFailures(body)
}

/// Writes a line to standard error.
func printError(_ line: String) {
    // Below a progress line, never on it.
    ProgressDisplay.active?.finish()
    var stream = StandardError()
    print(line, to: &stream)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleWriter.standardError(string)
    }
}

enum FileHandleWriter {
    static func standardError(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
