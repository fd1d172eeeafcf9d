import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import Synchronization

/// `moult migrate STORE --model M [--to V] [--mapping F]… --output DEST …`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to another version of its model, in chunks, resumably.",
        // STORE and --model are optional to the parser only (see MigrationArguments).
        usage: "moult migrate <store> --model <model> [<options>]\nmoult migrate --manifest <manifest> [--shard <I/N>] [--chunk-size <n>] [--quiet]",
        discussion: """
            The store's version is found by its entity hashes. Each step to the target version uses a mapping \
            given with --mapping for it, or the inferred (lightweight) one. The destination is built in \
            DEST.moult/ and moved to DEST only when complete and valid; the source is never modified.

            A run that stops (killed, Ctrl-C, disk full: exit code 75) resumes from its last chunk when run \
            again with the same arguments (--resume says so explicitly); the result is identical to a run \
            never interrupted. Set MOULT_FAULT=<point>:<n> to make the process kill itself at a named point \
            (testing only).

            Without --output, STORE is migrated in place, as Core Data's default migration does: lightweight \
            steps by SQL alone in one transaction each, other steps streamed into .STORE.moult-inplace/ and \
            swapped in atomically; the original is kept as NAME~.EXT unless --no-backup. `moult plan` says \
            which step runs how.

            With --manifest FILE [--shard I/N] (and no STORE), migrates shard I of N of a fleet of stores \
            listed in FILE, as `moult fleet migrate` does (see `moult help fleet migrate`).
            """
    )

    @OptionGroup var arguments: MigrationArguments

    @Option(name: .customLong("output"), help: "The destination store (must not exist). Without it, STORE is migrated in place.")
    var outputOption: String?
    var output: String { outputOption ?? "" }

    @Flag(help: "In place: keep no NAME~.EXT copy of the original.")
    var noBackup = false

    @Flag(help: "In place: leave dropping columns and tables and building new indexes for `moult finish`.")
    var deferCleanup = false

    @Flag(help: "Resume an interrupted run (automatic when its work directory is found); an output that is already this migration's finished store is then accepted as done.")
    var resume = false

    @Flag(help: "Sync every chunk to disk so that even a power loss leaves a resumable state (slower).")
    var durable = false

    @Flag(help: "Skip stage 3 (the destination model's rules).")
    var noValidation = false

    @Flag(help: "Stop validation at the first failure.")
    var stopAtFirstFailure = false

    @Flag(help: "Print the final report as JSON.")
    var json = false

    @Flag(help: "No progress display.")
    var quiet = false

    @OptionGroup var events: EventOptions
    @OptionGroup var control: ControlOptions

    @Option(help: "A fleet's manifest (JSON Lines, one store per line): migrate one shard of it instead of STORE.")
    var manifest: String?

    @Option(help: ArgumentHelp("With --manifest: this shard's index (from 0) and the number of shards; or N, the index from the environment.", valueName: "I/N"))
    var shard: String?

    func validate() throws {
        guard manifest != nil else {
            if shard != nil { throw ValidationError("--shard needs --manifest") }
            if arguments.storeArgument == nil {
                throw ValidationError("Missing expected argument '<store>' (or --manifest FILE, for a fleet of stores)")
            }
            try arguments.requireStoreAndModel()
            return
        }
        // The manifest names each store's model, version, mappings and output.
        let given: [(Bool, String)] = [
            (arguments.storeArgument != nil, "STORE"), (arguments.modelOption != nil, "--model"), (arguments.to != nil, "--to"),
            (!arguments.mappings.isEmpty, "--mapping"), (outputOption != nil, "--output"), (events.path != nil, "--events"),
            (control.maxRate != nil, "--max-rate"), (control.pauseFile != nil, "--pause-file"), (json, "--json"),
            (!arguments.partitions.isEmpty, "--partition"), (!arguments.policyBindings.isEmpty, "--policy"), (arguments.stages != nil, "--stages"),
            (arguments.sourceModel != "model", "--source-model"), (arguments.association != "lmdb", "--association"),
            (arguments.noBulkSQL, "--no-bulk-sql"), (noBackup, "--no-backup"), (deferCleanup, "--defer-cleanup"), (resume, "--resume"),
            (durable, "--durable"), (noValidation, "--no-validation"), (stopAtFirstFailure, "--stop-at-first-failure"),
        ]
        let refused = given.filter(\.0).map(\.1)
        if !refused.isEmpty {
            throw ValidationError(
                "--manifest migrates each store as its manifest line says (with --chunk-size and --quiet only): \(refused.joined(separator: ", ")) cannot be given with it")
        }
    }

    func run() async throws {
        if let manifest {
            return try await FleetShardRun(manifest: manifest, shard: shard ?? "0/1", chunkSize: arguments.chunkSize, quiet: quiet).run()
        }
        if arguments.stages != nil { return try await runStaged() }
        if outputOption == nil { return try await runInPlace() }
        try checkInPlaceFlagsUnused()
        try await withEventLog { log in try migrate(log: log) }
    }

    /// Runs `body` with the `--events` log open (nil without `--events`); a failure ends the stream
    /// with `failed` (once: a run whose own events ended it is not written twice) and is reported
    /// with its exit code.
    func withEventLog(_ body: (EventLog?) throws -> Void) async throws {
        try await reportingFailures {
            let log = try events.open()
            do {
                try body(log)
            } catch {
                log?.fail(error)
                throw error
            }
        }
    }

    private func migrate(log: EventLog?) throws {
        do {
            let migration = try arguments.migration(durable: durable, validate: !noValidation, stopAtFirst: stopAtFirstFailure)
            let output = URL(filePath: self.output)
            if migration.isUpToDate {
                // Success: a batch job run again finds its work done.
                log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
                if log?.toStandardOutput == true {
                    // The events on standard output end with `finished`, which says so.
                } else if json {
                    print(
                        "{\"output\":\(JSONText.string(self.output)),\"written\":false,\"from\":\(JSONText.string(migration.sourceVersion.name)),\"to\":\(JSONText.string(migration.targetVersion.name)),"
                            + "\"nothingToMigrate\":true,\"steps\":[]}")
                } else {
                    print("the store \(arguments.store) is already at version \(migration.targetVersion.name): nothing to migrate, nothing written")
                }
                return
            }
            if resume, !FileManager.default.fileExists(atPath: output.path), !FileManager.default.fileExists(atPath: output.path + ".moult"),
                !FileManager.default.fileExists(atPath: migration.stepsDirectory(for: output).path)
            {
                printError("moult: nothing to resume for \(self.output); starting")
            }
            Interruption.install()
            let display = ProgressDisplay(enabled: !quiet && !json)
            let start = ContinuousClock.now
            let losses = LossLog()
            let status = StatusFile(output: output)
            let pacer = MigrationPacer(
                maxRate: control.maxRate, pauseFile: control.pauseFile.map { URL(filePath: $0) }, isCancelled: { Interruption.requested },
                emit: { event in
                    // The status file first: a reader that saw the event's line finds the status it set.
                    status.record(event)
                    log?.write(event)
                    display.show(event)
                })
            // Every rendering (progress line, --events, the status file, pacing) reads the one stream.
            let reports = try migration.run(
                output: output, resume: resume, isCancelled: { Interruption.requested },
                losses: { index, found in
                    losses.record(index, found)
                    for warning in StepReport.warnings(index - 1, migration.steps[index - 1], losses: found) {
                        display.finish()
                        printError(warning)
                    }
                },
                events: { event in
                    // The status file first: a reader that saw the event's line finds the status it set.
                    status.record(event)
                    log?.write(event)
                    display.show(event)
                    if case .chunk(let chunk) = event, pacer.isActive { pacer.chunkCommitted(chunk) }
                    // (The losses are said above, from `losses`.)
                    display.warn(event)
                })
            // Steps an earlier run finished: listed, not counted.
            let stepLosses = migration.steps.enumerated().map { index, step in
                losses.found[index + 1] ?? migration.dataLosses(of: step, in: nil)
            }
            display.finish()
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            var counts: [String: Int] = [:]
            for report in reports { counts = report.objectCounts }
            let resumed = reports.contains(where: \.resumed)
            if log?.toStandardOutput == true {
                // The events on standard output end with `finished`, which carries the report.
            } else if json {
                let entities = counts.sorted { $0.key < $1.key }.map { "\(JSONText.string($0.key)):\($0.value)" }
                let steps = migration.steps.enumerated().map { StepReport.json($1, losses: stepLosses[$0]) }
                print(
                    "{\"output\":\(JSONText.string(self.output)),\"from\":\(JSONText.string(migration.sourceVersion.name)),"
                        + "\"to\":\(JSONText.string(migration.targetVersion.name)),\"steps\":[\(steps.joined(separator: ","))],"
                        + "\"resumed\":\(resumed),\"seconds\":\(String(format: "%.3f", seconds)),\"entities\":{\(entities.joined(separator: ","))}}")
            } else {
                let summary = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print(
                    "migrated \(arguments.store) (\(migration.sourceVersion.name)) to \(migration.targetVersion.name) in \(self.output)"
                        + "\(resumed ? " (resumed)" : ""), \(migration.steps.count) step(s), \(String(format: "%.1f", seconds)) s")
                if !summary.isEmpty { print("objects: \(summary)") }
                for (index, step) in migration.steps.enumerated() {
                    print(StepReport.line(index, step))
                    for line in StepReport.details(step, losses: stepLosses[index]) { print(line) }
                }
                if reports.isEmpty { print("the output was already the finished result of this migration: nothing left to do") }
            }
        }
    }
}

/// What each step did not carry, as the migration reports it.
final class LossLog: @unchecked Sendable {
    private(set) var found: [Int: [DataLoss]] = [:]
    func record(_ step: Int, _ losses: [DataLoss]) { found[step] = losses }
}

/// Ctrl-C and SIGTERM ask the migration to stop at the next chunk boundary (exit code 75, resumable).
enum Interruption {
    private static let flag = Atomic<Bool>(false)

    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            Interruption.flag.store(true, ordering: .relaxed)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
    }
}

/// A live progress line on standard error: step, stage, mapping, objects, rate, ETA.
final class ProgressDisplay: @unchecked Sendable {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let start = ContinuousClock.now
    private var last = ContinuousClock.now - .seconds(10)
    private var lastMapping: String?
    private var wroteLine = false

    init(enabled: Bool) { self.enabled = enabled }

    /// Renders an event: a chunk as the progress line (at most every 200 ms on a terminal, 5 s
    /// otherwise, and at each new mapping); a pause and its end as a line of their own.
    func show(_ event: MigrationEvent) {
        guard enabled else { return }
        switch event {
        case .chunk(let chunk): show(chunk)
        case .staged(let staged):
            write(
                "[stage \(staged.stage)/\(staged.stages)] \(staged.activity)" + (staged.objects > 0 ? "  \(staged.objects) objects" : ""),
                startsAPart: staged.activity != lastMapping)
            lastMapping = staged.activity
        case .paused(let paused):
            finish()
            FileHandleWriter.standardError("moult: \(paused.paused ? "paused" : "resumed"): \(paused.reason)\n")
        default: break
        }
    }

    /// Renders a progress report of a run that has no event stream (in place).
    func show(_ progress: MigrationProgress) {
        guard enabled, progress.isChunk || progress.done > 0 else { return }
        let elapsed = max((ContinuousClock.now - start) / .seconds(1), 0.001)
        let rate = Double(progress.done) / elapsed
        show(
            MigrationEvent.Chunk(
                step: progress.step, steps: progress.steps, pass: progress.pass, passes: progress.passes, stage: progress.stage,
                mapping: progress.mapping ?? "", chunk: progress.chunk, chunks: progress.chunks, rows: progress.rows, done: progress.done,
                total: progress.total, elapsed: elapsed, rate: rate, eta: rate > 0 ? Double(max(progress.total - progress.done, 0)) / rate : nil))
    }

    private func show(_ chunk: MigrationEvent.Chunk) {
        let progress = chunk.progress
        let line = String(
            format: "[step %d/%d] %@ %@  %d/%d objects (%.0f%%)  %.0f/s  ETA %.0fs", progress.step, progress.steps,
            progress.stage.rawValue, progress.mapping ?? "", progress.done, progress.total, progress.fraction * 100, chunk.rate, chunk.eta ?? 0)
        write(line, startsAPart: progress.mapping != lastMapping)
        lastMapping = progress.mapping
    }

    /// Writes the progress line: at most every 200 ms on a terminal (in place), every 5 s otherwise,
    /// and whenever a new part of the run (a mapping, a stage's activity) starts.
    private func write(_ line: String, startsAPart: Bool) {
        let now = ContinuousClock.now
        guard startsAPart || now - last > (isTerminal ? .milliseconds(200) : .seconds(5)) else { return }
        last = now
        if isTerminal {
            FileHandleWriter.standardError("\r\u{1B}[K" + line)
            wroteLine = true
        } else {
            FileHandleWriter.standardError(line + "\n")
        }
    }

    /// Prints a warning event about what a step carries (an external file missing, say), quiet or not;
    /// one listing what a step does not carry is said from the plan's losses instead.
    func warn(_ event: MigrationEvent) {
        guard case .warning(let warning) = event, warning.notCarried.isEmpty else { return }
        finish()
        printError("moult: warning: \(warning.message)")
    }

    func finish() {
        if enabled, isTerminal, wroteLine {
            FileHandleWriter.standardError("\n")
            wroteLine = false
        }
    }
}
