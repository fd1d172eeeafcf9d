import Foundation
import MoultMapping
import MoultModel
import MoultStore

// MARK: - Values whose format changes, by SQL

/// External binary data in place (see the `ExternalBinaryStorage` article of MoultStore): the files stay
/// in the store's own `.<name>_SUPPORT/_EXTERNAL_DATA/` (a reference keeps its name, and the store its
/// name); a step by SQL converts the values of an attribute whose `allowsExternalBinaryDataStorage`
/// changes where they stand; the files no row refers to once the step has committed are removed then,
/// as Core Data removes them; the backup `NAME~.EXT` gets a support folder of its own.
extension InPlaceMigration {
    /// The step's script with, last, the conversion of every Binary Data column whose attribute's
    /// `allowsExternalBinaryDataStorage` changes (``ExternalDataConversionSite/change``).
    static func convertingExternalData(
        _ script: InPlaceScript, old: StoreLayout, new: StoreLayout, correspondence: LayoutCorrespondence
    ) -> InPlaceScript {
        let sites = old.externalDataConversions(to: new, correspondence: correspondence)
        var converting = script
        converting.changes += sites.map(\.change)
        return converting
    }

    /// Says, through `warn`, which values of the step's input (what `database` holds before the step) its
    /// SQL will find no file for, as their attribute stops allowing external storage: they become nil.
    /// A store whose schema is not the step's layout says nothing here (it is streamed, which says it).
    static func warnAboutMissingInlinedFiles(_ step: ProgressiveMigration.Step, database: Database, folder: URL, warn: (String) -> Void) {
        guard case .success(let correspondence) = step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model),
            let old = try? StoreLayout(model: step.from.model), let new = try? StoreLayout(model: step.to.model)
        else { return }
        let sources = old.externalDataConversions(to: new, correspondence: correspondence).filter { $0.conversion == .inline }.flatMap(\.sources)
        let columns = sources.compactMap { source in
            old.entity(named: source.entity).flatMap { entity in entity.attribute(named: source.attribute).map { (entity, $0) } }
        }
        let warnings = try? ExternalDataConversion.missingFileWarnings(
            (old, database), columns: columns, folder: folder, destination: "version \(step.to.name)")
        warnings?.forEach(warn)
    }
}

// MARK: - Files no row refers to any more

/// The record, in the work folder, of the files a step leaves without a reference: written before the
/// step commits (or its result is swapped in), read once it has, to remove them; a run killed in
/// between finds it again (``InPlaceMigration/completeExternalDataRemovals(of:work:referenced:)``).
struct ExternalDataRemovals: Codable {
    /// The digest of the entity hashes of the version the store is at once the step has committed: a
    /// store at another version (the step never committed) removes nothing.
    var version: String
    /// The columns (table, column) that may hold references at that version.
    var columns: [[String]]
    /// The files the store referred to before the step and does not after it.
    var files: [String]
}

extension InPlaceMigration {
    static let externalDataRemovalsFile = "external-data-removals"

    /// The files the store's references name, read with `model`'s layout; nil when the model has no
    /// attribute that allows external storage (then no reference can be removed either).
    static func externalDataNames(of store: URL, model: ObjectModel) throws -> Set<String>? {
        let columns = try StoreLayout(model: model).externalStorageTableColumns
        guard !columns.isEmpty else { return nil }
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try ExternalDataReference.names(referredToIn: database, columns: columns)
    }

    /// Before the commit (inside the step's transaction, or before the swap): records, durably, the
    /// files `before` names that the store about to be committed (open on `database`, at `target`) does
    /// not name.
    ///
    /// - Returns: the files the store about to be committed names.
    static func recordExternalDataRemovals(before: Set<String>, committing database: Database, at target: ObjectModel, work: URL) throws -> Set<String> {
        let columns = try StoreLayout(model: target).externalStorageTableColumns
        let after = try ExternalDataReference.names(referredToIn: database, columns: columns)
        let removed = before.subtracting(after).sorted()
        guard !removed.isEmpty else { return after }
        let record = ExternalDataRemovals(
            version: VersionHashes.digest(StoreMetadata(model: target).entityHashes), columns: columns.map { [$0.table, $0.column] }, files: removed)
        do {
            try makeWorkFolder(work)
            try FileOperations.writeAtomically(JSONEncoder().encode(record), to: work.appending(path: externalDataRemovalsFile), durable: true)
        } catch {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): \(error)", underlying: error)
        }
        FaultInjection.reach(.inPlaceExternalRecorded)
        return after
    }

    /// Once the step has committed (or its result is swapped in): removes the recorded files that no row
    /// of the committed store refers to (`referenced`, or read from the store again), then the record.
    /// Idempotent: a run killed here, or after the commit and before it, is finished by the next run
    /// (``cleanUp(_:)``, or the next in-place run of the store). A record for a version the store is not
    /// at (the step never committed) is dropped and removes nothing; one that cannot be read yet is kept.
    static func completeExternalDataRemovals(of store: URL, work: URL, referenced: Set<String>? = nil) {
        let url = work.appending(path: externalDataRemovalsFile)
        guard let data = try? Data(contentsOf: url) else { return }
        let dropRecord = {
            FileOperations.remove(url.path(percentEncoded: false))
            FileOperations.syncDirectory(work.path(percentEncoded: false))
        }
        guard let record = try? JSONDecoder().decode(ExternalDataRemovals.self, from: data) else { return dropRecord() }
        guard let metadata = try? StoreMetadata(contentsOf: store) else { return }
        guard VersionHashes.digest(metadata.entityHashes) == record.version else { return dropRecord() }
        // The commit durable before a file goes: a power loss never takes the store back to a state naming one.
        let path = store.path(percentEncoded: false)
        guard (try? FileOperations.sync(path)) != nil else { return }
        if FileManager.default.fileExists(atPath: path + "-wal"), (try? FileOperations.sync(path + "-wal")) == nil { return }
        FileOperations.syncDirectory(store.deletingLastPathComponent().path(percentEncoded: false))
        var kept = referenced
        if kept == nil, let database = try? Database(url: store, mode: .readOnly) {
            defer { database.close() }
            let columns = record.columns.compactMap { $0.count == 2 ? (table: $0[0], column: $0[1]) : nil }
            kept = try? ExternalDataReference.names(referredToIn: database, columns: columns)
        }
        guard let kept else { return }
        FaultInjection.reach(.inPlaceBeforeExternalRemoval)
        let folder = ExternalDataReference.folder(besideStore: store)
        for name in record.files where !kept.contains(name) {
            guard let reference = ExternalDataReference(fileName: name) else { continue }
            FileOperations.remove(reference.url(besideStore: store).path(percentEncoded: false))
            FaultInjection.reach(.afterExternalRemoval)
        }
        FileOperations.syncDirectory(folder.path(percentEncoded: false))
        dropRecord()
    }
}

// MARK: - The backup's folder

extension InPlaceMigration {
    /// Gives the backup `NAME~.EXT` (a copy of the store at `model`'s version, whose references are those
    /// of the store, `referenced`) a support folder of its own, before the store changes: a hard link to
    /// every file it refers to (a synced copy where the file system has no hard links), so that its
    /// references resolve where it is and the files the migration removes stay its. A file of an earlier
    /// backup that this one does not name is removed.
    ///
    /// - Throws: ``MigrationError`` (`.io`, `.interrupted` when the disk is full) when a file cannot be
    ///   linked or copied.
    static func keepExternalData(of store: URL, model: ObjectModel, for backup: URL, referenced: Set<String>, links: Bool = true) throws {
        _ = try ExternalDataCarrier.carry(store: store, model: model, source: store, output: backup, links: links)
        let folder = ExternalDataReference.folder(besideStore: backup)
        // (Never listed through a link: `carry` refused one already; this is the rule, kept here too.)
        guard ExternalDataReference.foldersProblem(besideStore: backup) == nil,
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false)) else { return }
        var removed = false
        for name in names where !referenced.contains(name) {
            FileOperations.remove(folder.appending(path: name).path(percentEncoded: false))
            removed = true
        }
        if removed { FileOperations.syncDirectory(folder.path(percentEncoded: false)) }
    }
}

// MARK: - Around the commit

extension InPlaceMigration {
    /// Before the run changes the store: the files the store names (nil when its version has no attribute
    /// that allows external storage), its backup (when there is, or will be, one) given their links.
    func externalDataBeforeChanging(backup: URL?) throws -> Set<String>? {
        let model = chain.sourceVersion.model
        guard let before = try Self.externalDataNames(of: chain.store, model: model) else { return nil }
        if let backup { try Self.keepExternalData(of: chain.store, model: model, for: backup, referenced: before, links: chain.options.linksExternalData) }
        return before
    }

    /// Runs a chain of SQL steps (`run`, given what to do before the transaction commits) so that the
    /// files the committed store no longer names are recorded before the commit and removed after it.
    func keepingExternalData(backup: URL?, work: URL, _ run: (_ beforeCommit: (Database) throws -> Void) throws -> Bool) throws -> Bool {
        let before = try externalDataBeforeChanging(backup: backup)
        var referenced: Set<String>?
        let ran = try run { database in
            guard let before else { return }
            referenced = try Self.recordExternalDataRemovals(before: before, committing: database, at: chain.targetVersion.model, work: work)
        }
        if ran, let referenced { Self.completeExternalDataRemovals(of: chain.store, work: work, referenced: referenced) }
        return ran
    }

    /// Swaps the chain's `result` in (`swap`) so that the files it no longer names are recorded before
    /// the swap and removed after it; the backup the swap keeps gets its links first.
    func keepingExternalData(swapping result: URL, backup: URL?, work: URL, _ swap: () throws -> Void) throws {
        let kept = keepsBackup ? backup ?? Self.backupTarget(for: chain.store, work: work) : nil
        // Its name noted before its support folder is made: a rerun after a kill takes the same name
        // (a name whose support folder is there is otherwise not free).
        if let kept, backup == nil { try Self.recordBackup(kept, in: work) }
        var referenced: Set<String>?
        if let before = try externalDataBeforeChanging(backup: kept) {
            let database = try Database(url: result, mode: .readOnly)
            defer { database.close() }
            referenced = try Self.recordExternalDataRemovals(before: before, committing: database, at: chain.targetVersion.model, work: work)
        }
        try swap()
        if let referenced { Self.completeExternalDataRemovals(of: chain.store, work: work, referenced: referenced) }
    }
}

extension InPlaceMigration {
    /// Removes the support folder of a copy of the store that is gone (a backup removed because the run
    /// was refused, put back in place of the store, or a private copy removed): its links only.
    static func removeExternalData(besideCopy copy: URL) {
        let folder = ExternalDataReference.supportFolder(besideStore: copy)
        guard !FileOperations.isSymbolicLink(folder.path(percentEncoded: false)) else { return }
        try? FileManager.default.removeItem(at: folder)
    }
}
