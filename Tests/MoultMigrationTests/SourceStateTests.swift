import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The source's file state (``StoreFileState``): another program writing to the source while a step
/// reads it stops the run (nothing made); a source changed since an interrupted run is not resumed.
@Suite struct SourceStateTests {
    static func migrator(_ source: URL, chunkSize: Int = 25) throws -> StreamingMigrator {
        StreamingMigrator(
            source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"),
            mappings: [try People.mapping("v2-to-v3")], policies: People.policies,
            options: MigrationOptions(chunkSize: chunkSize, bulkSQL: false))
    }

    /// Runs the step into `output` and stops it (cancelled, resumable) after three chunks.
    static func stopAfterThreeChunks(_ source: URL, output: URL) throws {
        var chunks = 0
        #expect(throws: MigrationError.self) {
            try migrator(source).run(output: output, progress: { _ in chunks += 1 }, isCancelled: { chunks >= 3 })
        }
        #expect(chunks == 3)
    }

    /// One committed write of another program: two persons swap ages (the sum stays the same, as in
    /// `faults/concurrent-writer-torn-source-read`).
    static func swapAges(_ store: URL, _ a: Int64, _ b: Int64) throws {
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.write {
            try database.execute(
                "UPDATE ZPERSON SET ZAGE = (SELECT SUM(ZAGE) FROM ZPERSON WHERE Z_PK IN (?, ?)) - ZAGE WHERE Z_PK IN (?, ?)",
                [.int(a), .int(b), .int(a), .int(b)])
        }
    }

    /// `faults/concurrent-writer-torn-source-read`: an app commits to a rollback-journal source while
    /// the step reads it (here after the first chunk, deterministically): the run stops with 74 and
    /// makes nothing, in both journal modes; the same run with no writer finishes.
    @Test(arguments: ["delete", "wal"])
    func aSourceWrittenWhileReadStopsTheRun(journalMode: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 200, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.executeScript("PRAGMA journal_mode = \(journalMode)")
        database.close()
        let output = directory.appending("out.sqlite")
        var wrote = false
        #expect {
            try Self.migrator(source).run(output: output, progress: { _ in
                if !wrote {
                    wrote = true
                    try? Self.swapAges(source, 10, 190)
                }
            })
        } throws: { error in
            let error = error as? MigrationError
            return error?.code == .sourceChangedWhileRead && error?.category.exitCode == 74
                && error?.message.contains("wrote to the source") == true
        }
        #expect(wrote)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"), "nothing is kept: it could not be resumed")

        // Unwritten, it finishes.
        try Self.migrator(source).run(output: output)
        #expect(FileManager.default.fileExists(atPath: output.path))
    }

    /// In place, another program writing to the store while it is migrated: the migrated copy is not
    /// swapped in (it would lose the write), the run stops with 74, and nothing of it is left.
    @Test func aStoreWrittenWhileMigratedInPlaceIsNotReplaced() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try People.generate("v2", persons: 200, in: directory, name: "s.sqlite")
        let chain = try ProgressiveMigration(
            store: store, model: People.model, to: "v3", mappings: [try People.mapping("v2-to-v3")], policies: People.policies,
            options: MigrationOptions(chunkSize: 25))
        var wrote = false
        #expect {
            try InPlaceMigration(chain: chain, keepsBackup: true).run(progress: { _ in
                if !wrote {
                    wrote = true
                    try? Self.swapAges(store, 10, 190)
                }
            })
        } throws: { error in
            (error as? MigrationError)?.code == .sourceChangedWhileRead && (error as? MigrationError)?.category.exitCode == 74
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasPrefix("s.sqlite") || $0.contains("moult") }
        #expect(left.isEmpty, "\(left)")
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ZADDRESS'") == .int(0), "still at v2")
    }

    /// `faults/resume-after-source-changed`, in the library: a run stopped after a few chunks, the
    /// source edited (its `Z_MAX` unchanged), the same run refused with 65, its work kept; a source left
    /// alone resumes.
    @Test func aChangedSourceIsNotResumed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 200, in: directory)
        let output = directory.appending("out.sqlite")
        try Self.stopAfterThreeChunks(source, output: output)
        let work = URL(filePath: output.path + ".moult")
        #expect(FileManager.default.fileExists(atPath: work.appending(path: "source-state").path))

        try Self.swapAges(source, 2, 150)
        #expect {
            try Self.migrator(source).run(output: output)
        } throws: { error in
            let error = error as? MigrationError
            return error?.code == .sourceChanged && error?.category.exitCode == 65
                && error?.message.contains("moult abandon") == true && error?.message.contains("removes \(work.path)") == true
        }
        #expect(FileManager.default.fileExists(atPath: work.path), "the work is the user's to remove")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        // Started again, it finishes.
        try FileManager.default.removeItem(at: work)
        let report = try Self.migrator(source).run(output: output)
        #expect(!report.resumed)
    }

    /// The resume a source left alone gets (the state check does not refuse its own runs).
    @Test func anUnchangedSourceResumes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 200, in: directory)
        let output = directory.appending("out.sqlite")
        try Self.stopAfterThreeChunks(source, output: output)
        let report = try Self.migrator(source).run(output: output)
        #expect(report.resumed)
    }

    /// What ``StoreFileState`` sees: nothing for a read, each kind of write for what it is.
    @Test func fileStateSeesWritesNotReads() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try People.generate("v2", persons: 20, in: directory)
        let before = try StoreFileState(of: store)
        #expect(StoreFileState(text: before.text) == before)
        let reader = try Database(url: store, mode: .readOnly)
        _ = try reader.scalar("SELECT COUNT(*) FROM ZPERSON")
        reader.close()
        #expect(try StoreFileState(of: store).differences(from: before).isEmpty)
        // An empty -wal (a reader of a WAL store may leave one) holds nothing: no change.
        _ = FileManager.default.createFile(atPath: store.path + "-wal", contents: Data())
        #expect(try StoreFileState(of: store).differences(from: before).isEmpty)
        try FileManager.default.removeItem(atPath: store.path + "-wal")
        try Self.swapAges(store, 1, 2)
        #expect(!(try StoreFileState(of: store).differences(from: before).isEmpty))
        // An older copy put back in its place differs (its change counter or time); a copy with the same
        // bytes and times is the same store.
        let older = directory.appending("older.sqlite")
        try FileManager.default.copyItem(at: store, to: older)
        try Self.swapAges(store, 3, 4)
        let saved = try StoreFileState(of: store)
        #expect(rename(older.path, store.path) == 0)
        #expect(!(try StoreFileState(of: store).differences(from: saved).isEmpty))
    }
}
