import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 21's faults (`regressions/faults/`) end to end through `moult`: one run per store and per
/// destination, a store changed between a stop and a resume, the status file's temporary name.
@Suite struct FaultCommandTests {
    static let model = Fixtures.peopleModel.path
    static func mapping(_ name: String) -> String { Fixtures.peopleMapping(name).path }
    static let toV3 = ["--model", model, "--to", "v3", "--mapping", mapping("v2-to-v3"), "--chunk-size", "20", "--quiet"]

    static func sql(_ store: URL, _ script: String) throws {
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.write { try database.executeScript(script) }
    }

    static func names(_ store: URL, _ keys: [Int]) throws -> [String] {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT ZNAME || '|' || ZAGE FROM ZPERSON WHERE Z_PK IN (\(keys.map(String.init).joined(separator: ","))) ORDER BY Z_PK") {
            $0.string(at: 0) ?? ""
        }
    }

    // MARK: - faults/concurrent-same-dest-no-lock

    /// `faults/concurrent-same-dest-no-lock`, deterministically: while another process holds DEST's lock
    /// (here, this test process), `migrate --output DEST` exits 73 at once naming the holder and touches
    /// nothing (no work folder, no status file); `moult status DEST` shows the holder; once the lock is
    /// released the same command runs, and leaves no lock file. (The timed race of two real runs is
    /// `Benchmarks/scripts/lock-race.sh`.)
    @Test func aSecondRunIntoTheSameDestinationIsBusy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StoreRegressionTests.generatePeople(version: 2, persons: 100, in: directory, name: "s.sqlite")
        let output = directory.appending("d.sqlite")
        let lock = try RunLock.acquire(for: output, purpose: "migrating into it")
        let before = try StoreRegressionTests.snapshot(directory.url)

        let busy = try MoultProcess.run(["migrate", source.path] + Self.toV3 + ["--output", output.path])
        #expect(busy.exitCode == 73, "\(busy.standardError)")
        #expect(busy.standardError.contains("busy") && busy.standardError.contains("pid \(getpid())"), "\(busy.standardError)")
        // Said once (it was also repeated as its own cause).
        #expect(busy.standardError.components(separatedBy: "pid \(getpid())").count == 2 && !busy.standardError.contains("caused by"), "\(busy.standardError)")
        #expect(try StoreRegressionTests.snapshot(directory.url) == before, "the busy run touched nothing")

        let status = try MoultProcess.run(["status", output.path])
        #expect(status.exitCode == 0, "\(status.standardError)")
        #expect(status.standardOutput.contains("running") && status.standardOutput.contains("locked by process \(getpid())"), "\(status.standardOutput)")

        lock.release()
        #expect(!FileManager.default.fileExists(atPath: RunLock.lockFile(for: output).path))
        let ran = try MoultProcess.run(["migrate", source.path] + Self.toV3 + ["--output", output.path])
        #expect(ran.exitCode == 0, "\(ran.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(left == ["d.sqlite", "s.sqlite"], "\(left)")
    }

    /// `moult finish` takes the store's lock as a migration does: busy (73) while another run holds it,
    /// the store's folder byte for byte as it was.
    @Test func finishIsBusyWhileARunHoldsTheStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 20, in: directory, name: "s.sqlite")
        let lock = try RunLock.acquire(for: store, purpose: "migrating it in place")
        let before = try StoreRegressionTests.snapshot(directory.url)
        let busy = try MoultProcess.run(["finish", store.path, "--model", Fixtures.peopleModel.path])
        #expect(busy.exitCode == 73, "\(busy.standardError)")
        #expect(try StoreRegressionTests.snapshot(directory.url) == before)
        lock.release()
        let finished = try MoultProcess.run(["finish", store.path, "--model", Fixtures.peopleModel.path])
        #expect(finished.exitCode == 0 && finished.standardOutput.contains("nothing pending"), "\(finished.standardError)")
        #expect(!FileManager.default.fileExists(atPath: RunLock.lockFile(for: store).path))
    }

    /// The same for a store migrated in place: busy (73), the store's folder byte for byte as it was.
    @Test func aSecondRunInPlaceIsBusy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 100, in: directory, name: "s.sqlite")
        let lock = try RunLock.acquire(for: store, purpose: "migrating it in place")
        let before = try StoreRegressionTests.snapshot(directory.url)
        let busy = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(busy.exitCode == 73, "\(busy.standardError)")
        #expect(try StoreRegressionTests.snapshot(directory.url) == before)
        lock.release()
        let ran = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(ran.exitCode == 0, "\(ran.standardError)")
    }

    /// A lock file left by a killed run (its process gone, so its lock with it) does not block the next
    /// run, which removes it when it ends.
    @Test func aLockFileLeftByAKilledRunIsTakenOver() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StoreRegressionTests.generatePeople(version: 2, persons: 100, in: directory, name: "s.sqlite")
        let output = directory.appending("d.sqlite")
        let killed = try MoultProcess.run(
            ["migrate", source.path] + Self.toV3 + ["--output", output.path], environment: ["MOULT_FAULT": "after-sqlite-commit:2"])
        #expect(killed.terminatedBySignal)
        #expect(FileManager.default.fileExists(atPath: RunLock.lockFile(for: output).path))
        #expect(RunLock.holder(of: output) == nil, "a dead process holds no lock")
        let resumed = try MoultProcess.run(["migrate", source.path] + Self.toV3 + ["--output", output.path])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: RunLock.lockFile(for: output).path))
    }

    // MARK: - faults/resume-after-source-changed, faults/inplace-resume-loses-edits

    /// `faults/resume-after-source-changed`: killed after a few chunks, the source edited with its
    /// `Z_MAX` unchanged, the same command is refused (65) saying what changed and what to remove; the
    /// destination is not made. Removing the work folder starts over, and the result has the edit.
    @Test func aResumeAfterTheSourceChangedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StoreRegressionTests.generatePeople(version: 2, persons: 200, in: directory, name: "s.sqlite")
        let output = directory.appending("d.sqlite")
        let command = ["migrate", source.path] + Self.toV3 + ["--output", output.path]
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "after-sqlite-commit:3"])
        #expect(killed.terminatedBySignal)
        try Self.sql(source, "UPDATE ZPERSON SET ZSTATE = NULL, ZSTREET = NULL WHERE Z_PK = 2; DELETE FROM ZPERSON WHERE Z_PK = 5;")

        let resumed = try MoultProcess.run(command)
        #expect(resumed.exitCode == 65, "\(resumed.standardError)")
        #expect(resumed.standardError.contains("changed since the interrupted run") && resumed.standardError.contains("moult abandon") && resumed.standardError.contains("removes \(output.path).moult"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        // Given up as the message says: `moult abandon DEST` removes the interrupted run's work.
        let abandoned = try MoultProcess.run(["abandon", output.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
        #expect(try MoultProcess.run(command).exitCode == 0)
        let verify = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3")])
        #expect(verify.exitCode == 0, "\(verify.standardOutput)\(verify.standardError)")
    }

    /// `faults/inplace-resume-loses-edits`: in place v1 → v3 (an SQL step, then a streamed one) killed in
    /// the streamed step; the store is as it was (the chain runs in the work folder) and the app edits two
    /// persons; the same command is refused (65) and the store keeps both edits. Started over, both edits
    /// are migrated, and the backup holds them.
    @Test func anInPlaceResumeAfterTheStoreChangedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 1, persons: 200, in: directory, name: "s.sqlite")
        let backup = directory.appending("s~.sqlite")
        let work = directory.appending(".s.sqlite.moult-inplace")
        let command = ["migrate", store.path] + Self.toV3
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "after-sqlite-commit:3"])
        #expect(killed.terminatedBySignal)
        #expect(FileManager.default.fileExists(atPath: work.path))
        try Self.sql(store, "UPDATE ZPERSON SET ZNAME = 'EDITED' WHERE Z_PK = 3; UPDATE ZPERSON SET ZAGE = 99 WHERE Z_PK = 150;")
        let edited = try Self.names(store, [3, 150])

        let rerun = try MoultProcess.run(command)
        #expect(rerun.exitCode == 65, "\(rerun.standardError)")
        #expect(rerun.standardError.contains("moult abandon") && rerun.standardError.contains("removes \(work.path)"), "\(rerun.standardError)")
        #expect(try Self.names(store, [3, 150]) == edited, "the store is as the user left it")

        try FileManager.default.removeItem(at: work)
        let again = try MoultProcess.run(command)
        #expect(again.exitCode == 0, "\(again.standardError)")
        #expect(try Self.names(store, [3, 150]) == edited)
        #expect(try Self.names(backup, [3, 150]) == edited, "the backup is the store this run started from")
    }

    // MARK: - faults/kill-leaves-foundation-temp-file

    /// `faults/kill-leaves-foundation-temp-file`: the status file is written under a temporary name of
    /// Moult's own (`.NAME.moult-status.json.moult-tmp`); a temporary left by a kill is removed when the
    /// resumed run ends, and no Foundation `.dat.nosync…` name is ever used.
    @Test func theStatusFilesTemporaryDoesNotOutliveTheRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 200, in: directory, name: "s.sqlite")
        let killed = try MoultProcess.run(["migrate", store.path] + Self.toV3, environment: ["MOULT_FAULT": "after-sqlite-commit:4"])
        #expect(killed.terminatedBySignal)
        // As a kill in the middle of a write would leave it.
        let temporary = directory.appending(".s.sqlite.moult-status.json.moult-tmp")
        try Data("{\"v\":1,\"st".utf8).write(to: temporary)
        let resumed = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(left == ["s.sqlite", "s~.sqlite"], "\(left)")
    }
}

extension FaultCommandTests {
    // MARK: - faults/verify-refuses-what-migrate-accepted

    /// `faults/verify-refuses-what-migrate-accepted`: a name whose bytes are not UTF-8 gets one answer
    /// on every path: the bulk copy's guard sends its chunk to the per-object path, which refuses it
    /// (65) naming the store's value, not the mapping; nothing is made at the output.
    @Test(arguments: [[], ["--no-bulk-sql"]])
    func textThatIsNotUTF8IsRefusedOnEveryPath(_ extra: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StoreRegressionTests.generatePeople(version: 1, persons: 200, in: directory, name: "s.sqlite")
        try Self.sql(source, "UPDATE ZPERSON SET ZNAME = CAST(x'ff41' AS TEXT) WHERE Z_PK = 3")
        let output = directory.appending("d.sqlite")
        let result = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--quiet"] + extra)
        #expect(result.exitCode == 65, "\(extra): \(result.standardError)")
        #expect(result.standardError.contains("not valid UTF-8") && result.standardError.contains("Z_PK 3"), "\(result.standardError)")
        #expect(!result.standardError.contains("invalid mapping"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }
}

extension FaultCommandTests {
    /// Issue 22, item 9: a migration in place keeps the store's UUID, as Core Data's do, streamed steps too
    /// (v1 → v3: an SQL step then a streamed one, run out of place and swapped in); killed after the UUID
    /// is set in the result and before the swap, the same command ends with the same store.
    @Test(arguments: [nil, "inplace-before-swap:1"])
    func inPlaceKeepsTheStoresUUID(fault: String?) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 1, persons: 100, in: directory, name: "s.sqlite")
        let before = try StoreMetadata(contentsOf: store).storeUUID
        let command = ["migrate", store.path] + Self.toV3
        if let fault {
            let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": fault])
            #expect(killed.terminatedBySignal, "\(killed.standardError)")
        }
        let run = try MoultProcess.run(command)
        #expect(run.exitCode == 0, "\(run.standardError)")
        let after = try StoreMetadata(contentsOf: store)
        #expect(after.storeUUID == before)
        #expect(after.entityHashes.keys.contains("Address"), "migrated to v3")
    }
}

extension FaultCommandTests {
    // MARK: - faults/huge-value-memory

    /// `faults/huge-value-memory`: a value over the limit (here 2 MiB, `--max-value-size`; 256 MiB by
    /// default) is refused (65) before SQLite brings it into memory, on the bulk and per-object paths, with
    /// the way to raise the limit; under the limit it migrates. A blob in a String attribute is refused
    /// whatever its size (Core Data stores text there).
    @Test(arguments: [[], ["--no-bulk-sql"]])
    func aValueOverTheLimitIsRefusedBeforeItIsRead(_ extra: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StoreRegressionTests.generatePeople(version: 2, persons: 200, in: directory, name: "s.sqlite")
        try Self.sql(source, "UPDATE ZPERSON SET ZSTREET = CAST(zeroblob(3000000) AS TEXT) WHERE Z_PK = 7")
        let output = directory.appending("d.sqlite")
        let migrate = ["migrate", source.path] + Self.toV3 + ["--output", output.path] + extra
        let refused = try MoultProcess.run(migrate + ["--max-value-size", "\(2 << 20)"])
        #expect(refused.exitCode == 65, "\(extra): \(refused.standardError)")
        #expect(refused.standardError.contains("--max-value-size"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let ran = try MoultProcess.run(migrate + ["--max-value-size", "\(4 << 20)"])
        #expect(ran.exitCode == 0, "\(extra): \(ran.standardError)")

        try FileManager.default.removeItem(at: output)
        try Self.sql(source, "UPDATE ZPERSON SET ZSTREET = zeroblob(1000) WHERE Z_PK = 7")
        let blob = try MoultProcess.run(migrate)
        #expect(blob.exitCode == 65 && blob.standardError.contains("where Core Data stores text"), "\(blob.standardError)")
    }
}

extension FaultCommandTests {
    /// A staged run killed right after a stage's streamed step was swapped in leaves that step's in-place
    /// work folder; the next stage's step must not take that folder's record of the store for its own
    /// (found by the staged crash harness in WAL mode: the rerun was refused, 65 "source changed").
    @Test func aStagedRunKilledAfterASwapGoesOnWithTheNextStage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 1, persons: 200, in: directory, name: "s.sqlite")
        let stages = directory.appending("stages.json")
        let text = """
            {"stages": [{"lightweight": ["v1", "v2"]},
              {"custom": {"from": "v2", "to": "v3", "mapping": "\(Self.mapping("v2-to-v3"))"}},
              {"custom": {"from": "v3", "to": "v4", "mapping": "\(Self.mapping("v3-to-v4"))"}}]}
            """
        try Data(text.utf8).write(to: stages)
        let command = ["migrate", store.path, "--model", Self.model, "--stages", stages.path, "--chunk-size", "50", "--quiet"]
        let killed = try MoultProcess.run(command, environment: ["MOULT_FAULT": "inplace-after-swap:1"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let again = try MoultProcess.run(command)
        #expect(again.exitCode == 0, "\(again.standardError)")
        #expect(try StoreMetadata(contentsOf: store).entityHashes.keys.contains("Adult"), "at v4")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(Set(left) == ["s.sqlite", "s~.sqlite", "stages.json"], "\(left)")
    }
}
