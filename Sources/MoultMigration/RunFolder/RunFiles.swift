import Foundation
import MoultEngine
import MoultModel
import MoultStore
import MoultXMLStore

/// What every driver does to the files of a run the same way: syncing, renaming into place, seeing a
/// full disk, emptying a store's WAL before a copy or a swap, removing a store of a work folder.
enum RunFiles {
    /// Syncs a file (or a folder's entries) to the disk.
    static func sync(_ url: URL) throws {
        do {
            try FileOperations.sync(url.path(percentEncoded: false))
        } catch {
            throw MigrationError(.interrupted, "syncing \(url.path) failed (\(error.message)); run again to resume")
        }
    }

    /// Renames `from` over `to`, the folder synced after it (a store swapped in, a backup named).
    static func rename(_ from: URL, to: URL) throws {
        do {
            try FileOperations.rename(from.path(percentEncoded: false), to: to.path(percentEncoded: false), durable: true)
        } catch {
            throw MigrationError(.io, "cannot rename \(from.path) to \(to.path): \(error.message)")
        }
    }

    /// Whether the filesystem holding `directory` has less than 1 MiB (or 0.1%) left for this user.
    static func isNearlyFull(_ directory: URL) -> Bool {
        guard let (available, total) = FileOperations.space(of: directory.path(percentEncoded: false)) else { return false }
        return available < 1 << 20 || (total > 0 && available < total / 1000)
    }

    /// Opens the store for writing and checks that no other connection holds a lock, then checkpoints
    /// its WAL into the main file (so that a copy of the main file is the whole store).
    static func checkpoint(_ store: URL, timeout: Duration) throws {
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 1024, busyTimeout: timeout))
        defer { database.close() }
        do {
            try database.transaction(.immediate) {}
        } catch let error as StoreError where error.code == .locked {
            throw MigrationError(.io, "another process holds a lock on \(store.path); the store was not changed", underlying: error)
        }
        guard try database.checkpointWALIfInWALMode() else {
            throw MigrationError(.io, "another process is reading \(store.path): its WAL cannot be checkpointed; the store was not changed")
        }
    }

    /// Whether the store's `-wal` holds frames not yet in its main file (the store in WAL mode).
    static func walHoldsData(_ store: URL) -> Bool {
        (FileOperations.size(of: store.path + "-wal") ?? 0) > 0
    }

    /// Removes a store Moult made in a work folder, with its companion files.
    static func removeStore(_ url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileOperations.removeTree(URL(filePath: url.path + suffix))
        }
    }
}

extension MigrationError {
    /// Any error of a run as a ``/MoultEngine/MigrationError`` with the right category: a full disk or
    /// an interruption is resumable.
    static func classifying(_ error: any Error) -> MigrationError {
        if let error = error as? MigrationError {
            if let underlying = error.underlying, case let inner = classifying(underlying), inner.code == .interrupted {
                var copy = error
                copy.code = .interrupted
                return copy
            }
            return error
        }
        if let store = error as? StoreError, store.code == .busy {
            // The store error's path and message are the whole of it: said once, not again as its cause.
            return MigrationError(.busy, (store.path.map { "\($0): " } ?? "") + store.message)
        }
        if let store = error as? StoreError, store.code == .diskFull {
            return MigrationError(
                .interrupted, "the disk is full; free some space and run the same command again to resume", underlying: error)
        }
        if let categorized = error as? any CategorizedError {
            switch categorized.category {
            case .interrupted:
                return MigrationError(.interrupted, "stopped; run the same command again to resume", underlying: error)
            case .io:
                return MigrationError(.io, categorized.description, underlying: error)
            case .badInput:
                // A store's own content (a damaged file, a value its attribute cannot hold) is not the mapping's fault.
                return MigrationError(
                    error is StoreError || error is XMLStoreError ? .invalidStore : .invalidMapping, categorized.description, underlying: error)
            case .incompatible:
                return MigrationError(.incompatibleStore, categorized.description, underlying: error)
            case .validationFailed:
                return MigrationError(.validationFailed, categorized.description, underlying: error)
            case .busy:
                return MigrationError(.busy, categorized.description, underlying: error)
            case .usage, .internalError:
                break
            }
        }
        return MigrationError(.io, "\(error)", underlying: error)
    }
}
