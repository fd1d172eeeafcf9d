import Glibc
public import Foundation

// MARK: - The flag changing between versions

extension ExternalDataReference {
    /// What a Binary Data value becomes when its attribute's `allowsExternalBinaryDataStorage` changes
    /// between two versions: the column's format changes with it (see <doc:ExternalBinaryStorage>).
    public enum Conversion: String, Sendable, Hashable, CustomStringConvertible {
        /// Off → on: the bare bytes are marked as kept in the row, `0x01` + bytes (Core Data reads a value
        /// whose first byte is not 1 as a file's name).
        case mark
        /// On → off: `0x01` + bytes become the bare bytes, and a file's value (`0x02` + name + `0x00`) is read
        /// from the file into the row (the file is then not carried: nothing refers to it any more).
        case inline

        /// The conversion from an attribute with the flag `from` to one with `to`; nil when it does not change.
        public init?(from: Bool, to: Bool) {
            guard from != to else { return nil }
            self = to ? .mark : .inline
        }

        public var description: String {
            switch self {
            case .mark: "allowsExternalBinaryDataStorage turned on: bare bytes marked 0x01"
            case .inline: "allowsExternalBinaryDataStorage turned off: values kept in the row, files read into it"
            }
        }
    }

    /// An off → on value: the marker ``inlineMarker`` followed by the bytes.
    public static func marked(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var result: [UInt8] = [inlineMarker]
        result.reserveCapacity(bytes.count + 1)
        result.append(contentsOf: bytes)
        return result
    }

    /// What an on → off column value becomes (see ``inlined(_:folder:maxBytes:)``).
    public enum Inlined: Sendable, Hashable {
        /// The bare bytes: the value without its marker, or the file's content.
        case bytes([UInt8])
        /// A reference whose file is not in the folder, or that names no plain file: the value is lost
        /// (Core Data could not read it either), and becomes nil.
        case missing(String?)
        /// Neither marker: not a value Core Data wrote; kept as it is.
        case unchanged
    }

    /// What an on → off column value becomes: `0x01` + bytes the bytes, `0x02` + name + `0x00` the content
    /// of that file in `folder`.
    ///
    /// ```swift
    /// let folder = ExternalDataReference.folder(besideStore: storeURL)
    /// if case .bytes(let bytes) = try ExternalDataReference.inlined(column, folder: folder) { … }
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.invalidValue`) when the file holds more than `maxBytes`, `.ioFailure`
    ///   when it cannot be read.
    public static func inlined(_ column: [UInt8], folder: URL, maxBytes: Int = .max) throws(StoreError) -> Inlined {
        switch column.first {
        case inlineMarker:
            return .bytes(Array(column.dropFirst()))
        case externalMarker:
            guard let reference = ExternalDataReference(columnBytes: column) else { return .missing(nil) }
            guard let bytes = try reference.contents(in: folder, maxBytes: maxBytes) else { return .missing(reference.fileName) }
            return .bytes(bytes)
        default:
            return .unchanged
        }
    }

    /// Whether this reference's file is in `folder`, as a plain file (a symbolic link is not followed).
    public func isPresent(in folder: URL) -> Bool {
        ExternalDataReference.isPlainFile(folder.appending(path: fileName).path(percentEncoded: false))
    }

    /// The bytes of this reference's file in `folder`, or nil when there is no such file. A symbolic link
    /// is never followed (a file of the folder is a plain file): it is no file.
    ///
    /// - Throws: ``StoreError`` (`.invalidValue`) when the file holds more than `maxBytes`, `.ioFailure`
    ///   when it cannot be read.
    public func contents(in folder: URL, maxBytes: Int = .max) throws(StoreError) -> [UInt8]? {
        let path = folder.appending(path: fileName).path(percentEncoded: false)
        // Never waited on: a FIFO or a device is no file, never opened for reading.
        return try FileOperations.withRegularFile(path) { (descriptor, size) throws(StoreError) in
            guard size <= maxBytes else {
                throw StoreError.valueTooLarge("the external file", bytes: size, limit: maxBytes, path: path)
            }
            return try FileOperations.readAll(descriptor, size: size, path: path)
        }
    }
}
