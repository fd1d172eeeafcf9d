import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// `moult migrate --manifest FILE --shard I/N` and `moult fleet report`, run by GNU parallel.
@Suite struct FleetCommandTests {
    static let model = Fixtures.peopleModel.path

    /// `count` copies of one small v1 store and a manifest migrating each to v2.
    static func fleet(_ count: Int, in directory: TemporaryDirectory) throws -> URL {
        let seed = try MigrateCommandTests.generate("1", persons: 20, in: directory, name: "seed.sqlite")
        let manager = FileManager.default
        try manager.createDirectory(at: directory.appending("stores"), withIntermediateDirectories: true)
        try manager.createDirectory(at: directory.appending("out"), withIntermediateDirectories: true)
        var lines: [String] = []
        for index in 0..<count {
            try manager.copyItem(at: seed, to: directory.appending("stores/s\(index).sqlite"))
            lines.append("{\"store\":\"stores/s\(index).sqlite\",\"model\":\"\(model)\",\"to\":\"v2\",\"output\":\"out/s\(index).sqlite\"}")
        }
        let manifest = directory.appending("fleet.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: manifest, atomically: true, encoding: .utf8)
        return manifest
    }

    /// Runs a shell command line (GNU parallel).
    static func shell(_ script: String, environment: [String: String] = [:]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func results(_ manifest: URL) throws -> [[String: Any]] {
        let text = try String(contentsOf: URL(filePath: manifest.path + ".results.jsonl"), encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/parallel"), "GNU parallel is installed by `make deps`"))
    func gnuParallelMigratesEveryStoreExactlyOnceThroughAKilledShard() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(200, in: directory)
        let moult = MoultProcess.executable.path
        let command = "\(moult) migrate --manifest \(manifest.path) --shard {}/4 --chunk-size 5 --quiet"
        // Shard 2 kills itself at its 40th chunk commit (in its 5th store); the others finish.
        let killed = try Self.shell(
            "parallel --will-cite -j4 'if [ {} = 2 ]; then MOULT_FAULT=after-sqlite-commit:40 \(command); else \(command); fi' ::: 0 1 2 3")
        #expect(killed != 0)
        let partial = try Self.results(manifest)
        #expect(partial.count < 200 && partial.count >= 150, "\(partial.count)")
        #expect(partial.allSatisfy { $0["outcome"] as? String == "migrated" })

        // The whole command again: every shard skips what is done, shard 2 resumes its store.
        #expect(try Self.shell("parallel --will-cite -j4 '\(command)' ::: 0 1 2 3") == 0)
        let results = try Self.results(manifest)
        #expect(results.count == 200)
        let stores = results.compactMap { $0["store"] as? String }
        #expect(Set(stores).count == 200, "every store has exactly one line")
        #expect(results.allSatisfy { $0["outcome"] as? String == "migrated" && $0["exitCode"] as? Int == 0 })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.appending("out").path).filter { $0.contains(".moult") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        for index in [0, 9, 10, 14, 199] {
            #expect(try MigrateCommandTests.count(directory.appending("out/s\(index).sqlite"), "SELECT COUNT(*) FROM ZPERSON") == 20)
        }

        let report = try MoultProcess.run(["fleet", "report", manifest.path + ".results.jsonl", "--json"])
        #expect(report.exitCode == 0, "\(report.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8)) as? [String: Any])
        #expect(object["stores"] as? Int == 200 && object["lines"] as? Int == 200)
        #expect((object["outcomes"] as? [String: Int]) == ["migrated": 200, "already-migrated": 0, "already-current": 0, "failed": 0])
        let seconds = try #require(object["seconds"] as? [String: Double])
        #expect((seconds["p50"] ?? -1) >= 0 && (seconds["p50"] ?? 0) <= (seconds["p100"] ?? 0))
    }

    @Test func failuresAreResultsAndARetryMakesThemDone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(4, in: directory)
        // Store 1 is not a store; store 3's model does not exist.
        let good = try Data(contentsOf: directory.appending("stores/s1.sqlite"))
        try Data("not a store".utf8).write(to: directory.appending("stores/s1.sqlite"))
        var text = try String(contentsOf: manifest, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        text = (lines.dropLast() + [lines[3].replacingOccurrences(of: Self.model, with: "none.xcdatamodeld")]).joined(separator: "\n") + "\n"
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let first = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "0/1"])
        #expect(first.exitCode != 0, "\(first.standardError)")
        var results = try Self.results(manifest)
        #expect(results.count == 4)
        let failed = results.filter { $0["outcome"] as? String == "failed" }.compactMap { $0["store"] as? String }.sorted()
        #expect(failed == ["stores/s1.sqlite", "stores/s3.sqlite"], "\(results)")
        #expect(results.allSatisfy { ($0["outcome"] as? String == "failed") == (($0["exitCode"] as? Int ?? 0) != 0) })
        let text1 = try MoultProcess.run(["fleet", "report", manifest.path + ".results.jsonl"])
        #expect(text1.standardOutput.contains("2 migrated, 0 already migrated, 0 already current, 2 failed"), "\(text1.standardOutput)")
        #expect(text1.standardOutput.contains("FAILED stores/s1.sqlite"), "\(text1.standardOutput)")

        // Fixed, run again: only the failed stores run; the store already at v2 is already current.
        try good.write(to: directory.appending("stores/s1.sqlite"))
        try FileManager.default.copyItem(at: directory.appending("out/s0.sqlite"), to: directory.appending("stores/s3-v2.sqlite"))
        text = text.replacingOccurrences(of: "\"stores/s3.sqlite\"", with: "\"stores/s3-v2.sqlite\"").replacingOccurrences(of: "none.xcdatamodeld", with: Self.model)
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let second = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path, "--shard", "1", "--quiet"], environment: ["SLURM_ARRAY_TASK_ID": "0"])
        #expect(second.exitCode == 0, "\(second.standardError)")
        results = try Self.results(manifest)
        #expect(results.count == 6, "\(results)")
        let report = try MoultProcess.run(["fleet", "report", manifest.path + ".results.jsonl"])
        #expect(report.standardOutput.contains("5 stores (6 result lines): 3 migrated, 0 already migrated, 1 already current, 1 failed"), "\(report.standardOutput)")
    }

    @Test func aStoreWithoutOutputIsMigratedInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(3, in: directory)
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: ",\"output\":\"out/s1.sqlite\"", with: "")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let result = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "0/1", "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(try Self.results(manifest).map { $0["outcome"] as? String } == ["migrated", "migrated", "migrated"])
        let inspect = try MoultProcess.run(["inspect", directory.appending("stores/s1.sqlite").path, "--model", Self.model, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(inspect.standardOutput.utf8)) as? [String: Any])
        #expect(object["matchingVersion"] as? String == "v2", "\(inspect.standardOutput)")
        // Run again: everything is done.
        let again = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "0/1"])
        #expect(again.exitCode == 0 && again.standardError.contains("3 done before"), "\(again.standardError)")
        #expect(try Self.results(manifest).count == 3)
    }

    @Test func badManifestsAndShardsAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = directory.appending("m.jsonl")
        for (line, problem) in [("{\"store\": \"a.sqlite\"}", "\"model\""), ("[1]", "not a JSON object"), ("{\"store\":\"a\",\"model\":\"m\",\"mapping\":[]}", "unknown key 'mapping'")] {
            try ("\n" + line + "\n").write(to: manifest, atomically: true, encoding: .utf8)
            let result = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "0/2"])
            #expect(result.exitCode == 65 && result.standardError.contains("m.jsonl:2: ") && result.standardError.contains(problem), "\(result.standardError)")
        }
        try "{\"store\":\"a\",\"model\":\"m\"}\n".write(to: manifest, atomically: true, encoding: .utf8)
        for shard in ["2/2", "x", "1/0", "-1/3"] {
            let result = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", shard])
            #expect(result.exitCode == 64, "\(shard): \(result.standardError)")
        }
        let indexed = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "3"], environment: ["JOB_COMPLETION_INDEX": "1"])
        #expect(indexed.exitCode == 0, "shard 1 of 3 has no line of a one-line manifest: \(indexed.standardError)")
        let missing = try MoultProcess.run(["migrate", "--manifest", directory.appending("none.jsonl").path])
        #expect(missing.exitCode == 74)
    }

    /// `--manifest` is an option of `migrate` itself: STORE and the per-store options are refused
    /// beside it (64, naming them), and one of STORE or --manifest is needed.
    @Test func manifestIsAnOptionOfMigrateWithoutStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(2, in: directory)
        let store = directory.appending("stores/s0.sqlite").path
        let cases: [([String], String)] = [
            (["migrate", store, "--manifest", manifest.path], "STORE cannot be given with it"),
            (["migrate", "--manifest", manifest.path, "--model", Self.model, "--output", directory.appending("x.sqlite").path], "--model, --output cannot be given with it"),
            (["migrate", "--manifest", manifest.path, "--to", "v2", "--durable"], "--to, --durable cannot be given with it"),
            (["migrate", "--model", Self.model], "Missing expected argument '<store>'"),
            (["migrate", store], "Missing expected argument '--model <model>'"),
            (["migrate", store, "--model", Self.model, "--shard", "0/2"], "--shard needs --manifest"),
            (["plan", "--model", Self.model], "Missing expected argument '<store>'"),
            (["verify", store, "--model", Self.model], "Missing expected argument"),
        ]
        for (arguments, message) in cases {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 64 && result.standardError.contains(message), "\(arguments): \(result.exitCode) \(result.standardError)")
        }
        // Nothing was migrated or written by the refusals.
        #expect(!FileManager.default.fileExists(atPath: manifest.path + ".results.jsonl"))

        let help = try MoultProcess.run(["help", "migrate"])
        #expect(help.standardOutput.contains("--manifest <manifest>") && help.standardOutput.contains("--shard <I/N>"), "\(help.standardOutput)")
        // `--manifest=FILE`, the shard from Slurm's environment, the chunk size: a real option, parsed as one.
        let run = try MoultProcess.run(["migrate", "--chunk-size", "7", "--manifest=\(manifest.path)", "--shard", "2", "--quiet"], environment: ["SLURM_ARRAY_TASK_ID": "1"])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(try Self.results(manifest).map { $0["store"] as? String } == ["stores/s1.sqlite"])
        let alias = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path, "--shard", "0/2", "--quiet"])
        #expect(alias.exitCode == 0, "\(alias.standardError)")
        #expect(try Self.results(manifest).map { $0["outcome"] as? String } == ["migrated", "migrated"])
        #expect(FileManager.default.fileExists(atPath: directory.appending("out/s0.sqlite").path))
    }

    /// `migrate --manifest` reads its command line as `fleet migrate` does: any option of `migrate` that
    /// `fleet migrate` does not take is refused (64), named, hidden ones and those a list of refusals
    /// would have to remember too; both refuse a chunk size below 1.
    @Test func migrateWithManifestTakesWhatFleetMigrateTakes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(1, in: directory)
        let refused = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--page-cache", "128", "--profile", "--max-value-size=10"])
        #expect(refused.exitCode == 64, "\(refused.standardError)")
        #expect(refused.standardError.contains("--page-cache, --profile, --max-value-size cannot be given with it"), "\(refused.standardError)")
        for command in [["migrate"], ["fleet", "migrate"]] {
            let result = try MoultProcess.run(command + ["--manifest", manifest.path, "--chunk-size", "0"])
            #expect(result.exitCode == 64 && result.standardError.contains("--chunk-size must be at least 1"), "\(command): \(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: manifest.path + ".results.jsonl"), "nothing was migrated")
    }

    /// A manifest line's `mappings` takes folders as `--mapping` does: each store's steps find theirs.
    @Test func manifestMappingsMayBeFolders() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(2, in: directory)
        let folder = Fixtures.datasets.appending(path: "People/Mappings").path
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "\"to\":\"v2\"", with: "\"to\":\"v3\",\"mappings\":[\"\(folder)/\"]")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try MoultProcess.run(["migrate", "--manifest", manifest.path])
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(try Self.results(manifest).map { $0["outcome"] as? String } == ["migrated", "migrated"])
        let verify = try MoultProcess.run([
            "verify", directory.appending("stores/s1.sqlite").path, directory.appending("out/s1.sqlite").path, "--model", Self.model, "--to", "v3",
            "--mapping", folder,
        ])
        #expect(verify.exitCode == 0, "\(verify.standardOutput)\(verify.standardError)")
    }

    /// A store done for one request is migrated again when its manifest line asks for another version
    /// or destination; run again unchanged, it is skipped.
    @Test func aStoreWhoseLineChangedIsMigratedAgain() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(1, in: directory)
        let first = try MoultProcess.run(["migrate", "--manifest", manifest.path])
        #expect(first.exitCode == 0, "\(first.standardError)")
        let folder = Fixtures.datasets.appending(path: "People/Mappings").path
        let text = try String(contentsOf: manifest, encoding: .utf8)
            .replacingOccurrences(of: "\"to\":\"v2\"", with: "\"to\":\"v3\",\"mappings\":[\"\(folder)/\"]")
            .replacingOccurrences(of: "out/s0.sqlite", with: "out/s0-v3.sqlite")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let second = try MoultProcess.run(["migrate", "--manifest", manifest.path])
        #expect(second.exitCode == 0, "\(second.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.appending("out/s0-v3.sqlite").path))
        #expect(try Self.results(manifest).map { $0["outcome"] as? String } == ["migrated", "migrated"])
        let third = try MoultProcess.run(["migrate", "--manifest", manifest.path])
        #expect(third.exitCode == 0 && third.standardError.contains("1 done before"), "\(third.standardError)")
        #expect(try Self.results(manifest).count == 2)
    }
}

extension FleetCommandTests {
    /// Issue 21's fleet case: a store another run holds (a shard's earlier run still going, here this
    /// test process holding its destination's lock) is skipped by the shard that meets it, reported busy
    /// (73) and given no result line; the others are migrated. Run again once it is free, the fleet ends
    /// with every store migrated once.
    @Test func aBusyStoreIsSkippedAndPickedUpByTheNextRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manifest = try Self.fleet(12, in: directory)
        let held = directory.appending("out/s3.sqlite")
        let lock = try RunLock.acquire(for: held, purpose: "migrating into it")
        var exits: [Int32] = []
        var errors = ""
        for shard in 0..<2 {
            let run = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "\(shard)/2", "--chunk-size", "5"])
            exits.append(run.exitCode)
            errors += run.standardError
        }
        #expect(exits.sorted() == [0, 73], "\(exits): \(errors)")
        #expect(errors.contains("stores/s3.sqlite: skipped, busy") && errors.contains("1 busy"), "\(errors)")
        let first = try Self.results(manifest)
        #expect(first.count == 11 && !first.contains { $0["store"] as? String == "stores/s3.sqlite" })
        #expect(!FileManager.default.fileExists(atPath: held.path))

        lock.release()
        for shard in 0..<2 {
            let run = try MoultProcess.run(["migrate", "--manifest", manifest.path, "--shard", "\(shard)/2", "--chunk-size", "5"])
            #expect(run.exitCode == 0, "\(run.standardError)")
        }
        let results = try Self.results(manifest)
        #expect(results.count == 12 && Set(results.compactMap { $0["store"] as? String }).count == 12, "every store once")
        #expect(results.allSatisfy { $0["outcome"] as? String == "migrated" })
        #expect(try MigrateCommandTests.count(held, "SELECT COUNT(*) FROM ZPERSON") == 20)
    }
}
