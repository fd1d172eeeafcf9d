import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultXMLStore

extension MigrateCommand {
    /// Runs a migration whose source or destination is an XML store; false when both are SQLite (the
    /// caller then runs as before).
    ///
    /// The engine reads an XML source directly when the run streams into `--output` (see
    /// `readsXMLDirectly`); otherwise (in place, or a store already at the target version) it is first
    /// streamed into an SQLite copy in the run's work folder (`.DEST.moult-xml/`, or `.STORE.moult-xml/`
    /// in place), and the usual migration runs from it. An XML destination is migrated into an SQLite
    /// store in that folder, then streamed out to DEST (under a temporary name, renamed into place). In place on an XML store writes a new file, the
    /// original kept as `NAME~.xml` unless `--no-backup`. A run stopped anywhere resumes: the copy is
    /// made once, the migration resumes from its checkpoints, and the XML is written again.
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

    private func migrateAcrossTypes(store: String, source: StoreType, target: StoreType) async throws {
        let final = URL(filePath: outputOption ?? store)
        let work = RunNames.xmlWork(for: final)
        // A finished run renames its work folder to this name, then removes it: a folder only ever
        // removed whole, so that a run stopped while removing it never finds a work folder missing a part.
        let finished = RunNames.xmlWorkDone(for: final)
        let wasFinished = FileManager.default.fileExists(atPath: finished.path(percentEncoded: false))
        try? FileManager.default.removeItem(at: finished)
        if outputOption == nil, source == .xml, case let migration = try arguments.migration(), migration.isUpToDate {
            // In place on a store already at the target version: nothing is written, its backup and the
            // store stay as they are. (A run stopped after its new file was renamed over the store, its
            // backup made before, left its work folder: removed whole.)
            if (try? FileOperations.rename(work.path(percentEncoded: false), to: finished.path(percentEncoded: false), durable: false)) != nil {
                try? FileManager.default.removeItem(at: finished)
            }
            return try printUpToDate(
                UpToDateReport(
                    store: store, inPlace: true, from: migration.sourceVersion.name, to: migration.targetVersion.name, nothingToMigrate: true, steps: []),
                log: nil)
        }
        if outputOption != nil, target == .xml, FileManager.default.fileExists(atPath: final.path(percentEncoded: false)) {
            // A run stopped after renaming DEST into place, before removing its work folder, is done.
            guard wasFinished || FileManager.default.fileExists(atPath: work.path(percentEncoded: false)) else {
                throw XMLStoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: final.path(percentEncoded: false))
            }
            if (try? FileOperations.rename(work.path(percentEncoded: false), to: finished.path(percentEncoded: false), durable: false)) != nil {
                try? FileManager.default.removeItem(at: finished)
            }
            return print("\(final.path(percentEncoded: false)) is already this migration's finished XML store: nothing left to do")
        }
        // A work folder left by a stopped run: its migration is resumed, or, when it had finished (its
        // SQLite destination is there), accepted as done and only the XML is written again.
        let resuming = FileManager.default.fileExists(atPath: work.path(percentEncoded: false))
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        do {
            try await migrate(store: store, source: source, target: target, final: final, work: work, finished: finished, resuming: resuming)
        } catch {
            // A refused run (bad usage, bad input, no path, broken rules) leaves nothing of its own: a
            // work folder it made holds nothing a rerun could resume. A stopped run's is kept.
            let refused: [FailureCategory] = [.usage, .badInput, .incompatible, .validationFailed]
            if !resuming, let code = Self.exitCode(of: error), refused.map(\.exitCode).contains(code) {
                try? FileManager.default.removeItem(at: work)
            }
            throw error
        }
    }

    /// The exit code an error of a run ends the command with (the inner run has reported its own).
    private static func exitCode(of error: any Error) -> Int32? {
        if let exit = error as? ExitCode { return exit.rawValue }
        if let categorized = error as? any CategorizedError { return categorized.category.exitCode }
        if error is ValidationError { return FailureCategory.usage.exitCode }
        return nil
    }

    /// The run across store types, in its work folder (see ``migrateAcrossTypes(store:source:target:)``).
    private func migrate(
        store: String, source: StoreType, target: StoreType, final: URL, work: URL, finished: URL, resuming: Bool
    ) async throws {
        var inner = self
        let names = ReportedNames(store: store, output: outputOption)
        inner.outputType = nil
        inner.noBackup = false
        inner.resume = resume || resuming
        let inPlace = outputOption == nil
        // In place, the original is linked into the work folder first: a run resumed after the new file
        // was renamed over the store still keeps the original as NAME~.xml, not the new file.
        let original = work.appending(path: "original.xml")
        if inPlace, !noBackup, !FileManager.default.fileExists(atPath: original.path(percentEncoded: false)) {
            if !FileOperations.hardLink(store, to: original.path(percentEncoded: false)) {
                try FileOperations.copyFile(store, toNew: original.path(percentEncoded: false), durable: true)
            }
        }
        var direct = false
        if source == .xml {
            let copy = work.appending(path: "source.sqlite")
            direct = try readsXMLDirectly(inPlace: inPlace, copy: copy)
            if direct {
                if !quiet, !json { printError("moult: note: \(store) is a Core Data XML store: read directly, without an SQLite copy") }
            } else {
                try StoreTypeSupport.sqliteCopy(ofXML: store, model: arguments.model, at: copy)
                inner.arguments.storeArgument = copy.path(percentEncoded: false)
                if !quiet, !json { printError("moult: note: \(store) is a Core Data XML store: migrated through its SQLite copy \(copy.path(percentEncoded: false))") }
            }
        }
        let sqliteDestination = target == .xml ? work.appending(path: "destination.sqlite") : final
        inner.outputOption = sqliteDestination.path(percentEncoded: false)
        // (Read directly, the source is still XML: `run` would come back here.)
        // (Its report names the user's store and DEST, not the copies in the work folder.)
        try await ReportedNames.$current.withValue(names) {
            if direct { try await inner.runStreamed() } else { try await inner.run() }
        }
        if target == .xml, FileManager.default.fileExists(atPath: sqliteDestination.path(percentEncoded: false)) {
            try writeXML(from: sqliteDestination, to: final, inPlace: inPlace, original: original, work: work)
        }
        if (try? FileOperations.rename(work.path(percentEncoded: false), to: finished.path(percentEncoded: false), durable: false)) != nil {
            try? FileManager.default.removeItem(at: finished)
        }
    }

    /// Whether the engine reads the XML source itself (see ``/MoultXMLStore/XMLStore``): a streamed run
    /// (`--output`) of a store not already at the target version, unless a stopped run began from the
    /// store's SQLite `copy` (it resumes as it began). In place, and a store already at the target
    /// version (its output is a copy of it), go through the copy.
    private func readsXMLDirectly(inPlace: Bool, copy: URL) throws -> Bool {
        guard !inPlace, !FileManager.default.fileExists(atPath: copy.path(percentEncoded: false)) else { return false }
        return try !arguments.migration().isUpToDate
    }

    /// Streams the migrated SQLite store out to the XML destination (in place: over the store, the
    /// original kept as `NAME~.EXT` first).
    private func writeXML(from sqlite: URL, to final: URL, inPlace: Bool, original: URL, work: URL) throws {
        let versioned = try VersionedModel(contentsOf: URL(filePath: arguments.model), requiringCurrentVersion: false)
        let metadata = try StoreMetadata(contentsOf: sqlite)
        guard let version = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
            throw MigrationError(.incompatibleStore, "the migrated store \(sqlite.path) matches no version of \(versioned.name)")
        }
        var backup: URL?
        if inPlace, !noBackup {
            // A backup is never replaced: this run's takes the first free name (`NAME~.xml`, else
            // `NAME~2.xml`…), noted in the work folder before it is made, so that a resumed run makes the same.
            let note = work.appending(path: "backup")
            let chosen = (try? String(contentsOf: note, encoding: .utf8)).map { URL(filePath: $0) } ?? InPlaceMigration.freeBackupURL(for: final)
            try FileOperations.writeAtomically(Data(chosen.path(percentEncoded: false).utf8), to: note, durable: true)
            if !FileManager.default.fileExists(atPath: chosen.path(percentEncoded: false)) {
                let temporary = RunNames.temporaryBackup(for: chosen).path(percentEncoded: false)
                FileOperations.remove(temporary)
                if !FileOperations.hardLink(original.path(percentEncoded: false), to: temporary) {
                    try FileOperations.copyFile(original.path(percentEncoded: false), toNew: temporary, durable: true)
                }
                try FileOperations.rename(temporary, to: chosen.path(percentEncoded: false), durable: true)
            }
            backup = chosen
        }
        let count = try XMLStoreConversion.xml(from: sqlite, model: version.model, to: final, replacing: inPlace)
        if !quiet, !json {
            print("wrote \(final.path(percentEncoded: false)) (XML store, version \(version.name)): \(count) objects"
                + (backup.map { "; the original is kept as \($0.lastPathComponent)" } ?? ""))
        }
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
