import Glibc
public import Foundation

/// What the column of a Binary Data attribute that allows external storage
/// (`allowsExternalBinaryDataStorage`) holds when Core Data kept the value as a file: the marker byte
/// `0x02`, the file's name (a UUID string, UTF-8) and a NUL.
///
/// Such a column never holds bare bytes: a value kept in the row is the marker `0x01` followed by the
/// value's bytes. The file is `.<store name>_SUPPORT/_EXTERNAL_DATA/<name>` beside the store, where the
/// store name is the store file's name without its extension (see <doc:ExternalBinaryStorage>).
///
/// ```swift
/// let column: [UInt8] = [0x02] + Array("6F1C2B3A-0000-4000-8000-000000000001".utf8) + [0]
/// let reference = try #require(ExternalDataReference(columnBytes: column))
/// let file = reference.url(besideStore: URL(filePath: "/data/bo.sqlite"))
/// // /data/.bo_SUPPORT/_EXTERNAL_DATA/6F1C2B3A-0000-4000-8000-000000000001
/// ```
public struct ExternalDataReference: Sendable, Hashable, CustomStringConvertible {
    /// The first byte of a column value kept in the row: the value's bytes follow.
    public static let inlineMarker: UInt8 = 0x01
    /// The first byte of a column value kept as a file: the file's name and a NUL follow.
    public static let externalMarker: UInt8 = 0x02
    /// The folder, inside the support folder, holding the files.
    public static let folderName = "_EXTERNAL_DATA"

    /// The file's name in the store's `_EXTERNAL_DATA` folder.
    public let fileName: String

    /// A reference to the file `fileName`, which must be a plain file name (no `/`, not `.` or `..`).
    public init?(fileName: String) {
        guard Self.isPlainFileName(fileName) else { return nil }
        self.fileName = fileName
    }

    /// The reference a column value holds, or nil when the value is not one: it does not start with
    /// ``externalMarker``, does not end with a NUL, or names no plain file (a name with a `/`, a NUL,
    /// `.` or `..`, or bytes that are not UTF-8, which Moult would not follow out of the folder).
    public init?(columnBytes: some Collection<UInt8>) {
        let bytes = Array(columnBytes)
        guard bytes.count >= 3, bytes.first == Self.externalMarker, bytes.last == 0 else { return nil }
        let name = bytes.dropFirst().dropLast()
        guard !name.contains(0), let text = String(validating: Array(name), as: UTF8.self) else { return nil }
        self.init(fileName: text)
    }

    /// Whether a column value is a reference (starts with ``externalMarker``), well formed or not.
    public static func isReference(_ bytes: some Collection<UInt8>) -> Bool { bytes.first == externalMarker }

    /// The column value: the marker, the name, a NUL.
    public var columnBytes: [UInt8] { [Self.externalMarker] + Array(fileName.utf8) + [0] }

    /// The file this reference names for the store at `store`.
    public func url(besideStore store: URL) -> URL { Self.folder(besideStore: store).appending(path: fileName) }

    public var description: String { "external file \(fileName)" }

    // MARK: - Folders

    /// Whether the external data folders beside `store` are real folders or absent: `nil` when they are,
    /// else what is wrong (a symbolic link, or not a folder), naming it. Nothing is read or removed
    /// inside a folder that is not one of the store's own.
    public static func foldersProblem(besideStore store: URL) -> String? {
        for folder in [supportFolder(besideStore: store), folder(besideStore: store)] {
            let path = folder.path(percentEncoded: false)
            guard let info = FileOperations.attributes(path) else { return nil }  // (absent: so is what it would hold)
            switch info.st_mode & S_IFMT {
            case S_IFDIR: continue
            case S_IFLNK: return "\(path) is a symbolic link"
            default: return "\(path) is not a folder"
            }
        }
        return nil
    }

    /// Whether `path` is a plain file (not a link, FIFO, device or folder), by `lstat`.
    public static func isPlainFile(_ path: String) -> Bool {
        FileOperations.attributes(path).map { $0.st_mode & S_IFMT == S_IFREG } ?? false
    }

    /// The hidden support folder of the store at `store`: `.<name without extension>_SUPPORT` beside it.
    public static func supportFolder(besideStore store: URL) -> URL {
        let name = store.deletingPathExtension().lastPathComponent
        return store.deletingLastPathComponent().appending(path: ".\(name)_SUPPORT")
    }

    /// The folder holding the external files of the store at `store`.
    public static func folder(besideStore store: URL) -> URL {
        supportFolder(besideStore: store).appending(path: folderName)
    }

    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
    }
}

// MARK: - Comparing files

extension ExternalDataReference {
    /// Whether two files hold the same bytes: the same file (one inode, as a hard link makes), or two of
    /// one size whose contents compare equal, read a block at a time.
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when either cannot be read.
    public static func filesHaveSameContent(_ first: URL, _ second: URL) throws(StoreError) -> Bool {
        let a = first.path(percentEncoded: false), b = second.path(percentEncoded: false)
        guard let infoA = FileOperations.followedAttributes(a) else { throw FileOperations.failure("cannot read the attributes of", a) }
        guard let infoB = FileOperations.followedAttributes(b) else { throw FileOperations.failure("cannot read the attributes of", b) }
        if infoA.st_dev == infoB.st_dev && infoA.st_ino == infoB.st_ino { return true }
        guard infoA.st_size == infoB.st_size else { return false }
        let (descriptorA, descriptorB) = (FileOperations.openDescriptor(a, O_RDONLY | O_NONBLOCK), FileOperations.openDescriptor(b, O_RDONLY | O_NONBLOCK))
        let handleA = FileHandle(fileDescriptor: descriptorA, closeOnDealloc: false)
        let handleB = FileHandle(fileDescriptor: descriptorB, closeOnDealloc: false)
        guard descriptorA >= 0, descriptorB >= 0 else {
            if descriptorA >= 0 { try? handleA.close() }
            if descriptorB >= 0 { try? handleB.close() }
            throw StoreError(.ioFailure, "cannot open \(a) or \(b) to compare them", path: a)
        }
        defer {
            try? handleA.close()
            try? handleB.close()
        }
        do {
            while true {
                let blockA = try handleA.read(upToCount: 1 << 20) ?? Data()
                let blockB = try handleB.read(upToCount: 1 << 20) ?? Data()
                if blockA != blockB { return false }
                if blockA.isEmpty { return true }
            }
        } catch {
            throw StoreError(.ioFailure, "cannot read \(a) or \(b) to compare them: \(error)", path: a)
        }
    }
}
