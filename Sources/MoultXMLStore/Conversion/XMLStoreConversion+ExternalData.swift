import Foundation
import MoultModel
import MoultStore

// Binary Data that allows external storage across store types: an XML store holds every such value
// inline (its bytes, base64); an SQLite store marks a value kept in its row (`0x01` + bytes) or names a
// file of its `_EXTERNAL_DATA` folder (`0x02` + name + `0x00`).
extension XMLStoreConversion {
    /// The Binary Data attributes that allow external storage, by entity number: their SQLite column
    /// holds a marked value (see ``/MoultStore/ExternalDataReference``), where an XML store holds the
    /// bare bytes.
    static func externalStorageSlots(_ layout: StoreLayout) -> [Int32: [Int]] {
        var result: [Int32: [Int]] = [:]
        for entity in layout.entities {
            let slots = entity.attributes.indices.filter { slot in
                entity.attributes[slot].type == .binary
                    && layout.model.attribute(named: entity.attributes[slot].name, of: entity.name)?.allowsExternalBinaryDataStorage == true
            }
            if !slots.isEmpty { result[entity.number] = slots }
        }
        return result
    }


    /// Reads an SQLite store's external-storage values into bytes: the bytes after the `0x01` marker, or
    /// the content of the file a reference names (never following a symbolic link).
    struct ExternalDataReader {
        /// The source's `_EXTERNAL_DATA` folder.
        let folder: URL
        let slots: [Int32: [Int]]
        /// The largest value read: what the XML reader reads back as one value's base64.
        static let maximumBytes = XMLPullParser.maximumTextBytes / 4 * 3

        init(store: URL, slots: [Int32: [Int]]) {
            folder = ExternalDataReference.folder(besideStore: store)
            self.slots = slots
        }

        /// Replaces each external-storage value of a row by its bytes.
        ///
        /// - Throws: ``XMLStoreError`` (`.invalidValue`) for a reference whose file is missing (the value
        ///   would be lost), ``/MoultStore/StoreError`` when the file cannot be read or is too large.
        func inline(_ values: inout [Value], of id: ObjectID, entity: EntityLayout) throws {
            for slot in slots[entity.number] ?? [] {
                guard case .data(let column) = values[slot] else { continue }
                switch try ExternalDataReference.inlined(column, folder: folder, maxBytes: Self.maximumBytes) {
                case .bytes(let bytes): values[slot] = .data(bytes)
                case .missing(let name):
                    throw XMLStoreError(
                        .invalidValue,
                        "attribute '\(entity.attributes[slot].name)' of the row Z_PK \(id.primaryKey) refers to the external file \(name ?? "(no plain file name)"), which is not in \(folder.path(percentEncoded: false)): its value would be lost",
                        entity: entity.name)
                case .unchanged: continue
                }
            }
        }
    }
}
