import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult migrate STORE` without `--output`, end to end: in place by SQL, streamed and swapped, a chain
/// mixing both, killed at named points and run again.
@Suite struct InPlaceCommandTests {
    static let model = Fixtures.peopleModel.path
    static func mapping(_ name: String) -> String { Fixtures.peopleMapping(name).path }

    static func generate(_ version: String, persons: Int, in directory: TemporaryDirectory, name: String = "people.sqlite") throws -> URL {
        let store = directory.appending(name)
        let result = try GeneratedStores.generate(["--model-version", version, "--objects", String(persons), "--seed", "3", "--model", model], at: store)
        #expect(result.exitCode == 0, "\(result.standardError)")
        return store
    }

    /// The version whose entity hashes the store has.
    static func version(of store: URL) throws -> String? {
        let versioned = try VersionedModel(contentsOf: Fixtures.peopleModel)
        return versioned.version(matchingEntityHashes: try StoreMetadata(contentsOf: store).entityHashes)?.name
    }

    /// Every table's rows, ordered, and the metadata: two equal digests are the same store.
    static func digest(_ store: URL) throws -> String {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("PRAGMA integrity_check") == .string("ok"))
        var text = ""
        let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { $0.string(at: 0) ?? "" }
        for table in tables {
            let columns = try database.columns(of: table).sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            let rows = try database.query("SELECT \(columns) FROM \"\(table)\" ORDER BY \(columns)") { row in
                (0..<row.columnCount).map { "\(row.value(at: $0))" }.joined(separator: "|")
            }
            text += "\(table): \(rows.joined(separator: ";"))\n"
        }
        return text
    }

    @Test func lightweightStepRunsBySQLWithBackupAndPlanSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.generate("1", persons: 200, in: directory)
        let original = try Self.digest(store)

        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--to", "v2"])
        #expect(plan.exitCode == 0)
        #expect(plan.standardOutput.contains("in place: by SQL, schema only"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("reads no object: its time does not grow with the number of objects"), "\(plan.standardOutput)")

        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2", "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("\"method\":\"sql\""), "\(result.standardOutput)")
        #expect(try Self.version(of: store) == "v2")
        let backup = directory.appending("people~.sqlite")
        #expect(try Self.digest(backup) == original)

        // Run again: up to date, nothing written.
        let again = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2"])
        #expect(again.exitCode == 0 && again.standardOutput.contains("nothing to migrate"))
    }

    @Test func inPlaceFlagsWithAnOutputAreBadUsage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.generate("1", persons: 5, in: directory)
        let result = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.model, "--to", "v2", "--output", directory.appending("out.sqlite").path, "--no-backup"])
        #expect(result.exitCode == 64, "\(result.standardError)")
        #expect(result.standardError.contains("--no-backup applies to a migration in place"))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.sqlite").path))
    }

    @Test func noBackupLeavesNothingBeside() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.generate("1", persons: 50, in: directory)
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2", "--no-backup"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        #expect(names == ["people.sqlite"])
    }

    @Test func mixedChainEqualsTheCopyAndPlanSaysWhy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.generate("1", persons: 200, in: directory)
        let copy = directory.appending("copy.sqlite")
        let arguments = ["--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3")]
        let plan = try MoultProcess.run(["plan", store.path] + arguments)
        #expect(plan.standardOutput.contains("in place: streamed, then swapped in, because"), "\(plan.standardOutput)")
        let planJSON = try MoultProcess.run(["plan", store.path] + arguments + ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(planJSON.standardOutput.utf8)) as? [String: Any])
        let methods = (object["inPlace"] as? [[String: Any]])?.compactMap { $0["method"] as? String }
        #expect(methods == ["sql", "streaming"], "\(planJSON.standardOutput)")
        let streamed = try MoultProcess.run(["migrate", store.path] + arguments + ["--output", copy.path])
        #expect(streamed.exitCode == 0, "\(streamed.standardError)")
        let result = try MoultProcess.run(["migrate", store.path] + arguments + ["--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("\"method\":\"sql\"") && result.standardOutput.contains("\"method\":\"streaming\""))
        #expect(try Self.version(of: store) == "v3")
        // The same persons and addresses as the copy (keys kept by the SQL step, then the same streaming step).
        let persons = { (url: URL) throws -> [String] in
            let database = try Database(url: url, mode: .readOnly)
            defer { database.close() }
            return try database.query("SELECT p.ZNAME, a.ZSTREET, a.ZSTATE FROM ZPERSON p LEFT JOIN ZADDRESS a ON a.Z_PK = p.ZADDRESS ORDER BY p.Z_PK") { row in
                (0..<3).map { "\(row.value(at: $0))" }.joined(separator: "|")
            }
        }
        #expect(try persons(store) == persons(copy))
        #expect(try !persons(store).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".people.sqlite.moult-inplace").path))
        #expect(try Self.version(of: directory.appending("people~.sqlite")) == "v1")
    }

    @Test func deferredCleanupIsShownByInspectAndDoneByFinishEvenAfterAKill() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Cleanup v1 -> v2 drops a column and a table and adds an indexed column.
        let model = Fixtures.packageRoot.appending(path: "Tests/InPlaceModels/Cleanup.xcdatamodeld").path
        let store = directory.appending("cleanup.sqlite")
        #expect(try MoultProcess.run(["create", store.path, "--model", model + "/v1.xcdatamodel"]).exitCode == 0)
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript(
            "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZOBSOLETE) VALUES (1, 1, 1, 'a', 'x'), (2, 1, 1, 'b', NULL);"
                + "INSERT INTO ZRETIRED (Z_PK, Z_ENT, Z_OPT, ZNOTE) VALUES (1, 2, 1, 'n'); UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = 1;"
                + "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 2")
        database.close()
        let migrate = try MoultProcess.run(["migrate", store.path, "--model", model, "--defer-cleanup", "--no-backup"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let inspect = try MoultProcess.run(["inspect", store.path, "--model", model])
        #expect(
            inspect.standardOutput.contains("pending clean-up (moult finish): drop-column ZITEM ZOBSOLETE, drop-table ZRETIRED, create-index ZITEM_ZCODE_INDEX"),
            "\(inspect.standardOutput)")
        #expect(inspect.standardOutput.contains("matching version: v2"))
        let killed = try MoultProcess.run(["finish", store.path, "--model", model], environment: ["MOULT_FAULT": "inplace-cleanup-statement:1"])
        #expect(killed.terminatedBySignal)
        #expect(try MoultProcess.run(["inspect", store.path, "--model", model]).standardOutput.contains("pending clean-up"))
        let finish = try MoultProcess.run(["finish", store.path, "--model", model])
        #expect(finish.exitCode == 0 && finish.standardOutput.contains("finished"), "\(finish.standardOutput)\(finish.standardError)")
        let after = try MoultProcess.run(["inspect", store.path, "--model", model])
        #expect(after.exitCode == 0 && !after.standardOutput.contains("pending clean-up"))
        #expect(after.standardOutput.contains("matching version: v2"), "\(after.standardOutput)")
        let check = try Database(url: store, mode: .readOnly)
        defer { check.close() }
        #expect(try check.columns(of: "ZITEM").sorted() == ["ZCODE", "ZNAME", "Z_ENT", "Z_OPT", "Z_PK"])
        #expect(try !check.tableExists("ZRETIRED"))
        #expect(try check.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'ZITEM_ZCODE_INDEX'") == .int(1))
        #expect(try check.scalar("PRAGMA integrity_check") == .string("ok"))
        let again = try MoultProcess.run(["finish", store.path, "--model", model])
        #expect(again.exitCode == 0 && again.standardOutput.contains("nothing pending"))
    }

    @Test func aLockedStoreIsRefusedWith74() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.generate("1", persons: 20, in: directory)
        let before = try Self.digest(store)
        let holder = try Database(url: store, mode: .readWrite)
        try holder.executeScript("BEGIN IMMEDIATE")
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2"])
        try holder.executeScript("ROLLBACK")
        holder.close()
        #expect(result.exitCode == 74, "\(result.standardError)")
        #expect(result.standardError.contains("lock"))
        #expect(try Self.digest(store) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("people~.sqlite").path))
    }

    /// Killed at each named point of a chain mixing SQL and streaming: the store is at v1 intact or at a
    /// later version, whole; run again, it ends as the uninterrupted run, and the backup is the original.
    /// (The chain runs in the work folder, its SQL step on a copy: `chain-step-copied` and
    /// `chain-step-migrated` are its points; the backup is a hard link made at the swap.)
    @Test(arguments: [
        "chain-step-copied:1", "chain-step-migrated:1", "inplace-statement:1", "inplace-statement:2", "inplace-before-commit:1", "chunk-start:1",
        "after-sqlite-commit:2", "after-rename:1", "inplace-before-swap:1", "inplace-after-swap:1",
    ])
    func killedAtANamedPointEndsAsTheUninterruptedRun(_ fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let reference = try Self.generate("1", persons: 120, in: directory, name: "reference.sqlite")
        let store = try Self.generate("1", persons: 120, in: directory)
        let original = try Self.digest(store)
        let arguments = ["--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--chunk-size", "50"]
        #expect(try MoultProcess.run(["migrate", reference.path] + arguments).exitCode == 0)

        let killed = try MoultProcess.run(["migrate", store.path] + arguments, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault) was not reached: \(killed.standardError)")
        let version = try Self.version(of: store)
        #expect(version == "v1" || version == "v2" || version == "v3", "after \(fault): \(String(describing: version))")
        if version == "v1" { #expect(try Self.digest(store) == original, "after \(fault): v1 but changed") }
        _ = try Self.digest(store)  // integrity_check

        let again = try MoultProcess.run(["migrate", store.path] + arguments)
        #expect(again.exitCode == 0, "after \(fault): \(again.standardError)")
        #expect(try Self.digest(store) == Self.digest(reference), "after \(fault)")
        #expect(try Self.digest(directory.appending("people~.sqlite")) == original, "after \(fault): the backup is not the original")
    }

    /// Killed right after the swap, the store is migrated and the work folder still records the
    /// backup. Run again, the store is up to date: the run names the backup, and says so loudly when
    /// the backup has gone in between, rather than deleting the record unnoticed.
    @Test func aRunAfterTheSwapNamesTheBackupOrSaysItIsGone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let arguments = ["--model", Self.model, "--to", "v3", "--mapping", Self.mapping("v2-to-v3"), "--chunk-size", "50"]
        for removeBackup in [false, true] {
            let store = try Self.generate("2", persons: 60, in: directory, name: "s\(removeBackup).sqlite")
            let backup = directory.appending("s\(removeBackup)~.sqlite")
            let killed = try MoultProcess.run(["migrate", store.path] + arguments, environment: ["MOULT_FAULT": "inplace-after-swap:1"])
            #expect(killed.terminatedBySignal, "\(killed.standardError)")
            #expect(try Self.version(of: store) == "v3")
            #expect(FileManager.default.fileExists(atPath: backup.path))
            if removeBackup { try FileManager.default.removeItem(at: backup) }

            let again = try MoultProcess.run(["migrate", store.path] + arguments)
            #expect(again.exitCode == 0, "\(again.standardError)")
            #expect(again.standardOutput.contains("nothing to migrate"))
            if removeBackup {
                #expect(again.standardError.contains("warning") && again.standardError.contains(backup.path), "\(again.standardError)")
            } else {
                #expect(again.standardOutput.contains(backup.path), "\(again.standardOutput)")
                #expect(!again.standardError.contains("warning"), "\(again.standardError)")
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("moult") }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }
}

/// `--events`, `--pause-file`, SIGTERM and `moult status` on a migration in place.
@Suite struct InPlaceEventsCommandTests {
    typealias Events = EventsCommandTests
    static let model = InPlaceCommandTests.model
    static let chain = ["--model", model, "--to", "v3", "--mapping", InPlaceCommandTests.mapping("v2-to-v3"), "--chunk-size", "50"]

    /// A chain of an SQL step and a streamed one: each step starts and ends, the streamed one's own
    /// events between; every line parses; the run ends with `finished`.
    @Test func eachStepIsReportedAndTheStreamedOneHasItsChunks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 120, in: directory)
        let log = directory.appending("events.jsonl")
        let result = try MoultProcess.run(["migrate", store.path] + Self.chain + ["--events", log.path, "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let events = try Events.events(at: log)
        let steps = events.filter { $0["event"] as? String == "inplace-step" }
        let described = steps.map { "\($0["step"] ?? "") \($0["method"] ?? "") \($0["phase"] ?? "")" }
        #expect(described == ["1 sql started", "1 sql done", "2 streaming started", "2 streaming done"], "\(described)")
        #expect((steps[0]["changes"] as? Int ?? 0) > 0 && steps[0]["schemaOnly"] as? Bool == true, "\(steps[0])")
        #expect(steps[0]["rowsRead"] as? [String] == [], "\(steps[0])")
        #expect((steps[2]["reasons"] as? [String])?.isEmpty == false, "\(steps[2])")
        let kinds = Events.kinds(events)
        let streamedStart = try #require(kinds.indices.first { kinds[$0] == "inplace-step" && steps.count > 2 && events[$0]["step"] as? Int == 2 })
        let streamedDone = try #require(kinds.lastIndex(of: "inplace-step"))
        let between = Array(kinds[streamedStart..<streamedDone])
        #expect(between.contains("plan") && between.contains("chunk") && between.contains("stage"), "\(kinds)")
        #expect(events.filter { $0["event"] as? String == "chunk" }.allSatisfy { $0["step"] as? Int == 2 && $0["steps"] as? Int == 2 })
        #expect(kinds.last == "finished", "\(kinds)")
        #expect(!FileManager.default.fileExists(atPath: store.path + ".moult-status.json"))

        // On standard output, the events are the whole output.
        let other = try InPlaceCommandTests.generate("1", persons: 20, in: directory, name: "other.sqlite")
        let piped = try MoultProcess.run(["migrate", other.path, "--model", Self.model, "--to", "v2", "--events", "-"])
        #expect(piped.exitCode == 0, "\(piped.standardError)")
        #expect(Events.kinds(try Events.events(piped.standardOutput)) == ["inplace-step", "inplace-step", "finished"], "\(piped.standardOutput)")
        // Up to date: one `finished` event saying so.
        let again = try MoultProcess.run(["migrate", other.path, "--model", Self.model, "--to", "v2", "--events", "-"])
        let last = try #require(try Events.events(again.standardOutput).last)
        #expect(last["event"] as? String == "finished" && last["outcome"] as? String == "already-current", "\(again.standardOutput)")
    }

    /// Killed inside the SQL step's transaction or inside the streamed step: the stream has only whole
    /// lines and no end; `moult status STORE` says the run was interrupted (with the streamed step's
    /// checkpoint when there is one); run again, the stream goes on to `finished`.
    @Test(arguments: ["inplace-statement:2", "after-sqlite-commit:2"])
    func aKilledRunLeavesWholeLinesAndStatusSaysWhereItStands(_ fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 120, in: directory)
        let log = directory.appending("events.jsonl")
        let arguments = ["migrate", store.path] + Self.chain + ["--events", log.path, "--quiet"]
        let killed = try MoultProcess.run(arguments, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault) was not reached: \(killed.standardError)")
        let events = try Events.events(at: log)
        #expect(!events.isEmpty && !Events.kinds(events).contains("finished"), "\(fault): \(Events.kinds(events))")
        let status = try MoultProcess.run(["status", store.path, "--json"])
        #expect(status.exitCode == 0, "\(status.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "interrupted", "\(status.standardOutput)")
        let checkpoints = object["checkpoints"] as? [[String: Any]] ?? []
        if fault.hasPrefix("after-sqlite-commit") {
            #expect(checkpoints.count == 1 && (checkpoints[0]["done"] as? Int ?? 0) > 0, "\(status.standardOutput)")
        } else {
            #expect(checkpoints.isEmpty, "\(status.standardOutput)")
        }
        let text = try MoultProcess.run(["status", store.path])
        #expect(text.standardOutput.contains("step 1/2") || text.standardOutput.contains("step 2/2"), "\(text.standardOutput)")

        let again = try MoultProcess.run(arguments)
        #expect(again.exitCode == 0, "\(again.standardError)")
        let all = try Events.events(at: log)
        #expect(Events.kinds(all).last == "finished")
        #expect(try InPlaceCommandTests.version(of: store) == "v3")
    }

    /// A pause file holds an SQL step at its boundary (status says paused); SIGTERM then stops the run
    /// before the step (75, `failed` / interrupted last), the store untouched at v1; without the pause
    /// file the same command finishes.
    @Test func aPauseFileHoldsAnSQLStepAndSIGTERMStopsItResumably() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 60, in: directory)
        let original = try InPlaceCommandTests.digest(store)
        let log = directory.appending("events.jsonl")
        let pause = directory.appending("pause")
        try Data().write(to: pause)
        let arguments = ["migrate", store.path, "--model", Self.model, "--to", "v2", "--events", log.path, "--pause-file", pause.path, "--max-rate", "1000"]
        let process = try Events.start(arguments)
        #expect(try Events.wait(for: "paused", in: log, process: process))
        let status = try MoultProcess.run(["status", store.path])
        #expect(status.exitCode == 0 && status.standardOutput.contains("paused"), "\(status.standardOutput)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 75)
        let events = try Events.events(at: log)
        #expect(Events.kinds(events) == ["paused", "resumed", "failed"], "\(Events.kinds(events))")
        let last = try #require(events.last)
        #expect(last["outcome"] as? String == "interrupted" && last["exitCode"] as? Int == 75, "\(last)")
        #expect(try InPlaceCommandTests.digest(store) == original)

        try FileManager.default.removeItem(at: pause)
        let resumed = try MoultProcess.run(arguments)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(try InPlaceCommandTests.version(of: store) == "v2")
        #expect(Events.kinds(try Events.events(at: log)).suffix(3) == ["inplace-step", "inplace-step", "finished"])
    }
}
