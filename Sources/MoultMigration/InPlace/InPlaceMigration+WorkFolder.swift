public import Foundation
import MoultStore

// MARK: - The work folder's records

/// What an in-place run keeps in its work folder besides its steps' results: the backup it made, found
/// again by a rerun and by ``InPlaceMigration/cleanUp(_:)``.
extension InPlaceMigration {
    /// The checkpoints of the streamed steps of an in-place run of `store` (running or interrupted),
    /// found in its work folder: what `moult status STORE` reports besides the status file.
    public static func checkpoints(of store: URL) -> [MigrationCheckpointStatus] {
        let work = workFolder(for: store)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: work.path) else { return [] }
        return names.sorted().filter { $0.hasSuffix(".sqlite" + RunNames.workSuffix) }.compactMap { name in
            MigrationCheckpointStatus.read(work: work.appending(path: name), step: nil)
        }
    }

    /// What an earlier, interrupted run had recorded of its backup, found by ``cleanUp(_:)``.
    public enum RecordedBackup: Sendable, Hashable {
        /// The backup the earlier run made is where it recorded it.
        case present(URL)
        /// The earlier run recorded a backup that is no longer there.
        case missing(URL)
    }

    /// Removes what an earlier run left beside a store that is now up to date (its work folder), and
    /// says what became of the backup that run recorded, if it made one: a run killed after its swap
    /// finds the store migrated, and the backup must not go missing unnoticed.
    @discardableResult
    public static func cleanUp(_ store: URL) -> RecordedBackup? {
        let work = workFolder(for: store)
        let manager = FileManager.default
        // A lock file a killed run left (nobody holds it): taken and given up, which removes it. Held by a
        // live run, it stays, and so does that run's work folder.
        guard let lock = try? RunLock.acquire(for: store, purpose: "cleaning up after a finished run") else { return nil }
        defer { lock.release() }
        guard manager.fileExists(atPath: work.path) else { return nil }
        completeExternalDataRemovals(of: store, work: work)
        var recorded: RecordedBackup?
        if let path = try? String(contentsOf: work.appending(path: "backup"), encoding: .utf8), !path.isEmpty {
            let url = URL(filePath: path)
            recorded = manager.fileExists(atPath: path) ? .present(url) : .missing(url)
        }
        StreamingMigrator.removeWorkDirectory(work)
        return recorded
    }

    static func recordedBackup(in work: URL) -> URL? {
        guard let path = try? String(contentsOf: work.appending(path: "backup"), encoding: .utf8),
            FileManager.default.fileExists(atPath: path)
        else { return nil }
        return URL(filePath: path)
    }

    /// The name of this run's backup: the one recorded in its work folder (made or about to be), else
    /// the next free one (``freeBackupURL(for:)``).
    static func backupTarget(for store: URL, work: URL) -> URL {
        if let path = try? String(contentsOf: work.appending(path: "backup"), encoding: .utf8), !path.isEmpty { return URL(filePath: path) }
        return freeBackupURL(for: store)
    }

    static func recordBackup(_ backup: URL, in work: URL) throws {
        do {
            try makeWorkFolder(work)
            try FileOperations.writeAtomically(Data(backup.path.utf8), to: work.appending(path: "backup"), durable: true)
        } catch {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): \(error.localizedDescription)", underlying: error)
        }
    }
}
