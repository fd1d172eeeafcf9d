import Foundation
import MoultTestSupport
import Testing

/// Issue 27: what `--help` offers and what the command-line reference documents agree: every option a
/// subcommand's help lists is documented, and every option the reference names is some command's.
@Suite struct HelpAgreesWithTheReferenceTests {
    /// `moult`'s subcommands, and those of its subcommands with subcommands of their own.
    static let commands = [
        ["hash"], ["inspect"], ["create"], ["infer"], ["plan"], ["migrate"], ["mapping", "show"], ["mapping", "convert"], ["finish"],
        ["status"], ["verify"], ["convert"], ["generate"], ["test"], ["fleet", "migrate"], ["fleet", "report"], ["model", "extract"],
        ["policies", "generate"], ["policies", "build"],
    ]

    /// The long options a help text lists (`--name`), `--help` and `--version` aside.
    static func options(inHelp text: String) -> Set<String> {
        var found: Set<String> = []
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("-") else { continue }
            for word in trimmed.split(whereSeparator: { $0 == " " || $0 == "," }) where word.hasPrefix("--") {
                found.insert(String(word.prefix { $0.isLetter || $0.isNumber || $0 == "-" }))
            }
        }
        return found.subtracting(["--help", "--version"])
    }

    @Test func everyOptionInHelpIsDocumentedAndEveryDocumentedOptionExists() throws {
        let articles = Fixtures.packageRoot.appending(path: "Sources/MoultCommand/MoultCommand.docc")
        let reference = try String(contentsOf: articles.appending(path: "CommandLine.md"), encoding: .utf8)
        let fleets = try String(contentsOf: articles.appending(path: "Fleets.md"), encoding: .utf8)
        var offered: Set<String> = []
        for command in Self.commands {
            let help = try MoultProcess.run(command + ["--help"])
            #expect(help.exitCode == 0, "\(command): \(help.standardError)")
            let options = Self.options(inHelp: help.standardOutput)
            #expect(!options.isEmpty || command == ["status"] || command == ["hash"], "\(command) lists no option")
            offered.formUnion(options)
            for option in options {
                #expect(
                    reference.contains(option) || fleets.contains(option),
                    "`moult \(command.joined(separator: " "))` offers \(option), which neither CommandLine.md nor Fleets.md documents")
            }
        }
        // The reference's hidden options (for benchmarks) are said to be hidden; the others are offered.
        let documented = Set(reference.split(separator: "`").filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != " " && $0 != "=" && $0 != "\\" }) })
            .subtracting(["--help", "--version", "--"])
        for option in documented where !offered.contains(option) {
            #expect(reference.contains("hidden") && Self.hiddenOptions.contains(option), "CommandLine.md documents \(option), which no command offers")
        }
    }

    /// The benchmark switches `migrate` takes without listing them in `--help`.
    static let hiddenOptions: Set<String> = [
        "--per-object-stage2", "--keep-repeated-links", "--to-ones-in-stage2", "--keep-pass-order", "--write-all-associations", "--unique-per-object",
        "--stream-every-step", "--copy-external-data", "--profile",
    ]
}
