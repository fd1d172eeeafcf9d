import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22 item 2 in place: the files stay in the store's own folder; a removed attribute's files go
/// once the step has committed (Core Data deletes them), never a file a row of the committed store
/// names; the backup `b~.sqlite` keeps links of its own; a chain's streamed step finds the files of an
/// SQL step before it; a run killed around the removal ends, run again, with the files of a run never
/// interrupted.
@Suite struct ExternalDataInPlaceTests {
    typealias Blobs = ExternalDataCommandTests
    static let removed = Blobs.removedModel
    static let toV2 = ["--model", removed, "--to", "v2"]
    /// A file in the store's folder that no row names (Core Data's, or another program's): never removed.
    static let unnamed = "6F1C2B3A-0000-4000-8000-00000000FFFF"

    /// The Removed v1 store of ``ExternalDataCommandTests/makeStore``, with a file no row names.
    static func store(_ directory: TemporaryDirectory) throws -> URL {
        let store = try Blobs.makeStore(directory, model: removed, withX: true)
        try Data("not named".utf8).write(to: ExternalDataReference(fileName: unnamed)!.url(besideStore: store))
        return store
    }

    /// A mapping for Removed v1 → v2 that computes `x`, so that the step is streamed in place.
    static func streamingMapping(in directory: TemporaryDirectory) throws -> [String] {
        let url = directory.appending("v1-to-v2.json")
        try Data(
            """
            {"source": {"name": "v1"}, "destination": {"name": "v2"}, "entityMappings": [{"name": "BlobToBlob", "type": "transform",
             "source": "Blob", "destination": "Blob", "attributes": [{"name": "x", "value": "$source.x + 0"}]}]}
            """.utf8
        ).write(to: url)
        return ["--mapping", url.path]
    }

    static func version(of store: URL) throws -> String? {
        try VersionedModel(contentsOf: URL(filePath: removed)).version(matchingEntityHashes: StoreMetadata(contentsOf: store).entityHashes)?.name
    }

    static func files(_ store: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: ExternalDataReference.folder(besideStore: store).path)) ?? [])
    }

    /// What a run leaves in `directory`: the rows and version of the store and its backup, the files and
    /// bytes of both support folders, and the names of everything else there (no work folder, no record).
    static func state(_ directory: TemporaryDirectory) throws -> [String] {
        var lines = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasSuffix(".json") }.sorted()
        for name in ["b.sqlite", "b~.sqlite"] where lines.contains(name) {
            let url = directory.appending(name)
            let database = try Database(url: url, mode: .readOnly)
            defer { database.close() }
            let columns = try database.columns(of: "ZBLOB").sorted().map { "quote(\(SQLName.quoted($0)))" }.joined(separator: " || ' ' || ")
            lines += try database.query("SELECT \(columns) FROM ZBLOB ORDER BY Z_PK") { "\(name) \($0.string(at: 0) ?? "")" }
            lines.append("\(name) \(VersionHashes.digest(try StoreMetadata(contentsOf: url).entityHashes))")
        }
        for folder in [".b_SUPPORT", ".b~_SUPPORT"] {
            lines += try StoreRegressionTests.snapshot(directory.appending(folder)).sorted { $0.key < $1.key }.map { "\(folder)/\($0.key) \($0.value.hashValue)" }
        }
        return lines
    }

    // MARK: - A removed attribute's files

    /// Removed v1 → v2 in place (the attribute `data` removed), by SQL and streamed, linking and copying:
    /// its files go from `.b_SUPPORT/_EXTERNAL_DATA/` once the step has committed, the file no row named
    /// stays; the backup's `.b~_SUPPORT/_EXTERNAL_DATA/` holds every file it names (the same inodes, or
    /// copies with the same bytes), so its references resolve where it is and `verify` passes.
    @Test(arguments: ["sql", "streamed"], [false, true])
    func aRemovedAttributesFilesGoOnceTheStepCommits(method: String, copiesOnly: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(directory)
        let contents = Blobs.names.map { Blobs.file(store, $0) }
        let inodes = Blobs.names.map { Blobs.inode(ExternalDataReference(fileName: $0)!.url(besideStore: store)) }
        let mapping = method == "sql" ? [] : try Self.streamingMapping(in: directory)
        let migrated = try MoultProcess.run(
            ["migrate", store.path] + Self.toV2 + mapping + (copiesOnly ? ["--copy-external-data"] : []))
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains(method == "sql" ? ": by SQL" : ": streamed, then swapped in"), "\(migrated.standardOutput)")
        #expect(Self.files(store) == [Self.unnamed])

        let backup = directory.appending("b~.sqlite")
        #expect(Self.files(backup) == Set(Blobs.names))
        #expect(Blobs.names.map { Blobs.file(backup, $0) } == contents)
        let linked = Blobs.names.map { Blobs.inode(ExternalDataReference(fileName: $0)!.url(besideStore: backup)) } == inodes
        #expect(linked == !copiesOnly)
        let inspect = try MoultProcess.run(["inspect", backup.path, "--model", Self.removed])
        #expect(inspect.standardOutput.contains("3 reference(s) in the store, 0 with no file"), "\(inspect.standardOutput)")
        let verified = try MoultProcess.run(["verify", backup.path, store.path] + Self.toV2 + mapping)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: RunNames.inPlaceWork(for: store).path))
    }

    /// Without a backup, the files go too, and no backup folder is made.
    @Test func withoutABackupTheFilesGoAndNoFolderIsMade() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(directory)
        let migrated = try MoultProcess.run(["migrate", store.path] + Self.toV2 + ["--no-backup", "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(Self.files(store) == [Self.unnamed])
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".b~_SUPPORT").path))
    }

    // MARK: - A chain: a step by SQL, then a streamed one

    /// Chain v1 → v2 (by SQL, in the work folder) → v3 (streamed, reading v2's result there): the streamed
    /// step finds the files in the store's own folder (no warning), nothing is linked or copied into the
    /// work folder (even where a file would be copied), and the store ends with every file it names.
    @Test func aStreamedStepAfterAnSQLStepFindsTheFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Blobs.makeStore(directory, model: Blobs.chainModel)
        let inodes = Blobs.names.map { Blobs.inode(ExternalDataReference(fileName: $0)!.url(besideStore: store)) }
        let mapping = directory.appending("v2-to-v3.json")
        try Data(
            """
            {"source": {"name": "v2"}, "destination": {"name": "v3"}, "entityMappings": [{"name": "BlobToBlob", "type": "transform",
             "source": "Blob", "destination": "Blob", "attributes": [{"name": "data", "value": "$source.data"}, {"name": "score", "value": "2 + 3"}]}]}
            """.utf8
        ).write(to: mapping)
        let trace = directory.appending("trace")
        let command = ["--model", Blobs.chainModel, "--to", "v3", "--mapping", mapping.path]
        let migrated = try MoultProcess.run(
            ["migrate", store.path] + command + ["--copy-external-data"], environment: ["MOULT_FILE_TRACE": trace.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("step 1: v1 -> v2 (inferred mapping): by SQL"), "\(migrated.standardOutput)")
        #expect(migrated.standardOutput.contains("v2-to-v3.json): streamed, then swapped in"), "\(migrated.standardOutput)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        let operations = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        #expect(!operations.contains { $0.contains(".moult-inplace/.") && $0.contains("_SUPPORT") }, "\(operations)")
        for (index, name) in Blobs.names.enumerated() {
            #expect(try Blobs.column(store, index + 1) == Blobs.reference(name))
            #expect(Blobs.inode(ExternalDataReference(fileName: name)!.url(besideStore: store)) == inodes[index], "\(name) untouched")
        }
        let verified = try MoultProcess.run(["verify", directory.appending("b~.sqlite").path, store.path] + command)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)")
    }

    // MARK: - Killed around the removal

    /// Killed before the commit (the removals recorded), after it and before any file goes, or after
    /// the first file went, by SQL and streamed (after the swap too): the same command run again ends
    /// with the store, backup and files of a run never interrupted, and no record or work folder left.
    @Test(arguments: [
        ("sql", "inplace-external-recorded:1"), ("sql", "inplace-before-external-removal:1"), ("sql", "after-external-removal:1"),
        ("sql", "after-external-removal:2"), ("streamed", "inplace-external-recorded:1"), ("streamed", "inplace-after-swap:1"),
        ("streamed", "inplace-before-external-removal:1"), ("streamed", "after-external-removal:2"),
    ])
    func aRunKilledAroundTheRemovalEndsWithTheSameFiles(method: String, fault: String) throws {
        let whole = try TemporaryDirectory(), killed = try TemporaryDirectory()
        defer {
            whole.remove()
            killed.remove()
        }
        var states: [[String]] = []
        for (directory, fault) in [(whole, nil), (killed, fault)] {
            let store = try Self.store(directory)
            let command = ["migrate", store.path] + Self.toV2 + (method == "sql" ? [] : try Self.streamingMapping(in: directory))
            if let fault {
                let stopped = try MoultProcess.run(command, environment: ["MOULT_FAULT": fault])
                #expect(stopped.terminatedBySignal, "\(fault): \(stopped.standardError)")
                let committed = fault != "inplace-external-recorded:1"
                let gone = Set(Blobs.names).subtracting(Self.files(store)).count
                #expect(gone == (fault.hasPrefix("after-external-removal") ? Int(fault.last!.wholeNumberValue!) : 0), "\(fault)")
                #expect(committed == (try Self.version(of: store) == "v2"), "\(fault)")
            }
            let finished = try MoultProcess.run(command)
            #expect(finished.exitCode == 0, "\(finished.standardError)")
            states.append(try Self.state(directory))
        }
        #expect(states[0] == states[1], "\(method), \(fault)")
        #expect(states[1].contains(".b_SUPPORT/_EXTERNAL_DATA/\(Self.unnamed) \(Data("not named".utf8).hashValue)"))
    }

    /// Killed before the file operations of an SQL run in turn (`MOULT_FILE_CRASH`, `KillPoints.spread`), then run
    /// again: every state ends as a run never interrupted ends.
    @Test func aRunKilledAtAnyFileOperationEndsWithTheSameFiles() throws {
        let whole = try TemporaryDirectory()
        defer { whole.remove() }
        let store = try Self.store(whole)
        let trace = whole.appending("trace.json")
        #expect(try MoultProcess.run(["migrate", store.path] + Self.toV2, environment: ["MOULT_FILE_TRACE": trace.path]).exitCode == 0)
        let expected = try Self.state(whole)
        let count = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").count
        #expect(count > 10)
        for operation in KillPoints.spread(count) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try Self.store(directory)
            _ = try MoultProcess.run(["migrate", store.path] + Self.toV2 + ["--quiet"], environment: ["MOULT_FILE_CRASH": "\(operation)"])
            let finished = try MoultProcess.run(["migrate", store.path] + Self.toV2 + ["--quiet"])
            #expect(finished.exitCode == 0, "killed at operation \(operation): \(finished.standardError)")
            let got = try Self.state(directory)
            #expect(got == expected, "killed at operation \(operation): \(Set(got).symmetricDifference(expected).sorted())")
        }
    }

    // MARK: - Staged

    /// A staged run's lightweight stage removes the files as an in-place step does; the backup the run
    /// made first keeps its links.
    @Test func aStagedRunsBackupKeepsItsFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(directory)
        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"lightweight": ["v1", "v2"]}]}"#.utf8).write(to: stages)
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.removed, "--stages", stages.path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(Self.files(store) == [Self.unnamed])
        let backup = directory.appending("b~.sqlite")
        #expect(Self.files(backup) == Set(Blobs.names))
        #expect(Blobs.names.allSatisfy { Blobs.file(backup, $0) != nil })
    }

    /// A staged run refused after its step committed (a `didMigrate` operation fails on a row) puts the
    /// original back: the files the step removed are back in the store's folder, the backup's folder
    /// goes with the backup, and the store's values are as they were.
    @Test func aRefusedStagedRunPutsTheFilesBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = ExternalDataFlagTests.model
        let store = try Blobs.makeStore(directory, model: model, version: "v2", withX: true)
        let before = try StoreRegressionTests.snapshot(directory.appending(".b_SUPPORT"))
        let values = try ExternalDataFlagTests.values(store)
        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"custom": {"from": "v2", "to": "v3", "didMigrate": [{"update": "Blob", "set": {"note": "x + 'a'"}}]}}]}"#.utf8)
            .write(to: stages)
        let trace = directory.appending("trace")
        let refused = try MoultProcess.run(
            ["migrate", store.path, "--model", model, "--stages", stages.path, "--quiet"], environment: ["MOULT_FILE_TRACE": trace.path])
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("nothing was changed"), "\(refused.standardError)")
        let operations = try String(contentsOf: trace, encoding: .utf8)
        #expect(operations.contains("remove \(ExternalDataReference(fileName: Blobs.names[0])!.url(besideStore: store).path)"), "the step removed it")
        #expect(try StoreRegressionTests.snapshot(directory.appending(".b_SUPPORT")) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".b~_SUPPORT").path))
        #expect(try ExternalDataFlagTests.values(store) == values)
    }
}
