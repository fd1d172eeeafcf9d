import ArgumentParser
import Foundation
import MoultFleet
import MoultMapping
import MoultMigration
import MoultModel

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

    @Option(help: "The manifest (JSON Lines).")
    var manifest: String

    @Option(help: ArgumentHelp("I/N: this shard's index (from 0) and the number of shards; or N, the index from the environment.", valueName: "I/N"))
    var shard: String = "0/1"

    @Option(help: "Source objects per chunk.")
    var chunkSize: Int = 10_000

    @Flag(help: "No line per store on standard error.")
    var quiet = false

    func run() async throws {
        try await FleetShardRun(manifest: manifest, shard: shard, chunkSize: chunkSize, quiet: quiet).run()
    }
}

/// One shard of a fleet: what `moult migrate --manifest FILE --shard I/N` and its alias `moult fleet
/// migrate` run.
struct FleetShardRun {
    var manifest: String
    var shard: String
    var chunkSize: Int
    var quiet: Bool

    func run() async throws {
        try await reportingFailures {
            let shard: FleetShard
            let manifest: FleetManifest
            do {
                shard = try FleetShard(parsing: self.shard, environment: ProcessInfo.processInfo.environment)
                manifest = try FleetManifest(contentsOf: URL(filePath: self.manifest))
            } catch let error as FleetError {
                throw error.categorized
            }
            Interruption.install()
            var models: [String: VersionedModel] = [:]
            let folders = MappingFolders()
            var lastFailure: Int32 = 0
            let runner = FleetRunner(manifest: manifest, shard: shard)
            let summary: FleetRunner.Summary
            do {
                // A stop request (SIGTERM from the job runner, Ctrl-C) ends the shard after the store under
                // way stops at its chunk boundary; the next run resumes it.
                summary = try runner.run(shouldStop: { Interruption.requested }) { entry in
                    let start = ContinuousClock.now
                    let seconds = { (ContinuousClock.now - start) / .seconds(1) }
                    do {
                        let model: VersionedModel
                        if let cached = models[entry.model.path] {
                            model = cached
                        } else {
                            model = try VersionedModel(contentsOf: entry.model)
                            models[entry.model.path] = model
                        }
                        // Files and folders, as `--mapping` takes them.
                        let (mappings, labels) = try MigrationArguments.mappingModels(
                            entry.mappings.map(\.path), store: entry.store.path, to: entry.to, model, folders: folders)
                        let migration = try ProgressiveMigration(
                            store: entry.store, model: model, to: entry.to, mappings: mappings, policies: MoultCommand.policies,
                            options: MigrationOptions(chunkSize: chunkSize), mappingLabels: labels)
                        if migration.isUpToDate {
                            return FleetResult(store: entry.name, outcome: .alreadyCurrent, exitCode: 0, seconds: seconds())
                        }
                        // What the steps do not carry, as `migrate` says it (counted in the store for the first step).
                        let notCarried = migration.steps.enumerated().flatMap { index, step in
                            migration.dataLosses(of: step, in: index == 0 ? entry.store : nil).map { "step \(index + 1): \(StepReport.describe($0))" }
                        }
                        let lossMessage = notCarried.isEmpty ? nil : "not carried: " + notCarried.joined(separator: ", ")
                        if let lossMessage, !quiet { printError("moult: \(entry.name): \(lossMessage)") }
                        guard let output = entry.output else {
                            // In place, keeping the original as a backup (as `moult migrate` without --output does).
                            try migration.checkPolicies()
                            _ = try InPlaceMigration(chain: migration, keepsBackup: true).run(isCancelled: { Interruption.requested })
                            if !quiet { printError("moult: migrated \(entry.name) in place in \(String(format: "%.2f", seconds())) s") }
                            return FleetResult(store: entry.name, outcome: .migrated, exitCode: 0, seconds: seconds(), message: lossMessage)
                        }
                        let reports = try migration.run(output: output, resume: true, isCancelled: { Interruption.requested })
                        let objects = reports.last?.objectCounts ?? [:]
                        if !quiet { printError("moult: migrated \(entry.name) in \(String(format: "%.2f", seconds())) s") }
                        return FleetResult(store: entry.name, outcome: .migrated, exitCode: 0, objects: objects, seconds: seconds(), message: lossMessage)
                    } catch {
                        let category = (error as? any CategorizedError)?.category ?? .internalError
                        if category == .busy {
                            // Another run (a shard's earlier run still going, or another job) holds it.
                            if !quiet { printError("moult: \(entry.name): skipped, \(error)") }
                            return FleetResult(store: entry.name, outcome: .busy, exitCode: Int(category.exitCode), seconds: seconds(), message: "\(error)")
                        }
                        lastFailure = category.exitCode
                        if !quiet { printError("moult: \(entry.name): \(error)") }
                        return FleetResult(
                            store: entry.name, outcome: .failed, exitCode: Int(category.exitCode), seconds: seconds(), message: "\(error)")
                    }
                }
            } catch let error as FleetError {
                throw error.categorized
            }
            if !quiet {
                printError(
                    "moult: shard \(shard): \(summary.migrated) migrated, \(summary.alreadyCurrent) already current, \(summary.failed) failed, \(summary.skipped) done before"
                        + (summary.busy > 0 ? ", \(summary.busy) busy (held by another run: run the shard again later)" : ""))
            }
            if Interruption.requested { throw ExitCode(FailureCategory.interrupted.exitCode) }
            if summary.failed > 0 { throw ExitCode(lastFailure) }
            if summary.busy > 0 { throw ExitCode(FailureCategory.busy.exitCode) }
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
            let report: FleetReport
            do {
                report = try FleetReport(files: results.map { URL(filePath: $0) })
            } catch let error as FleetError {
                throw error.categorized
            }
            let counts = report.counts
            let percentiles = [50.0, 90, 99, 100].map { ($0, report.percentile($0)) }
            if json {
                var object = EventJSON()
                object.add("stores", report.stores.count)
                object.add("lines", report.lines)
                object.raw(
                    "outcomes",
                    "{" + [FleetResult.Outcome.migrated, .alreadyCurrent, .failed].map { "\"\($0.rawValue)\":\(counts[$0] ?? 0)" }.joined(separator: ",") + "}")
                object.raw("seconds", "{" + percentiles.map { "\"p\(Int($0.0))\":" + ($0.1.map { String(format: "%.3f", $0) } ?? "null") }.joined(separator: ",") + "}")
                object.raw("failures", "[" + report.failures.map(\.jsonLine).joined(separator: ",") + "]")
                print(object.text)
            } else {
                print(
                    "\(report.stores.count) stores (\(report.lines) result lines): \(counts[.migrated] ?? 0) migrated, "
                        + "\(counts[.alreadyCurrent] ?? 0) already current, \(counts[.failed] ?? 0) failed")
                let times = percentiles.map { "p\(Int($0.0)) " + ($0.1.map { String(format: "%.3f s", $0) } ?? "-") }
                print("seconds per store migrated: " + times.joined(separator: ", "))
                for failure in report.failures { print("FAILED \(failure.store) (exit \(failure.exitCode)): \(failure.message ?? "")") }
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
}
