import ArgumentParser
import Foundation
import MoultModel
import MoultPolicyBuild
import MoultPolicySource

/// `moult policies generate|build`: an app's `NSEntityMigrationPolicy` files, unchanged, compiled into
/// a `moult` of its own against the CoreData module.
struct PoliciesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policies",
        abstract: "Build an app's migration policy files, unchanged, into a moult of its own.",
        discussion: """
            The app's NSEntityMigrationPolicy subclasses compile against Moult's CoreData module (their \
            `import CoreData` resolves to it). Each class is registered under Module.Class and Class; the \
            methods value expressions call with FUNCTION($entityPolicy, "selector:", …) get a dispatch table \
            made from their names. @objc attributes are removed and #keyPath(Type.key) becomes "key"; what \
            cannot be rewritten so (@NSManaged, #selector) is refused, naming the line (exit code 65).
            """,
        subcommands: [Generate.self, Build.self]
    )

    struct Sources: ParsableArguments {
        @Argument(help: "The app's policy files (.swift).")
        var files: [String]

        @Option(help: "The app's module, as its mapping models qualify the class names (MyApp.SomePolicy).")
        var module = "App"

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give at least one policy file") }
            guard !module.isEmpty, module.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !(module.first?.isNumber ?? true) else {
                throw ValidationError("--module must be a Swift identifier, not '\(module)'")
            }
        }

        /// The files read and rewritten, with the registration of their classes.
        func registration() throws -> PolicyRegistration {
            try PolicyRegistration.reading(module: module, paths: files)
        }
    }

    /// `moult policies generate FILE… --module M --output DIR`.
    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write the rewritten policy files and the file registering their classes into a folder.")

        @OptionGroup var sources: Sources

        @Option(help: "The folder to write into (made if missing).")
        var output: String

        func run() async throws {
            try await reportingFailures {
                let registration = try sources.registration()
                try PolicyBuildPlan.write(registration, to: URL(filePath: output))
                for change in registration.files.flatMap(\.changes) { printError("note: \(change)") }
                print("\(registration.classes.count) policy classes: \(registration.classes.map(\.name).joined(separator: ", "))")
            }
        }
    }

    /// `moult policies build FILE… --module M --output PATH`.
    struct Build: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "build",
            abstract: "Compile the policy files into a moult binary with their classes registered.",
            discussion: """
                Writes a Swift package (in --work, or a temporary folder) whose executable is Moult's command \
                line with the classes registered, builds it as `make install` builds moult (release, static \
                standard library) and copies the binary to --output. --moult is the Moult package to build \
                against (default: the MOULT_PACKAGE folder, or the current directory).
                """)

        @OptionGroup var sources: Sources

        @Option(help: "The binary to write.")
        var output: String

        @Option(help: "The Moult package's folder.")
        var moult: String?

        @Option(help: "The folder of the generated package (kept); default: a temporary folder.")
        var work: String?

        @Option(help: "debug or release.")
        var configuration = "release"

        func validate() throws {
            guard ["debug", "release"].contains(configuration) else { throw ValidationError("--configuration is debug or release") }
        }

        func run() async throws {
            try await reportingFailures {
                let registration = try sources.registration()
                let root = URL(filePath: moult ?? ProcessInfo.processInfo.environment["MOULT_PACKAGE"] ?? FileManager.default.currentDirectoryPath)
                guard FileManager.default.fileExists(atPath: root.appending(path: "Sources/CoreData").path) else {
                    throw PolicyBuildError(.io, "\(root.path) is not the Moult package (no Sources/CoreData); give it with --moult")
                }
                let folder = work.map { URL(filePath: $0) }
                    ?? FileManager.default.temporaryDirectory.appending(path: "moult-policies-\(ProcessInfo.processInfo.processIdentifier)")
                let plan = PolicyBuildPlan(registration: registration, moultPackage: root, folder: folder, configuration: configuration)
                try plan.writePackage()
                for change in registration.files.flatMap(\.changes) { printError("note: \(change)") }
                try plan.build(into: URL(filePath: output))
                print("built \(output) with \(registration.classes.count) policy classes: \(registration.classes.map(\.name).joined(separator: ", "))")
            }
        }
    }
}
