import Foundation
import MoultModel
import MoultStore

extension MigrationVerifier {
    /// Every external binary data reference of the destination (see ``ExternalDataReference``) names a
    /// file in the destination's own `_EXTERNAL_DATA` folder with the bytes of the source's file of that
    /// name. A reference the source holds with no file (or one naming no file) cannot be checked: it is
    /// listed under "not checked", with the first few objects.
    func checkExternalData(_ store: SQLiteStore, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        guard !store.externalStorageColumns.isEmpty else { return }
        var unchecked: [String] = []
        var uncheckedCount = 0
        var checked = 0
        do {
            try store.forEachExternalReference { row in
                checked += 1
                guard let reference = row.reference else {
                    uncheckedCount += 1
                    if unchecked.count < 3 { unchecked.append("\(row) (a reference naming no file)") }
                    return
                }
                let source = reference.url(besideStore: migration.store)
                let destination = reference.url(besideStore: self.destination)
                // A link, FIFO or device, or a file in a folder that is a link, is no file (never read).
                let hasSource = ExternalDataReference.foldersProblem(besideStore: migration.store) == nil
                    && ExternalDataReference.isPlainFile(source.path(percentEncoded: false))
                let hasDestination = ExternalDataReference.foldersProblem(besideStore: self.destination) == nil
                    && ExternalDataReference.isPlainFile(destination.path(percentEncoded: false))
                guard hasDestination else {
                    if hasSource {
                        fail(VerificationFailure(
                            check: .externalData,
                            message: "\(row): its external file \(reference.fileName) is not in \(destination.deletingLastPathComponent().path) "
                                + "(the source's is \(source.path))"))
                    } else {
                        uncheckedCount += 1
                        if unchecked.count < 3 { unchecked.append("\(row) (\(reference.fileName), missing from the source too)") }
                    }
                    return
                }
                guard hasSource else {
                    uncheckedCount += 1
                    if unchecked.count < 3 { unchecked.append("\(row) (\(reference.fileName): the source has no such file to compare with)") }
                    return
                }
                if try !ExternalDataReference.filesHaveSameContent(source, destination) {
                    fail(VerificationFailure(
                        check: .externalData,
                        message: "\(row): its external file \(destination.path) does not hold the bytes of the source's \(source.path)"))
                }
            }
        } catch {
            throw MigrationError(.io, "reading the external data references of \(self.destination.path): \(error)", underlying: error)
        }
        result.checked[.externalData, default: 0] += checked
        if uncheckedCount > 0 {
            result.skipped.append(
                "\(uncheckedCount) external data reference(s) with no file in the source to compare with, first "
                    + unchecked.joined(separator: "; "))
        }
    }

    /// A Binary value of an attribute that allows external storage, as its bytes: a reference's file read
    /// from `folder`, a value kept in the row without its marker; any other value (and a reference whose
    /// file is not there) as it is. The sample compares these, not the column's encoding: a store made
    /// from an XML store (whose values are inline) names its files anew.
    ///
    /// - Throws: ``/MoultStore/StoreError`` when a file cannot be read.
    static func content(_ value: Value, folder: URL) throws -> Value {
        guard case .data(let bytes) = value, case .bytes(let content) = try ExternalDataReference.inlined(bytes, folder: folder) else { return value }
        return .data(content)
    }
}
