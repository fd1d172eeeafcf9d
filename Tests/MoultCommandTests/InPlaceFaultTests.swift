import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 21's in-place fault cases (`regressions/faults/…` in the shared regressions folder), end to
/// end through the `moult` executable: a refused in-place run leaves every file as it found it, a rerun
/// of an interrupted chain finishes it, Moult writes nowhere but beside the store, and a store's own
/// triggers never run inside Moult's SQL.
@Suite struct InPlaceFaultTests {
    static let model = InPlaceCommandTests.model
    static func mapping(_ name: String) -> String { InPlaceCommandTests.mapping(name) }
    static let toV3 = ["--model", model, "--to", "v3", "--mapping", mapping("v2-to-v3"), "--quiet"]

    static func snapshot(_ folder: URL) throws -> [String: Data] { try StoreRegressionTests.snapshot(folder) }

    // MARK: - faults/inplace-workfolder-symlink-writes-elsewhere

    /// `faults/inplace-workfolder-symlink-writes-elsewhere`: a symbolic link at the work folder's name
    /// (`.STORE.moult-inplace`) pointing at another folder was followed: the run wrote its `backup`
    /// record there (replacing a file of that name) and left it. Now refused (74) before anything is
    /// written: neither folder changes.
    @Test func aWorkFolderThatIsASymbolicLinkIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("w"), other = directory.appending("other")
        for url in [folder, other] { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        try Data("someone else's file\n".utf8).write(to: other.appending(path: "backup"))
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory, name: "w/s.sqlite")
        try FileManager.default.createSymbolicLink(at: folder.appending(path: ".s.sqlite.moult-inplace"), withDestinationURL: other)
        let (before, othersBefore) = (try Self.snapshot(folder), try Self.snapshot(other))

        let result = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(result.exitCode == 74, "\(result.standardError)")
        #expect(result.standardError.contains("symbolic link"), "\(result.standardError)")
        #expect(try Self.snapshot(other) == othersBefore)
        #expect(try Self.snapshot(folder) == before)
        #expect(try InPlaceCommandTests.version(of: store) == "v2")
    }

    /// `faults/inplace-workfolder-symlink-writes-elsewhere`, Moult's other predictable names beside the
    /// store: a link there is replaced or removed, never followed (the file it points at is untouched),
    /// by an SQL step (backup copied) and a streamed one (backup linked at the swap).
    @Test(arguments: [
        ("s~.sqlite", "1"), ("s~.sqlite.moult-tmp", "1"), ("s.sqlite.moult-status.json", "1"),
        ("s~.sqlite", "2"), ("s~.sqlite.moult-tmp", "2"), ("s.sqlite.moult-status.json", "2"),
    ])
    func aLinkAtAnotherOfMoultsNamesIsNotFollowed(name: String, version: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("w"), other = directory.appending("other")
        for url in [folder, other] { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        try Data("someone else's file\n".utf8).write(to: other.appending(path: "victim"))
        let store = try InPlaceCommandTests.generate(version, persons: 100, in: directory, name: "w/s.sqlite")
        try FileManager.default.createSymbolicLink(at: folder.appending(path: name), withDestinationURL: other.appending(path: "victim"))
        let othersBefore = try Self.snapshot(other)

        let arguments = version == "1" ? ["--model", Self.model, "--to", "v2", "--quiet"] : Self.toV3
        let result = try MoultProcess.run(["migrate", store.path] + arguments)
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(try Self.snapshot(other) == othersBefore, "\(name): the file the link points at changed")
        #expect(try InPlaceCommandTests.version(of: store) == (version == "1" ? "v2" : "v3"))
        // The backup is a file of its own (attributes of the name, not followed): where the link was,
        // or, when the link holds the backup's own name, the next name (a backup never replaces what
        // is there), the link left as it was.
        let backupName = name == "s~.sqlite" ? "s~2.sqlite" : "s~.sqlite"
        let backup = try FileManager.default.attributesOfItem(atPath: folder.appending(path: backupName).path)
        #expect(backup[.type] as? FileAttributeType == .typeRegular)
        if name == "s~.sqlite" {
            let link = try FileManager.default.attributesOfItem(atPath: folder.appending(path: name).path)
            #expect(link[.type] as? FileAttributeType == .typeSymbolicLink)
        }
    }

    // MARK: - faults/inplace-refusal-checkpoints-wal

    /// A People v2 store in WAL mode whose `-wal` holds committed frames (one of them the value that
    /// gets the run refused), with no `-shm`.
    static func walStore(in directory: TemporaryDirectory, update: String) throws -> URL {
        try FileManager.default.createDirectory(at: directory.appending("w"), withIntermediateDirectories: true)
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory, name: "w/s.sqlite")
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
        try database.executeScript(update)
        // Copied while the connection is open: closing it would checkpoint the WAL into the main file.
        let manager = FileManager.default
        for suffix in ["", "-wal"] {
            try manager.copyItem(atPath: store.path + suffix, toPath: directory.appending("x\(suffix)").path)
        }
        database.close()
        for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: store.path + suffix) }
        for suffix in ["", "-wal"] { try manager.moveItem(atPath: directory.appending("x\(suffix)").path, toPath: store.path + suffix) }
        return store
    }

    /// `faults/inplace-refusal-checkpoints-wal`: a WAL store whose data is partly in its `-wal`, refused
    /// in place (65: a value out of its attribute's range). The refusal used to checkpoint the WAL
    /// first (the main file changed, the `-wal` went away); now the store's files are byte for byte as
    /// they were, and no `-shm` appears.
    @Test func aRefusedRunLeavesAWALStoresFilesAsTheyWere() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.walStore(in: directory, update: "UPDATE ZPERSON SET ZAGE = 9223372036854775807 WHERE Z_PK = 1")
        let folder = store.deletingLastPathComponent()
        let before = try Self.snapshot(folder)
        #expect(before.keys.sorted() == ["s.sqlite", "s.sqlite-wal"] && !(before["s.sqlite-wal"] ?? Data()).isEmpty)

        let result = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(result.exitCode == 65, "\(result.standardError)")
        #expect(try Self.snapshot(folder) == before)
    }

    /// The same WAL store, migrated: the run goes on (the store checkpointed only at the swap), and the
    /// value held in the `-wal` is in the migrated store.
    @Test func aWALStoreWhoseWALHoldsDataMigratesWithIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.walStore(in: directory, update: "UPDATE ZPERSON SET ZNAME = 'from the wal' WHERE Z_PK = 1")
        let result = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(try InPlaceCommandTests.version(of: store) == "v3")
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT count(*) FROM ZPERSON WHERE ZNAME = 'from the wal'") == .int(1))
    }

    // MARK: - faults/inplace-chain-rerun-refused-66

    /// `faults/inplace-chain-rerun-refused-66`: in place v1 → v5 with three mappings, killed after the
    /// v2 → v3 step was done (here at the end of the v3 → v4 step's copy, deterministically); the same
    /// command again was refused 66 ("mapping fits no step": the store had been left at v3). Now the
    /// store is at v1 until the last swap, and the rerun finishes the chain as the uninterrupted run.
    @Test(arguments: ["after-rename:1", "after-rename:2", "chunk-start:9", "inplace-before-swap:1"])
    func theSameCommandAgainFinishesAnInterruptedChain(fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let reference = try InPlaceCommandTests.generate("1", persons: 300, in: directory, name: "reference.sqlite")
        let store = try InPlaceCommandTests.generate("1", persons: 300, in: directory)
        let original = try InPlaceCommandTests.digest(store)
        let arguments = [
            "--model", Self.model, "--to", "v5", "--mapping", Self.mapping("v2-to-v3"), "--mapping", Self.mapping("v3-to-v4"),
            "--mapping", Self.mapping("v4-to-v5"), "--chunk-size", "50", "--quiet",
        ]
        // `moult-people`: the v3 → v4 mapping names People's own policies.
        let uninterrupted = try MoultProcess.run(["migrate", reference.path] + arguments, tool: .people)
        #expect(uninterrupted.exitCode == 0, "\(uninterrupted.standardError)")

        let killed = try MoultProcess.run(["migrate", store.path] + arguments, tool: .people, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault) was not reached: \(killed.standardError)")
        #expect(try InPlaceCommandTests.version(of: store) == "v1")
        #expect(try InPlaceCommandTests.digest(store) == original)

        let again = try MoultProcess.run(["migrate", store.path] + arguments, tool: .people)
        #expect(again.exitCode == 0, "after \(fault): \(again.standardError)")
        #expect(try InPlaceCommandTests.digest(store) == InPlaceCommandTests.digest(reference), "after \(fault)")
        #expect(try InPlaceCommandTests.digest(directory.appending("people~.sqlite")) == original)
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".people.sqlite.moult-inplace").path))
    }

    // MARK: - faults/inplace-chain-refusal-leaves-intermediate-version

    /// `faults/inplace-chain-refusal-leaves-intermediate-version`: in place v1 → v3, step 1 by SQL,
    /// step 2 (streamed) refused: 67 (a person with an empty name; v3 requires one) or 65 (an age out
    /// of its attribute's range). The store used to be left at v2 with a backup and a work folder, the
    /// message saying "nothing was written at the output". Now the store's folder is as it was, and the
    /// message says the store was not changed.
    @Test(arguments: [
        (67, "UPDATE ZPERSON SET ZNAME = '' WHERE Z_PK = (SELECT max(Z_PK) FROM ZPERSON)"),
        (65, "UPDATE ZPERSON SET ZAGE = 9223372036854775807 WHERE Z_PK = (SELECT max(Z_PK) FROM ZPERSON)"),
    ])
    func aChainRefusedAtALaterStepLeavesTheStoreAsItWas(exitCode: Int32, damage: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.appending("w"), withIntermediateDirectories: true)
        let store = try InPlaceCommandTests.generate("1", persons: 200, in: directory, name: "w/s.sqlite")
        try StoreRegressionTests.alter(store, damage)
        let folder = store.deletingLastPathComponent()
        let before = try Self.snapshot(folder)

        let result = try MoultProcess.run(["migrate", store.path] + Self.toV3)
        #expect(result.exitCode == exitCode, "\(result.standardError)")
        #expect(try Self.snapshot(folder) == before)
        #expect(result.standardError.contains("not changed"), "\(result.standardError)")
        #expect(!result.standardError.contains("nothing was written at the output"))
    }

    // MARK: - faults/store-trigger-fires-on-metadata-write

    static let evil = "CREATE TRIGGER evil AFTER INSERT ON Z_METADATA BEGIN UPDATE ZPERSON SET ZNAME = 'pwned'; END"

    static func pwned(_ store: URL) throws -> Int64? {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        guard case .int(let count)? = try database.scalar("SELECT count(*) FROM ZPERSON WHERE ZNAME = 'pwned'") else { return nil }
        return count
    }

    /// `faults/store-trigger-fires-on-metadata-write` (a): a chain to a new store whose first step runs by
    /// SQL on a copy: the store's trigger on `Z_METADATA` fired when Moult wrote the copy's metadata,
    /// and every name in the output was 'pwned', with exit 0. Now it never fires.
    @Test func aStoresTriggerDoesNotFireInAChainsSQLStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 200, in: directory)
        try StoreRegressionTests.alter(store, Self.evil)
        let output = directory.appending("d.sqlite")
        let result = try MoultProcess.run(["migrate", store.path, "--output", output.path] + Self.toV3)
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(try Self.pwned(store) == 0)
        #expect(try Self.pwned(output) == 0)
        let verified = try MoultProcess.run(["verify", store.path, output.path, "--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3")])
        #expect(verified.exitCode == 0, "\(verified.standardError)")
    }

    /// `faults/store-trigger-fires-on-metadata-write` (b): in place v1 → v2 by SQL (schema only): the
    /// trigger rewrote every row. Now no row changes, and the trigger is kept (made again last).
    @Test func aStoresTriggerDoesNotFireInAnInPlaceSQLStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 200, in: directory)
        try StoreRegressionTests.alter(store, Self.evil)
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("by SQL"), "\(result.standardOutput)")
        #expect(try Self.pwned(store) == 0)
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'evil'") == .int(1))
    }
}
