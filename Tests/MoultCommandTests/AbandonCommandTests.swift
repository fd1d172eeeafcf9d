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

    /// A work folder holds only what its run recorded before making it: a file someone else put in it
    /// (a sync client's, the user's) is never removed, neither by `abandon` nor by the rerun that
    /// finishes the work, and the folder holding it is kept and named.
    @Test func aFileMoultDidNotMakeInAWorkFolderIsKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("s.sqlite")
        let output = directory.appending("d.sqlite")
        let made = try MoultProcess.run(
            ["generate", source.path, "--model-version", "2", "--objects", "300", "--model", Self.model], tool: .people)
        try #require(made.exitCode == 0, "\(made.standardError)")
        let command = ["migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping, "--output", output.path, "--chunk-size", "50", "--quiet"]
        let work = URL(filePath: output.path + ".moult")

        // Given up: what the run recorded goes, the other file and its folder stay.
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "after-sqlite-commit:2"])
        #expect(killed.exitCode != 0)
        let recorded = try String(contentsOf: work.appending(path: "made"), encoding: .utf8)
        #expect(recorded.split(separator: "\n").contains("destination.sqlite"), "\(recorded)")
        try Data("mine".utf8).write(to: work.appending(path: "notes.txt"))
        let abandoned = try MoultProcess.run(["abandon", output.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        #expect(abandoned.standardOutput.contains("kept \(work.path) (it holds notes.txt, which Moult did not make)"), "\(abandoned.standardOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["notes.txt"])

        // Finished by a rerun: the same.
        try FileManager.default.removeItem(at: work)
        let again = try MoultProcess.run(command, environment: ["MOULT_FAULT": "after-sqlite-commit:2"])
        #expect(again.exitCode != 0)
        try Data("mine".utf8).write(to: work.appending(path: "notes.txt"))
        let finished = try MoultProcess.run(command)
        #expect(finished.exitCode == 0, "\(finished.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(left == [".d.sqlite.moult.removing", "d.sqlite", "s.sqlite"], "\(left)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending(".d.sqlite.moult.removing").path) == ["notes.txt"])
        #expect(try Data(contentsOf: directory.appending(".d.sqlite.moult.removing").appending(path: "notes.txt")) == Data("mine".utf8))
        // The run says so, though it is quiet: its own files are gone, the folder stays for that file.
        let removing = directory.appending(".d.sqlite.moult.removing").path
        #expect(finished.standardError.contains("kept \(removing): it holds notes.txt, which Moult did not make"), "\(finished.standardError)")
    }

    /// A work folder an earlier release made has no record of its entries: the names Moult gives a work
    /// folder's entries are removed, nothing else.
    @Test func aWorkFolderWithoutARecordLosesOnlyMoultsNames() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        try Data("store".utf8).write(to: store)
        let work = directory.appending(".s.sqlite.moult-inplace")
        try FileManager.default.createDirectory(at: work.appending(path: "v1-to-v2.sqlite.moult/associations"), withIntermediateDirectories: true)
        for name in ["v1-to-v2.sqlite", "v1-to-v2.sqlite-wal", "v1-to-v2.sqlite.moult/destination.sqlite", "v1-to-v2.sqlite.moult/associations/data.mdb",
            "store-state-v1-to-v2", "backup", "keep.me", "v1-to-v2.sqlite.moult/theirs.txt"]
        {
            try Data(name.utf8).write(to: work.appending(path: name))
        }
        let abandoned = try MoultProcess.run(["abandon", store.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: work.path).sorted()
        #expect(left == ["keep.me", "v1-to-v2.sqlite.moult", "v1-to-v2.sqlite.moult/theirs.txt"], "\(left)")
        #expect(try Data(contentsOf: store) == Data("store".utf8))
    }
}
