import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultXMLStore

/// `moult migrate STORE --model M [--to V] [--mapping F]… --output DEST …`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to another version of its model, in chunks, resumably.",
        // STORE and --model are optional to the parser only (see MigrationArguments).
        usage: "moult migrate <store> --model <model> [<options>]\nmoult migrate --manifest <manifest> [--shard <I/N>] [--chunk-size <n>] [--quiet]",
        discussion: """
            The store's version is found by its entity hashes. Each step to the target version uses a mapping \
            given with --mapping for it, or the inferred (lightweight) one. With --output DEST, the destination \
            is built in DEST.moult/ and moved to DEST only when complete and valid; the store is only read.

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

    @Option(help: "The destination's type, xml or sqlite (default: the store's own).")
    var outputType: StoreType?

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

    @Option(help: "A fleet's manifest (JSON Lines, one store per line): migrate one shard of it instead of STORE, as `moult fleet migrate` does.")
    var manifest: String?

    @Option(help: ArgumentHelp("With --manifest: this shard's index (from 0) and the number of shards; or N, the index from the environment.", valueName: "I/N"))
    var shard: String?

    func validate() throws {
        // As `create` and `convert` refuse it: no store of Core Data's binary type is written.
        if outputType == .binary { throw ValidationError("--output-type binary: Moult does not write Core Data's binary store; use xml or sqlite") }
        guard manifest != nil else {
            if shard != nil { throw ValidationError("--shard needs --manifest") }
            if arguments.storeArgument == nil {
                throw ValidationError("Missing expected argument '<store>' (or --manifest FILE, for a fleet of stores)")
            }
            try arguments.requireStoreAndModel()
            return
        }
        _ = try fleetOptions()
    }

    func run() async throws {
        // `migrate --manifest` takes no --max-value-size: its failures do not name it.
        try await ValueSizeOption.offering(manifest == nil) { try await migrateCommand() }
    }

    private func migrateCommand() async throws {
        // A store reached through a symbolic link is migrated where it really is: in place, its lock,
        // backup and swap are the real file's, so that a run by another name is busy, never beside it;
        // with --output, its companions (`-wal`, the external files) and its identity are the real file's.
        if manifest == nil, let store = arguments.storeArgument, FileOperations.isSymbolicLink(store) {
            let real = URL(filePath: store).resolvingSymlinksInPath().path(percentEncoded: false)
            guard real != store, !FileOperations.isSymbolicLink(real) else {
                return try await reportingFailures { () throws -> Void in
                    throw CommandFailure(.badInput, "\(store) is a symbolic link that leads to no store (a loop, or a link to nothing)")
                }
            }
            if !quiet, !json {
                printError("moult: note: \(store) is a symbolic link to \(real): the store is \(outputOption == nil ? "migrated" : "read") there")
            }
            var resolved = self
            resolved.arguments.storeArgument = real
            return try await resolved.run()
        }
        // The store's folder and DEST's, opened once and held for the whole run: every file of the run in
        // them (backups, run folders, swaps, companions, `_SUPPORT`, outputs) is made, renamed and
        // removed there, wherever those folders are moved meanwhile (``HeldFolders``).
        let held = HeldFolders.hold(foldersOf: [arguments.storeArgument, outputOption].compactMap { $0 })
        defer { held.release() }
        // DEST, `--events` and `--metrics` never name the store, a file of its, or one another (64, before anything runs).
        if arguments.storeArgument != nil {
            try await reportingFailures {
                try OutputPathCheck(reads: arguments.reads, writes: [.store("--output", outputOption)] + events.outputs).refuse()
            }
        }
        if try await runAcrossStoreTypes() { return }
        if manifest != nil { return try await FleetShardRun(options: try fleetOptions()).run() }
        if arguments.stages != nil { return try await runStaged() }
        if outputOption == nil { return try await runInPlace() }
        try await runStreamed()
    }

    /// The streamed migration into `--output`, once the store types and the kind of run are settled.
    func runStreamed() async throws {
        try checkInPlaceFlagsUnused()
        try await runStreamed(StreamedRun(store: arguments.store, output: output, resume: resume))
    }

    /// What a streamed SQLite migration reads and writes: STORE into DEST, or the paths a run across
    /// store types gives it (``/MoultMigration/XMLStoreRun/SQLiteRun``).
    struct StreamedRun {
        var store: String
        var output: String
        var resume: Bool
    }

    /// The streamed migration of `run.store` into `run.output`, with this command's options.
    func runStreamed(_ run: StreamedRun) async throws {
        try await events.withLog { log in try migrate(run, log: log) }
    }

    /// `--manifest`: this command line read as `moult fleet migrate` reads its own, which it then is.
    private func fleetOptions() throws -> FleetOptions {
        let commandLine = MoultCommand.commandLine
        let own = commandLine.firstIndex(of: "migrate").map { Array(commandLine[($0 + 1)...]) } ?? commandLine
        return try FleetOptions.alias(own, givesStore: arguments.storeArgument != nil)
    }

    private func migrate(_ run: StreamedRun, log: EventLog?) throws {
        let migration = try arguments.migration(durable: durable, validate: !noValidation, stopAtFirst: stopAtFirstFailure, store: run.store)
        let output = URL(filePath: run.output)
        if migration.isUpToDate {
            // Success: the output is a copy of the store, as a batch job expects whatever version its
            // input was at (a rerun finds its copy there and writes nothing).
            let written = try migration.copyUpToDate(to: output)
            log?.write(.finished(MigrationEvent.Finished(outcome: .alreadyCurrent, seconds: log?.seconds ?? 0)))
            return try printUpToDate(
                UpToDateReport(
                    output: run.output, written: written, from: migration.sourceVersion.name, to: migration.targetVersion.name,
                    nothingToMigrate: true, steps: []),
                log: log)
        }
        if arguments.strict { try DataLossGuard(migration).refuseUnderStrict() }
        if run.resume, !FileOperations.exists(output.path), !FileOperations.exists(RunNames.work(forOutput: output).path),
            !FileOperations.exists(migration.stepsDirectory(for: output).path)
        {
            printError("moult: nothing to resume for \(run.output); starting")
        }
        let observer = self.observer(status: StatusFile(output: output), log: log)
        let dangling = DanglingReferences(store: migration.store, model: migration.sourceVersion.model)
        if let line = dangling.warning { observer.warn(line) }
        let reports = try migration.run(
            output: output, resume: run.resume, isCancelled: { observer.isCancelled },
            losses: { observer.stepLosses($0, $1, of: migration.steps) }, events: observer.handle)
        if !reports.isEmpty, let line = dangling.outcome(in: DanglingReferences(store: output, model: migration.targetVersion.model)) {
            observer.warn(line)
        }
        let seconds = observer.finish()
        if !reports.isEmpty { MetricsFile.current?.recordBytes(of: output) }
        // Steps an earlier run finished: listed, not counted.
        let losses = migration.steps.enumerated().map { index, step in observer.losses[index + 1] ?? migration.dataLosses(of: step, in: nil) }
        let report = MigrationReport(
            output: run.output, from: migration.sourceVersion.name, to: migration.targetVersion.name,
            steps: zip(migration.steps, losses).map(StepReport.Step.init), resumed: reports.contains(where: \.resumed),
            seconds: seconds.roundedToMilliseconds, entities: reports.last?.objectCounts ?? [:])
        try printResult(report, log: log) {
            if reports.isEmpty {
                return ["already migrated: \(ReportedNames.current?.output ?? run.output) is the finished result of this migration (its metadata records it); nothing was written"]
            }
            let names = ReportedNames.current
            let destination = names.map { $0.output.map { "in \($0)" } ?? "in place" } ?? "in \(run.output)"
            var lines = [
                "migrated \(names?.store ?? run.store) (\(report.from)) to \(report.to) \(destination)"
                    + "\(report.resumed ? " (resumed)" : ""), \(migration.steps.count) step(s), \(String(format: "%.1f", seconds)) s"
            ]
            let summary = report.entities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            if !summary.isEmpty { lines.append("objects: \(summary)") }
            for (index, step) in migration.steps.enumerated() {
                lines.append(StepReport.line(index, step))
                lines += StepReport.details(step, losses: losses[index])
            }
            return lines
        }
    }

    /// This run's ``RunObserver``, from its options: the progress line unless `--quiet` or `--json`,
    /// `--max-rate` and `--pause-file`.
    func observer(status: StatusFile, log: EventLog?) -> RunObserver {
        RunObserver(status: status, log: log, showsProgress: !quiet && !json, control: control)
    }
}
