import Foundation
import MoultTestSupport
import Testing

/// `moult abandon TARGET`: an interrupted run given up removes exactly what Moult kept to resume it,
/// through no link, and the next run starts afresh.
@Suite struct AbandonCommandTests {
    static let model = Fixtures.datasets.appending(path: "People/People.xcdatamodeld").path
    static let mapping = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json").path

    @Test func anInterruptedRunIsGivenUpAndTheNextStartsAfresh() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("s.sqlite")
        let output = directory.appending("d.sqlite")
        let made = try MoultProcess.run(
            ["generate", source.path, "--model-version", "2", "--objects", "500", "--model", Self.model], tool: .people)
        try #require(made.exitCode == 0, "\(made.standardError)")
        let command = ["migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping, "--output", output.path, "--chunk-size", "50", "--quiet"]
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "after-sqlite-commit:3"])
        #expect(killed.exitCode != 0)
        let work = URL(filePath: output.path + ".moult")
        #expect(FileManager.default.fileExists(atPath: work.path))
        let before = try Data(contentsOf: source)

        // A link somewhere else at a temporary name of Moult's: removed itself, what it names kept.
        let elsewhere = directory.appending("keep.txt")
        try Data("keep".utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: directory.appending(".d.sqlite.moult-tmp").path, withDestinationPath: elsewhere.path)

        let abandoned = try MoultProcess.run(["abandon", output.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        #expect(abandoned.standardOutput.contains("abandoned the interrupted run of \(output.path): removed .d.sqlite.moult-tmp, d.sqlite.moult"), "\(abandoned.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: work.path))
        #expect(try Data(contentsOf: elsewhere) == Data("keep".utf8))
        #expect(try Data(contentsOf: source) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["keep.txt", "s.sqlite"], "\(names)")

        let again = try MoultProcess.run(["abandon", output.path])
        #expect(again.standardOutput.contains("nothing to abandon"))
        let fresh = try MoultProcess.run(command)
        #expect(fresh.exitCode == 0, "\(fresh.standardError)")
    }
}
