import Foundation
import MoultTestSupport
import Testing

/// Messages a first user meets (the honest-figures issue's fresh-clone list): a store copied without
/// its `-wal`, an output in a folder that does not exist.
@Suite struct FreshCloneMessagesTests {
    static let model = Fixtures.peopleModel.path

    /// A WAL store whose objects are all in its `-wal`, copied without it: the run says so.
    @Test func aWALStoreCopiedWithoutItsWALIsNoted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let made = try MoultProcess.run(["create", directory.appending("s.sqlite").path, "--model", Self.model, "--model-version", "v2"])
        try #require(made.exitCode == 0, "\(made.standardError)")
        // WAL mode, and the store's own rows left in a -wal that a copy then leaves behind.
        try MigrateCommandTests.sqlite3(directory.appending("s.sqlite"), "PRAGMA journal_mode=WAL;")
        let result = try MoultProcess.run(["migrate", directory.appending("s.sqlite").path, "--model", Self.model, "--to", "v3", "--output",
                                           directory.appending("d.sqlite").path, "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardError.contains("is in WAL mode, has no -wal beside it and holds no object"), "\(result.standardError)")
        // A store with objects says nothing.
        let full = try MigrateCommandTests.generate("2", persons: 20, in: directory, name: "f.sqlite")
        try MigrateCommandTests.sqlite3(full, "PRAGMA journal_mode=WAL;")
        let quiet = try MoultProcess.run(["migrate", full.path, "--model", Self.model, "--to", "v3", "--output", directory.appending("e.sqlite").path, "--quiet"])
        #expect(quiet.exitCode == 0 && !quiet.standardError.contains("WAL mode"), "\(quiet.standardError)")
    }

    /// DEST in a folder that does not exist: one message naming the folder (74), nothing made.
    @Test func anOutputInAMissingFolderSaysWhichFolder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try MigrateCommandTests.generate("2", persons: 10, in: directory, name: "s.sqlite")
        let missing = directory.appending("no/such/folder")
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--output", missing.appending(path: "d.sqlite").path])
        #expect(result.exitCode == 74, "\(result.standardError)")
        #expect(result.standardError.contains("the folder \(missing.path)") && result.standardError.contains("does not exist"), "\(result.standardError)")
        #expect(!result.standardError.contains("the file the file"), "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["s.sqlite"])
    }
}
