import Foundation
import MoultEngine
import MoultModel
import MoultStore

/// The external binary data of a store a run changes in place: the files the committed store no
/// longer names, removed once it has committed (recorded first in the run folder, so that a kill in
/// between is finished by the next run), and the support folder of a backup or a private copy of the
/// store. Shared by the in-place and staged drivers.
enum ExternalDataBackup {}

// MARK: - Files no row refers to any more

/// The record, in the work folder, of the files a step leaves without a reference: written before the
/// step commits (or its result is swapped in), read once it has, to remove them; a run killed in
/// between finds it again (``ExternalDataBackup/completeRemovals(of:work:referenced:)``).
struct ExternalDataRemovals: Codable {
    /// The digest of the entity hashes of the version the store is at once the step has committed: a
    /// store at another version (the step never committed) removes nothing.
    var version: String
    /// The columns (table, column) that may hold references at that version.
    var columns: [[String]]
    /// The files the store referred to before the step and does not after it.
    var files: [String]
}

extension ExternalDataBackup {
    static let removalsRecord = "external-data-removals"

    /// The files the store's references name, read with `model`'s layout; nil when the model has no
    /// attribute that allows external storage (then no reference can be removed either).
    static func names(of store: URL, model: ObjectModel) throws -> Set<String>? {
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
    static func recordRemovals(before: Set<String>, committing database: Database, at target: ObjectModel, work: URL) throws -> Set<String> {
        let columns = try StoreLayout(model: target).externalStorageTableColumns
        let after = try ExternalDataReference.names(referredToIn: database, columns: columns)
        let removed = before.subtracting(after).sorted()
        guard !removed.isEmpty else { return after }
        let record = ExternalDataRemovals(
            version: VersionHashes.digest(StoreMetadata(model: target).entityHashes), columns: columns.map { [$0.table, $0.column] }, files: removed)
        let folder = RunFolder(target: work, kind: .inPlace, work: work)
        try folder.make()
        try folder.write(removalsRecord, String(decoding: try JSONEncoder().encode(record), as: UTF8.self))
        FaultInjection.reach(.inPlaceExternalRecorded)
        return after
    }

    /// Once the step has committed (or its result is swapped in): removes the recorded files that no row
    /// of the committed store refers to (`referenced`, or read from the store again), then the record.
    /// Idempotent: a run killed here, or after the commit and before it, is finished by the next run
    /// (``RunFolder/cleanUp()``, or the next in-place run of the store). A record for a version the store is not
    /// at (the step never committed) is dropped and removes nothing; one that cannot be read yet is kept.
    static func completeRemovals(of store: URL, work: URL, referenced: Set<String>? = nil) {
        let url = work.appending(path: removalsRecord)
        guard let data = FileOperations.contents(ofOwnFile: url.path(percentEncoded: false)) else { return }
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
        if FileOperations.exists(path + "-wal"), (try? FileOperations.sync(path + "-wal")) == nil { return }
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

extension ExternalDataBackup {
    /// Gives the backup `NAME~.EXT` (a copy of the store at `model`'s version, whose references are those
    /// of the store, `referenced`) a support folder of its own, before the store changes: a hard link to
    /// every file it refers to (a synced copy where the file system has no hard links), so that its
    /// references resolve where it is and the files the migration removes stay its. A file of an earlier
    /// backup that this one does not name is removed.
    ///
    /// - Throws: ``MigrationError`` (`.io`, `.interrupted` when the disk is full) when a file cannot be
    ///   linked or copied.
    static func keep(of store: URL, model: ObjectModel, for backup: URL, referenced: Set<String>, links: Bool = true) throws {
        _ = try ExternalDataCarrier.carry(store: store, model: model, source: store, output: backup, links: links)
        let folder = ExternalDataReference.folder(besideStore: backup)
        // (Never listed through a link: `carry` refused one already; this is the rule, kept here too.)
        guard ExternalDataReference.foldersProblem(besideStore: backup) == nil,
            let names = FileOperations.names(in: folder.path(percentEncoded: false)) else { return }
        var removed = false
        for name in names where !referenced.contains(name) {
            FileOperations.remove(folder.appending(path: name).path(percentEncoded: false))
            removed = true
        }
        if removed { FileOperations.syncDirectory(folder.path(percentEncoded: false)) }
    }
}

extension ExternalDataBackup {
    /// Removes the support folder of a copy of the store that is gone (a backup removed because the run
    /// was refused, put back in place of the store, or a private copy removed): its links only.
    static func remove(besideCopy copy: URL) {
        let folder = ExternalDataReference.supportFolder(besideStore: copy)
        guard !FileOperations.isSymbolicLink(folder.path(percentEncoded: false)) else { return }
        try? FileOperations.removeTree(folder)
    }
}
