import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultXMLStore

extension MigrateCommand {
    /// Runs a migration whose source or destination is an XML store (``/MoultMigration/XMLStoreRun``);
    /// false when both are SQLite (the caller then runs as before).
    func runAcrossStoreTypes() async throws -> Bool {
        guard manifest == nil, let store = arguments.storeArgument else {
            if manifest != nil, outputType != nil { throw ValidationError("--output-type does not apply to --manifest") }
            return false
        }
        return try await reportingFailures {
            let sourceType = try StoreTypeSupport.type(of: store) ?? .sqlite
            let target = outputType ?? sourceType
            guard sourceType == .xml || target == .xml else { return false }
            guard arguments.stages == nil else { throw CommandFailure(.usage, "--stages migrates SQLite stores only") }
            guard !deferCleanup else { throw CommandFailure(.usage, "--defer-cleanup applies to SQLite stores migrated in place") }
            if outputOption == nil, target != sourceType {
                throw CommandFailure(
                    .usage, "in place keeps the store's type (\(sourceType)); give --output DEST to write a store of type \(target)")
            }
            if outputOption != nil, noBackup { throw ValidationError("--no-backup applies to a migration in place (without --output)") }
            try await migrateAcrossTypes(store: store, source: sourceType, target: target)
            return true
        }
    }

    /// The run across store types (``/MoultMigration/XMLStoreRun``), its SQLite migration this command's
    /// own, run on the paths the driver gives, its report naming the user's store and DEST.
    private func migrateAcrossTypes(store: String, source: StoreType, target: StoreType) async throws {
        var run = XMLStoreRun(
            store: URL(filePath: store), output: outputOption.map { URL(filePath: $0) }, source: source, target: target,
            model: URL(filePath: arguments.model), keepsBackup: !noBackup)
        run.maxValueBytes = arguments.chain.maxValueSize
        let refused: [FailureCategory] = [.usage, .badInput, .incompatible, .validationFailed]
        // The outer migration (the user's store to the target), built once: its model read, chain planned
        // and notes said once, whatever the driver asks of it.
        var built: ProgressiveMigration?
        let migration = { () throws -> ProgressiveMigration in
            if let built { return built }
            let made = try arguments.migration()
            built = made
            return made
        }
        let outcome = try await run.run(
            isUpToDate: { try migration().isUpToDate },
            isFinished: { dest in (try? migration().isFinished(xmlOutput: dest)) ?? false },
            refused: { error in Self.exitCode(of: error).map { code in refused.map(\.exitCode).contains(code) } ?? false },
            note: { note in if !quiet, !json { printError("moult: note: \(note)") } },
            migrate: { sqlite in
                // The SQLite migration of this command's options, on the paths the driver gives (its
                // report naming the user's store and DEST, not the copies in the work folder). (Read
                // directly, the source is still the XML store.)
                let paths = StreamedRun(
                    store: sqlite.source.path(percentEncoded: false), output: sqlite.output.path(percentEncoded: false), resume: resume || sqlite.resuming)
                try await ReportedNames.$current.withValue(ReportedNames(store: store, output: outputOption)) { try await runStreamed(paths) }
            })
        switch outcome {
        case .upToDateInPlace:
            let migration = try migration()
            try printUpToDate(
                UpToDateReport(
                    store: store, inPlace: true, from: migration.sourceVersion.name, to: migration.targetVersion.name, nothingToMigrate: true, steps: []),
                log: nil)
        case .alreadyFinished:
            let final = run.final.path(percentEncoded: false)
            guard json else {
                return print("already migrated: \(final) is the finished result of this migration (its metadata records it); nothing was written")
            }
            // What a SQLite run found finished reports: its steps, nothing written (no entity counted).
            let migration = try migration()
            try MigrationReport(
                output: outputOption ?? final, from: migration.sourceVersion.name, to: migration.targetVersion.name,
                steps: migration.steps.map { StepReport.Step($0, losses: migration.dataLosses(of: $0, in: nil)) }, resumed: false, seconds: 0,
                entities: [:]
            ).printJSON()
        case .migrated(let written?):
            if !quiet, !json {
                print("wrote \(written.url.path(percentEncoded: false)) (XML store, version \(written.version)): \(written.objects) objects"
                    + (written.backup.map { "; the original is kept as \($0.lastPathComponent)" } ?? ""))
            }
        case .migrated(nil):
            break
        }
    }

    /// The exit code an error of a run ends the command with (the inner run has reported its own).
    private static func exitCode(of error: any Error) -> Int32? {
        if let exit = error as? ExitCode { return exit.rawValue }
        if let categorized = error as? any CategorizedError { return categorized.category.exitCode }
        if error is ValidationError { return FailureCategory.usage.exitCode }
        return nil
    }
}

/// The names a run across store types reports: its inner run works on SQLite copies in the work folder,
/// and its report names the user's store and DEST instead.
struct ReportedNames: Sendable {
    /// The store the user gave.
    var store: String
    /// DEST, or nil in place.
    var output: String?

    /// The names of the run under way, when it is the inner run of one across store types.
    @TaskLocal static var current: ReportedNames?
}
