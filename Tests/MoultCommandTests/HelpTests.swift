import Foundation
import MoultTestSupport
import Testing

@Suite struct HelpTests {
    @Test func helpListsExitCodes() throws {
        let result = try MoultProcess.run(["--help"])
        #expect(result.exitCode == 0)
        for code in ["64", "65", "66", "67", "74", "75"] {
            #expect(result.standardOutput.contains("  \(code) "), "exit code \(code) missing from --help")
        }
    }

    @Test func unknownOptionIsBadUsage() throws {
        let result = try MoultProcess.run(["hash", "--no-such-option"])
        #expect(result.exitCode == 64)
    }

    /// `moult` ships no scenario: no People policy, no People generator, anywhere in its help.
    @Test func moultHasNoPeoplePolicyOrGenerator() throws {
        for arguments in [["--help"], ["help", "migrate"], ["help", "plan"], ["migrate", "--help"]] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 0, "\(arguments): \(result.standardError)")
            for word in ["AdultToCompanyPolicy", "ChildToSchoolPolicy", "People", "Generate a People store"] {
                #expect(!result.standardOutput.contains(word), "\(arguments) mentions \(word):\n\(result.standardOutput)")
            }
        }
        #expect(try MoultProcess.run(["help", "migrate"]).standardOutput.contains("--policy <class=policy>"))
        let generate = try MoultProcess.run(["generate", "people", "x.sqlite"])
        #expect(generate.exitCode == 64, "\(generate.standardError)")
    }

    /// The People command: every moult subcommand, its generator, its policies named.
    @Test func thePeopleCommandAddsItsGeneratorAndNamesItsPolicies() throws {
        let result = try MoultProcess.run(["--help"], tool: .people)
        #expect(result.exitCode == 0, "\(result.standardError)")
        for word in ["moult-people", "AdultToCompanyPolicy", "ChildToSchoolPolicy", "generate", "migrate", "inspect", "  66 "] {
            #expect(result.standardOutput.contains(word), "\(word) missing:\n\(result.standardOutput)")
        }
        let generate = try MoultProcess.run(["help", "generate"], tool: .people)
        #expect(generate.exitCode == 0 && generate.standardOutput.contains("--model-version"), "\(generate.standardOutput)")
    }

    /// `help` naming no subcommand is bad usage, at any depth, for both commands.
    @Test func helpForAnUnknownSubcommandIsBadUsage() throws {
        let cases: [([String], MoultProcess.Tool, String)] = [
            (["help", "nosuch"], .moult, "'moult' has no subcommand 'nosuch' (it has: hash, inspect, create, infer, plan, migrate, mapping, finish, status, abandon, verify, fleet, model, convert, generate, test, policies)"),
            (["help", "migrate", "nosuch"], .moult, "'moult migrate' has no subcommand 'nosuch'"),
            (["help", "generate", "nosuch"], .moult, "'moult generate' has no subcommand 'nosuch'"),
            (["help", "nosuch"], .people, "'moult-people' has no subcommand 'nosuch'"),
        ]
        for (arguments, tool, message) in cases {
            let result = try MoultProcess.run(arguments, tool: tool)
            #expect(result.exitCode == 64, "\(arguments)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            #expect(result.standardOutput.isEmpty, "\(arguments) prints no help: \(result.standardOutput)")
        }
        for arguments in [["help"], ["help", "migrate"], ["help", "inspect"]] {
            #expect(try MoultProcess.run(arguments).exitCode == 0, "\(arguments)")
        }
    }

    /// `moult test --help` lists one `--version` (test's own, which says what a bare one does), and the
    /// root's help says what `--version` does; a bare `--version` after any subcommand, or at the end
    /// of a `test` command line, still prints the version, and `test --version V` names a version.
    @Test func oneVersionOptionInTestsHelp() throws {
        let help = try MoultProcess.run(["test", "--help"])
        #expect(help.exitCode == 0)
        let listed = help.standardOutput.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--version") }
        #expect(listed.count == 1, "\(help.standardOutput)")
        #expect(listed.first?.contains("--version <version>") == true, "\(listed)")
        let root = try MoultProcess.run(["--help"])
        #expect(root.standardOutput.contains("--version, after the command or any of its subcommands, prints"), "\(root.standardOutput)")
        // test's own --version still takes its value.
        let folder = try TemporaryDirectory("help")
        defer { folder.remove() }
        let frozen = try MoultProcess.run(["test", Fixtures.peopleModel.path, "--version", "v1", "--freeze", folder.appending("f").path, "--objects", "3"])
        #expect(frozen.exitCode == 0 && frozen.standardOutput.contains("froze v1.sqlite"), "\(frozen.standardOutput)\(frozen.standardError)")
        let version = try MoultProcess.run(["--version"]).standardOutput
        for arguments in [["migrate", "--version"], ["test", Fixtures.peopleModel.path, "--version"], ["test", "--version", "--json"]] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 0 && result.standardOutput == version, "\(arguments): \(result.standardOutput)\(result.standardError)")
        }
    }

    /// `--version` is the tool's version, wherever it is given; the model version has its own name.
    @Test func versionIsTheToolsVersionEverywhere() throws {
        let version = try MoultProcess.run(["--version"])
        #expect(version.exitCode == 0)
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
        for (arguments, tool) in [(["create", "--version"], MoultProcess.Tool.moult), (["--version"], .people), (["generate", "--version"], .people)] {
            let result = try MoultProcess.run(arguments, tool: tool)
            #expect(result.exitCode == 0 && result.standardOutput == version.standardOutput, "\(arguments): \(result.standardOutput)")
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("v2.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", Fixtures.peopleModel.path, "--model-version", "v2"])
        #expect(created.exitCode == 0 && created.standardOutput.contains("version v2"), "\(created.standardError)")
        let generated = try MoultProcess.run(
            ["generate", directory.appending("g.sqlite").path, "--model-version", "3", "--objects", "5", "--model", Fixtures.peopleModel.path],
            tool: .people)
        #expect(generated.exitCode == 0 && generated.standardOutput.contains("at version 3"), "\(generated.standardError)")
    }
}
