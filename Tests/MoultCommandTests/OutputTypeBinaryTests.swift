import Foundation
import MoultTestSupport
import Testing

/// Issue 40, item 9: `migrate --output-type binary` is refused (64) as `create` and `convert` refuse
/// Core Data's binary store, and no command's `--help` names a source file.
@Suite struct OutputTypeBinaryTests {
    @Test func binaryOutputRefusedLikeCreateAndConvert() throws {
        let directory = try TemporaryDirectory("output-type-binary")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 3, in: directory)
        let before = try MigrateCommandTests.digest(source)
        let output = directory.appending("out.binary")
        let runs: [[String]] = [
            ["migrate", source.path, "--model", MigrateCommandTests.model, "--output", output.path, "--output-type", "binary"],
            ["migrate", source.path, "--model", MigrateCommandTests.model, "--output-type", "binary"],
            ["create", output.path, "--model", MigrateCommandTests.model, "--output-type", "binary"],
            ["convert", source.path, "--model", MigrateCommandTests.model, "--output", output.path, "--to", "binary"],
        ]
        for arguments in runs {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 64, "moult \(arguments.joined(separator: " ")): \(result.standardError)")
            #expect(result.standardError.contains("binary store"), "\(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try MigrateCommandTests.digest(source) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(left == ["source.sqlite"], "\(left)")
    }

    /// Every subcommand's help (and the nested ones'), free of source file names (`X.swift`,
    /// `MigrateCommand+StoreTypes`).
    @Test func helpNamesNoSourceFile() throws {
        let top = try MoultProcess.run(["--help"])
        var commands = Self.subcommands(in: top.standardOutput).map { [$0] }
        for parent in ["fleet", "model"] {
            let nested = try MoultProcess.run([parent, "--help"])
            commands += Self.subcommands(in: nested.standardOutput).map { [parent, $0] }
        }
        #expect(commands.count > 15, "\(commands)")
        let sourceName = /[A-Za-z]+\.swift\b|[A-Z][A-Za-z]+\+[A-Z][A-Za-z]+/
        for command in commands {
            let help = try MoultProcess.run(command + ["--help"])
            #expect(help.exitCode == 0, "\(command)")
            let named = help.standardOutput.matches(of: sourceName).map { String(help.standardOutput[$0.range]) }
            #expect(named.isEmpty, "moult \(command.joined(separator: " ")) --help names \(named)")
        }
    }

    /// The names listed under SUBCOMMANDS.
    static func subcommands(in help: String) -> [String] {
        guard let start = help.range(of: "SUBCOMMANDS:") else { return [] }
        return help[start.upperBound...].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first, word.first?.isLowercase == true else {
                return nil
            }
            return String(word)
        }
    }
}
