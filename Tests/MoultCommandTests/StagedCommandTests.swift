import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult migrate STORE --model M --stages FILE` and `moult plan … --stages FILE`, end to end: Apple's
/// two examples from a stages file, killed inside the handler (SIGKILL at a named point) and run again.
@Suite struct StagedCommandTests {
    static let objects = ProcessInfo.processInfo.environment["MOULT_STAGED_OBJECTS"].flatMap { Int($0) } ?? 100_000
    static let models = Fixtures.packageRoot.appending(path: "Tests/StagedModels")
    static let attachments = models.appending(path: "Attachments.xcdatamodeld")
    static let tags = models.appending(path: "Tags.xcdatamodeld")

    static let fillDates = """
        { "format": "moult-stages/1",
          "stages": [ { "custom": { "from": "v1", "to": "v2",
                                    "willMigrate": [ { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()" } } ] } } ] }
        """

    static let removeDuplicates = """
        { "stages": [ { "custom": { "from": "v1", "to": "v2",
                                    "willMigrate": [ { "deleteDuplicates": "Tag", "by": ["name"] } ] } } ] }
        """

    static func write(_ text: String, _ name: String, in directory: TemporaryDirectory) throws -> String {
        let url = directory.appending(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static func scalar(_ url: URL, _ sql: String) throws -> Int64 {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        guard case .int(let value)? = try database.scalar(sql) else { return -1 }
        return value
    }

    static func version(of url: URL, _ model: URL) throws -> String? {
        try VersionedModel(contentsOf: model).version(matchingEntityHashes: try StoreMetadata(contentsOf: url).entityHashes)?.name
    }

    static func attachmentStore(_ count: Int, in directory: TemporaryDirectory, name: String) throws -> URL {
        let url = directory.appending(name)
        let store = try SQLiteStore.create(at: url, model: try VersionedModel(contentsOf: attachments).version(named: "v1")!.model)
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            for index in 0..<count {
                let date: Value = index % 3 == 0 ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(index) * 60))
                try writer.insert("Attachment", ["name": .string("file-\(index)"), "size": .int(Int64(index % 1000)), "dateCreated": date])
            }
        }
        return url
    }

    static func tagStore(_ count: Int, in directory: TemporaryDirectory, name: String) throws -> URL {
        let url = directory.appending(name)
        let store = try SQLiteStore.create(at: url, model: try VersionedModel(contentsOf: tags).version(named: "v1")!.model)
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            for index in 0..<count {
                let tag = try writer.insert("Tag", ["name": .string("tag-\((index * 7919) % max(count / 4, 1))"), "color": .string("red")])
                try writer.insert("Note", ["title": .string("note-\(index)"), "tag": .object(tag)])
            }
        }
        return url
    }

    /// Each row of a table but the columns given, ordered: two stores' rows compared without the
    /// values the migration's start instant decides.
    static func rows(_ url: URL, _ sql: String) throws -> [String] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        return try database.query(sql) { row in (0..<row.columnCount).map { "\(row.value(at: $0))" }.joined(separator: "|") }
    }

    @Test func optionalToNonOptionalFromAStagesFileKilledInsideTheHandler() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stages = try Self.write(Self.fillDates, "fill-dates.json", in: directory)
        let store = try Self.attachmentStore(Self.objects, in: directory, name: "attachments.sqlite")
        let straight = try directory.copyStore(store, as: "straight.sqlite")

        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.attachments.path, "--stages", stages])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("stage 1: custom v1 → v2"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("1. for Attachment where dateCreated == nil set dateCreated = now()"), "\(plan.standardOutput)")

        let storeless = try MoultProcess.run(["plan", "--model", Self.attachments.path, "--stages", stages])
        #expect(storeless.exitCode == 0, "\(storeless.standardError)")
        #expect(storeless.standardOutput.contains("the stages go v1 → v2, in place"), "\(storeless.standardOutput)")
        #expect(storeless.standardOutput.contains("willMigrate at v1:"), "\(storeless.standardOutput)")
        let planJSON = try MoultProcess.run(["plan", store.path, "--model", Self.attachments.path, "--stages", stages, "--json"])
        #expect(planJSON.exitCode == 0, "\(planJSON.standardError)")
        let parsed = try JSONSerialization.jsonObject(with: Data(planJSON.standardOutput.utf8)) as? [String: Any]
        #expect(parsed?["from"] as? String == "v1" && parsed?["to"] as? String == "v2" && (parsed?["stages"] as? [Any])?.count == 1)

        let killed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "1000", "--quiet"],
            environment: ["MOULT_FAULT": "staged-before-commit:12"])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        #expect(try Self.version(of: store, Self.attachments) == "v1")
        let nils = try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL")
        #expect(nils > 0 && nils < Int64((Self.objects + 2) / 3))

        let resumed = try MoultProcess.run(["migrate", store.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "1000"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(resumed.standardOutput.contains("(resumed)"), "\(resumed.standardOutput)")
        let clean = try MoultProcess.run(["migrate", straight.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "1000", "--no-backup", "--json"])
        #expect(clean.exitCode == 0, "\(clean.standardError)")
        #expect(clean.standardOutput.contains("\"backup\":null"))

        for url in [store, straight] {
            #expect(try Self.version(of: url, Self.attachments) == "v2")
            #expect(try Self.scalar(url, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL") == 0)
            // Every filled date is the one instant the migration started.
            #expect(try Self.scalar(url, "SELECT COUNT(DISTINCT ZDATECREATED) FROM ZATTACHMENT WHERE Z_PK % 3 = 1") == 1)
            #expect(try Self.rows(url, "PRAGMA integrity_check") == ["\"ok\""])
        }
        let columns = "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZSIZE, CASE WHEN Z_PK % 3 = 1 THEN NULL ELSE ZDATECREATED END FROM ZATTACHMENT ORDER BY Z_PK"
        #expect(try Self.rows(store, columns) == Self.rows(straight, columns))
        #expect(FileManager.default.fileExists(atPath: directory.appending("attachments~.sqlite").path))
        #expect(try Self.scalar(directory.appending("attachments~.sqlite"), "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL") == Int64((Self.objects + 2) / 3))

        let again = try MoultProcess.run(["migrate", store.path, "--model", Self.attachments.path, "--stages", stages])
        #expect(again.exitCode == 0)
        #expect(again.standardOutput.contains("already at version v2"), "\(again.standardOutput)")
    }

    /// The stages file format's own example (StagesFileFormat.md), from a file through `moult migrate
    /// --stages`: in `{ "dateCreated": "now()", "size": "TERNARY(dateCreated == nil, -1, #size)" }`
    /// (`size` is a reserved word), `size` reads the old `dateCreated`, so the attachments that had no
    /// date get -1 and the others keep their size, in chunks of 7 objects.
    @Test func anUpdateFromAStagesFileReadsTheOldValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stages = try Self.write(
            """
            { "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [
                { "update": "Attachment", "set": { "dateCreated": "now()", "size": "TERNARY(dateCreated == nil, -1, #size)" } } ] } } ] }
            """, "old-values.json", in: directory)
        let store = try Self.attachmentStore(30, in: directory, name: "attachments.sqlite")
        let run = try MoultProcess.run(["migrate", store.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "7", "--quiet"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(try Self.version(of: store, Self.attachments) == "v2")
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL") == 0)
        // Attachment i had no date when i % 3 == 0, and size i.
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZSIZE = -1") == 10)
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZSIZE = -1 AND CAST(substr(ZNAME, 6) AS INTEGER) % 3 != 0") == 0)
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZSIZE = CAST(substr(ZNAME, 6) AS INTEGER)") == 20)
    }

    @Test func uniquenessConstraintFromAStagesFileKilledInsideTheHandler() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stages = try Self.write(Self.removeDuplicates, "dedupe.json", in: directory)
        let store = try Self.tagStore(Self.objects, in: directory, name: "tags.sqlite")
        let straight = try directory.copyStore(store, as: "straight.sqlite")
        let distinct = Int64(max(Self.objects / 4, 1))

        let killed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.tags.path, "--stages", stages, "--chunk-size", "1000", "--quiet"],
            environment: ["MOULT_FAULT": "staged-after-commit:9"])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        #expect(try Self.version(of: store, Self.tags) == "v1")
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZTAG") == Int64(Self.objects - 9_000))

        let resumed = try MoultProcess.run(["migrate", store.path, "--model", Self.tags.path, "--stages", stages, "--chunk-size", "1000", "--json"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(resumed.standardOutput.contains("\"resumed\":true"), "\(resumed.standardOutput)")
        let clean = try MoultProcess.run(["migrate", straight.path, "--model", Self.tags.path, "--stages", stages, "--chunk-size", "1000"])
        #expect(clean.exitCode == 0, "\(clean.standardError)")
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZTAG") == distinct)
        for table in ["ZTAG", "ZNOTE", "Z_PRIMARYKEY"] {
            let sql = "SELECT * FROM \(table) ORDER BY 1, 2"
            #expect(try Self.rows(store, sql) == Self.rows(straight, sql), "\(table)")
        }
        #expect(try Self.version(of: store, Self.tags) == "v2")
    }

    @Test func badStagesAreRefusedWithTheirExitCodes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.attachmentStore(10, in: directory, name: "a.sqlite")
        let before = try Data(contentsOf: store)
        let cases: [(String, [String], Int32, String)] = [
            ("{\"stages\": [{\"custom\": {\"from\": \"v1\"}}]}", [], 65, "$.stages[0].custom.to: missing"),
            ("{\"stages\": [{\"lightweight\": [\"v1\", \"v7\"]}]}", [], 66, "no version 'v7'"),
            ("{\"stages\": [{\"lightweight\": [\"v1\"]}, {\"lightweight\": [\"v2\", \"v1\"]}]}", [], 65, "each stage starts where the one before ends"),
            (Self.fillDates, ["--output", directory.appending("out.sqlite").path], 64, "--output does not apply"),
            (Self.fillDates, ["--to", "v2"], 64, "--stages does not take --to"),
        ]
        for (index, (text, extra, code, message)) in cases.enumerated() {
            let stages = try Self.write(text, "stages-\(index).json", in: directory)
            let result = try MoultProcess.run(["migrate", store.path, "--model", Self.attachments.path, "--stages", stages] + extra)
            #expect(result.exitCode == code, "\(text): \(result.standardError)")
            #expect(result.standardError.contains(message), "\(result.standardError)")
        }
        let missing = try MoultProcess.run(["plan", store.path, "--model", Self.attachments.path, "--stages", directory.appending("none.json").path])
        #expect(missing.exitCode == 65 && missing.standardError.contains("no such file"), "\(missing.standardError)")
        #expect(try Data(contentsOf: store) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("a~.sqlite").path))
    }

    /// `--events` on a staged run: every line parses, with the schema version; `staged` events carry
    /// the stage and the handler's objects; the stream ends with `finished`. A run killed inside the
    /// handler leaves whole lines and no end, and `moult status STORE` says it was interrupted.
    @Test func eventsOfAStagedRunAndOfOneKilledInsideTheHandler() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stages = try Self.write(Self.fillDates, "fill-dates.json", in: directory)
        let store = try Self.attachmentStore(3_000, in: directory, name: "attachments.sqlite")
        let eventsPath = directory.appending("events.jsonl").path
        func lines() throws -> [[String: Any]] {
            let text = try String(contentsOfFile: eventsPath, encoding: .utf8)
            #expect(text.isEmpty || text.hasSuffix("\n"), "a torn last line")
            return try text.split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["v"] as? Int == 1, "\(line)")
                return object ?? [:]
            }
        }

        let killed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "200", "--quiet", "--events", eventsPath],
            environment: ["MOULT_FAULT": "staged-before-commit:3"])
        #expect(killed.terminatedBySignal, "exit \(killed.exitCode): \(killed.standardError)")
        let cut = try lines()
        #expect(!cut.isEmpty)
        #expect(!cut.contains { $0["event"] as? String == "finished" || $0["event"] as? String == "failed" })
        let status = try MoultProcess.run(["status", store.path, "--json"])
        #expect(status.exitCode == 0, "\(status.standardError)")
        let state = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        #expect(state?["state"] as? String == "interrupted", "\(status.standardOutput)")

        try FileManager.default.removeItem(atPath: eventsPath)
        let resumed = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "200", "--quiet", "--events", eventsPath])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let events = try lines()
        let staged = events.filter { $0["event"] as? String == "staged" }
        #expect(staged.contains { $0["activity"] as? String == "willMigrate" && ($0["objects"] as? Int ?? 0) > 0 }, "\(staged)")
        #expect(staged.allSatisfy { $0["stage"] as? Int == 1 && $0["stages"] as? Int == 1 })
        #expect(events.last?["event"] as? String == "finished" && events.last?["outcome"] as? String == "migrated", "\(events.last ?? [:])")
        #expect(events.last?["resumed"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: store.path + ".moult-status.json"))

        // A run refused (here: a stages file naming no version of the model) ends its stream with `failed`.
        try FileManager.default.removeItem(atPath: eventsPath)
        let wrong = try Self.write(Self.fillDates.replacingOccurrences(of: "\"to\": \"v2\"", with: "\"to\": \"v9\""), "wrong.json", in: directory)
        let refused = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.attachments.path, "--stages", wrong, "--quiet", "--events", eventsPath])
        #expect(refused.exitCode == 65 || refused.exitCode == 66, "\(refused.standardError)")
        let failed = try lines()
        #expect(failed.last?["event"] as? String == "failed" && failed.last?["exitCode"] as? Int == Int(refused.exitCode), "\(failed)")
    }


    /// Killed between a stage's phases (after the handler, after the step, as the record is removed):
    /// the same command ends with the store an uninterrupted run makes.
    @Test(arguments: ["staged-phase:1", "staged-phase:2", "staged-finished:1"])
    func killedBetweenPhasesEndsAsTheUninterruptedRun(_ fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stages = try Self.write(Self.fillDates, "fill-dates.json", in: directory)
        let store = try Self.attachmentStore(3_000, in: directory, name: "attachments.sqlite")
        let straight = try directory.copyStore(store, as: "straight.sqlite")
        let arguments = { (url: URL) in ["migrate", url.path, "--model", Self.attachments.path, "--stages", stages, "--chunk-size", "500", "--quiet", "--no-backup"] }
        let killed = try MoultProcess.run(arguments(store), environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): exit \(killed.exitCode): \(killed.standardError)")
        #expect(try Self.rows(store, "PRAGMA integrity_check") == ["\"ok\""])
        let again = try MoultProcess.run(arguments(store))
        #expect(again.exitCode == 0, "\(fault): \(again.standardError)")
        #expect(try MoultProcess.run(arguments(straight)).exitCode == 0)
        #expect(try Self.version(of: store, Self.attachments) == "v2")
        #expect(try Self.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL") == 0)
        let columns = "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZSIZE, CASE WHEN Z_PK % 3 = 1 THEN NULL ELSE ZDATECREATED END FROM ZATTACHMENT ORDER BY Z_PK"
        #expect(try Self.rows(store, columns) == Self.rows(straight, columns))
    }
}
