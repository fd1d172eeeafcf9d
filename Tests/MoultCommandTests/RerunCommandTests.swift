import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 27, item 4: running a finished migration again succeeds without writing; `--output` for a
/// store already at the target writes its copy; a resume refused for other arguments names them and
/// keeps the status file.
@Suite struct RerunCommandTests {
    static let model = InPlaceCommandTests.model
    static let chain = ["--model", model, "--to", "v3", "--mapping", InPlaceCommandTests.mapping("v2-to-v3"), "--quiet"]

    /// One step and a chain of two: the second run says "already migrated" (0) and leaves DEST's bytes.
    @Test(arguments: ["1", "2"])
    func aFinishedMigrationRunAgainIsDone(version: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate(version, persons: 120, in: directory)
        let output = directory.appending("out.sqlite")
        let first = try MoultProcess.run(["migrate", store.path, "--output", output.path] + Self.chain)
        #expect(first.exitCode == 0, "\(first.standardError)")
        let before = try InPlaceFaultTests.snapshot(directory.url)
        for extra in [[], ["--resume"]] {
            let again = try MoultProcess.run(["migrate", store.path, "--output", output.path] + Self.chain + extra)
            #expect(again.exitCode == 0, "\(again.standardError)")
            #expect(again.standardOutput.contains("already migrated: \(output.path)"), "\(again.standardOutput)")
            #expect(try InPlaceFaultTests.snapshot(directory.url) == before, "nothing was written")
        }
        // The source written to since: its output is no longer this run's, refused (never "already migrated").
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZNAME = 'changed since' WHERE Z_PK = 1")
        database.close()
        let changed = try MoultProcess.run(["migrate", store.path, "--output", output.path] + Self.chain)
        #expect(changed.exitCode == 74, "\(changed.standardOutput)\(changed.standardError)")
        #expect(!changed.standardOutput.contains("already migrated"))
        // Other arguments: not this run's output, refused as before.
        let other = try MoultProcess.run(["migrate", store.path, "--output", output.path, "--model", Self.model, "--to", "v3", "--quiet"])
        #expect(other.exitCode == 74, "\(other.standardError)")
        #expect(other.standardError.contains("already exists"))
    }

    @Test func aStoreAtTheTargetIsCopiedToTheOutput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("3", persons: 80, in: directory)
        let output = directory.appending("copy.sqlite")
        let first = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--output", output.path, "--json"])
        #expect(first.exitCode == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("\"written\":true"), "\(first.standardOutput)")
        #expect(try InPlaceCommandTests.version(of: output) == "v3")
        let verified = try MoultProcess.run(["verify", store.path, output.path, "--model", Self.model])
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
        let before = try InPlaceFaultTests.snapshot(directory.url)
        let again = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--output", output.path])
        #expect(again.exitCode == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("is already its copy: nothing written"), "\(again.standardOutput)")
        #expect(try InPlaceFaultTests.snapshot(directory.url) == before)
    }

    /// The copy of a store at the target, killed before its file operations in turn
    /// (`MOULT_FILE_CRASH`, `KillPoints.spread`): DEST is absent or whole after the kill, and the rerun ends with the copy an
    /// uninterrupted run makes, no temporary file left.
    @Test func aCopyKilledAtAnyFileOperationEndsAsTheUninterruptedOne() throws {
        let whole = try TemporaryDirectory()
        defer { whole.remove() }
        let arguments = { (directory: TemporaryDirectory) in
            ["migrate", directory.appending("people.sqlite").path, "--model", Self.model, "--to", "v3", "--output", directory.appending("copy.sqlite").path]
        }
        _ = try InPlaceCommandTests.generate("3", persons: 60, in: whole)
        let trace = whole.appending("trace")
        #expect(try MoultProcess.run(arguments(whole), environment: ["MOULT_FILE_TRACE": trace.path]).exitCode == 0)
        let expected = try InPlaceCommandTests.digest(whole.appending("copy.sqlite"))
        let count = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").count
        #expect(count >= 2, "the copy is synced and renamed")
        for operation in KillPoints.spread(count) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            _ = try InPlaceCommandTests.generate("3", persons: 60, in: directory)
            _ = try MoultProcess.run(arguments(directory), environment: ["MOULT_FILE_CRASH": "\(operation)"])
            let copy = directory.appending("copy.sqlite")
            if FileManager.default.fileExists(atPath: copy.path) {
                #expect(try InPlaceCommandTests.digest(copy) == expected, "killed at operation \(operation): a copy there is whole")
            }
            let finished = try MoultProcess.run(arguments(directory))
            #expect(finished.exitCode == 0, "killed at operation \(operation): \(finished.standardError)")
            #expect(try InPlaceCommandTests.digest(copy) == expected, "killed at operation \(operation)")
            #expect(!FileManager.default.fileExists(atPath: copy.path + ".moult-copy"))
        }
    }

    /// A staged run that keeps a backup, killed before each of its first file operations in turn
    /// (`MOULT_FILE_CRASH`), then run again: one backup, `people~.sqlite`, the store as it was, and
    /// nothing else left beside the store. (A kill after the backup's rename and before the store's
    /// record was written made the rerun take a second one, `people~2.sqlite`.)
    @Test func aStagedRunKilledAtItsFirstFileOperationsKeepsOneBackup() throws {
        func prepare(_ directory: TemporaryDirectory) throws -> (store: URL, arguments: [String]) {
            let store = try InPlaceCommandTests.generate("1", persons: 60, in: directory)
            let stages = directory.appending("stages.json")
            let text = """
                { "stages": [ { "lightweight": ["v1", "v2"] }, { "custom": { "from": "v2", "to": "v3", \
                "mapping": "\(InPlaceCommandTests.mapping("v2-to-v3"))", \
                "willMigrate": [ { "update": "Person", "where": "age == nil", "set": { "age": "0" } } ] } } ] }
                """
            try Data(text.utf8).write(to: stages)
            return (store, ["migrate", store.path, "--model", Self.model, "--stages", stages.path, "--durable", "--chunk-size", "20", "--quiet"])
        }
        let whole = try TemporaryDirectory()
        defer { whole.remove() }
        let (_, wholeArguments) = try prepare(whole)
        let trace = whole.appending("trace")
        #expect(try MoultProcess.run(wholeArguments, environment: ["MOULT_FILE_TRACE": trace.path]).exitCode == 0)
        let expected = try InPlaceCommandTests.digest(whole.appending("people.sqlite"))
        let count = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").count
        for operation in 1...min(count, 12) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (store, arguments) = try prepare(directory)
            let original = try InPlaceCommandTests.digest(store)
            _ = try MoultProcess.run(arguments, environment: ["MOULT_FILE_CRASH": "\(operation)"])
            let finished = try MoultProcess.run(arguments)
            #expect(finished.exitCode == 0, "killed at operation \(operation): \(finished.standardError)")
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
            #expect(left == ["people.sqlite", "people~.sqlite", "stages.json"], "killed at operation \(operation)")
            #expect(try InPlaceCommandTests.digest(store) == expected, "killed at operation \(operation)")
            #expect(try InPlaceCommandTests.digest(directory.appending("people~.sqlite")) == original, "killed at operation \(operation)")
        }
    }

    /// A run stopped after its third chunk, resumed with another chunk size and without validation:
    /// refused (65), naming both, and the status file still says where the stopped run stands.
    @Test func aRefusedResumeNamesWhatDiffersAndKeepsTheStatusFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 300, in: directory)
        let output = directory.appending("out.sqlite")
        let stopped = try MoultProcess.run(
            ["migrate", store.path, "--output", output.path, "--chunk-size", "50"] + Self.chain, environment: ["MOULT_FAULT": "after-sqlite-commit:3"])
        #expect(stopped.exitCode != 0)
        let status = URL(filePath: output.path + ".moult-status.json")
        let recorded = try Data(contentsOf: status)
        let refused = try MoultProcess.run(["migrate", store.path, "--output", output.path, "--chunk-size", "60", "--no-validation"] + Self.chain)
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("--chunk-size (50 then, 60 now)"), "\(refused.standardError)")
        #expect(refused.standardError.contains("--no-validation"), "\(refused.standardError)")
        #expect(try Data(contentsOf: status) == recorded, "the status file is the stopped run's, kept")
        let resumed = try MoultProcess.run(["migrate", store.path, "--output", output.path, "--chunk-size", "50"] + Self.chain)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
    }
}

/// Issue 27, item 5: each message says what and where, and what to do.
@Suite struct MessageCommandTests {
    static let model = InPlaceCommandTests.model

    @Test func aFolderGivenAsTheStoreIsNamedAsOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("Store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for arguments in [["inspect", folder.path], ["migrate", folder.path, "--model", Self.model, "--output", directory.appending("o.sqlite").path]] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 65, "\(result.standardError)")
            #expect(result.standardError.contains("\(folder.path)"))
            #expect(result.standardError.contains("this is a folder, not a store"), "\(result.standardError)")
        }
    }

    @Test func aSingleVersionGivenAsTheModelSaysToGiveTheVersionedModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 10, in: directory)
        let single = Fixtures.peopleModel.appending(path: "v5.xcdatamodel").path
        let result = try MoultProcess.run(["migrate", store.path, "--model", single, "--output", directory.appending("o.sqlite").path])
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("give the .xcdatamodeld folder"), "\(result.standardError)")
    }

    @Test func aMistypedCommandSuggestsTheNearestOne() throws {
        let result = try MoultProcess.run(["migrte", "store.sqlite"])
        #expect(result.exitCode == 64)
        #expect(result.standardError.contains("unknown command 'migrte' (did you mean 'migrate'?)"), "\(result.standardError)")
    }

    @Test func inferWithAVersionNameAndNoModelSaysToGiveTheModel() throws {
        let result = try MoultProcess.run(["infer", "--from", "v1", "--to", "v2"])
        #expect(result.exitCode == 64)
        #expect(result.standardError.contains("'v1' is neither an .xcdatamodel folder nor a file here"), "\(result.standardError)")
        #expect(result.standardError.contains("--model"))
    }

    @Test func helpSaysWhat75MeansAsTheReadmeDoes() throws {
        let result = try MoultProcess.run(["--help"])
        #expect(result.standardOutput.contains("75  interrupted but resumable (killed, cancelled, disk full):\n      run the same command again"))
        // The help is laid out within 80 columns, so nothing wraps mid-phrase.
        for line in result.standardOutput.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        let migrate = try MoultProcess.run(["migrate", "--help"])
        #expect(!migrate.standardOutput.contains("never modified"), "\(migrate.standardOutput)")
    }

    /// `verify` lists, and takes, only the options it uses: those that shape a run are refused (64).
    @Test func verifyTakesOnlyTheOptionsItUses() throws {
        let help = try MoultProcess.run(["verify", "--help"])
        for option in ["--chunk-size", "--association", "--partition", "--no-bulk-sql", "--stages", "--strict"] {
            #expect(!help.standardOutput.contains(option), "verify --help lists \(option)")
            let result = try MoultProcess.run(["verify", "a.sqlite", "b.sqlite", "--model", Self.model, option, "x"])
            #expect(result.exitCode == 64, "\(option): \(result.standardError)")
        }
        for option in ["--model", "--to", "--mapping", "--policy", "--sample", "--seed", "--events", "--metrics"] {
            #expect(help.standardOutput.contains(option), "verify --help lacks \(option)")
        }
    }
}

/// Issue 27, item 5, the store's own faults: said as the store's, on the store's path, once.
@Suite struct StoreMessageTests {
    static let model = InPlaceCommandTests.model

    /// A value its attribute cannot hold: "invalid store", the source's path and the object, not
    /// "invalid mapping" (no mapping was given) nor the work folder's partial store.
    @Test func aBadValueIsTheStoresFaultOnTheStoresPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 100, in: directory)
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZAGE = 'abc' WHERE Z_PK = 5")
        database.close()
        for extra in [[], ["--no-bulk-sql"]] {
            let result = try MoultProcess.run(
                ["migrate", store.path, "--model", Self.model, "--to", "v3", "--output", directory.appending("o.sqlite").path, "--quiet"] + extra)
            #expect(result.exitCode == 65, "\(result.standardError)")
            #expect(result.standardError.contains("moult: error: invalid store: \(store.path): invalid value: column ZAGE"), "\(result.standardError)")
            #expect(result.standardError.contains("Z_PK 5"))
            #expect(!result.standardError.contains("invalid mapping") && !result.standardError.contains(".moult/"), "\(result.standardError)")
            #expect(!result.standardError.contains("caused by"), "the cause is not said twice: \(result.standardError)")
        }
    }

    /// An existing file that is not a mapping, given as `--mapping`: malformed (65), with where.
    @Test func aFileThatIsNoMappingIsSaidToBeMalformed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 10, in: directory)
        let notAMapping = directory.appending("settings.json")
        try Data(#"{"theme": "dark"}"#.utf8).write(to: notAMapping)
        let result = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.model, "--mapping", notAMapping.path, "--output", directory.appending("o.sqlite").path])
        #expect(result.exitCode == 65, "\(result.standardError)")
        #expect(result.standardError.contains(notAMapping.path) && result.standardError.contains("malformed mapping JSON"), "\(result.standardError)")
    }
}
