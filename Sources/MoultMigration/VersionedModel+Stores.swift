public import MoultModel
import Foundation
import MoultStore

extension VersionedModel {
    /// Each version's differences from a store's entity hashes, one line per version: what `migrate`
    /// and `inspect` print when no version matches a store.
    public func versionDifferences(from storeHashes: [String: VersionHash]) -> String {
        let lines = versions.map { version in
            "  \(version.name): " + version.model.hashDifferences(from: storeHashes).map(\.description).joined(separator: "; ")
        }
        guard versions.count == 1 else { return lines.joined(separator: "\n") }
        // A single .xcdatamodel given where its .xcdatamodeld was meant.
        return (lines + [
            "  the model has one version only: give the .xcdatamodeld folder that holds every version (not one .xcdatamodel in it), so that the store's own version is found"
        ]).joined(separator: "\n")
    }
}

extension VersionedModel.Version {
    /// Whether a store is there, readable, and at this version (by its entity hashes): how a driver
    /// knows a step's result in its run folder is finished.
    func holdsStore(at url: URL) -> Bool {
        guard let metadata = try? StoreMetadata(contentsOf: url) else { return false }
        return model.hashDifferences(from: metadata.entityHashes).isEmpty
    }
}
