import Foundation
import MoultMigration
import MoultTestSupport
import Testing

/// `--events` on `migrate` and `plan`, `--pause-file`, `--max-rate`, SIGTERM and `moult status`,
/// end to end.
@Suite struct EventsCommandTests {
    static let model = Fixtures.peopleModel.path
    static func mapping(_ name: String) -> String { MigrateCommandTests.mapping(name) }

    /// The lines of an events file, each parsed; fails the test for a line that is not a JSON object
    /// with the schema version, or a stream that does not end with a newline.
    static func events(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        if !text.isEmpty { #expect(text.hasSuffix("\n"), "a torn last line: \(text.suffix(200))", sourceLocation: sourceLocation) }
        return try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)", sourceLocation: sourceLocation)
            #expect(object["v"] as? Int == MigrationEvent.schemaVersion, "\(line)", sourceLocation: sourceLocation)
            #expect(object["event"] is String, "\(line)", sourceLocation: sourceLocation)
            return object
        }
    }

    static func events(at url: URL) throws -> [[String: Any]] {
        try events(String(contentsOf: url, encoding: .utf8))
    }

    static func kinds(_ events: [[String: Any]]) -> [String] { events.compactMap { $0["event"] as? String } }

    /// A People v2 store and a v2 -> v3 mapping that does not carry the age.
    static func droppingAge(in directory: TemporaryDirectory, persons: Int = 300) throws -> (source: URL, mapping: URL) {
        let source = try MigrateCommandTests.generate("2", persons: persons, in: directory)
        let text = try String(contentsOf: URL(filePath: mapping("v2-to-v3")), encoding: .utf8)
        let noAge = text.replacingOccurrences(of: "        { \"name\": \"age\", \"value\": \"$source.age\" },\n", with: "")
        #expect(noAge != text)
        let mapping = directory.appending("no-age.json")
        try noAge.write(to: mapping, atomically: true, encoding: .utf8)
        return (source, mapping)
    }

    // MARK: - The stream

    @Test func migrateWritesThePlanChunksStagesWarningsAndTheOutcome() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (source, mapping) = try Self.droppingAge(in: directory)
        let ages = try MigrateCommandTests.count(source, "SELECT COUNT(ZAGE) FROM ZPERSON")
        let output = directory.appending("out.sqlite")
        let log = directory.appending("events.jsonl")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path, "--output", output.path, "--chunk-size", "50",
            "--events", log.path, "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let events = try Self.events(at: log)
        let kinds = Self.kinds(events)
        #expect(kinds.first == "warning", "\(kinds)")
        #expect(kinds.last == "finished")
        #expect(kinds.filter { $0 == "plan" }.count == 1)

        let warning = try #require(events.first { $0["event"] as? String == "warning" })
        let notCarried = try #require(warning["notCarried"] as? [[String: Any]])
        #expect(notCarried.count == 1 && notCarried[0]["property"] as? String == "age" && notCarried[0]["count"] as? Int == ages, "\(warning)")

        let plan = try #require(events.first { $0["event"] as? String == "plan" })
        #expect(plan["from"] as? String == "v2" && plan["to"] as? String == "v3", "\(plan)")
        let passes = try #require(plan["passes"] as? [[String: Any]])
        let chunks = events.filter { $0["event"] as? String == "chunk" }
        #expect(chunks.count == plan["chunks"] as? Int, "one event per chunk")
        #expect(passes.reduce(0) { $0 + ($1["chunks"] as? Int ?? 0) } == chunks.count)
        for chunk in chunks {
            for key in ["step", "steps", "pass", "passes", "mapping", "stage", "chunk", "chunks", "rows", "done", "total", "elapsed", "rate"] {
                #expect(chunk[key] != nil, "\(key) missing in \(chunk)")
            }
            #expect(chunk.keys.contains("eta"))
        }
        #expect(chunks.last?["done"] as? Int == plan["estimatedRows"] as? Int)
        let stages = events.filter { $0["event"] as? String == "stage" }.compactMap { $0["stage"] as? String }
        #expect(stages == ["create", "relationships", "validate", "finishing", "done"], "\(stages)")

        let finished = try #require(events.last)
        #expect(finished["outcome"] as? String == "migrated" && finished["exitCode"] as? Int == 0)
        let objects = try #require(finished["objects"] as? [String: Int])
        #expect(objects["Person"] == 300, "\(objects)")
    }

    @Test func eventsOnStandardOutputAreTheWholeOutput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 100, in: directory)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--events", "-", "--json",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let events = try Self.events(result.standardOutput)
        #expect(Self.kinds(events).last == "finished")
        // Run again: nothing to migrate is an outcome too.
        let again = try MoultProcess.run([
            "migrate", output.path, "--model", Self.model, "--to", "v2", "--output", directory.appending("again.sqlite").path, "--events", "-",
        ])
        #expect(again.exitCode == 0, "\(again.standardError)")
        let current = try Self.events(again.standardOutput)
        #expect(current.count == 1 && current[0]["outcome"] as? String == "already-current", "\(again.standardOutput)")
    }

    @Test func aFailureIsTheLastEvent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 20, in: directory)
        let output = directory.appending("taken.sqlite")
        try Data("x".utf8).write(to: output)
        let log = directory.appending("events.jsonl")
        let exists = try MoultProcess.run(["migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--events", log.path])
        #expect(exists.exitCode == 74, "\(exists.standardError)")
        let failed = try #require(try Self.events(at: log).last)
        #expect(failed["event"] as? String == "failed" && failed["exitCode"] as? Int == 74 && failed["category"] as? String == "io", "\(failed)")
        #expect(failed["code"] as? String == "output exists")
        #expect((failed["message"] as? String)?.contains(output.path) == true)

        // A model that does not exist: the failure happens before any migration, still an event.
        let log2 = directory.appending("events2.jsonl")
        let missing = try MoultProcess.run([
            "migrate", source.path, "--model", directory.appending("nope.xcdatamodeld").path, "--output", directory.appending("o.sqlite").path,
            "--events", log2.path,
        ])
        #expect(missing.exitCode != 0)
        let events = try Self.events(at: log2)
        #expect(events.count == 1 && events[0]["event"] as? String == "failed", "\(events)")
        #expect(events[0]["exitCode"] as? Int == Int(missing.exitCode))

        // An events file that cannot be opened (a missing folder is made, but not under a file): an I/O
        // failure, named.
        try Data("a file".utf8).write(to: directory.appending("plain"))
        let unwritable = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--output", directory.appending("o.sqlite").path, "--events",
            directory.appending("plain/dir/e.jsonl").path,
        ])
        #expect(
            unwritable.exitCode == 74 && unwritable.standardError.contains("cannot open the events file \(directory.appending("plain/dir/e.jsonl").path)"),
            "\(unwritable.standardError)")
    }

    @Test func aKilledRunLeavesWholeLinesAndTheResumeAppends() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 400, in: directory)
        let output = directory.appending("out.sqlite")
        let log = directory.appending("events.jsonl")
        let arguments = [
            "migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--chunk-size", "20", "--events", log.path, "--quiet",
        ]
        for point in ["after-rows:7", "after-sqlite-commit:13"] {
            let killed = try MoultProcess.run(arguments, environment: ["MOULT_FAULT": point])
            #expect(killed.terminatedBySignal, "\(point): \(killed.standardError)")
            let events = try Self.events(at: log)
            #expect(Self.kinds(events).contains("chunk"), "\(point)")
            #expect(!Self.kinds(events).contains("finished"), "\(point)")
            // The status of the killed run: interrupted, its process gone, its checkpoint read.
            let status = try MoultProcess.run(["status", output.path, "--json"])
            #expect(status.exitCode == 0, "\(status.standardError)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
            #expect(object["state"] as? String == "interrupted", "\(status.standardOutput)")
            let checkpoints = try #require(object["checkpoints"] as? [[String: Any]])
            #expect(checkpoints.count == 1 && (checkpoints[0]["done"] as? Int ?? 0) > 0, "\(checkpoints)")
        }
        let resumed = try MoultProcess.run(arguments)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let events = try Self.events(at: log)
        let last = try #require(events.last)
        #expect(last["event"] as? String == "finished" && last["resumed"] as? Bool == true, "\(last)")
        #expect(Self.kinds(events).filter { $0 == "plan" }.count == 3)
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult-status.json"))
        let status = try MoultProcess.run(["status", output.path])
        #expect(status.exitCode == 0 && status.standardOutput.contains("finished"), "\(status.standardOutput)")
        let nothing = try MoultProcess.run(["status", directory.appending("none.sqlite").path])
        #expect(nothing.exitCode == 65 && nothing.standardError.contains("none.sqlite"), "\(nothing.standardError)")
    }

    @Test func planWritesItsPlanAndWhatIsNotCarried() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (source, mapping) = try Self.droppingAge(in: directory, persons: 100)
        let result = try MoultProcess.run([
            "plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", mapping.path, "--chunk-size", "10", "--events", "-", "--json",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        // The --json document is one line too; the events are the others.
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let events = try Self.events(lines.filter { $0.contains("\"event\"") }.joined(separator: "\n") + "\n")
        #expect(Self.kinds(events) == ["plan", "warning", "finished"], "\(events)")
        let passes = try #require(events[0]["passes"] as? [[String: Any]])
        let persons = passes.first { $0["stage"] as? String == "create" && $0["mapping"] as? String == "PersonToPerson" }
        #expect(persons?["estimatedRows"] as? Int == 100 && persons?["chunks"] as? Int == 10, "\(passes)")
        #expect(events[0]["estimatedRows"] as? Int == passes.reduce(0) { $0 + ($1["estimatedRows"] as? Int ?? 0) })
        #expect(events[0]["chunks"] as? Int == passes.reduce(0) { $0 + ($1["chunks"] as? Int ?? 0) })
        #expect(events[2]["outcome"] as? String == "planned")
    }

    // MARK: - Pause, stop, pace

    /// Starts `moult` without waiting.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = MoultProcess.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits until the events file holds an event of this kind (or the process ended).
    static func wait(for kind: String, in log: URL, process: Process) throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: log, encoding: .utf8), text.contains("\"event\":\"\(kind)\"") { return true }
            if !process.isRunning { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsAPausedRunAtTheChunkBoundaryResumably(signal: Int32) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 200, in: directory)
        let output = directory.appending("out.sqlite")
        let log = directory.appending("events.jsonl")
        let pause = directory.appending("pause")
        try Data().write(to: pause)
        let arguments = [
            "migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--chunk-size", "20", "--events", log.path,
        ]
        let process = try Self.start(arguments + ["--pause-file", pause.path])
        #expect(try Self.wait(for: "paused", in: log, process: process))
        let status = try MoultProcess.run(["status", output.path])
        #expect(status.exitCode == 0 && status.standardOutput.contains("paused"), "\(status.standardOutput)")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 75)
        let events = try Self.events(at: log)
        // A pause file there from the start holds the run before its first chunk (issue 27).
        #expect(Self.kinds(events).filter { $0 == "chunk" }.count == 0, "stopped before the first chunk: \(Self.kinds(events))")
        let last = try #require(events.last)
        #expect(last["event"] as? String == "failed" && last["outcome"] as? String == "interrupted" && last["exitCode"] as? Int == 75, "\(last)")
        let after = try MoultProcess.run(["status", output.path])
        #expect(after.standardOutput.contains("interrupted"), "\(after.standardOutput)")

        try FileManager.default.removeItem(at: pause)
        let resumed = try MoultProcess.run(arguments + ["--pause-file", pause.path])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        #expect(try MigrateCommandTests.count(output, "SELECT COUNT(*) FROM ZPERSON") == 200)
    }

    @Test func removingThePauseFileLetsTheRunGoOn() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 100, in: directory)
        let output = directory.appending("out.sqlite")
        let log = directory.appending("events.jsonl")
        let pause = directory.appending("pause")
        try Data().write(to: pause)
        let process = try Self.start([
            "migrate", source.path, "--model", Self.model, "--to", "v2", "--output", output.path, "--chunk-size", "30", "--events", log.path,
            "--pause-file", pause.path, "--max-rate", "1000000",
        ])
        #expect(try Self.wait(for: "paused", in: log, process: process))
        try FileManager.default.removeItem(at: pause)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let kinds = Self.kinds(try Self.events(at: log))
        #expect(kinds.filter { $0 == "paused" }.count == 1 && kinds.filter { $0 == "resumed" }.count == 1, "\(kinds)")
        #expect(kinds.last == "finished")
        let paused = try #require(kinds.firstIndex(of: "paused"))
        #expect(kinds[..<paused].filter { $0 == "chunk" }.count == 0, "paused before the first chunk: \(kinds)")
    }

    @Test func maxRateIsCheckedAndPacesByTheObjectsDone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for bad in ["0", "-5", "nan"] {
            let result = try MoultProcess.run(["migrate", "s.sqlite", "--model", Self.model, "--output", "o.sqlite", "--max-rate", bad])
            #expect(result.exitCode == 64, "\(bad): \(result.standardError)")
        }
        // 1,000 objects at 100/s are due at 10 s: 4 s in, 6 s are left to wait; ahead of time, none.
        #expect(MigrationPacer.delay(done: 1_000, elapsed: .seconds(4), maxRate: 100) == .seconds(6))
        #expect(MigrationPacer.delay(done: 1_000, elapsed: .seconds(11), maxRate: 100) == .zero)
        #expect(MigrationPacer.delay(done: 0, elapsed: .zero, maxRate: 100) == .zero)

        // The pacer sleeps what the ceiling asks (a recorded sleep, no clock read by the test).
        nonisolated(unsafe) var slept: Duration = .zero
        let pacer = MigrationPacer(maxRate: 10, pauseFile: nil, emit: { _ in }, sleep: { slept += $0 })
        pacer.chunkCommitted(
            MigrationEvent.Chunk(
                step: 1, steps: 1, pass: 0, passes: 1, stage: .createObjects, mapping: "M", chunk: 0, chunks: 2, rows: 50, done: 50, total: 100,
                elapsed: 0, rate: 0, eta: nil))
        // What is left of the 5 s the 50 objects are due at: the exact figure depends on the clock between
        // the pacer's start and the chunk (delay(done:elapsed:maxRate:) above pins the arithmetic).
        #expect(slept > .zero && slept <= .seconds(5), "\(slept)")

        // The next step of a chain counts `done` from 0 again: its objects add to the earlier step's,
        // so 50 + 50 objects at 10/s are due at 10 s, not at 5 s.
        slept = .zero
        pacer.chunkCommitted(
            MigrationEvent.Chunk(
                step: 2, steps: 2, pass: 0, passes: 1, stage: .createObjects, mapping: "N", chunk: 0, chunks: 1, rows: 50, done: 50, total: 50,
                elapsed: 0, rate: 0, eta: nil))
        #expect(slept > .seconds(4), "\(slept)")
    }
}
