import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// The run-folder issue's cases about the source's identity, each run as its `cmd.sh` is written (copied
/// into `Tests/Fixtures/regressions/faults`): a store is the same source when a reader of it sees the
/// same pages, whatever its times, sizes and `-wal`, and another when it does not.
@Suite struct SourceIdentityCaseTests {
    /// A fresh `cp -p` copy of a changed store, an edit whose time was put back, and a store whose `-wal`
    /// was removed are not "already migrated": the existing output is refused (74), not taken for done.
    @Test func alreadyMigratedIsJudgedByContent() throws {
        let run = try RegressionCase("faults", "already-migrated-stale-after-cp-p").run()
        defer { run.remove() }
        #expect(run.lines(containing: "first run (on the stale copy): exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "same command again: exit 74").count == 1, "\(run.output)")
        #expect(run.lines(containing: "after an edit + touch -d: exit 74").count == 1, "\(run.output)")
        #expect(run.lines(containing: "WAL source, first run: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "after its -wal was removed: exit 74").count == 1, "\(run.output)")
        #expect(!run.output.contains("already migrated"))
    }

    /// `inspect --digest` prints the identity a run records: the same for a copy with other times, another
    /// after an edit whose time is put back.
    @Test func inspectPrintsTheContentDigest() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        let model = Fixtures.datasets.appending(path: "People/People.xcdatamodeld").path
        let made = try MoultProcess.run(["generate", store.path, "--model-version", "2", "--objects", "50", "--model", model], tool: .people)
        try #require(made.exitCode == 0, "\(made.standardError)")
        let first = try MoultProcess.run(["inspect", store.path, "--digest"])
        #expect(first.exitCode == 0 && first.standardOutput.hasPrefix("content digest: "), "\(first.standardOutput)")
        let copy = directory.appending("copy.sqlite")
        try FileManager.default.copyItem(at: store, to: copy)
        #expect(try MoultProcess.run(["inspect", copy.path, "--digest"]).standardOutput == first.standardOutput)
        let modified = try FileManager.default.attributesOfItem(atPath: copy.path)[.modificationDate]
        let database = try Database(url: copy, mode: .readWrite)
        try database.execute("UPDATE ZPERSON SET ZNAME = 'edited' WHERE Z_PK = 1")
        database.close()
        try FileManager.default.setAttributes([.modificationDate: modified as Any], ofItemAtPath: copy.path)
        #expect(try MoultProcess.run(["inspect", copy.path, "--digest"]).standardOutput != first.standardOutput)
    }

    /// A resume into a WAL store edited and checkpointed, its time put back, is refused (65), never a
    /// destination mixing two states.
    @Test func aResumeIntoAnEditedStoreIsRefused() throws {
        let run = try RegressionCase("faults", "resume-mixes-sources-wal-mtime-reset").run()
        defer { run.remove() }
        #expect(run.lines(containing: "resume: exit 65").count == 1, "\(run.output)")
        #expect(run.output.contains("changed since the interrupted run"))
    }

    /// An in-place chain stopped (SIGTERM, exit 75) in its third step: the same command finishes it. Its
    /// own intermediate store, read again by the rerun, is not taken for a changed source.
    @Test func aStoppedInPlaceChainFinishesOnTheSameCommand() throws {
        let people = MoultProcess.executable(.people).path
        let run = try RegressionCase("faults", "inplace-chain-rerun-refused-66").run(environment: ["MOULT": people])
        defer { run.remove() }
        #expect(run.lines(containing: "first run: exit 75").count == 1, "\(run.output)")
        #expect(run.lines(containing: "same command again: exit 0").count == 1, "\(run.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: run.scratch.appending(path: "w").path).sorted()
        #expect(files == ["ev.jsonl", "s.sqlite", "s~.sqlite"])
    }
}

/// `faults/fleet-results-migrated-twice`, run as its `cmd.sh` is written: a fleet run again over stores it
/// migrated says each was already migrated, so results summed over attempts count each store once.
@Suite struct FleetAlreadyMigratedCaseTests {
    @Test func aStoreFoundDoneIsAlreadyMigratedNotMigratedAgain() throws {
        let run = try RegressionCase("faults", "fleet-results-migrated-twice").run()
        defer { run.remove() }
        #expect(run.output.contains("10 migrated, 0 already migrated, 0 already current, 0 failed"), "\(run.output)")
        #expect(run.output.contains("0 migrated, 10 already migrated, 0 already current, 0 failed"), "\(run.output)")
        let results = try String(contentsOf: run.scratch.appending(path: "w/fleet.jsonl.results.jsonl"), encoding: .utf8)
        let lines = results.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0.contains("\"outcome\":\"already-migrated\"") })
    }
}

/// The run-folder issue's cases about `convert` and XML runs, each run as its `cmd.sh` is written.
@Suite struct ConvertAndXMLRunCaseTests {
    /// Two converts into one DEST: the second is busy (73) and touches nothing; DEST is always a whole,
    /// well-formed store, the first run's.
    @Test func aSecondConvertIntoTheSameDestinationIsBusy() throws {
        let run = try RegressionCase("faults", "convert-no-lock-concurrent-corrupt-dest").run()
        defer { run.remove() }
        let trials = run.lines(containing: "trial ")
        #expect(trials.count == 3, "\(run.output)")
        for trial in trials {
            #expect(trial.contains("convert a -> exit 0"), "\(trial)")
            #expect(trial.contains("convert b -> exit 73"), "\(trial)")
            #expect(trial.contains("o.xml: well-formed, moult inspect exit 0"), "\(trial)")
        }
    }

    /// `convert` of a store another program writes meanwhile: refused (74), never exit 0 with objects of two
    /// states, never 65 for a healthy store.
    @Test func aConvertReadingAStoreBeingWrittenIsRefused() throws {
        let run = try RegressionCase("faults", "convert-concurrent-writer-torn-exit-0").run()
        defer { run.remove() }
        let trials = run.lines(containing: " trial ") + run.lines(containing: "with inserts:")
        #expect(trials.count == 7, "\(run.output)")
        for trial in trials {
            #expect(!trial.contains("exit 65"), "\(trial)")
            #expect(!trial.contains("exit 0") || Self.sameState(trial), "\(trial)")
        }
    }

    /// A trial that exited 0 read one state: its first and last person have the name one round of the
    /// writer gave both.
    static func sameState(_ line: String) -> Bool {
        guard let names = line.components(separatedBy: "in the XML: ").last?.components(separatedBy: " / "), names.count == 2 else { return false }
        let first = names[0].trimmingCharacters(in: .whitespaces)
        let last = names[1].split(separator: " ").first.map(String.init) ?? ""
        return first == last
    }

    /// In place on an XML store: a rerun at the target version writes nothing; the backup an earlier
    /// migration kept is never replaced (the next is `s~2.xml`).
    @Test func anXMLStoresBackupIsNeverReplaced() throws {
        let run = try RegressionCase("faults", "xml-inplace-rerun-overwrites-backup").run()
        defer { run.remove() }
        #expect(run.lines(containing: "first run: exit 0; s~.xml is the original: yes").count == 1, "\(run.output)")
        #expect(run.lines(containing: "same command again: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "s~.xml is the original: yes").count == 2, "\(run.output)")
        #expect(run.lines(containing: "s.xml unchanged by the rerun: yes").count == 1, "\(run.output)")
        #expect(run.output.contains("the store s.xml is already at version v3: nothing to migrate, nothing written"), "\(run.output)")
        #expect(run.lines(containing: "v2 -> v3, then v3 -> v4 in place: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "  s.xml: matching version: v4").count == 1, "\(run.output)")
        #expect(run.lines(containing: "  s~.xml: matching version: v2").count == 1, "\(run.output)")
        #expect(run.lines(containing: "  s~2.xml: matching version: v3").count == 1, "\(run.output)")
    }

    /// XML runs' reports name the user's store and DEST, never the work folder's copies.
    @Test func xmlReportsNameTheUsersStores() throws {
        let run = try RegressionCase("faults", "xml-reports-name-work-files").run()
        defer { run.remove() }
        #expect(!run.output.contains("moult-xml"), "\(run.output)")
        #expect(run.lines(containing: "migrated s.xml (v2) to v3 in d.xml").count == 1, "\(run.output)")
        #expect(run.lines(containing: "migrated s.xml (v2) to v3 in place").count == 1, "\(run.output)")
        #expect(run.lines(containing: "the store s.xml is already at version v3: nothing to migrate, nothing written").count == 1, "\(run.output)")
    }
}
