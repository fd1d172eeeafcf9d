import Glibc
public import Foundation
import Synchronization

/// The one room through which Moult's own durability-relevant file operations go: creating, writing,
/// syncing, renaming and removing the files Moult makes beside stores (status files, markers, records,
/// lock files), and syncing their folders.
///
/// This file is the only one in Moult that makes a system call on a path (`open`, `unlink`, `rename`,
/// `link`, `mkdir`, `rmdir`, `symlink`) or creates, moves or removes a file through Foundation
/// (`SyscallRoomTests` holds the rule). These never go through a symbolic link, nor wait on a FIFO:
/// `removeTree(_:)`, ``makeDirectories(_:)``, ``move(_:to:)``, ``copyTree(_:toNew:)`` and
/// ``withRegularFile(_:_:)``.
///
/// A path in a folder the run holds (``HeldFolders``: the store's folder and DEST's, opened once when the
/// run starts) is reached from that folder's descriptor, every folder below it opened with
/// `O_NOFOLLOW | O_DIRECTORY`, and never by its path again: a folder above renamed during the run, or the
/// store's folder swapped for a link, does not move the run's files elsewhere.
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

    /// The folder-swap harness's stop (`MOULT_FILE_PAUSE=<n>:<fifo>`, read by the command line): just
    /// before its n-th operation of this room, the process opens the FIFO for reading and reads it to its
    /// end, so that a test, which opens the FIFO for writing, knows the run is there and holds it there
    /// while it moves folders about, and lets it go by closing the FIFO.
    private static let pausePoint = Mutex<(remaining: Int, fifo: String)?>(nil)

    /// Arms the folder-swap harness's stop: the process waits on `fifo` (read to its end) before its
    /// operation number `before` of this room.
    public static func armPause(before: Int, fifo: String) {
        pausePoint.withLock { $0 = (before, fifo) }
    }

    private static func pauseIfArmed() {
        let fifo = pausePoint.withLock { (point: inout (remaining: Int, fifo: String)?) -> String? in
            guard let armed = point else { return nil }
            guard armed.remaining <= 1 else {
                point = (armed.remaining - 1, armed.fifo)
                return nil
            }
            point = nil
            return armed.fifo
        }
        guard let fifo else { return }
        let descriptor = Glibc.open(fifo, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(descriptor, &byte, 1)
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            break
        }
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
        pauseIfArmed()
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
        let descriptor = openLocated(path, O_WRONLY | O_CREAT | O_APPEND)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        return descriptor
    }

    /// Whether `path` is (or links to) a FIFO or a character device: a stream, written to, never replaced.
    public static func isStream(_ path: String) -> Bool {
        var info = stat()
        guard located(path, { folder, name in fstatat(folder, name, &info, 0) == 0 }) == true else { return false }
        let kind = info.st_mode & S_IFMT
        return kind == S_IFIFO || kind == S_IFCHR
    }

    private static func openStream(_ path: String) throws(StoreError) -> Int32 {
        while true {
            let descriptor = openLocated(path, O_WRONLY)
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
        let descriptor = openLocated(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW)
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
        let descriptor = openLocated(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("cannot open to sync", path) }
        defer { Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync", path) }
        record(.sync(path: path))
    }

    /// Syncs a folder's entries, so that the renames, creations and removals in it survive a power loss.
    /// A file system that cannot sync folders (some network and FUSE file systems) is tolerated.
    public static func syncDirectory(_ path: String) {
        willOperate()
        let descriptor = openLocated(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        if fsync(descriptor) == 0 { record(.syncDirectory(path: path)) }
    }

    /// Renames `from` over `to` (one atomic step); with `durable`, the destination's folder is synced
    /// after it (and the source's, when it is another folder).
    public static func rename(_ from: String, to: String, durable: Bool) throws(StoreError) {
        willOperate()
        keep(to)
        // In a held folder, relative to its descriptor (`located(_:_:)`): the names are entries of the
        // folder the run holds, whatever happens to the paths above it meanwhile.
        let renamed = located(from) { fromFolder, fromName in
            located(to) { toFolder, toName in renameat(fromFolder, fromName, toFolder, toName) == 0 } ?? false
        }
        guard renamed == true else { throw failure("cannot rename \(from) to", to) }
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
        // (`linkat` without `AT_SYMLINK_FOLLOW` links a symbolic link itself, never what it points to.)
        let linked = located(from) { fromFolder, fromName in
            located(to) { toFolder, toName in linkat(fromFolder, fromName, toFolder, toName, 0) == 0 } ?? false
        }
        guard linked == true else { return false }
        record(.link(from: from, to: to))
        return true
    }

    /// Removes a file (not a folder); a missing file is not an error.
    public static func remove(_ path: String) {
        willOperate()
        if located(path, { folder, name in unlinkat(folder, name, 0) == 0 }) == true { record(.remove(path: path)) }
    }

    /// Removes the folder at `path` when it is empty (`unlinkat` with `AT_REMOVEDIR`): true when it was
    /// removed or was not there; false when anything is still in it (or it is not a folder), which is kept.
    ///
    /// ```swift
    /// if !FileOperations.removeEmptyDirectory(trash.path(percentEncoded: false)) { /* it holds what Moult did not make */ }
    /// ```
    @discardableResult
    public static func removeEmptyDirectory(_ path: String) -> Bool {
        willOperate()
        let removed = located(path) { folder, name in unlinkat(folder, name, AT_REMOVEDIR) == 0 || errno == ENOENT }
        if removed == true { record(.remove(path: path)) }
        return removed ?? (errno == ENOENT)
    }

    /// Runs `body` with a folder and a name that together reach `path`, for the `*at` calls: for a path in
    /// a folder the run holds (``HeldFolders``), that folder's descriptor, each folder below it opened in
    /// turn with `O_NOFOLLOW | O_DIRECTORY` (a symbolic link on the way fails with `ELOOP`), and the
    /// path's last component; for any other path, `AT_FDCWD` and the path itself, reached as it says.
    /// Nil when a folder on the way cannot be opened (`errno` says why).
    static func located<T>(_ path: String, _ body: (_ folder: Int32, _ name: String) -> T) -> T? {
        guard let (held, below, name) = HeldFolders.location(of: path) else { return body(AT_FDCWD, path) }
        var folder = held
        defer {
            if folder != held {
                let saved = errno
                Glibc.close(folder)
                errno = saved
            }
        }
        for component in below {
            let next = openat(folder, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if folder != held {
                let saved = errno
                Glibc.close(folder)
                errno = saved
            }
            folder = next
            guard next >= 0 else {
                folder = held
                return nil
            }
        }
        return body(folder, name)
    }

    /// `lstat(2)` of `path` (`located(_:_:)`: in a held folder, there): its attributes, a symbolic
    /// link's own; nil when nothing is there (`errno` says why).
    ///
    /// ```swift
    /// let isFolder = FileOperations.attributes(work.path).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    /// ```
    public static func attributes(_ path: String) -> stat? {
        var info = stat()
        return located(path) { folder, name in fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 } == true ? info : nil
    }

    /// `stat(2)` of `path` (`located(_:_:)`): the attributes of what is there, a link at the name
    /// followed; nil when nothing is there.
    public static func followedAttributes(_ path: String) -> stat? {
        var info = stat()
        return located(path) { folder, name in fstatat(folder, name, &info, 0) == 0 } == true ? info : nil
    }

    /// Whether anything is at `path`, a link at the name followed (Foundation's `fileExists(atPath:)`), in
    /// a held folder looked at there.
    public static func exists(_ path: String) -> Bool {
        followedAttributes(path) != nil
    }

    /// Whether a folder is at `path`, a link at the name followed (Foundation's `fileExists(atPath:isDirectory:)`).
    public static func isFolder(_ path: String) -> Bool {
        followedAttributes(path).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    }

    /// The size in bytes of what is at `path` (a link's own, not followed); nil when nothing is there.
    public static func size(of path: String) -> Int64? {
        attributes(path).map { Int64($0.st_size) }
    }

    /// The names in the folder at `path` (`.` and `..` left out; Foundation's `contentsOfDirectory`), the
    /// folder opened without following a link at its name; nil when it cannot be listed.
    ///
    /// ```swift
    /// let names = FileOperations.names(in: work.path) ?? []
    /// ```
    public static func names(in path: String) -> [String]? {
        let folder = openLocated(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        guard folder >= 0 else { return nil }
        defer { Glibc.close(folder) }
        return try? entries(of: folder, path: path)
    }

    /// `open(2)` of `path` (`located(_:_:)`) with `flags`, and `mode` when it creates: a descriptor, or -1
    /// with `errno` set.
    private static func openLocated(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> Int32 {
        located(path) { folder, name in openat(folder, name, flags | O_CLOEXEC, mode) } ?? -1
    }

    /// Opens the folder at `path` for ``HeldFolders/hold(foldersOf:)``: `O_RDONLY | O_DIRECTORY |
    /// O_NOFOLLOW`, close on exec. -1 when it cannot be.
    static func openHeldFolder(_ path: String) -> Int32 {
        Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }

    /// For a library that opens its files by path (SQLite, LMDB): when the folder `folder` lies in a
    /// folder the run holds, a new descriptor of it (reached from the held one, never through a link) and
    /// the path that names it, `/proc/self/fd/N`, which the kernel resolves to that folder wherever it now
    /// is. The caller keeps the descriptor open as long as the library may open files by that path, then
    /// closes it. Nil for a folder in no held folder, or when `/proc/self/fd` is not there (the path is
    /// then used as it is).
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when the folder cannot be reached from the held one (a
    ///   symbolic link on the way, or the folder gone).
    public static func openFolder(_ folder: String) throws(StoreError) -> (descriptor: Int32, path: String)? {
        guard HeldFolders.location(of: folder) != nil, procFolders else { return nil }
        let descriptor = openLocated(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        guard descriptor >= 0 else { throw failure("cannot open the folder", folder) }
        return (descriptor, "/proc/self/fd/\(descriptor)")
    }

    /// Closes a descriptor ``openFolder(_:)`` gave.
    public static func closeFolder(_ descriptor: Int32) {
        Glibc.close(descriptor)
    }

    /// Whether this system names open descriptors in `/proc/self/fd` (Linux with `/proc` mounted).
    private static let procFolders: Bool = {
        var info = stat()
        return stat("/proc/self/fd", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }()

    /// Makes a folder that must not exist yet, as a new folder (never through, or onto, a symbolic link).
    ///
    /// - Throws: ``StoreError/Code/alreadyExists`` when anything is at `path`, a symbolic link included.
    public static func makeNewDirectory(_ path: String) throws(StoreError) {
        willOperate()
        guard located(path, { folder, name in mkdirat(folder, name, 0o755) == 0 }) == true else {
            if errno == EEXIST {
                throw StoreError(.alreadyExists, "something is already at this path (a folder, file or symbolic link)", path: path)
            }
            throw failure("cannot create the folder", path)
        }
        record(.makeDirectory(path: path))
    }

    /// Makes the folder at `path` and the folders above it that are missing (Foundation's
    /// `createDirectory(withIntermediateDirectories: true)`); a folder already there is kept. The folders
    /// above it are reached as the path says (a path the user named may pass through links); the folder
    /// itself is never a symbolic link: one there is refused, not followed.
    ///
    /// ```swift
    /// try FileOperations.makeDirectories(work.path(percentEncoded: false))
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when a folder cannot be made, or something other than a
    ///   folder is at `path`.
    public static func makeDirectories(_ path: String) throws(StoreError) {
        if let info = attributes(path) {
            let kind = info.st_mode & S_IFMT
            guard kind != S_IFDIR else { return }
            errno = kind == S_IFLNK ? ELOOP : ENOTDIR
            throw failure("cannot create the folder", path)
        }
        let above = parent(of: path)
        if errno == ENOENT, above != path, attributes(above) == nil { try makeDirectories(above) }
        do {
            try makeNewDirectory(path)
        } catch where error.code == .alreadyExists {
            // Made meanwhile by another process (the shards of a fleet make one metrics folder at once).
            guard let info = attributes(path), info.st_mode & S_IFMT == S_IFDIR else { throw error }
        }
    }

    /// Renames `from` to `to`, which must not exist (Foundation's `moveItem`): a file or a folder, moved
    /// whole; a symbolic link at either name is renamed itself, never followed.
    ///
    /// - Throws: ``StoreError/Code/alreadyExists`` when something is at `to`, a symbolic link included;
    ///   `.ioFailure` when the rename fails.
    public static func move(_ from: String, to: String) throws(StoreError) {
        guard attributes(to) == nil else {
            throw StoreError(.alreadyExists, "something is already at this path (a folder, file or symbolic link)", path: to)
        }
        try rename(from, to: to, durable: false)
    }

    /// Writes `files` into the folder at `url`, each at its path inside it (its folders made as needed,
    /// ``makeDirectories(_:)``; each file written whole, ``writeAtomically(_:to:durable:)``); files already
    /// there under other names are kept. A model's `.xcdatamodeld` folder is written so:
    ///
    /// ```swift
    /// try FileOperations.writeFolder(model.xcodeFiles(), at: URL(filePath: "/tmp/Pair42.xcdatamodeld"))
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`, `.diskFull`) naming the folder or file that could not be
    ///   written.
    public static func writeFolder(_ files: [(path: String, contents: Data)], at url: URL) throws(StoreError) {
        try makeDirectories(url.path(percentEncoded: false))
        for file in files {
            let target = url.appending(path: file.path)
            try makeDirectories(target.deletingLastPathComponent().path(percentEncoded: false))
            try writeAtomically(file.contents, to: target, durable: false)
        }
    }

    // MARK: - Trees, never through a link

    /// Removes whatever is at `path`, whole and never through a symbolic link: a file; a link (itself, not
    /// what it points to); a folder with everything in it, each folder opened with
    /// `O_NOFOLLOW | O_DIRECTORY` and its entries removed relative to it (`unlinkat`), so that a link inside
    /// is removed as a name and never descended through. A missing path is not an error.
    ///
    /// ```swift
    /// try? FileOperations.removeTree(RunNames.removing(work).path(percentEncoded: false))
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when an entry cannot be removed (the rest stays).
    public static func removeTree(_ path: String) throws(StoreError) {
        guard attributes(path) != nil else { return }
        willOperate()
        let removed = located(path) { (folder, name) -> Result<Bool, StoreError> in
            Result { () throws(StoreError) in try removeEntry(name, in: folder, path: path) }
        }
        guard let removed else {
            if errno == ENOENT { return }
            throw failure("cannot open the folder of", path)
        }
        if try removed.get() { record(.remove(path: path)) }
    }

    /// `removeTree(_:)` of a URL's path.
    public static func removeTree(_ url: URL) throws(StoreError) {
        try removeTree(url.path(percentEncoded: false))
    }

    /// Removes the entry `name` of the open folder `folder` whole (as `removeTree(_:)` does); false when there
    /// was none.
    private static func removeEntry(_ name: String, in folder: Int32, path: String) throws(StoreError) -> Bool {
        if unlinkat(folder, name, 0) == 0 { return true }
        switch errno {
        case ENOENT: return false
        case EISDIR, EPERM: break
        default: throw failure("cannot remove", path)
        }
        let inner = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard inner >= 0 else {
            if errno == ENOENT { return false }
            throw failure("cannot open the folder", path)
        }
        defer { Glibc.close(inner) }
        for entry in try entries(of: inner, path: path) {
            _ = try removeEntry(entry, in: inner, path: path + "/" + entry)
        }
        guard unlinkat(folder, name, AT_REMOVEDIR) == 0 || errno == ENOENT else { throw failure("cannot remove the folder", path) }
        return true
    }

    /// The names in an open folder, `.` and `..` left out (the descriptor stays open).
    private static func entries(of folder: Int32, path: String) throws(StoreError) -> [String] {
        let listed = dup(folder)
        guard listed >= 0, let stream = fdopendir(listed) else {
            if listed >= 0 { Glibc.close(listed) }
            throw failure("cannot list the folder", path)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            var raw = entry.pointee.d_name
            let name = withUnsafePointer(to: &raw) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Copies the file or folder at `from` to `path`, which must not exist: files by
    /// ``copyFile(_:toNew:durable:)``, folders made new, a symbolic link inside made again as the same link
    /// (never followed), anything else (a FIFO, a device, a socket) left out. Not durable.
    ///
    /// - Throws: ``StoreError`` (`.alreadyExists`, `.ioFailure`, `.diskFull`).
    public static func copyTree(_ from: String, toNew path: String) throws(StoreError) {
        guard let info = attributes(from) else { throw failure("cannot read the attributes of", from) }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            guard attributes(path) == nil else {
                throw StoreError(.alreadyExists, "something is already at this path (a folder, file or symbolic link)", path: path)
            }
            try copyFile(from, toNew: path, durable: false)
        case S_IFDIR:
            try makeNewDirectory(path)
            let folder = openLocated(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            guard folder >= 0 else { throw failure("cannot open the folder", from) }
            defer { Glibc.close(folder) }
            for name in try entries(of: folder, path: from) {
                try copyTree(from + "/" + name, toNew: path + "/" + name)
            }
        case S_IFLNK:
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = located(from) { folder, name in readlinkat(folder, name, &target, target.count - 1) } ?? -1
            guard count >= 0 else { throw failure("cannot read the symbolic link", from) }
            willOperate()
            let link = String(cString: Array(target[..<count]) + [0])
            guard located(path, { folder, name in symlinkat(link, folder, name) == 0 }) == true else { throw failure("cannot create the symbolic link", path) }
            record(.link(from: from, to: path))
        default:
            return
        }
    }

    // MARK: - Descriptors

    /// Opens the file at `path` for reading only if it is a regular file, never through a symbolic link and
    /// never waiting (`O_NOFOLLOW | O_NONBLOCK`, then `fstat`), and runs `body` with its descriptor and
    /// size; nil, without `body`, when there is no regular file there (missing, a link, a FIFO, a device,
    /// a folder). The descriptor is closed when `body` returns.
    ///
    /// ```swift
    /// let size = try FileOperations.withRegularFile(path) { _, size in size }
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) when the file cannot be opened or examined, or what `body`
    ///   throws.
    public static func withRegularFile<Result>(
        _ path: String, _ body: (_ descriptor: Int32, _ size: Int) throws(StoreError) -> Result
    ) throws(StoreError) -> Result? {
        let descriptor = openLocated(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ELOOP || errno == ENXIO || errno == ENOTDIR { return nil }
            throw failure("cannot open", path)
        }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("cannot read the attributes of", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return try body(descriptor, Int(info.st_size))
    }

    /// `open(2)` of `path` with `flags` (and `mode` when it creates), for the files of this module that
    /// hold a descriptor of their own (the lock, a digest's reads): the one place a path is opened. The
    /// result is the system call's: a descriptor, or -1 with `errno` set.
    static func openDescriptor(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> Int32 {
        openLocated(path, flags, mode: mode)
    }

    /// Opens the file at `path` for reading (in a held folder, there; a link at its name followed, as
    /// Foundation's `FileHandle(forReadingFrom:)` does), for a reader that streams it (an XML store).
    ///
    /// ```swift
    /// let handle = FileHandle(fileDescriptor: try FileOperations.openForReading(path), closeOnDealloc: true)
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) naming `path`.
    public static func openForReading(_ path: String) throws(StoreError) -> Int32 {
        let descriptor = openLocated(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        return descriptor
    }

    /// The bytes of an open file of `size` bytes, read to its end (fewer when it was shortened meanwhile),
    /// again after an interruption.
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) naming `path` when a read fails.
    public static func readAll(_ descriptor: Int32, size: Int, path: String) throws(StoreError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if read < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path)
            }
            if read == 0 { break }
            offset += read
        }
        // A file shortened while it was read: what was there.
        if offset < bytes.count { bytes.removeLast(bytes.count - offset) }
        return bytes
    }

    /// The content of a file of Moult's own naming (a status file, a run's record), or nil when there is no
    /// regular file at `path`: a symbolic link there is not followed, a FIFO or a device never opened
    /// for reading (``withRegularFile(_:_:)``), so a read never waits.
    ///
    /// ```swift
    /// let data = FileOperations.contents(ofOwnFile: RunNames.status(for: output).path)
    /// ```
    public static func contents(ofOwnFile path: String) -> Data? {
        let bytes = try? withRegularFile(path) { (descriptor, size) throws(StoreError) in try readAll(descriptor, size: size, path: path) }
        return bytes.map { Data($0) }
    }

    /// Opens a new file at `path` for writing (created or truncated, never through a symbolic link); the
    /// caller owns the descriptor, and says what it wrote (nothing is traced).
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`, `.diskFull`) naming `path`.
    public static func openNew(_ path: String) throws(StoreError) -> Int32 {
        let descriptor = openLocated(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw failure("cannot create", path) }
        return descriptor
    }

    /// What the thing at `path` is when it cannot be a file of Moult's own naming, to read or write
    /// (`lstat`, nothing followed): a symbolic link, a folder, a FIFO, a device or a socket, or a file with
    /// other names (hard links); nil when nothing is there or it is a plain file with one name.
    ///
    /// ```swift
    /// if let what = FileOperations.notOwnFile(results.path) { print("\(results.path) is \(what)") }
    /// ```
    public static func notOwnFile(_ path: String) -> String? {
        guard let info = attributes(path) else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return info.st_nlink == 1 ? nil : "a file with other names (\(info.st_nlink) hard links)"
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a folder"
        default: return "a FIFO, a device or a socket"
        }
    }

    /// Appends `line` and a line feed to a file of Moult's own naming (a fleet's `FILE.results.jsonl`), in
    /// one write; not traced (an append is no whole-file write). The file is created when missing; a
    /// symbolic link at its name is not followed, and a file with other names (hard links) is not written,
    /// since its other names would see the line.
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`, `.diskFull`) naming `path`.
    public static func appendLine(_ line: String, to path: String) throws(StoreError) {
        let descriptor = try openOwnForAppending(path)
        defer { Glibc.close(descriptor) }
        let failed = Array((line + "\n").utf8).withUnsafeBytes { writeAll($0, to: descriptor) }
        if failed != 0 {
            errno = failed
            throw failure("cannot append to", path)
        }
    }

    /// Makes sure ``appendLine(_:to:)`` can append to `path`, before anything it would record is done: the
    /// file is created when missing (empty) and opened for appending as ``appendLine(_:to:)`` opens it.
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) naming `path`, with the reason (a permission refused says
    ///   who owns the file and its folder).
    public static func prepareToAppend(_ path: String) throws(StoreError) {
        Glibc.close(try openOwnForAppending(path))
    }

    /// `path` opened for appending, created when missing: a plain file with one name, never through a link.
    private static func openOwnForAppending(_ path: String) throws(StoreError) -> Int32 {
        let descriptor = openLocated(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 else {
            Glibc.close(descriptor)
            throw StoreError(.ioFailure, "this is not a file of Moult's own (a FIFO, a device, or a file with other names): it is not written", path: path)
        }
        return descriptor
    }

    /// Copies the content of the file at `from` into a new file at `path` (created or truncated, never
    /// through a symbolic link, with the permissions of `from`), a megabyte at a time (Foundation's
    /// `copyItem` moves 4 KiB a call: 7,000 calls for a store of 28 MB); with `durable`, synced before
    /// returning. Recorded as one whole-file write.
    public static func copyFile(_ from: String, toNew path: String, durable: Bool) throws(StoreError) {
        willOperate()
        let input = openLocated(from, O_RDONLY)
        guard input >= 0 else { throw failure("cannot open", from) }
        defer { Glibc.close(input) }
        var status = stat()
        let mode = fstat(input, &status) == 0 ? mode_t(status.st_mode & 0o777) : 0o644
        let output = openLocated(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: mode)
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
        attributes(path).map { ($0.st_mode & S_IFMT) == S_IFLNK } ?? false
    }

    static func parent(of path: String) -> String {
        let folder = URL(filePath: path).deletingLastPathComponent().path(percentEncoded: false)
        return folder.isEmpty ? "." : folder
    }

    /// The error of a failed call on `path`, from `errno`: `what` is the action (`cannot create`), to which
    /// "the file" is added unless it names its object itself (`cannot create the folder`, `cannot create
    /// the lock file`). A permission refused says who this process is, who owns the file and its folder,
    /// and what gives access (``permissionReason(_:_:)``).
    static func failure(_ what: String, _ path: String) -> StoreError {
        let number = errno
        let reason = String(cString: strerror(number))
        let action = ["folder", "file", "link"].contains { what.hasSuffix($0) } ? what : what + " the file"
        if number == ENOSPC || number == EDQUOT {
            return StoreError(.diskFull, "\(action): the disk is full (\(reason))", path: path)
        }
        if number == ELOOP {
            return StoreError(.ioFailure, "\(action): a symbolic link is in the way, and Moult does not follow it", path: path)
        }
        if number == EACCES || number == EPERM || number == EROFS {
            return StoreError(.ioFailure, "\(action): \(permissionReason(number, path))", path: path)
        }
        var info = stat()
        if number == ENOENT, lstat(path, &info) != 0, lstat(parent(of: path), &info) != 0 {
            return StoreError(.ioFailure, "\(action): its folder \(shown(parent(of: path))) does not exist (\(reason))", path: path)
        }
        return StoreError(.ioFailure, "\(action): \(reason) (errno \(number))", path: path)
    }

    // MARK: - Permissions

    /// Why this process was refused `path` (`EACCES`, `EPERM` or `EROFS`), in words a person can act on:
    /// the process's user and groups, the owner, group and mode of the file (when there) and of its
    /// folder, and the remedy. The image runs as uid 65534: a volume it writes to must give that user
    /// access, as Kubernetes does for the pod's `securityContext.fsGroup`.
    ///
    /// ```
    /// permission denied (errno 13) to this process (uid 65534, gid 65534, groups 65534): its folder
    /// /data/stores is owned by 0:0, mode 0755; give this user write access to the folder (for a volume
    /// mounted in a pod, the pod's securityContext.fsGroup), or run as a user who has it
    /// ```
    ///
    /// - Parameters:
    ///   - number: the `errno` of the call refused; nil when the refusal comes from elsewhere (SQLite's
    ///     "attempt to write a readonly database").
    ///   - path: the file the call was refused.
    static func permissionReason(_ number: Int32?, _ path: String) -> String {
        let folder = shown(parent(of: path))
        if number == EROFS { return "the file system holding \(folder) is read-only (errno \(EROFS))" }
        var text = number.map { "permission denied (errno \($0)) to this process (\(processIdentity())): " }
            ?? "this process (\(processIdentity())) may not write it: "
        var info = stat()
        if lstat(path, &info) == 0 { text += "the file is \(ownership(info)), " }
        text += stat(folder, &info) == 0 ? "its folder \(folder) is \(ownership(info))" : "its folder \(folder) cannot be reached"
        return text
            + "; give this user write access to the folder and its files (for a volume mounted in a pod, the pod's securityContext.fsGroup), or run as a user who has it"
    }

    /// A folder's path as a message shows it: without a trailing `/` (but `/` itself).
    private static func shown(_ folder: String) -> String {
        folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
    }

    /// `uid U, gid G, groups A B`: who this process is, as permissions see it.
    public static func processIdentity() -> String {
        var groups = [gid_t](repeating: 0, count: 256)
        let count = getgroups(Int32(groups.count), &groups)
        let list = count > 0 ? groups[..<Int(count)].map(String.init).joined(separator: " ") : "none"
        return "uid \(getuid()), gid \(getgid()), groups \(list)"
    }

    /// `owned by U:G, mode 2775`.
    private static func ownership(_ info: stat) -> String {
        "owned by \(info.st_uid):\(info.st_gid), mode \(String(info.st_mode & 0o7777, radix: 8).leftPadded(to: 4))"
    }

    /// Makes the folder of an output file the user named (`--metrics`, `--events`: their folder made as
    /// `mkdir -p` would, so that a new volume needs no step before the run), and checks that this process
    /// can create files in it; a FIFO or a device at `path` needs neither.
    ///
    /// ```swift
    /// try FileOperations.prepareFolder(forOutput: "/data/metrics/moult-0.prom")
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.ioFailure`) naming the folder when it cannot be made or written to.
    public static func prepareFolder(forOutput path: String) throws(StoreError) {
        guard !isStream(path) else { return }
        let folder = parent(of: path)
        try makeDirectories(folder)
        guard access(folder, W_OK | X_OK) == 0 else {
            let number = errno
            let reason = [EACCES, EPERM, EROFS].contains(number) ? permissionReason(number, path) : "\(String(cString: strerror(number))) (errno \(number))"
            throw StoreError(.ioFailure, "cannot create files in its folder: \(reason)", path: path)
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
