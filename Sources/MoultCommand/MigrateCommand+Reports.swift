import Foundation
import MoultMigration

/// What `moult migrate` prints when it ends: with `--json`, one of the reports below.
extension MigrateCommand {
    /// Prints the run's result: nothing when the events go to standard output (they end with
    /// `finished`, which says it), the report with `--json`, the lines otherwise.
    func printResult(_ report: some JSONReport, log: EventLog?, lines: () -> [String]) throws {
        warnAboutKeptFolders()
        if log?.toStandardOutput == true { return }
        if json { return try report.printJSON() }
        for line in lines() { print(line) }
    }

    /// Names the work folders the run finished without removing, because someone else put files in them
    /// (``/MoultMigration/RunFolder/keptFolders(of:)``): the run's own files are gone, those stay.
    private func warnAboutKeptFolders() {
        guard manifest == nil, let store = arguments.storeArgument else { return }
        for (folder, names) in RunFolder.keptFolders(of: URL(filePath: outputOption ?? store)) {
            printError(
                "moult: warning: kept \(folder.path(percentEncoded: false)): it holds \(names.joined(separator: ", ")), which Moult did not make; "
                    + "the run's own files in it are removed, and the folder goes once those are moved away")
        }
    }

    /// Says that the store is already at the target version: nothing to migrate, nothing written.
    func printUpToDate(_ report: UpToDateReport, log: EventLog?) throws {
        let names = ReportedNames.current
        let store = names?.store ?? arguments.store
        try printResult(report, log: log) {
            if let output = names.map(\.output) ?? report.output, report.written == true {
                return ["the store \(store) is already at version \(report.to): nothing to migrate; copied to \(output)"]
            }
            if let output = names.map(\.output) ?? report.output {
                return ["the store \(store) is already at version \(report.to), and \(output) is already its copy: nothing written"]
            }
            return ["the store \(store) is already at version \(report.to): nothing to migrate, nothing written"]
        }
    }
}

/// `migrate --json` (and `plan --json`) when the store is already at the target version.
struct UpToDateReport: JSONReport {
    /// With `--output`: DEST.
    var output: String? = nil
    /// In place and staged: the store.
    var store: String? = nil
    var inPlace: Bool? = nil
    var staged: Bool? = nil
    /// `migrate`: whether anything was written (with `--output`, the copy of the store; false when a
    /// rerun finds it there).
    var written: Bool? = nil
    /// Not staged.
    var from: String? = nil
    var to: String
    /// Not staged: true, and no step.
    var nothingToMigrate: Bool? = nil
    var steps: [StepReport.Step]? = nil
    /// Staged: no stage.
    var stagesRun: [Int]? = nil
}

/// `migrate STORE --output DEST --json`.
struct MigrationReport: JSONReport {
    var output: String
    var from: String
    var to: String
    var steps: [StepReport.Step]
    var resumed: Bool
    var seconds: Double
    /// The objects of each destination entity.
    var entities: [String: Int]
}

/// `migrate STORE --json` (in place).
struct InPlaceMigrationReport: JSONReport {
    /// How one step ran: `sql` or `streaming`.
    struct Step: Encodable {
        var from: String
        var to: String
        var method: String
        /// Streamed: why (nil, and absent, for a step by SQL).
        var reasons: [String]?
    }

    var store: String
    let inPlace = true
    var from: String
    var to: String
    @ExplicitNull var backup: String?
    var steps: [Step]
    var seconds: Double
}

/// `migrate STORE --stages FILE --json`.
struct StagedMigrationReport: JSONReport {
    var store: String
    let staged = true
    var to: String
    /// The stages this run ran, from 1.
    var stagesRun: [Int]
    var resumed: Bool
    /// The objects the stages' handlers read.
    var handlerObjects: Int
    @ExplicitNull var backup: String?
    var seconds: Double
}
