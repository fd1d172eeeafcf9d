import Foundation
import MoultModel
import MoultStore

/// External binary data in a staged run: each lightweight step, run in place, removes the files its
/// store no longer names once it has committed. The copy the run makes before writing anything (the
/// backup, or a private copy to put back if the run is refused) keeps its own links to the files it
/// names, so that it stays whole, and a copy put back gives them back to the store's folder.
extension StagedMigration {
    /// Gives `original`, the copy of the store at `version` this run made, a support folder of its own.
    func keepExternalData(of original: URL, at version: VersionedModel.Version) throws {
        guard let names = try ExternalDataBackup.names(of: store, model: version.model) else { return }
        try ExternalDataBackup.keep(of: store, model: version.model, for: original, referenced: names, links: options.linksExternalData)
    }

    /// Before `original` is put back in place of the store: every file it names is linked back into the
    /// store's folder (a step may have removed it there).
    func restoreExternalData(of original: URL) throws {
        guard let version = storeVersion else { return }
        _ = try ExternalDataCarrier.carry(store: original, model: version.model, source: original, output: store, links: options.linksExternalData)
    }
}
