import ArgumentParser
import Foundation
import MoultFleet
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore

/// `moult fleet migrate|report`: fleets of stores on an existing job runner.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Migrate fleets of stores, one shard per job of a job runner (GNU parallel, Kubernetes, Slurm), and report on them.",
        subcommands: [FleetMigrateCommand.self, FleetReportCommand.self]
    )
}

/// `moult fleet migrate --manifest FILE --shard I/N` (also `moult migrate --manifest FILE --shard I/N`).
struct FleetMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate shard I of N of a manifest's stores, one after another.",
        discussion: """
            The manifest is JSON Lines, one store per line: {"store": PATH, "model": PATH, "to": VERSION, \
            "mappings": [PATH, …], "output": PATH}; to, mappings and output are optional; relative paths are \
            relative to the manifest. Shard I of N takes the lines whose index ≡ I (mod N). Each store's result \
            is appended as one line to FILE.results.jsonl; a store whose result says migrated or already-current \
            is skipped, so any shard can be run again after a crash or a retry. --shard N takes I from \
            JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs) or SLURM_ARRAY_TASK_ID (Slurm job arrays). \
            Exit 0 when every store of the shard is done, the exit code of the last failure otherwise; SIGTERM \
            or SIGINT stop the shard at the store's next chunk boundary (exit 75: run the shard again).
            """
    )

    @OptionGroup var options: FleetOptions

    func run() async throws {
        try await FleetShardRun(options: options).run()
    }
}

/// What `moult fleet migrate` takes; `moult migrate --manifest`, its alias, reads its command line
/// with this type too (``alias(_:givesStore:)``).
struct FleetOptions: ParsableArguments {
    @Option(help: "The manifest (JSON Lines).")
    var manifest: String

    @Option(help: ArgumentHelp("I/N: this shard's index (from 0) and the number of shards; or N, the index from the environment.", valueName: "I/N"))
    var shard: String = "0/1"

    @Option(help: "Source objects per chunk.")
    var chunkSize: Int = 10_000

    @Flag(help: "No line per store on standard error.")
    var quiet = false

    @Option(
        name: .customLong("metrics"),
        help: ArgumentHelp("Write the shard's metrics to FILE in Prometheus's text format when it ends (for node_exporter's textfile collector); its folder is made when missing.", valueName: "file"))
    var metrics: String?

    @Flag(help: "Refuse (66) every store whose migration would drop data, as `moult migrate --strict` does (a manifest line's \"strict\": true does so for its store).")
    var strict = false

    @Flag(help: "Infer every step of a store whose line gives no mappings: the mapping models of its model's project are not looked for.")
    var infer = false

    func validate() throws {
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
    }

    /// `moult migrate --manifest FILE …`: the arguments after `migrate`, read as `fleet migrate` reads
    /// its own. The manifest says each store's model, version, mappings and output, so whatever else
    /// `migrate` takes is refused (64), named.
    ///
    /// - Parameters:
    ///   - arguments: `migrate`'s arguments.
    ///   - givesStore: whether they name a STORE (which would otherwise read as an option's value).
    /// - Throws: `ValidationError` naming what `fleet migrate` does not take.
    static func alias(_ arguments: [String], givesStore: Bool) throws -> FleetOptions {
        let parsed: Alias
        do {
            parsed = try Alias.parse(arguments)
        } catch {
            throw ValidationError(Alias.message(for: error))
        }
        let options = parsed.others.filter { $0.hasPrefix("-") }.map { String($0.prefix { $0 != "=" }) }
        let refused = (givesStore ? ["STORE"] : []) + options
        if !refused.isEmpty {
            throw ValidationError(
                "--manifest migrates each store as its manifest line says (with --chunk-size, --quiet, --strict, --infer and --metrics only): \(refused.joined(separator: ", ")) cannot be given with it")
        }
        return parsed.options
    }

    /// The options, and whatever else the command line holds.
    private struct Alias: ParsableArguments {
        @OptionGroup var options: FleetOptions
        @Argument(parsing: .allUnrecognized) var others: [String] = []
    }
}

/// One shard of a fleet: what `moult fleet migrate` runs (and `moult migrate --manifest`, its alias).
struct FleetShardRun {
    var options: FleetOptions

    /// Appends a result's line to the shard's results file, through the one room of file operations.
    static func append(_ line: String, to results: URL) throws {
        let path = results.path(percentEncoded: false)
        do throws(StoreError) {
            try FileOperations.appendLine(line, to: path)
        } catch {
            throw FleetError(.io, "cannot append to the results file \(path): \(error.message)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let (shard, manifest) = try FleetError.categorizing {
                (
                    try FleetShard(parsing: options.shard, environment: ProcessInfo.processInfo.environment),
                    try FleetManifest(contentsOf: URL(filePath: options.manifest))
                )
            }
            // The results file is Moult's own: read and appended to only as a plain file with one name.
            let results = manifest.resultsURL.path(percentEncoded: false)
            if let what = FileOperations.notOwnFile(results) {
                throw FleetError(.io, "the results file \(results) is \(what): Moult neither reads nor writes it; nothing was migrated").categorized
            }
            // Checked before any store is migrated: a store migrated whose result cannot be recorded
            // would be a shard that fails after doing its work.
            do throws(StoreError) {
                try FileOperations.prepareToAppend(results)
            } catch {
                throw FleetError(.io, "cannot append to the results file \(results): \(error.message); nothing was migrated").categorized
            }
            let metrics = try MetricsFile.start(options.metrics, dimensions: [("shard", "\(shard.index)")])
            Interruption.install()
            defer { metrics?.write() }
            var models: [String: VersionedModel] = [:]
            let folders = MappingFolders()
            var lastFailure: Int32 = 0
            // A stop request (SIGTERM from the job runner, Ctrl-C) ends the shard after the store under
            // way stops at its chunk boundary; the next run resumes it.
            let summary = try FleetError.categorizing {
                try FleetRunner(manifest: manifest, shard: shard).run(shouldStop: { Interruption.requested }, append: Self.append) { entry in
                    let result = migrate(entry, models: &models, folders: folders)
                    if result.outcome == .failed { lastFailure = Int32(result.exitCode) }
                    return result
                }
            }
            if !options.quiet {
                printError(
                    "moult: shard \(shard): \(summary.migrated) migrated, \(summary.alreadyMigrated) already migrated, \(summary.alreadyCurrent) already current, \(summary.failed) failed, \(summary.skipped) done before"
                        + (summary.busy > 0 ? ", \(summary.busy) busy (held by another run: run the shard again later)" : ""))
            }
            if Interruption.requested { throw ExitCode(FailureCategory.interrupted.exitCode) }
            if summary.failed > 0 { throw ExitCode(lastFailure) }
            if summary.busy > 0 { throw ExitCode(FailureCategory.busy.exitCode) }
        }
    }

    /// Migrates one store of the manifest: its result, a failure included.
    private func migrate(_ entry: FleetManifest.Entry, models: inout [String: VersionedModel], folders: MappingFolders) -> FleetResult {
        let start = ContinuousClock.now
        let seconds = { (ContinuousClock.now - start) / .seconds(1) }
        MetricsFile.current?.beginRun()
        do {
            let model: VersionedModel
            if let cached = models[entry.model.path] {
                model = cached
            } else {
                model = try VersionedModel(contentsOf: entry.model)
                models[entry.model.path] = model
            }
            // Files and folders, as `--mapping` takes them.
            let (mappings, labels) = try ChainArguments.mappingModels(
                entry.mappings.map(\.path), store: entry.store.path, to: entry.to, model, folders: folders,
                besideModel: entry.mappings.isEmpty && !options.infer ? entry.model : nil)
            let migration = try ProgressiveMigration(
                store: entry.store, model: model, to: entry.to, mappings: mappings, policies: MoultCommand.policies,
                options: MigrationOptions(chunkSize: options.chunkSize), mappingLabels: labels)
            if migration.isUpToDate {
                return FleetResult(store: entry.name, outcome: .alreadyCurrent, exitCode: 0, seconds: seconds())
            }
            // What the steps do not carry, as `migrate` says it (counted in the store for the first step).
            let losses = DataLossGuard(migration)
            if options.strict || entry.strict { try losses.refuseUnderStrict() }
            let notCarried = losses.losses.enumerated().flatMap { index, found in found.map { "step \(index + 1): \($0)" } }
            let lossMessage = notCarried.isEmpty ? nil : "not carried: " + notCarried.joined(separator: ", ")
            if !options.quiet { for warning in losses.warnings { printError("moult: \(entry.name): " + warning.dropFirst("moult: ".count)) } }
            guard let output = entry.output else {
                // In place, keeping the original as a backup (as `moult migrate` without --output does).
                try migration.checkPolicies()
                _ = try InPlaceMigration(chain: migration, keepsBackup: true).run(
                    isCancelled: { Interruption.requested }, events: { MetricsFile.current?.record($0) })
                MetricsFile.current?.recordBytes(of: entry.store)
                if !options.quiet { printError("moult: migrated \(entry.name) in place in \(String(format: "%.2f", seconds())) s") }
                return FleetResult(store: entry.name, outcome: .migrated, exitCode: 0, seconds: seconds(), message: lossMessage)
            }
            let reports = try migration.run(output: output, resume: true, isCancelled: { Interruption.requested }, events: { MetricsFile.current?.record($0) })
            if reports.isEmpty {
                // Its output is already the result of this migration of the store as it is now.
                if !options.quiet { printError("moult: \(entry.name): already migrated in \(output.path); nothing was written") }
                return FleetResult(store: entry.name, outcome: .alreadyMigrated, exitCode: 0, seconds: seconds())
            }
            MetricsFile.current?.recordBytes(of: output)
            let objects = reports.last?.objectCounts ?? [:]
            if !options.quiet { printError("moult: migrated \(entry.name) in \(String(format: "%.2f", seconds())) s") }
            return FleetResult(store: entry.name, outcome: .migrated, exitCode: 0, objects: objects, seconds: seconds(), message: lossMessage)
        } catch {
            let category = (error as? any CategorizedError)?.category ?? .internalError
            MetricsFile.current?.recordFailure(error)
            if category == .busy {
                // Another run (a shard's earlier run still going, or another job) holds it.
                if !options.quiet { printError("moult: \(entry.name): skipped, \(error)") }
                return FleetResult(store: entry.name, outcome: .busy, exitCode: Int(category.exitCode), seconds: seconds(), message: "\(error)")
            }
            if !options.quiet { printError("moult: \(entry.name): \(error)") }
            return FleetResult(store: entry.name, outcome: .failed, exitCode: Int(category.exitCode), seconds: seconds(), message: "\(error)")
        }
    }
}

/// `moult fleet report RESULTS…`.
struct FleetReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Merge fleet result files: stores per outcome, the failures with their messages, time percentiles.",
        discussion: "A store's last result counts (a failure retried and migrated is migrated)."
    )

    @Argument(help: "Result files (MANIFEST.results.jsonl).")
    var results: [String]

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let report = try FleetError.categorizing { try FleetReport(files: results.map { URL(filePath: $0) }) }
            let counts = report.counts
            let percentiles = [50.0, 90, 99, 100].map { ($0, report.percentile($0)) }
            if json {
                try Report(report, percentiles: percentiles).printJSON()
            } else {
                print(
                    "\(report.stores.count) stores (\(report.lines) result lines): \(counts[.migrated] ?? 0) migrated, "
                        + "\(counts[.alreadyMigrated] ?? 0) already migrated, \(counts[.alreadyCurrent] ?? 0) already current, \(counts[.failed] ?? 0) failed")
                let times = percentiles.map { "p\(Int($0.0)) " + ($0.1.map { String(format: "%.3f s", $0) } ?? "-") }
                print("seconds per store migrated: " + times.joined(separator: ", "))
                for failure in report.failures { print("FAILED \(failure.store) (exit \(failure.exitCode)): \(failure.message ?? "")") }
            }
        }
    }
}

extension FleetReportCommand {
    /// `fleet report --json`.
    struct Report: JSONReport {
        /// A failed store's last result, as its results line says it.
        struct Failure: Encodable {
            var store: String
            var outcome: String
            var exitCode: Int
            var objects: [String: Int]
            var seconds: Double
            @ExplicitNull var message: String?
            @ExplicitNull var request: String?
        }

        var stores: Int
        var lines: Int
        /// The stores per outcome: `migrated`, `already-migrated`, `already-current`, `failed`.
        var outcomes: [String: Int]
        /// The seconds per store migrated at `p50`, `p90`, `p99` and `p100` (`null` when none was).
        var seconds: [String: Double?]
        var failures: [Failure]

        init(_ report: FleetReport, percentiles: [(Double, Double?)]) {
            stores = report.stores.count
            lines = report.lines
            let counts = report.counts
            outcomes = Dictionary(uniqueKeysWithValues: [FleetResult.Outcome.migrated, .alreadyMigrated, .alreadyCurrent, .failed].map { ($0.rawValue, counts[$0] ?? 0) })
            seconds = Dictionary(uniqueKeysWithValues: percentiles.map { ("p\(Int($0.0))", $0.1.map(\.roundedToMilliseconds)) })
            failures = report.failures.map {
                Failure(
                    store: $0.store, outcome: $0.outcome.rawValue, exitCode: $0.exitCode, objects: $0.objects, seconds: $0.seconds.roundedToMilliseconds,
                    message: $0.message, request: $0.request)
            }
        }
    }
}

extension FleetError {
    /// The error with its exit code, as the command line reports it.
    var categorized: CommandFailure {
        switch kind {
        case .usage: CommandFailure(.usage, message)
        case .badInput: CommandFailure(.badInput, message)
        case .io: CommandFailure(.io, message)
        }
    }

    /// Runs `body`, a ``FleetError`` it throws given its exit code.
    static func categorizing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FleetError {
            throw error.categorized
        }
    }
}
