import Foundation
import MoultTestSupport
import Testing

/// Issue 27: the README's tour runs as written, in a scratch folder prepared as `make demo` leaves the
/// repository (the bundled data, `demo-output/people-v2.sqlite`, the binaries on the `PATH`), with
/// `/tmp/` replaced by the scratch folder so that runs never meet.
@Suite struct ReadmeCommandsTests {
    /// The tour's commands: the table's second column, then the lines of the shell block under it.
    static func tourCommands() throws -> [String] {
        let readme = try String(contentsOf: Fixtures.packageRoot.appending(path: "README.md"), encoding: .utf8)
        let tour = readme[readme.range(of: "## A tour of the commands")!.upperBound...]
        let section = tour[..<tour.range(of: "\n### ")!.lowerBound]
        var commands: [String] = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let open = cells[1].firstIndex(of: "`") else { continue }
            let rest = cells[1][cells[1].index(after: open)...]
            guard let close = rest.firstIndex(of: "`") else { continue }
            let command = String(rest[..<close])
            // The rows whose example is the block below run there.
            if cells[1].contains("(below)") { continue }
            commands.append(command.replacingOccurrences(of: "moult model extract STORE --output X.xcdatamodel",
                                                         with: "moult model extract demo-output/people-v2.sqlite --output /tmp/X.xcdatamodel"))
        }
        // The shell block after the table: the stages file and the fleet.
        let blocks = section.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        for block in blocks.dropFirst() { commands.append(block) }
        return commands
    }

    @Test func theTourRunsAsWritten() throws {
        let directory = try TemporaryDirectory("moult-readme")
        defer { directory.remove() }
        let manager = FileManager.default
        try manager.createSymbolicLink(at: directory.appending("Datasets"), withDestinationURL: Fixtures.datasets)
        try manager.createDirectory(at: directory.appending("demo-output"), withIntermediateDirectories: true)
        let generated = try MoultProcess.run(
            ["generate", "demo-output/people-v2.sqlite", "--model-version", "2", "--objects", "300", "--model", Fixtures.peopleModel.path],
            tool: .people, currentDirectory: directory.url)
        #expect(generated.exitCode == 0, "\(generated.standardError)")
        let binaries = MoultProcess.executable(.moult).deletingLastPathComponent().path
        let scratch = directory.appending("tmp")
        try manager.createDirectory(at: scratch, withIntermediateDirectories: true)
        let commands = try Self.tourCommands()
        #expect(commands.count >= 14, "\(commands)")
        for command in commands {
            let script = "set -e\nexport PATH=\"\(binaries):$PATH\"\nM=Datasets/People/People.xcdatamodeld\n"
                + command.replacingOccurrences(of: "/tmp/", with: scratch.path + "/")
            let process = Process()
            process.executableURL = URL(filePath: "/bin/sh")
            process.arguments = ["-c", script]
            process.currentDirectoryURL = directory.url
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            // The --strict example is meant to be refused.
            let expected: Int32 = command.contains("--strict") ? 66 : 0
            #expect(process.terminationStatus == expected, "\(command)\n\(said)")
        }
    }
}
