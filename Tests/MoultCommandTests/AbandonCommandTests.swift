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

    /// A staged run that keeps a backup, stopped between its stages, has changed the store itself (its
    /// record is in the store's metadata): `abandon` refuses (65), removing nothing, and the same command
    /// then finishes it.
    @Test func aStagedRunWithABackupIsNotAbandoned() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        let made = try MoultProcess.run(["generate", store.path, "--model-version", "1", "--objects", "100", "--model", Self.model], tool: .people)
        try #require(made.exitCode == 0, "\(made.standardError)")
        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"lightweight": ["v1", "v2"]}, {"custom": {"from": "v2", "to": "v3", "mapping": "\#(Self.mapping)"}}]}"#.utf8).write(to: stages)
        let command = ["migrate", store.path, "--model", Self.model, "--stages", stages.path, "--quiet"]
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "staged-phase:2"])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        // (The killed run's lock file, which nobody holds, is taken over and removed as any run does.)
        let lockFile = "s.sqlite.moult-lock"
        let before = try StoreRegressionTests.snapshot(directory.url).filter { $0.key != lockFile }
        let abandoned = try MoultProcess.run(["abandon", store.path])
        #expect(abandoned.exitCode == 65, "\(abandoned.standardError)")
        #expect(abandoned.standardError.contains("staged run") && abandoned.standardError.contains("nothing was removed"), "\(abandoned.standardError)")
        #expect(try StoreRegressionTests.snapshot(directory.url).filter { $0.key != lockFile } == before)
        let finished = try MoultProcess.run(command)
        #expect(finished.exitCode == 0, "\(finished.standardError)")
    }
}
