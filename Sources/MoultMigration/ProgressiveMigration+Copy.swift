public import Foundation
import MoultEngine
import MoultModel
import MoultStore

extension ProgressiveMigration {
    /// A store already at the target version, given an output: the output is a copy of it (its `-wal`
    /// included, its external binary data files beside it), recording this migration (see
    /// ``/MoultEngine/MigrationOptions/runRecord``), so that a batch job's output is there whatever
    /// version its input was at. Written to a temporary file beside the output, synced, then renamed.
    ///
    /// - Returns: false when `output` is already this copy (a rerun): nothing is written.
    /// - Throws: ``/MoultEngine/MigrationError`` `.outputExists` (another file is there), `.busy`,
    ///   `.io`, `.interrupted` (the disk is full).
    public func copyUpToDate(to output: URL) throws -> Bool {
        precondition(isUpToDate, "copyUpToDate(to:) is for a store already at the target version")
        let lock = try RunFolder.claim(output, purpose: "copying the store to it")
        defer { lock.release() }
        let record = try runRecord()
        let manager = FileManager.default
        if FileOperations.exists(output.path) {
            if (try? StoreMetadata(contentsOf: output).runRecord) == record { return false }
            throw MigrationError(.outputExists, "\(output.path) already exists; Moult never overwrites a store")
        }
        let temporary = RunNames.upToDateCopy(for: output)
        try? FileOperations.removeTree(temporary)
        do {
            let source = try Database(url: store, mode: .readOnly)
            do {
                try source.copy(into: temporary.path(percentEncoded: false))
                source.close()
            } catch {
                source.close()
                throw error
            }
            let copy = try Database(url: temporary, mode: .readWrite)
            do {
                try copy.setSynchronous(.full)
                var metadata = try StoreMetadata(reading: copy)
                metadata.additionalKeys[StoreMetadata.runKey] = .string(record)
                try copy.write { try metadata.write(to: copy) }
                copy.close()
            } catch {
                copy.close()
                throw error
            }
            // A reference with no file stays as it was in the store (the copy changes nothing).
            _ = try ExternalDataCarrier.carry(
                store: temporary, model: targetVersion.model, source: store, output: output, links: options.linksExternalData)
            try FileOperations.sync(temporary.path(percentEncoded: false))
            try FileOperations.rename(temporary.path(percentEncoded: false), to: output.path(percentEncoded: false), durable: true)
        } catch {
            try? FileOperations.removeTree(temporary)
            throw MigrationError.classifying(error)
        }
        return true
    }
}
