import Foundation
import MoultTestSupport
import Testing

/// The files-beyond-the-store issue's cases, each run as its `cmd.sh` is written (copied into
/// `Tests/Fixtures/regressions/faults`): nothing outside the run's own files is written through a name
/// the user gave or a file Moult did not make.
@Suite struct OutsideTheStoreCaseTests {
    /// `--metrics` or `--events` naming the source, DEST or the store: refused (64) before anything runs;
    /// a folder too; the source is never written.
    @Test func metricsAndEventsNeverNameTheRunsFiles() throws {
        let run = try RegressionCase("faults", "metrics-or-events-path-overwrites-store").run()
        defer { run.remove() }
        #expect(run.lines(containing: "--metrics SOURCE: exit 64; the source now begins: SQLite format 3").count == 1, "\(run.output)")
        #expect(run.lines(containing: "--metrics DEST: exit 64").count == 1, "\(run.output)")
        #expect(run.lines(containing: "in place, --metrics STORE: exit 64; the store begins: SQLite format 3").count == 1, "\(run.output)")
        #expect(run.lines(containing: "source unchanged").count == 1, "\(run.output)")
        #expect(run.lines(containing: "--metrics FOLDER: exit 64; left: ").first?.hasSuffix("left: ") == true, "\(run.output)")
        #expect(!run.output.contains("# TYPE"))
    }

    /// A lock file that is a hard link to another file: refused (74), the other file untouched.
    @Test func aLockFileWithOtherNamesIsNeverWritten() throws {
        let run = try RegressionCase("faults", "lock-file-hardlink-truncates-other-file").run()
        defer { run.remove() }
        #expect(run.lines(containing: "migrate: exit 74").count == 1, "\(run.output)")
        #expect(run.lines(containing: "victim.txt now holds: precious content of a file elsewhere|").count == 1, "\(run.output)")
    }

    /// In place through a symbolic link: the real store is locked (a run by the link's name while one runs
    /// on the real name is busy, 73), and no `l~.sqlite` link posing as the original appears.
    @Test func inPlaceThroughALinkMigratesTheRealStore() throws {
        let run = try RegressionCase("faults", "inplace-through-symlink-backup-is-a-link").run()
        defer { run.remove() }
        #expect(run.lines(containing: "while a run on s.sqlite is going: exit 73").count == 1, "\(run.output)")
        #expect(run.lines(containing: "the run on s.sqlite: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "l.sqlite -> s.sqlite").count == 1, "\(run.output)")
        let folder = run.scratch.appending(path: "w")
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "l~.sqlite").path))
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "s~.sqlite").path))
    }

    /// With `--output`, a store reached through a symbolic link in another folder is read where it really
    /// is (its companions and identity are the real file's), and the run says so; the output has every object.
    @Test func anOutputFromALinkedStoreSaysWhereItIsRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let real = directory.appending("data")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let store = try MigrateCommandTests.generate("2", persons: 60, in: directory, name: "data/s.sqlite")
        let link = directory.appending("l.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: store.path)
        let output = directory.appending("d.sqlite")
        let run = try MoultProcess.run(["migrate", link.path, "--model", Fixtures.peopleModel.path, "--to", "v3", "--mapping",
            Fixtures.peopleMapping("v2-to-v3").path, "--output", output.path])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(run.standardError.contains("moult: note: \(link.path) is a symbolic link to \(store.path): the store is read there"), "\(run.standardError)")
        let inspected = try MoultProcess.run(["inspect", output.path, "--model", Fixtures.peopleModel.path])
        #expect(inspected.standardOutput.contains("60 objects"), "\(inspected.standardOutput)")
        // Quiet, it says nothing.
        let quiet = try MoultProcess.run(["migrate", link.path, "--model", Fixtures.peopleModel.path, "--to", "v3", "--mapping",
            Fixtures.peopleMapping("v2-to-v3").path, "--output", directory.appending("q.sqlite").path, "--quiet"])
        #expect(quiet.exitCode == 0 && quiet.standardError.isEmpty, "\(quiet.standardError)")
    }

    /// A backup name whose support folder's `_EXTERNAL_DATA` is a link elsewhere: that name is not free
    /// (the backup takes the next), and nothing in the linked folder is listed or removed.
    @Test func aBackupsLinkedSupportFolderIsNeverEmptied() throws {
        let run = try RegressionCase("faults", "inplace-backup-support-symlink-deletes-outside").run()
        defer { run.remove() }
        #expect(run.lines(containing: "after:  victim holds: notes.txt thesis.txt").count == 1, "\(run.output)")
    }

    /// DEST's support folder a link elsewhere: refused (74) before anything in it is looked at.
    @Test func anOutputsLinkedSupportFolderIsRefusedUntouched() throws {
        let run = try RegressionCase("faults", "output-support-symlink-deletes-outside").run()
        defer { run.remove() }
        #expect(run.lines(containing: "migrate --output: exit 74").count == 1, "\(run.output)")
        #expect(run.lines(containing: "after:  victim/_EXTERNAL_DATA holds: thesis.txt").count == 1, "\(run.output)")
    }

    /// A refused in-place run (67) removes nothing it did not make: a support folder already at the
    /// backup's name keeps every file.
    @Test func aRefusedRunRemovesNoSupportFolderItDidNotMake() throws {
        let run = try RegressionCase("faults", "refused-inplace-removes-preexisting-backup-support").run()
        defer { run.remove() }
        #expect(run.lines(containing: "in-place migrate: exit 67").count == 1, "\(run.output)")
        let gone = run.output.components(separatedBy: "gone after the refused run:").last ?? "?"
        #expect(gone.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(run.output)")
    }

    /// A link in `_EXTERNAL_DATA` is no file: never linked or copied into DEST, on one file system or
    /// another; the reference is kept with a warning.
    @Test func aLinkInTheExternalDataFolderIsNeverFollowed() throws {
        let run = try RegressionCase("faults", "external-symlink-followed-out-of-store").run()
        defer { run.remove() }
        #expect(run.lines(containing: "same fs: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "other fs: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "is not a plain file").count == 2, "\(run.output)")
        #expect(!run.output.contains("SECRET"), "\(run.output)")
        #expect(run.lines(containing: "DEST's file holds: ").first?.hasSuffix("holds: ") == true, "\(run.output)")
    }

    /// A FIFO in `_EXTERNAL_DATA` is no file: never opened to wait on; both runs end at once.
    @Test func aFIFOInTheExternalDataFolderIsNeverWaitedOn() throws {
        let run = try RegressionCase("faults", "external-fifo-hangs-ignores-sigterm").run()
        defer { run.remove() }
        #expect(run.lines(containing: "--output: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "in place: exit 0").count == 1, "\(run.output)")
    }
}

/// `faults/max-value-size-boundary`, run as its `cmd.sh` is written: a value of exactly the limit is
/// taken (bulk and per object), a limit under 1 MiB is honoured (a 1000-byte value over 999 refused), and
/// `convert` takes `--max-value-size`. One byte over the limit on every path: `ValueSizeLimitTests`.
@Suite struct MaxValueSizeCaseTests {
    @Test func aValueOfExactlyTheLimitIsAcceptedAndOneByteMoreRefused() throws {
        let run = try RegressionCase("faults", "max-value-size-boundary").run()
        defer { run.remove() }
        #expect(run.lines(containing: "-byte value, --max-value-size").count == 3, "\(run.output)")
        #expect(run.lines(containing: "a 2097152-byte value, --max-value-size 2097152 : exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "a 2097152-byte value, --max-value-size 2097152 --no-bulk-sql: exit 0").count == 1, "\(run.output)")
        #expect(run.lines(containing: "a 1000-byte value, --max-value-size 999: exit 65").count == 1, "\(run.output)")
        #expect(run.lines(containing: "convert --max-value-size: exit 0").count == 1, "\(run.output)")
    }
}
