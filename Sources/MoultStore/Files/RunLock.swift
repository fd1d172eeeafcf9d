import Glibc
public import Foundation
import Synchronization

/// The lock that keeps one Moult run per store and per destination: an exclusive lock (Linux's
/// open-file-description `fcntl` lock, which no other descriptor's `close` releases) on `NAME.moult-lock` beside the store migrated in place or the destination being made, held for the
/// run's whole life.
///
/// A second run on the same target, in another process or on another thread of this one, fails at once
/// with ``StoreError/Code/busy`` (exit 73), naming the holder's process; it has touched nothing. The
/// lock file holds the holder's process id and what it is doing, for `moult status`. The holder removes
/// the file when it releases the lock; a process that is killed loses the lock with it (the kernel
/// releases it), and the next run takes it over.
///
/// Acquiring is re-entrant on the thread that holds it, so a chain whose last step runs a migrator into
/// the same destination takes the lock once.
///
/// ```swift
/// let lock = try RunLock.acquire(for: destinationURL, purpose: "migrating into it")
/// defer { lock.release() }
/// ```
public final class RunLock: Sendable {
    /// The locked target (the store or destination, not the lock file).
    public let target: String
    let path: String
    private let released = Mutex(false)

    private struct Entry {
        var descriptor: Int32
        var count: Int
        var thread: pthread_t
        var purpose: String
    }

    private static let held = Mutex<[String: Entry]>([:])

    private init(target: String, path: String) {
        self.target = target
        self.path = path
    }

    /// The lock file of a target: `NAME.moult-lock` in the target's folder.
    public static func lockFile(for target: URL) -> URL {
        RunNames.lock(for: target)
    }

    /// Takes the lock of `target`, or fails at once.
    ///
    /// - Parameters:
    ///   - target: the store migrated in place, or the destination being made.
    ///   - purpose: what the run does, for the holder's description (`migrating it in place`).
    /// - Throws: ``StoreError``: ``StoreError/Code/busy`` when another run holds it;
    ///   ``StoreError/Code/ioFailure`` when the lock file cannot be made (a symbolic link at its name among
    ///   the reasons).
    public static func acquire(for target: URL, purpose: String) throws(StoreError) -> RunLock {
        let path = lockFile(for: target).path(percentEncoded: false)
        let targetPath = target.path(percentEncoded: false)
        let me = pthread_self()
        return try held.withLock { (table: inout [String: Entry]) throws(StoreError) -> RunLock in
            if var entry = table[path] {
                guard pthread_equal(entry.thread, me) != 0 else {
                    throw busy(targetPath, pid: getpid(), purpose: entry.purpose, thisProcess: true)
                }
                entry.count += 1
                table[path] = entry
                return RunLock(target: targetPath, path: path)
            }
            for _ in 0..<100 {
                let descriptor = FileOperations.openDescriptor(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK)
                guard descriptor >= 0 else {
                    if errno == ENOENT {
                        let folder = URL(filePath: path).deletingLastPathComponent().path(percentEncoded: false)
                        throw StoreError(
                            .ioFailure, "the folder \(folder) does not exist: Moult writes there only in a folder that is; nothing was changed", path: targetPath)
                    }
                    throw FileOperations.failure("cannot create the lock file", path)
                }
                // A file at the lock's name that Moult did not make (a hard link to another file, a FIFO, a
                // device) is never written: its other names would see the holder's text.
                var made = stat()
                guard fstat(descriptor, &made) == 0, made.st_mode & S_IFMT == S_IFREG, made.st_nlink == 1 else {
                    let links = made.st_nlink
                    close(descriptor)
                    let what = made.st_mode & S_IFMT != S_IFREG ? "not a regular file" : "a file with \(links) names (hard links)"
                    throw StoreError(.ioFailure, "the lock file is \(what), not one Moult made: move it away and run again; nothing was changed", path: path)
                }
                var request = flock()
                request.l_type = Int16(F_WRLCK)
                request.l_whence = Int16(SEEK_SET)
                guard fcntl(descriptor, Self.setLock, &request) == 0 else {
                    let number = errno
                    let holder = Self.describe(descriptor: descriptor)
                    close(descriptor)
                    if number == EACCES || number == EAGAIN {
                        throw busy(targetPath, pid: holder.pid, purpose: holder.purpose, thisProcess: false)
                    }
                    errno = number
                    throw FileOperations.failure("cannot lock", path)
                }
                // The holder before us may have removed the file after we opened it: our lock is then on a
                // file nobody else will open. Take the one at the path.
                var opened = stat()
                guard fstat(descriptor, &opened) == 0, let current = FileOperations.attributes(path),
                    opened.st_dev == current.st_dev, opened.st_ino == current.st_ino
                else {
                    close(descriptor)
                    continue
                }
                let text = Array("\(getpid())\n\(purpose)\n".utf8)
                _ = ftruncate(descriptor, 0)
                _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                table[path] = Entry(descriptor: descriptor, count: 1, thread: me, purpose: purpose)
                return RunLock(target: targetPath, path: path)
            }
            throw StoreError(.ioFailure, "cannot take the lock: its file keeps being replaced", path: path)
        }
    }

    /// Gives the lock up (once; later calls do nothing). The last release on the holding thread removes the
    /// lock file, then closes it, which ends the lock.
    public func release() {
        let first = released.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        Self.held.withLock { table in
            guard var entry = table[path] else { return }
            entry.count -= 1
            if entry.count > 0 {
                table[path] = entry
                return
            }
            table[path] = nil
            FileOperations.remove(path)
            close(entry.descriptor)
        }
    }

    deinit { release() }

    // MARK: - Holder

    /// Who holds a target's lock.
    public struct Holder: Sendable, Hashable {
        /// The holder's process id.
        public var pid: Int32
        /// What the holder said it does.
        public var purpose: String
    }

    /// The run holding `target`'s lock, or nil when no run holds it (a lock file left by a killed run
    /// included).
    public static func holder(of target: URL) -> Holder? {
        let path = lockFile(for: target).path(percentEncoded: false)
        if let entry = held.withLock({ $0[path] }) { return Holder(pid: getpid(), purpose: entry.purpose) }
        let descriptor = FileOperations.openDescriptor(path, O_RDONLY | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var request = flock()
        request.l_type = Int16(F_WRLCK)
        request.l_whence = Int16(SEEK_SET)
        guard fcntl(descriptor, Self.getLock, &request) == 0, request.l_type != Int16(F_UNLCK) else { return nil }
        let written = describe(descriptor: descriptor)
        return Holder(pid: written.pid, purpose: written.purpose)
    }

    /// `F_OFD_GETLK` and `F_OFD_SETLK` (Linux 3.15 and later).
    private static let getLock: Int32 = 36
    private static let setLock: Int32 = 37

    private static func describe(descriptor: Int32) -> (pid: Int32, purpose: String) {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return (0, "") }
        let lines = String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        return (Int32(lines.first ?? "") ?? 0, lines.count > 1 ? String(lines[1]) : "")
    }

    private static func busy(_ target: String, pid: Int32, purpose: String, thisProcess: Bool) -> StoreError {
        let who = thisProcess ? "another run in this process (pid \(pid))" : (pid > 0 ? "another moult process, pid \(pid)," : "another moult process")
        // (The code, `busy`, goes before the message when it is printed.)
        let doing = purpose.isEmpty ? "is working on it" : "is \(purpose)"
        return StoreError(.busy, "\(who) \(doing); nothing was touched; run again when it has finished", path: target)
    }
}
