import Foundation
import MoultModel
import MoultStore

/// What `inspect` says of a store's external binary data (see ``ExternalDataReference``).
struct ExternalDataCount {
    /// The store's `_EXTERNAL_DATA` folder.
    var folder: URL
    /// Files in it (hidden ones, a copy cut short, left out).
    var files: Int
    /// References in the store, when a model to read it with is at hand.
    var references: Int?
    /// References whose file is not in the folder.
    var missing: Int?

    /// Counts the files beside the store at `url`, and, with `model`, the references in it.
    init(store url: URL, model: ObjectModel?) {
        folder = ExternalDataReference.folder(besideStore: url)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))) ?? []
        files = entries.filter { !$0.hasPrefix(".") }.count
        guard let model, model.entities.contains(where: { $0.attributes.contains(where: \.allowsExternalBinaryDataStorage) }) else { return }
        // A store the model does not open (or read) has its files counted, not its references.
        guard let store = try? SQLiteStore(url: url, model: model, configuration: .init(pageCacheKiB: 256)) else { return }
        defer { store.database.close() }
        var references = 0, missing = 0
        do {
            try store.forEachExternalReference { row in
                references += 1
                if let reference = row.reference, FileManager.default.fileExists(atPath: reference.url(besideStore: url).path(percentEncoded: false)) {
                    return
                }
                missing += 1
            }
        } catch {
            return
        }
        self.references = references
        self.missing = missing
    }

    /// Whether there is anything to say: files, or references.
    var isEmpty: Bool { files == 0 && (references ?? 0) == 0 }

    var line: String {
        var text = "external data: \(files) file(s) in \(folder.path(percentEncoded: false))"
        if let references, let missing { text += ", \(references) reference(s) in the store, \(missing) with no file" }
        return text
    }

    /// What `inspect --json` says of it.
    struct Report: Encodable {
        var folder: String
        var files: Int
        /// Left out when the references could not be counted.
        var references: Int?
        var missing: Int?
    }

    var report: Report {
        Report(folder: folder.path(percentEncoded: false), files: files, references: references, missing: missing)
    }
}
