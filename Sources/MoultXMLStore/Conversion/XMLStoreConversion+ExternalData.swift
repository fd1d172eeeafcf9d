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

    /// Writes an XML store's external-storage values into an SQLite store as Core Data keeps them: a value
    /// of ``fileThreshold`` bytes or more in a file of the store's `_EXTERNAL_DATA` folder (a new UUID for
    /// its name, synced), named in the row; a smaller one in the row, marked `0x01`.
    struct ExternalDataWriter {
        /// The size from which a value is kept in a file (what `moult generate` does; Core Data's own
        /// threshold, reported between 128 KB and 1 MB, is not established).
        static let fileThreshold = 4096
        /// The store's `_EXTERNAL_DATA` folder, made with the first file.
        let folder: URL
        private var madeFolder = false

        init(store: URL) { folder = ExternalDataReference.folder(besideStore: store) }

        /// The column value for `bytes`.
        ///
        /// - Throws: ``/MoultStore/StoreError`` when the folder or the file cannot be written.
        mutating func column(_ bytes: [UInt8]) throws(StoreError) -> [UInt8] {
            guard bytes.count >= Self.fileThreshold else { return ExternalDataReference.marked(bytes) }
            if !madeFolder {
                try FileOperations.makeNewDirectory(folder.deletingLastPathComponent().path(percentEncoded: false))
                try FileOperations.makeNewDirectory(folder.path(percentEncoded: false))
                madeFolder = true
            }
            let reference = ExternalDataReference(fileName: UUID().uuidString)!
            try FileOperations.write(Data(bytes), toNew: folder.appending(path: reference.fileName).path(percentEncoded: false), durable: true)
            return reference.columnBytes
        }
    }
}
