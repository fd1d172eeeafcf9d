import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 21's staged-migration faults (`regressions/faults/<folder>` of the shared regression folder,
/// inputs copied into `Tests/Fixtures/regressions/faults/<folder>`): a refused staged run leaves the store
/// as it found it, a stages file that repeats a version is refused before anything is written, and a
/// run killed inside a handler on a rollback-journal store is run again to the end.
@Suite struct StagedFaultTests {
    static let faults = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/faults")
    static let tags = Fixtures.packageRoot.appending(path: "Tests/StagedModels/Tags.xcdatamodeld")
    static let people = Fixtures.datasets.appending(path: "People/People.xcdatamodeld")

    /// A writable copy of a fault's folder.
    static func copy(_ fault: String, into directory: TemporaryDirectory) throws -> URL {
        let destination = directory.appending(fault)
        try FileManager.default.copyItem(at: faults.appending(path: fault), to: destination)
        return destination
    }

    // MARK: - A refused run leaves the store as it found it

    /// `faults/staged-refusal-locks-store`: Tags v1 → v2 adds a uniqueness constraint; a stages file
    /// without the deleteDuplicates handler is refused at the step (67). The refused run leaves the
    /// folder byte for byte as it was (no MoultStagedMigration record, no `s~.sqlite`), and the
    /// corrected stages file then runs (before: it was refused with 65, "in the middle of another
    /// staged migration").
    @Test func refusedStagedRunLeavesTheStoreAsItWas() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fault = try Self.copy("staged-refusal-locks-store", into: directory)
        let work = fault.appending(path: "w")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let store = work.appending(path: "s.sqlite")
        try FileManager.default.copyItem(at: fault.appending(path: "notes1.sqlite"), to: store)
        let before = try StoreRegressionTests.snapshot(work)

        let refused = try MoultProcess.run(["migrate", store.path, "--model", Self.tags.path, "--stages", fault.appending(path: "bad.json").path])
        #expect(refused.exitCode == 67, "\(refused.standardError)")
        #expect(refused.standardError.contains("nothing was changed"), "\(refused.standardError)")
        #expect(try StoreRegressionTests.snapshot(work) == before)
        #expect(try StoreMetadata(contentsOf: store).additionalKeys["MoultStagedMigration"] == nil)

        let fixed = try MoultProcess.run(["migrate", store.path, "--model", Self.tags.path, "--stages", fault.appending(path: "good.json").path])
        #expect(fixed.exitCode == 0, "\(fixed.standardError)")
        #expect(try StagedCommandTests.version(of: store, Self.tags) == "v2")
        #expect(try StagedCommandTests.scalar(store, "SELECT COUNT(*) FROM (SELECT ZNAME FROM ZTAG WHERE ZNAME IS NOT NULL GROUP BY ZNAME HAVING COUNT(*) > 1)") == 0)
        #expect(try StoreMetadata(contentsOf: store).additionalKeys["MoultStagedMigration"] == nil)
        // The backup of the run that did the work is the original.
        #expect(FileManager.default.contents(atPath: work.appending(path: "s~.sqlite").path) == before["s.sqlite"])
    }

    /// `faults/staged-handler-error-leaves-store-half-done`: the 2nd willMigrate operation fails on a
    /// row (65) after the 1st committed every Note's title. The failure puts the store back as it was
    /// (before: 200 titles rewritten, a record that refused the corrected stages file), says so, and
    /// the corrected stages file then runs. Also without a backup (`--no-backup`): the private copy the
    /// run made is put back and no file is left.
    @Test(arguments: [false, true]) func handlerFailingOnARowLeavesTheStoreAsItWas(noBackup: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fault = try Self.copy("staged-handler-error-leaves-store-half-done", into: directory)
        let work = fault.appending(path: "w")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let store = work.appending(path: "s.sqlite")
        try FileManager.default.copyItem(at: fault.appending(path: "notes1.sqlite"), to: store)
        let before = try StoreRegressionTests.snapshot(work)
        let options = ["--chunk-size", "10"] + (noBackup ? ["--no-backup"] : [])

        let failed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.tags.path, "--stages", fault.appending(path: "bad.json").path] + options)
        #expect(failed.exitCode == 65, "\(failed.standardError)")
        #expect(failed.standardError.contains("evaluation failed"), "\(failed.standardError)")
        #expect(failed.standardError.contains("nothing was changed"), "\(failed.standardError)")
        #expect(try StoreRegressionTests.snapshot(work) == before)
        #expect(try StagedCommandTests.scalar(store, "SELECT COUNT(*) FROM ZNOTE WHERE ZTITLE = 'done'") == 0)

        let fixed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.tags.path, "--stages", fault.appending(path: "good.json").path] + options)
        #expect(fixed.exitCode == 0, "\(fixed.standardError)")
        #expect(try StagedCommandTests.version(of: store, Self.tags) == "v2")
        #expect(try StagedCommandTests.scalar(store, "SELECT COUNT(*) FROM ZNOTE WHERE ZTITLE = 'done'") == 200)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: work.path))
        #expect(left == (noBackup ? ["s.sqlite"] : ["s.sqlite", "s~.sqlite"]))
    }

    // MARK: - A version twice

    /// `faults/stages-repeated-version-half-migrates`: `{"lightweight": ["v1", "v2", "v2"]}` is refused
    /// by `plan` (with and without a store) and `migrate` with 65 naming `$.stages[0].lightweight[2]`,
    /// before anything is written (before: plan exited 0, migrate committed v1 → v2 then failed 66).
    @Test func lightweightStageRepeatingAVersionIsRefusedBeforeAnythingIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fault = try Self.copy("stages-repeated-version-half-migrates", into: directory)
        let store = fault.appending(path: "p1.sqlite")
        let stages = fault.appending(path: "stages.json").path
        let before = try StoreRegressionTests.snapshot(fault)
        for arguments in [
            ["plan", "--model", Self.people.path, "--stages", stages],
            ["plan", store.path, "--model", Self.people.path, "--stages", stages],
            ["migrate", store.path, "--model", Self.people.path, "--stages", stages],
        ] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 65, "\(arguments[0]): \(result.standardError)")
            #expect(result.standardError.contains("$.stages[0].lightweight[2]"), "\(arguments[0]): \(result.standardError)")
            #expect(try StoreRegressionTests.snapshot(fault) == before)
        }
    }

    // MARK: - A hot journal

    static let taskStages = """
        { "stages": [ { "custom": { "from": "t1", "to": "t2",
          "willMigrate": [ { "update": "Task", "where": "due == nil", "set": { "due": "CAST(700000000, \\"NSDate\\")" } },
                           { "deleteDuplicates": "List", "by": ["title"] } ] } } ] }
        """

    /// Whether a rollback journal is hot: its header begins with the magic SQLite writes once the
    /// journal is synced, before the first page of the transaction goes into the store.
    static func isHot(journal path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 8 else { return false }
        return Array(data.prefix(8)) == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
    }

    /// A rollback-journal store at t1: 2,000 lists (1,000 titles) and
    /// 20,000 tasks, one in three without a due date.
    static func taskStore(_ url: URL, model: URL) throws {
        let created = try MoultProcess.run(["create", url.path, "--model", model.path, "--model-version", "t1"])
        try #require(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: url, mode: .readWrite)
        defer { database.close() }
        try database.executeScript("""
            PRAGMA journal_mode = DELETE;
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000)
            INSERT INTO ZLIST (Z_PK, Z_ENT, Z_OPT, ZTITLE) SELECT i, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'List'), 1, 'list ' || (i % 1000) FROM c;
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
            INSERT INTO ZTASK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZDUE, ZPOINTS, ZLIST) SELECT i, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task'), 1,
              'task ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 700000000 + i END, i % 7, 1 + (i % 2000) FROM c;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 2000 WHERE Z_NAME = 'List';
            UPDATE Z_PRIMARYKEY SET Z_MAX = 20000 WHERE Z_NAME = 'Task';
            """)
        let mode = try database.scalar("PRAGMA journal_mode")
        try #require("\(mode.map { "\($0)" } ?? "nil")".lowercased().contains("delete"), "journal mode \(String(describing: mode))")
    }

    /// `faults/staged-kill-hot-journal-readonly`: a staged run on a rollback-journal store killed inside
    /// a handler's chunk (SIGKILL before its commit, deterministically, at the chunk and operation
    /// given) leaves a hot `-journal`. Run again, it goes on and ends with the store an uninterrupted
    /// run makes (before: every rerun exited 74, "read-only … check the permissions").
    @Test(arguments: ["staged-before-commit:1", "staged-before-commit:2", "staged-before-commit:3", "staged-chunk-start:2"])
    func killedInsideAHandlerOnARollbackJournalStoreRunsAgainToTheEnd(fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Self.faults.appending(path: "staged-kill-hot-journal-readonly/Tasks.xcdatamodeld")
        let stages = directory.appending("stages.json")
        try Data(Self.taskStages.utf8).write(to: stages)
        let store = directory.appending("s.sqlite")
        try Self.taskStore(store, model: model)
        let straight = try directory.copyStore(store, as: "straight.sqlite")
        // Chunks larger than the page cache: SQLite spills pages into the store before the commit,
        // so the journal of a chunk killed before its commit is hot.
        let arguments = ["--model", model.path, "--stages", stages.path, "--chunk-size", "5000", "--page-cache", "64", "--quiet"]

        let killed = try MoultProcess.run(["migrate", store.path] + arguments, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        if fault.hasPrefix("staged-before-commit") {
            #expect(Self.isHot(journal: store.path + "-journal"), "the kill left no hot journal")
        }

        let rerun = try MoultProcess.run(["migrate", store.path] + arguments)
        #expect(rerun.exitCode == 0, "\(rerun.standardError)")
        let clean = try MoultProcess.run(["migrate", straight.path] + arguments)
        #expect(clean.exitCode == 0, "\(clean.standardError)")
        for table in ["ZTASK", "ZLIST"] {
            #expect(try StagedCommandTests.rows(store, "SELECT * FROM \(table) ORDER BY Z_PK") == StagedCommandTests.rows(straight, "SELECT * FROM \(table) ORDER BY Z_PK"))
        }
        #expect(try StagedCommandTests.version(of: store, model) == "t2")
        #expect(try StagedCommandTests.rows(store, "PRAGMA integrity_check") == ["\"ok\""])
        #expect(try StoreMetadata(contentsOf: store).additionalKeys["MoultStagedMigration"] == nil)
    }

    /// `faults/staged-kill-hot-journal-readonly`, a source store: a program killed in the middle of a
    /// transaction left a hot `-journal` beside a rollback-journal store that `migrate SRC --output
    /// DEST` opens read-only. The refusal (74) says what it is and what to do, never "check the
    /// permissions", and leaves the source folder as it was.
    @Test func sourceWithAHotJournalIsRefusedWithWhatItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Self.faults.appending(path: "staged-kill-hot-journal-readonly/Tasks.xcdatamodeld")
        let source = directory.appending("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let store = source.appending(path: "s.sqlite")
        try Self.taskStore(store, model: model)
        let stages = directory.appending("stages.json")
        try Data(Self.taskStages.utf8).write(to: stages)
        // Moult itself killed inside a handler's transaction: the hot journal of "another program".
        let killed = try MoultProcess.run(
            ["migrate", store.path, "--model", model.path, "--stages", stages.path, "--chunk-size", "5000", "--page-cache", "64", "--no-backup", "--quiet"],
            environment: ["MOULT_FAULT": "staged-before-commit:2"])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        try? FileManager.default.removeItem(at: source.appending(path: ".s.sqlite.moult-staged-original"))
        try #require(Self.isHot(journal: store.path + "-journal"))
        let before = try StoreRegressionTests.snapshot(source)

        let refused = try MoultProcess.run(
            ["migrate", store.path, "--model", model.path, "--to", "t2", "--output", directory.appending("out.sqlite").path])
        #expect(refused.exitCode == 74, "\(refused.standardError)")
        #expect(refused.standardError.contains("s.sqlite-journal"), "\(refused.standardError)")
        #expect(refused.standardError.contains("roll"), "\(refused.standardError)")
        #expect(!refused.standardError.contains("permissions"), "\(refused.standardError)")
        #expect(try StoreRegressionTests.snapshot(source) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.sqlite").path))
    }
}
