import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A migration killed at a named point (`MOULT_FAULT`, SIGKILL) resumes to the store an
/// uninterrupted run makes, byte for byte in every table and in the metadata (store UUID included).
///
/// A few points only, each on a small store: the crash harness covers every point at scale.
@Suite struct ResumeTests {
    /// A People migration through the CLI, with its arguments.
    struct Job {
        var directory: TemporaryDirectory
        var source: URL
        var mappings: [String]
        var target: String
        var extra: [String] = []
        /// The command: `moult-people` when the mappings name the People policies.
        var tool: MoultProcess.Tool = .moult

        func arguments(output: URL, chunkSize: Int = 20, mappings: [String]? = nil) -> [String] {
            var arguments = ["migrate", source.path, "--model", Fixtures.peopleModel.path, "--to", target]
            for mapping in mappings ?? self.mappings {
                arguments += ["--mapping", mapping.hasPrefix("/") ? mapping : Fixtures.datasets.appending(path: "People/Mappings/\(mapping).json").path]
            }
            return arguments + ["--output", output.path, "--chunk-size", String(chunkSize), "--quiet"] + extra
        }

        /// Runs to the end, uninterrupted, into `name`.
        func reference(_ name: String = "reference.sqlite") throws -> URL {
            let output = directory.appending(name)
            let result = try MoultProcess.run(arguments(output: output), tool: tool)
            #expect(result.exitCode == 0, "\(result.standardError)")
            return output
        }
    }

    static func job(_ from: String, persons: Int, mappings: [String], to target: String, extra: [String] = []) throws -> Job {
        let directory = try TemporaryDirectory()
        let source = try People.generate(from, persons: persons, in: directory)
        return Job(directory: directory, source: source, mappings: mappings, target: target, extra: extra)
    }

    /// (fault point and count, association table): kills in a chunk, between the two commits, after
    /// a commit, before the finish, after the finished marker and after the rename.
    static let faults: [(fault: String, association: String)] = [
        ("store-created:1", "lmdb"),
        ("chunk-start:5", "lmdb"),
        ("after-lmdb-commit:9", "lmdb"),
        ("after-sqlite-commit:13", "lmdb"),
        ("after-rows:7", "memory"),
        ("before-finish:1", "lmdb"),
        ("after-marker:1", "lmdb"),
        ("after-rename:1", "memory"),
    ]

    @Test(arguments: faults)
    func killedV4ToV5ResumesToTheSameStore(fault: String, association: String) throws {
        var job = try Self.job("v4", persons: 300, mappings: ["v4-to-v5"], to: "v5", extra: ["--association", association])
        job.tool = .people
        defer { job.directory.remove() }
        let before = try checksum(job.source)
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let work = URL(filePath: output.path + ".moult")

        let killed = try MoultProcess.run(job.arguments(output: output), tool: job.tool, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal && killed.exitCode == SIGKILL, "\(fault): exit \(killed.exitCode) \(killed.standardError)")
        #expect(FileManager.default.fileExists(atPath: work.path), "\(fault): the work directory remains")
        // Nothing at the output until the rename.
        #expect(FileManager.default.fileExists(atPath: output.path) == fault.hasPrefix("after-rename"), "\(fault)")

        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume", "--json"], tool: job.tool)
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: work.path), "\(fault): the work directory is removed")
        // The report counts the objects however little the resumed run had left to do.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.standardOutput.utf8)) as? [String: Any])
        // In-memory associations die with the process: before the finished marker, the run starts over.
        // Killed before the destination and its checkpoint were in place, the run starts over too.
        let continues = (association == "lmdb" && !fault.hasPrefix("store-created")) || fault.hasPrefix("after-marker")
            || fault.hasPrefix("after-rename")
        #expect(json["resumed"] as? Bool == continues, "\(fault)")
        let entities = try #require(json["entities"] as? [String: Int], "\(fault)")
        let adults = try ObjectGraph(job.source, model: People.version("v4")).counts["Adult"]
        #expect(entities["Adult"] == adults, "\(fault): \(entities)")
        try expectIdentical(reference, output, "\(fault)")
        try checkV5Counts(output, source: job.source)
        #expect(try checksum(job.source) == before)
    }

    /// `--durable` (an fsync per chunk) changes no result: a durable run killed mid-way resumes, even
    /// without the flag, to the store of a plain uninterrupted run.
    @Test func durableRunKilledResumesToTheSameStore() throws {
        let job = try Self.job("v3", persons: 200, mappings: ["v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(
            job.arguments(output: output) + ["--durable"], environment: ["MOULT_FAULT": "after-lmdb-commit:6"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        try expectIdentical(reference, output, "durable")
    }

    /// The plan has a table of its own, so that each chunk's move of the position rewrites a small
    /// row; a checkpoint an older build wrote (the plan in the position's row, no plan table) still
    /// resumes to the store of an uninterrupted run.
    @Test func aCheckpointWithThePlanInItsOwnRowResumes() throws {
        let job = try Self.job("v3", persons: 200, mappings: ["v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(job.arguments(output: output), environment: ["MOULT_FAULT": "after-sqlite-commit:6"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let partial = URL(filePath: output.path + ".moult").appending(path: "destination.sqlite")
        do {
            let database = try Database(url: partial, mode: .readWrite)
            defer { database.close() }
            #expect(try database.scalar("SELECT length(Z_PLAN) FROM Z_MOULT_CHECKPOINT") == .int(0))
            #expect(try database.scalar("SELECT length(Z_PLAN) > 0 FROM Z_MOULT_CHECKPOINT_PLAN") == .int(1))
            try database.executeScript(
                "UPDATE Z_MOULT_CHECKPOINT SET Z_PLAN = (SELECT Z_PLAN FROM Z_MOULT_CHECKPOINT_PLAN); DROP TABLE Z_MOULT_CHECKPOINT_PLAN")
        }
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume", "--json"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.standardOutput.utf8)) as? [String: Any])
        #expect(json["resumed"] as? Bool == true)
        try expectIdentical(reference, output, "older checkpoint")
    }

    /// A chain whose first step is made by SQL (a copy of the source migrated in one transaction),
    /// killed after the copy, inside the step's transaction, after its commit, or after the rename,
    /// resumes to the store of an uninterrupted chain; the source is never written.
    @Test(arguments: ["chain-step-copied:1", "inplace-statement:1", "chain-step-migrated:1", "chunk-start:3"])
    func killedChainWithAnSQLStepResumes(fault: String) throws {
        let job = try Self.job("v1", persons: 150, mappings: ["v2-to-v3"], to: "v3")
        defer { job.directory.remove() }
        let before = try checksum(job.source)
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(job.arguments(output: output), environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): \(killed.standardError)")
        let steps = URL(filePath: output.path + ".moult-steps")
        let intermediate = steps.appending(path: "step-1-v2.sqlite")
        #expect(FileManager.default.fileExists(atPath: intermediate.path) == fault.hasPrefix("chunk-start"), "\(fault)")
        #expect(!FileManager.default.fileExists(atPath: output.path), "\(fault)")
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: steps.path), "\(fault)")
        try expectIdentical(reference, output, "\(fault)")
        #expect(try checksum(job.source) == before)
    }

    /// A chain killed in its second step resumes in that step; the result equals an uninterrupted chain.
    @Test func killedProgressiveChainResumesInItsStep() throws {
        let job = try Self.job("v2", persons: 200, mappings: ["v2-to-v3", "v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        // Step 1 (v2 → v3) commits 2 passes × 10 chunks × 2 mappings = 40 chunks; the 50th commit is in step 2.
        let killed = try MoultProcess.run(job.arguments(output: output, chunkSize: 20), environment: ["MOULT_FAULT": "after-sqlite-commit:50"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let steps = URL(filePath: output.path + ".moult-steps")
        let intermediates = try FileManager.default.contentsOfDirectory(atPath: steps.path)
        #expect(intermediates.contains("step-1-v3.sqlite"), "\(intermediates)")
        #expect(FileManager.default.fileExists(atPath: output.path + ".moult"), "step 2's work directory")

        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume", "--json"], tool: job.tool)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.standardOutput.utf8)) as? [String: Any])
        #expect(json["resumed"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: steps.path))
        try expectIdentical(reference, output, "chain")
    }

    /// A chain killed between its steps (after step 1's rename, after step 2's finished marker)
    /// resumes to the same store.
    @Test(arguments: ["after-rename:1", "after-marker:2", "after-rename:2"])
    func chainKilledBetweenStepsResumes(fault: String) throws {
        let job = try Self.job("v2", persons: 100, mappings: ["v2-to-v3", "v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(job.arguments(output: output), tool: job.tool, environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): \(killed.standardError)")
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        try expectIdentical(reference, output, fault)
        let left = try FileManager.default.contentsOfDirectory(atPath: job.directory.url.path).sorted()
        #expect(left == [job.source.lastPathComponent, "reference.sqlite", "resumed.sqlite"].sorted(), "\(fault): \(left)")
    }

    /// A chain killed after its first step finished, then its source edited (one value, the file's size
    /// and keys unchanged): the rerun does not go on from the intermediate store made from the old
    /// state (that would give an output of no state the source had). It is refused with 65, the work
    /// kept; `moult abandon` removes it, and the run then makes the edited source's output.
    @Test func aChainIsNotResumedFromIntermediatesOfAnotherStateOfItsSource() throws {
        let job = try Self.job("v2", persons: 100, mappings: ["v2-to-v3", "v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let output = job.directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(job.arguments(output: output), tool: job.tool, environment: ["MOULT_FAULT": "after-rename:1"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let steps = URL(filePath: output.path + ".moult-steps")
        // (Killed right after step 1's rename: its result is there, not yet recorded.)
        #expect(FileManager.default.fileExists(atPath: steps.appending(path: "step-1-v3.sqlite").path))

        let database = try Database(url: job.source, mode: .readWrite)
        try database.write { try database.execute("UPDATE ZPERSON SET ZNAME = 'Edited' WHERE Z_PK = 7") }
        database.close()
        let refused = try MoultProcess.run(job.arguments(output: output) + ["--resume"], tool: job.tool)
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("changed since the interrupted run"), "\(refused.standardError)")
        #expect(FileManager.default.fileExists(atPath: steps.path), "the work is kept for the user to give up")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let abandoned = try MoultProcess.run(["abandon", output.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        let rerun = try MoultProcess.run(job.arguments(output: output), tool: job.tool)
        #expect(rerun.exitCode == 0, "\(rerun.standardError)")
        try expectIdentical(try job.reference(), output, "edited source")
        let check = try Database(url: output, mode: .readOnly)
        defer { check.close() }
        #expect(try check.scalar("SELECT COUNT(*) FROM ZPERSON WHERE ZNAME = 'Edited'") == .int(1), "the edit is in the output")
    }

    /// A chain killed in its last step, after the step before it finished and its input was removed:
    /// the rerun goes on from the recorded intermediate store, without the store it was made from.
    @Test func aRecordedIntermediateIsResumedWithoutItsInput() throws {
        let job = try Self.job("v1", persons: 120, mappings: ["v2-to-v3", "v3-to-v4"], to: "v4")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        // Step 1 (v1 → v2, by SQL), step 2 (v2 → v3), step 3 (v3 → v4): killed in step 3, its store just made.
        let killed = try MoultProcess.run(
            job.arguments(output: output, chunkSize: 20), tool: job.tool, environment: ["MOULT_FAULT": "store-created:2"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        let steps = URL(filePath: output.path + ".moult-steps")
        let left = try FileManager.default.contentsOfDirectory(atPath: steps.path).sorted()
        #expect(left.contains("step-2-v3.sqlite") && left.contains("step-2-v3.sqlite.finished"), "\(left)")
        #expect(!left.contains("step-1-v2.sqlite"), "step 1's result is removed once step 2's is recorded: \(left)")
        let resumed = try MoultProcess.run(job.arguments(output: output, chunkSize: 20) + ["--resume"], tool: job.tool)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        try expectIdentical(reference, output, "recorded intermediate")
        #expect(!FileManager.default.fileExists(atPath: steps.path))
    }

    /// A work directory left by a run with another chunk size or another mapping is refused (exit 65,
    /// the work directory named, kept); the original arguments then resume it.
    @Test func aCheckpointOfAnotherPlanIsRefused() throws {
        let job = try Self.job("v2", persons: 200, mappings: ["v2-to-v3"], to: "v3")
        defer { job.directory.remove() }
        let reference = try job.reference()
        let output = job.directory.appending("resumed.sqlite")
        let work = output.path + ".moult"
        let killed = try MoultProcess.run(job.arguments(output: output), environment: ["MOULT_FAULT": "after-sqlite-commit:3"])
        #expect(killed.terminatedBySignal)

        // Another mapping: the same file with the address filter narrowed.
        let original = try String(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json"), encoding: .utf8)
        let narrowed = original.replacingOccurrences(of: "street != nil OR state != nil", with: "street != nil")
        #expect(narrowed != original)
        let otherMapping = job.directory.appending("narrowed.json")
        try narrowed.write(to: otherMapping, atomically: true, encoding: .utf8)

        for (label, arguments) in [
            ("chunk size", job.arguments(output: output, chunkSize: 30)),
            ("mapping", job.arguments(output: output, mappings: [otherMapping.path])),
        ] {
            let refused = try MoultProcess.run(arguments + ["--resume"])
            #expect(refused.exitCode == 65, "\(label): \(refused.standardError)")
            #expect(refused.standardError.contains("moult: error:"), "\(label)")
            #expect(refused.standardError.contains(work), "\(label): names the work directory: \(refused.standardError)")
            #expect(refused.standardError.contains("checkpoint mismatch"), "\(label): \(refused.standardError)")
            #expect(FileManager.default.fileExists(atPath: work), "\(label): the checkpoint is kept")
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
        let resumed = try MoultProcess.run(job.arguments(output: output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        try expectIdentical(reference, output, "resumed after refusals")
    }

    private func checkV5Counts(_ output: URL, source: URL) throws {
        let sourceGraph = try ObjectGraph(source, model: People.version("v4"))
        let graph = try ObjectGraph(output, model: People.version("v5"))
        #expect(graph.counts["Adult"] == sourceGraph.counts["Adult"])
        #expect(graph.counts["Child"] == sourceGraph.counts["Child"])
        #expect(graph.counts["Company"] == Set(sourceGraph.objects("Adult").compactMap { $0["companyName"]?.text }).count)
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph))
    }
}
