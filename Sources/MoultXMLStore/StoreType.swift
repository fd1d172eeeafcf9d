public import Foundation
import MoultStore

/// The type of a Core Data store file, found from its first bytes, never from its name.
///
/// ```swift
/// switch try StoreType(contentsOf: url) {
/// case .sqlite: …                        // "SQLite format 3\0"
/// case .xml: …                           // <?xml …?> … <database>
/// case .binary: throw …                  // refused: see the article "The XML store format"
/// }
/// ```
public enum StoreType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `NSSQLiteStoreType`.
    case sqlite
    /// `NSXMLStoreType`.
    case xml
    /// `NSBinaryStoreType`, which Moult does not read.
    case binary

    /// Core Data's name of the type.
    public var coreDataName: String {
        switch self {
        case .sqlite: "NSSQLiteStoreType"
        case .xml: "NSXMLStoreType"
        case .binary: "NSBinaryStoreType"
        }
    }

    public var description: String { rawValue }

    /// The type of the file at `url`, from its first 4 KiB.
    ///
    /// - Throws: ``XMLStoreError``: `.ioFailure` when the file cannot be read; `.malformed` when it is a
    ///   folder, or its content is none of Core Data's store types (the message says what it begins with).
    public init(contentsOf url: URL) throws(XMLStoreError) {
        let path = url.path(percentEncoded: false)
        if FileOperations.isFolder(path) {
            throw XMLStoreError(.malformed, "this is a folder, not a store: give the store's file (NAME.sqlite or NAME.xml) itself", path: path)
        }
        let head: Data
        do {
            let handle = FileHandle(fileDescriptor: try FileOperations.openForReading(path), closeOnDealloc: true)
            defer { try? handle.close() }
            head = try handle.read(upToCount: 4096) ?? Data()
        } catch {
            throw XMLStoreError(.ioFailure, "cannot read the store: \(error.localizedDescription)", path: path)
        }
        guard let type = Self(head: [UInt8](head)) else {
            let shown = String(decoding: head.prefix(16), as: UTF8.self).map { $0.isASCII && !$0.isNewline ? String($0) : "." }.joined()
            throw XMLStoreError(
                .malformed, "the file is not a Core Data store Moult knows: it is neither SQLite nor Core Data's XML store (it begins with '\(shown)')",
                path: path)
        }
        self = type
    }

    /// The type of a store beginning with these bytes, nil when none.
    public init?(head: [UInt8]) {
        if head.starts(with: Array("SQLite format 3\0".utf8)) {
            self = .sqlite
            return
        }
        // Core Data's binary store is a keyed archive written as a binary property list (to be
        // confirmed on a real file: see the article); an XML store begins with its XML declaration.
        if head.starts(with: Array("bplist00".utf8)) {
            self = .binary
            return
        }
        var text = head[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        let string = String(decoding: text, as: UTF8.self)
        let trimmed = string.drop { $0.isWhitespace }
        guard trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<!DOCTYPE database") || trimmed.hasPrefix("<database") else { return nil }
        guard string.contains("<database>") || string.contains("<database ") else { return nil }
        self = .xml
    }

    /// The message refusing a type Moult does not read.
    public static func unsupported(_ type: StoreType, path: String) -> XMLStoreError {
        XMLStoreError(
            .unsupportedType,
            "this looks like Core Data's binary store (\(type.coreDataName)), which Moult does not read: its format could not be established "
                + "from files Core Data wrote. Convert it to SQLite or XML with Core Data (migratePersistentStore(_:to:options:type:)) first",
            path: path)
    }
}
