import Glibc
public import Foundation
import Synchronization

/// The one room through which Moult's own durability-relevant file operations go: creating, writing,
/// syncing, renaming and removing the files Moult makes beside stores (status files, markers, records,
/// lock files), and syncing their folders.
///
/// SQLite and LMDB keep their own files durable under the `synchronous` and `MDB_NOSYNC` settings the
/// migrators choose; this room covers everything else. Every operation is reported to ``trace`` when one
/// is set, so a harness can record the order of writes, syncs and renames of a run and build the states a
/// power loss could leave.
///
/// ```swift
/// try FileOperations.writeAtomically(Data("{}".utf8), to: statusURL, durable: true)
/// ```
public enum FileOperations {
    /// One operation, as a power-loss harness sees it.
    public enum Operation: Sendable, Hashable, CustomStringConvertible {
        /// The whole content of a file was written (created or truncated first).
        case write(path: String, bytes: Int)
        /// A file's content was synced (`fsync`).
        case sync(path: String)
        /// A file or folder was renamed over another name.
        case rename(from: String, to: String)
        /// A folder's entries were synced, making its renames, creations and removals durable.
        case syncDirectory(path: String)
        /// A file was removed.
        case remove(path: String)
        /// A folder was made.
        case makeDirectory(path: String)
        /// A second name was made for a file (a hard link).
        case link(from: String, to: String)
        /// (The power-loss harness's record, not an operation:) the file at `path`, about to be replaced by
        /// the next operation, was copied to `copy` (`MOULT_FILE_KEEP`).
        case kept(path: String, copy: String)

        public var description: String {
            switch self {
            case .write(let path, let bytes): "write \(path) \(bytes)"
            case .sync(let path): "sync \(path)"
            case .rename(let from, let to): "rename \(from) \(to)"
            case .syncDirectory(let path): "syncdir \(path)"
            case .remove(let path): "remove \(path)"
            case .makeDirectory(let path): "mkdir \(path)"
            case .link(let from, let to): "link \(from) \(to)"
            case .kept(let path, let copy): "kept \(path) \(copy)"
            }
        }
    }

    private static let tracer = Mutex<(@Sendable (Operation) -> Void)?>(nil)

    /// Called with every operation of this room, in order, before it returns. `nil` (the default) unless
    /// ``armHarness(tracePath:crashBefore:keepFolder:)`` names a file, to which each operation is then
    /// appended as one line (the power-loss harness's recording).
    public static var trace: (@Sendable (Operation) -> Void)? {
        get { tracer.withLock { $0 } }
        set { tracer.withLock { $0 = newValue } }
    }

    private static func record(_ operation: Operation) {
        if let trace = tracer.withLock({ $0 }) { trace(operation) }
    }

    /// The power-loss harness's stop: armed with n (`MOULT_FILE_CRASH=<n>`, read by the command line), the
    /// process kills itself (SIGKILL) just before its n-th operation of this room, whose trace then ends
    /// with the n-1 operations done.
    private static let crashPoint = Mutex<Int?>(nil)

    /// With a folder (`MOULT_FILE_KEEP=<folder>`, the power-loss harness), a file about to be replaced
    /// (renamed over, or written anew) is first copied into that folder and the copy recorded, so that the
    /// harness can put back what a power loss would leave under that name.
    private static let keepFolderPath = Mutex<String?>(nil)

    /// Arms the power-loss harness's hooks (the command line reads them from `MOULT_FILE_TRACE`,
    /// `MOULT_FILE_CRASH` and `MOULT_FILE_KEEP`): each operation appended as a line to the file at
    /// `tracePath`, a kill before operation number `crashBefore`, replaced files kept in `keepFolder`.
    public static func armHarness(tracePath: String?, crashBefore: Int?, keepFolder: String?) {
        if let tracePath, !tracePath.isEmpty, let tracer = fileTracer(tracePath) { trace = tracer }
        crashPoint.withLock { $0 = crashBefore }
        keepFolderPath.withLock { $0 = keepFolder.flatMap { $0.isEmpty ? nil : $0 } }
    }

    private static let keptCount = Mutex(0)

    private static func keep(_ path: String) {
        guard let keepFolder = keepFolderPath.withLock({ $0 }) else { return }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        let number = keptCount.withLock { count in
            count += 1
            return count
        }
        let copy = "\(keepFolder)/\(getpid())-\(number)"
        guard (try? FileManager.default.copyItem(atPath: path, toPath: copy)) != nil else { return }
        // With its times: a store's modification time is part of its state (``StoreFileState``).
        var times = [info.st_atim, info.st_mtim]
        _ = utimensat(AT_FDCWD, copy, &times, 0)
        record(.kept(path: path, copy: copy))
    }

    private static func willOperate() {
        let stop = crashPoint.withLock { (remaining: inout Int?) -> Bool in
            guard let left = remaining else { return false }
            remaining = left - 1
            return left <= 1
        }
        if stop { kill(getpid(), SIGKILL) }
    }

    private static func fileTracer(_ path: String) -> (@Sendable (Operation) -> Void)? {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        return { operation in
            let line = Array((operation.description + "\n").utf8)
            _ = line.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    // MARK: - Whole files

    /// Writes `data` as the whole content of `url`, atomically: into `.<name>.moult-tmp` in the same
    /// folder (a name of Moult's own, which the next write replaces, so a kill leaves nothing that lives
    /// on), then renamed over `url`. With `durable`, the content is synced before the rename and the
    /// folder after it.
    ///
    /// A symbolic link at the temporary name is never followed (`O_NOFOLLOW`): the write fails instead.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/ioFailure``, ``StoreError/Code/diskFull``).
    public static func writeAtomically(_ data: Data, to url: URL, durable: Bool) throws(StoreError) {
        let path = url.path(percentEncoded: false)
        let temporary = temporaryPath(for: path)
        try write(data, toNew: temporary, durable: durable)
        try rename(temporary, to: path, durable: durable)
    }

    /// Writes `data` to an output the user named (`--metrics FILE`): a FIFO or a character device there
    /// (through a link or not) is opened and written to, never replaced; anything else is written
    /// atomically (``writeAtomically(_:to:durable:)``: under a temporary name, renamed over `url`).
    ///
    /// ```swift
    /// try FileOperations.writeOutput(Data(text.utf8), to: URL(filePath: "/dev/stdout"), durable: false)
    /// ```
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/ioFailure``, ``StoreError/Code/diskFull``).
    public static func writeOutput(_ data: Data, to url: URL, durable: Bool) throws(StoreError) {
        let path = url.path(percentEncoded: false)
        guard isStream(path) else { return try writeAtomically(data, to: url, durable: durable) }
        let descriptor = try openStream(path)
        defer { Glibc.close(descriptor) }
        try write(data, to: descriptor, path: path)
    }

    /// Writes every byte of `data` to an open file, recorded as a write of `path`.
    private static func write(_ data: Data, to descriptor: Int32, path: String) throws(StoreError) {
        let failed = data.withUnsafeBytes { writeAll($0, to: descriptor) }
        if failed != 0 {
            errno = failed
            throw failure("cannot write", path)
        }
        record(.write(path: path, bytes: data.count))
    }

    /// Opens an output the user named for appending (`--events FILE`): a FIFO or a character device is
    /// written to as it is (a FIFO waits for its reader, as a shell's redirection does); a regular file is
    /// created when missing and appended to. The caller closes the descriptor.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/ioFailure``) naming `path`.
    public static func openForAppending(_ path: String) throws(StoreError) -> Int32 {
        if isStream(path) { return try openStream(path) }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        return descriptor
    }

    /// Whether `path` is (or links to) a FIFO or a character device: a stream, written to, never replaced.
    public static func isStream(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        return kind == S_IFIFO || kind == S_IFCHR
    }

    private static func openStream(_ path: String) throws(StoreError) -> Int32 {
        while true {
            let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC)
            if descriptor >= 0 { return descriptor }
            if errno == EINTR { continue }
            throw failure("cannot open", path)
        }
    }

    /// The temporary name ``writeAtomically(_:to:durable:)`` writes `path` under.
    public static func temporaryPath(for path: String) -> String {
        RunNames.temporary(for: path)
    }

    /// Writes `data` as the whole content of the file at `path` (created or truncated), never through a
    /// symbolic link; with `durable`, synced before returning.
    public static func write(_ data: Data, toNew path: String, durable: Bool) throws(StoreError) {
        willOperate()
        keep(path)
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", path) }
        defer { Glibc.close(descriptor) }
        try write(data, to: descriptor, path: path)
        if durable {
            guard fsync(descriptor) == 0 else { throw failure("cannot sync", path) }
            record(.sync(path: path))
        }
    }

    /// Writes every byte of `buffer` to an open file, again after a partial write or an interruption
    /// (`EINTR`); nothing is traced (the caller says what the write was).
    ///
    /// ```swift
    /// let failed = Array(line.utf8).withUnsafeBytes { FileOperations.writeAll($0, to: STDOUT_FILENO) }
    /// ```
    ///
    /// - Returns: 0 when all was written, else the `errno` of the write that failed.
    public static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// Reads up to `buffer.count` bytes of an open file into `buffer`, again after an interruption
    /// (`EINTR`): a streamed reader's block, with no allocation.
    ///
    /// ```swift
    /// let count = try FileOperations.read(into: block, from: handle.fileDescriptor, path: path)
    /// ```
    ///
    /// - Returns: The number of bytes read; 0 at the end of the file.
    /// - Throws: ``StoreError`` (`.ioFailure`) naming `path` when the read fails.
    public static func read(into buffer: UnsafeMutableRawBufferPointer, from descriptor: Int32, path: String) throws(StoreError) -> Int {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw failure("cannot read", path)
        }
    }

    // MARK: - Syncs, renames, removals

    /// Syncs a file's content to the disk.
    public static func sync(_ path: String) throws(StoreError) {
        willOperate()
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open to sync", path) }
        defer { Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync", path) }
        record(.sync(path: path))
    }

    /// Syncs a folder's entries, so that the renames, creations and removals in it survive a power loss.
    /// A file system that cannot sync folders (some network and FUSE file systems) is tolerated.
    public static func syncDirectory(_ path: String) {
        willOperate()
        let descriptor = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        if fsync(descriptor) == 0 { record(.syncDirectory(path: path)) }
    }

    /// Renames `from` over `to` (one atomic step); with `durable`, the destination's folder is synced
    /// after it (and the source's, when it is another folder).
    public static func rename(_ from: String, to: String, durable: Bool) throws(StoreError) {
        willOperate()
        keep(to)
        guard Glibc.rename(from, to) == 0 else { throw failure("cannot rename \(from) to", to) }
        record(.rename(from: from, to: to))
        if durable {
            let folder = parent(of: to)
            syncDirectory(folder)
            let fromFolder = parent(of: from)
            if fromFolder != folder { syncDirectory(fromFolder) }
        }
    }

    /// Makes `to` a second name of the file at `from` (a hard link); false when the file system cannot
    /// (the caller copies instead) or `to` exists.
    public static func hardLink(_ from: String, to: String) -> Bool {
        willOperate()
        guard link(from, to) == 0 else { return false }
        record(.link(from: from, to: to))
        return true
    }

    /// Removes a file (not a folder); a missing file is not an error.
    public static func remove(_ path: String) {
        willOperate()
        if unlink(path) == 0 { record(.remove(path: path)) }
    }

    /// Makes a folder that must not exist yet, as a new folder (never through, or onto, a symbolic link).
    ///
    /// - Throws: ``StoreError/Code/alreadyExists`` when anything is at `path`, a symbolic link included.
    public static func makeNewDirectory(_ path: String) throws(StoreError) {
        willOperate()
        guard mkdir(path, 0o755) == 0 else {
            if errno == EEXIST {
                throw StoreError(.alreadyExists, "something is already at this path (a folder, file or symbolic link)", path: path)
            }
            throw failure("cannot create the folder", path)
        }
        record(.makeDirectory(path: path))
    }

    /// Copies the content of the file at `from` into a new file at `path` (created or truncated, never
    /// through a symbolic link, with the permissions of `from`), a megabyte at a time (Foundation's
    /// `copyItem` moves 4 KiB a call: 7,000 calls for a store of 28 MB); with `durable`, synced before
    /// returning. Recorded as one whole-file write.
    public static func copyFile(_ from: String, toNew path: String, durable: Bool) throws(StoreError) {
        willOperate()
        let input = Glibc.open(from, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("cannot open", from) }
        defer { Glibc.close(input) }
        var status = stat()
        let mode = fstat(input, &status) == 0 ? mode_t(status.st_mode & 0o777) : 0o644
        let output = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode)
        guard output >= 0 else { throw failure("cannot create", path) }
        defer { Glibc.close(output) }
        let total = try copyThroughBuffer(input, output, from: from, to: path)
        record(.write(path: path, bytes: total))
        if durable {
            guard fsync(output) == 0 else { throw failure("cannot sync", path) }
            record(.sync(path: path))
        }
    }

    /// The bytes copied from `input` to `output` through a buffer of a megabyte.
    private static func copyThroughBuffer(_ input: Int32, _ output: Int32, from: String, to path: String) throws(StoreError) -> Int {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if read < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", from)
            }
            if read == 0 { return total }
            var offset = 0
            while offset < read {
                let written = buffer.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + offset, read - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw failure("cannot write", path)
                }
                offset += written
            }
            total += read
        }
    }

    /// The bytes this user may still write on the file system holding `path`, and its size; nil when it
    /// cannot be asked.
    public static func space(of path: String) -> (available: UInt64, total: UInt64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return (UInt64(info.f_bavail) * UInt64(info.f_frsize), UInt64(info.f_blocks) * UInt64(info.f_frsize))
    }

    /// Whether `path` is a symbolic link (not followed).
    public static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    static func parent(of path: String) -> String {
        let folder = URL(filePath: path).deletingLastPathComponent().path(percentEncoded: false)
        return folder.isEmpty ? "." : folder
    }

    static func failure(_ what: String, _ path: String) -> StoreError {
        let number = errno
        let reason = String(cString: strerror(number))
        if number == ENOSPC || number == EDQUOT {
            return StoreError(.diskFull, "\(what) the file: the disk is full (\(reason))", path: path)
        }
        if number == ELOOP {
            return StoreError(.ioFailure, "\(what) the file: a symbolic link is in the way, and Moult does not follow it", path: path)
        }
        return StoreError(.ioFailure, "\(what) the file: \(reason) (errno \(number))", path: path)
    }
}
