public import Foundation
import MoultEngine
import MoultStore

// MARK: - The backup an in-place run keeps

/// The original an in-place run keeps (`NAME~.EXT`, Core Data's name): its name is recorded in the run
/// folder before it is made, so that a rerun after a kill takes the same name, and a clean-up after a
/// finished run says what became of it. A backup is never replaced.
extension RunFolder {
    /// What an earlier, interrupted run had recorded of its backup, found by ``cleanUp()``.
    public enum RecordedBackup: Sendable, Hashable {
        /// The backup the earlier run made is where it recorded it.
        case present(URL)
        /// The earlier run recorded a backup that is no longer there.
        case missing(URL)
    }

    static let backupRecord = "backup"

    /// The backup this run folder recorded, when it is there.
    var recordedBackup: URL? {
        guard let path = read(Self.backupRecord), FileOperations.exists(path) else { return nil }
        return URL(filePath: path)
    }

    /// The name of this run's backup: the one recorded (made or about to be), else the next free one
    /// (``freeBackup(for:)``).
    func backupTarget() -> URL {
        read(Self.backupRecord).map { URL(filePath: $0) } ?? Self.freeBackup(for: target)
    }

    /// Records the backup's name (the folder made if need be), before the backup is made.
    func recordBackup(_ backup: URL) throws {
        try make()
        try write(Self.backupRecord, backup.path)
    }

    /// Removes the note of a backup not made after all (and the folder, when nothing else is in it).
    func forgetBackup() {
        try? FileOperations.removeTree(record(Self.backupRecord))
        // (What the folder holds besides its records of its entries and of the backup.)
        let held = FileOperations.names(in: work.path) ?? []
        if held.allSatisfy({ $0 == Self.madeRecord || $0 == Self.backupRecord }) { remove() }
    }

    /// The name the next backup of `store` takes: `NAME~.EXT`, or when an earlier migration's backup
    /// holds that name, the first free `NAME~N.EXT`. A name anything holds (a link, even one to
    /// nothing, included), or whose support folder is there, is not free.
    public static func freeBackup(for store: URL) -> URL {
        var number = 1
        while FileOperations.attributes(RunNames.backup(of: store, number: number).path) != nil
            || FileOperations.attributes(ExternalDataReference.supportFolder(besideStore: RunNames.backup(of: store, number: number)).path) != nil
        {
            number += 1
        }
        return RunNames.backup(of: store, number: number)
    }

    /// Copies the checkpointed store to `target` (through a temporary name, so the backup appears whole
    /// or not at all), synced before the store changes.
    static func copyBackup(of store: URL, to target: URL? = nil) throws -> URL {
        let target = target ?? freeBackup(for: store)
        let temporary = RunNames.temporaryBackup(for: target)
        try? FileOperations.removeTree(temporary)
        do {
            try FileOperations.copyFile(store.path(percentEncoded: false), toNew: temporary.path(percentEncoded: false), durable: true)
        } catch {
            // Whether the disk is full is seen before the partial copy frees its space.
            let full = RunFiles.isNearlyFull(store.deletingLastPathComponent()) || error.code == .diskFull
            try? FileOperations.removeTree(temporary)
            if full {
                throw MigrationError(.interrupted, "the disk is full: no room for the backup \(target.path); the store was not changed", underlying: error)
            }
            throw MigrationError(.io, "cannot copy the store to \(target.path): \(error.localizedDescription)", underlying: error)
        }
        FaultInjection.reach(.inPlaceBackupCopied)
        try RunFiles.rename(temporary, to: target)
        return target
    }

    /// Keeps the store as its backup by a hard link (its name appears at once, complete), or by a copy
    /// on a filesystem without hard links; the name recorded first.
    func linkBackup(of store: URL) throws -> URL {
        let target = backupTarget()
        try recordBackup(target)
        let temporary = RunNames.temporaryBackup(for: target)
        try? FileOperations.removeTree(temporary)
        if FileOperations.hardLink(store.path(percentEncoded: false), to: temporary.path(percentEncoded: false)) {
            try RunFiles.rename(temporary, to: target)
            return target
        }
        return try Self.copyBackup(of: store, to: target)
    }

    // MARK: - After a finished run

    /// The checkpoints of the streamed steps of an in-place run (running or interrupted), found in its
    /// folder: what `moult status STORE` reports besides the status file.
    public func checkpoints() -> [MigrationCheckpointStatus] {
        guard let names = FileOperations.names(in: work.path) else { return [] }
        return names.sorted().filter { $0.hasSuffix(".sqlite" + RunNames.workSuffix) }.compactMap { name in
            MigrationCheckpointStatus.read(work: work.appending(path: name), step: nil)
        }
    }

    /// Removes what an earlier run left beside a store that is now up to date (its work folder), and
    /// says what became of the backup that run recorded, if it made one: a run killed after its swap
    /// finds the store migrated, and the backup must not go missing unnoticed.
    @discardableResult
    public func cleanUp() -> RecordedBackup? {
        let manager = FileManager.default
        // A lock file a killed run left (nobody holds it): taken and given up, which removes it. Held by a
        // live run, it stays, and so does that run's work folder.
        guard let lock = try? Self.claim(target, purpose: "cleaning up after a finished run") else { return nil }
        defer { lock.release() }
        guard FileOperations.exists(work.path) else { return nil }
        ExternalDataBackup.completeRemovals(of: target, work: work)
        var recorded: RecordedBackup?
        if let path = read(Self.backupRecord) {
            let url = URL(filePath: path)
            recorded = FileOperations.exists(path) ? .present(url) : .missing(url)
        }
        remove()
        return recorded
    }
}
