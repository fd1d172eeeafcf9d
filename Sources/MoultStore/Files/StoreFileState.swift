import Glibc
public import Foundation

/// What a store's files look like from outside, cheaply: enough to tell that another program wrote to the
/// store, without reading its content.
///
/// Any committed write through SQLite changes at least one of these: in rollback-journal mode the main
/// file's change counter (header bytes 24–27) and its modification time; in WAL mode the `-wal` file's
/// size, modification time or header (its salts change each time the log restarts), and the main file's
/// when the log is checkpointed into it. The file's identity (device and inode) is recorded but not
/// compared: a copy with the same bytes and times (`cp -p`, a restore that keeps times) is the same store,
/// and a copy of another state of it differs in its time or counter.
///
/// Moult records the state of a source when a migration starts, checks it between chunks (another
/// program writing to the source while it is read is refused rather than giving a destination no state
/// of the source had), and compares it before resuming an interrupted run (a store changed since is not
/// resumed into a mix of two states).
///
/// ```swift
/// let before = try StoreFileState(of: storeURL)
/// // … read the store …
/// let changes = try StoreFileState(of: storeURL).differences(from: before)   // [] when unchanged
/// ```
public struct StoreFileState: Sendable, Hashable {
    /// The main file's device and inode.
    public var device: UInt64
    public var inode: UInt64
    /// The main file's size in bytes and its modification time in nanoseconds since 1970.
    public var size: Int64
    public var modified: Int64
    /// The file change counter of the SQLite header (bytes 24–27).
    public var changeCounter: UInt32
    /// The `-wal` file's size, modification time and 32-byte header (hex), when there is one.
    public var walSize: Int64?
    public var walModified: Int64?
    public var walHeader: String?
    /// Whether a rollback `-journal` is beside the store (a write in progress, or one interrupted).
    public var hasJournal: Bool
    /// What a reader of the store sees, when it was read (``init(of:content:)`` with `content`): then it
    /// alone decides whether two states are the same store.
    public var content: StoreContentDigest?

    /// Reads the state of the store at `url` and its companions; with `content`, its content's digest too
    /// (a read of the whole store: see ``StoreContentDigest``).
    ///
    /// - Throws: ``StoreError/Code/notFound`` or ``StoreError/Code/ioFailure`` when the file cannot be read.
    public init(of url: URL, content: Bool = false) throws(StoreError) {
        let path = url.path(percentEncoded: false)
        guard let info = FileOperations.followedAttributes(path) else {
            if errno == ENOENT { throw StoreError(.notFound, "there is no file here", path: path) }
            throw FileOperations.failure("cannot read the state of", path)
        }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let header = Self.read(path, offset: 24, count: 4)
        changeCounter = header.count == 4 ? header.reduce(0) { $0 << 8 | UInt32($1) } : 0
        if let wal = FileOperations.followedAttributes(path + "-wal") {
            walSize = Int64(wal.st_size)
            walModified = Int64(wal.st_mtim.tv_sec) * 1_000_000_000 + Int64(wal.st_mtim.tv_nsec)
            walHeader = Self.read(path + "-wal", offset: 0, count: 32).map { String(format: "%02x", $0) }.joined()
        }
        hasJournal = (FileOperations.followedAttributes(path + "-journal")?.st_size ?? 0) > 0
        self.content = content ? try StoreContentDigest(of: url) : nil
    }

    /// What differs from `other`, in words (empty when nothing does).
    ///
    /// When both states hold their ``content``, the content decides: the same pages are the same store
    /// whatever its times, sizes and `-wal` (a copy made with `cp -p`, a checkpoint), and other pages are
    /// another state of it whatever its times say. Without it, the cheap signs are compared, and any of
    /// them differing counts.
    public func differences(from other: StoreFileState) -> [String] {
        if let content, let before = other.content {
            guard content != before else { return [] }
            let signs = StoreFileState(cheapOf: self).differences(from: StoreFileState(cheapOf: other))
            return ["its content (what a reader of it sees)"] + signs
        }
        var found: [String] = []
        if size != other.size { found.append("its size (\(other.size) → \(size) bytes)") }
        if changeCounter != other.changeCounter { found.append("its change counter (\(other.changeCounter) → \(changeCounter))") }
        if modified != other.modified && found.isEmpty { found.append("its modification time") }
        // An empty -wal holds nothing: the same as none (a reader of a WAL store may make one).
        switch (other.walSize.flatMap { $0 > 0 ? $0 : nil }, walSize.flatMap { $0 > 0 ? $0 : nil }) {
        case (nil, nil): break
        case (nil, _?): found.append("a -wal file appeared")
        case (_?, nil): found.append("its -wal file went away (checkpointed into the store)")
        case (let before?, let now?):
            if before != now || other.walHeader != walHeader || other.walModified != walModified {
                // (Frames appended, or the log restarted: new salts in its header.)
                found.append("its -wal file (\(before) → \(now) bytes)")
            }
        }
        if hasJournal != other.hasJournal { found.append(hasJournal ? "a -journal appeared (a write in progress)" : "its -journal went away") }
        return found
    }

    private init(cheapOf state: StoreFileState) {
        self = state
        content = nil
    }

    /// The state as one line of text, for a record in a work folder.
    public var text: String {
        let fields = [
            "\(device)", "\(inode)", "\(size)", "\(modified)", "\(changeCounter)",
            // An empty `-wal` has an empty header: written "." (a field of its own), nil "-".
            walSize.map { "\($0)" } ?? "-", walModified.map { "\($0)" } ?? "-", walHeader.map { $0.isEmpty ? "." : $0 } ?? "-", hasJournal ? "1" : "0",
        ]
        return (fields + (content.map { [$0.hex] } ?? [])).joined(separator: " ")
    }

    /// Reads a state written by ``text``; nil for text that is not one.
    public init?(text: String) {
        let fields = text.split(separator: " ").map(String.init)
        guard fields.count == 9 || fields.count == 10, let device = UInt64(fields[0]), let inode = UInt64(fields[1]), let size = Int64(fields[2]),
            let modified = Int64(fields[3]), let counter = UInt32(fields[4])
        else { return nil }
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changeCounter = counter
        walSize = Int64(fields[5])
        walModified = Int64(fields[6])
        walHeader = fields[7] == "-" ? nil : fields[7] == "." ? "" : fields[7]
        hasJournal = fields[8] == "1"
        // (A record an earlier release wrote has no content: it is compared by the cheap signs.)
        content = fields.count == 10 ? StoreContentDigest(hex: fields[9]) : nil
        if fields.count == 10 && content == nil { return nil }
    }

    private static func read(_ path: String, offset: Int, count: Int) -> [UInt8] {
        let descriptor = FileOperations.openDescriptor(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return read > 0 ? Array(bytes.prefix(read)) : []
    }
}
