import Crypto
import Glibc
public import Foundation

/// A digest of what a reader of a store sees: for an SQLite database, its pages as a new connection
/// would read them (the main file's pages, each replaced by its latest frame in the `-wal` up to the
/// last committed transaction); for any other file (an XML store), its bytes.
///
/// The digest is the store's identity for the questions a migration asks of it: is this the store an
/// interrupted run was reading (resume), is this the store a finished output was made from ("already
/// migrated"), did another program write to it before the swap. Times, sizes and SQLite's change
/// counter cannot answer them: a copy made with `cp -p` keeps an old time, WAL mode never advances the
/// counter, and an edit keeps the size. Pages can: an edit changes a page, and a checkpoint, which moves
/// frames from the `-wal` into the main file, changes none, so a store Moult itself checkpointed is still
/// the same store.
///
/// A hot rollback journal (a writer killed mid-transaction) is part of the identity too: a reader would
/// roll it back first, so the pages on disk are not yet what it would see; its bytes are hashed in.
///
/// ```swift
/// let before = try StoreContentDigest(of: storeURL)
/// // … later, or in another process …
/// if try StoreContentDigest(of: storeURL) != before { print("the store changed") }
/// ```
///
/// Cost: one sequential read of the main file and the `-wal`, hashed with SHA-256 (about disk speed; see
/// BENCHMARKS.md, "Source identity").
public struct StoreContentDigest: Sendable, Hashable, CustomStringConvertible {
    /// The SHA-256 of the content, in hexadecimal.
    public let hex: String

    public var description: String { hex }

    /// Reads the store at `url` (and its `-wal` and `-journal`, when there are) and hashes what a reader sees.
    ///
    /// - Throws: ``StoreError/Code/notFound`` when there is no file; ``StoreError/Code/ioFailure`` when
    ///   it cannot be read.
    public init(of url: URL) throws(StoreError) {
        // A store reached through a link is read where it is; its companions are beside it there. (Only a
        // link at the store's own name is resolved: the folder is the one the run holds, HeldFolders.)
        let named = url.path(percentEncoded: false)
        let path = FileOperations.isSymbolicLink(named) ? url.resolvingSymlinksInPath().path(percentEncoded: false) : named
        let main = try DigestFile(path: path)
        defer { main.close() }
        var hasher = SHA256()
        if let header = main.sqliteHeader() {
            hasher.update(data: Data("sqlite-pages/1 \(header.pageSize)\n".utf8))
            let wal = header.isWAL ? WALIndex(path: path + "-wal", pageSize: header.pageSize) : nil
            defer { wal?.file.close() }
            let pages = wal?.pageCount ?? header.pageCount(fileSize: main.size)
            try Self.hashPages(of: main, header: header, pages: pages, wal: wal, into: &hasher)
            if let journal = try? DigestFile(path: path + "-journal") {
                defer { journal.close() }
                // Only a journal with a header is hot (SQLite truncates or zeroes a finished one).
                if journal.size > 0, journal.read(at: 0, count: 8) != [UInt8](repeating: 0, count: 8) {
                    hasher.update(data: Data("hot-journal\n".utf8))
                    try journal.hashAll(into: &hasher)
                }
            }
        } else {
            hasher.update(data: Data("file/1\n".utf8))
            try main.hashAll(into: &hasher)
        }
        hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Reads a digest written as ``hex``; nil for text that is not one.
    public init?(hex: String) {
        guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else { return nil }
        self.hex = hex.lowercased()
    }

    /// Hashes pages 1 through `pages`, each from the `-wal` when it holds a committed frame of it, else
    /// from the main file (a page past the main file's end reads as zeros, as SQLite reads it).
    private static func hashPages(
        of main: DigestFile, header: SQLiteHeader, pages: Int, wal: WALIndex?, into hasher: inout SHA256
    ) throws(StoreError) {
        let pageSize = header.pageSize
        let pagesPerBlock = max(1, (1 << 20) / pageSize)
        var page = 1
        var block = [UInt8](repeating: 0, count: pagesPerBlock * pageSize)
        while page <= pages {
            let count = min(pagesPerBlock, pages - page + 1)
            let read = try main.read(into: &block, at: Int64(page - 1) * Int64(pageSize), count: count * pageSize)
            if read < count * pageSize { block.withUnsafeMutableBytes { _ = memset($0.baseAddress! + read, 0, count * pageSize - read) } }
            if let wal {
                for offset in 0..<count {
                    guard let frame = wal.latestFrame[UInt32(page + offset)] else { continue }
                    let result = block.withUnsafeMutableBytes { buffer in
                        Result { () throws(StoreError) in try wal.file.read(into: buffer.baseAddress! + offset * pageSize, at: frame, count: pageSize) }
                    }
                    _ = try result.get()
                }
            }
            block.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<(count * pageSize)])) }
            page += count
        }
    }
}

// MARK: - The files

/// The first 100 bytes of an SQLite database, what the digest needs of them.
struct SQLiteHeader {
    var pageSize: Int
    var isWAL: Bool
    var inHeaderPageCount: Int
    var inHeaderCountIsValid: Bool

    func pageCount(fileSize: Int64) -> Int {
        // The in-header size is valid when written by a version that keeps it (its "version valid for"
        // equals the change counter); else the file's size says.
        if inHeaderCountIsValid && inHeaderPageCount > 0 { return inHeaderPageCount }
        return Int((fileSize + Int64(pageSize) - 1) / Int64(pageSize))
    }
}

/// A file opened for reading without following a link at its name, and read by offset.
final class DigestFile {
    let descriptor: Int32
    let path: String
    let size: Int64

    init(path: String) throws(StoreError) {
        self.path = path
        descriptor = FileOperations.openDescriptor(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw StoreError(.notFound, "there is no file here", path: path) }
            throw FileOperations.failure("cannot read", path)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw StoreError(.ioFailure, "not a regular file", path: path)
        }
        size = Int64(info.st_size)
    }

    func close() { Glibc.close(descriptor) }

    /// Reads up to `count` bytes at `offset` into `buffer`; the number read (less at the end of the file).
    @discardableResult
    func read(into buffer: UnsafeMutableRawPointer, at offset: Int64, count: Int) throws(StoreError) -> Int {
        var done = 0
        while done < count {
            let got = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw FileOperations.failure("cannot read", path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    func read(into bytes: inout [UInt8], at offset: Int64, count: Int) throws(StoreError) -> Int {
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(StoreError) in try read(into: buffer.baseAddress!, at: offset, count: count) }
        }
        return try result.get()
    }

    /// `count` bytes at `offset`, fewer at the end of the file, none when it cannot be read.
    func read(at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard let got = try? read(into: &bytes, at: offset, count: count) else { return [] }
        return Array(bytes.prefix(got))
    }

    func hashAll(into hasher: inout SHA256) throws(StoreError) {
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while true {
            let got = try read(into: &block, at: offset, count: block.count)
            if got == 0 { break }
            block.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            offset += Int64(got)
        }
    }

    /// The header of an SQLite database, nil when the file is not one.
    func sqliteHeader() -> SQLiteHeader? {
        let header = read(at: 0, count: 100)
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else { return nil }
        let raw = Int(header[16]) << 8 | Int(header[17])
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { return nil }
        func word(_ at: Int) -> UInt32 { header[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        return SQLiteHeader(
            pageSize: pageSize, isWAL: header[18] == 2 && header[19] == 2, inHeaderPageCount: Int(word(28)),
            inHeaderCountIsValid: word(92) == word(24))
    }
}

/// The committed frames of a `-wal` file, as a reader recovering the log finds them: frames whose salts
/// are the header's and whose running checksum holds, up to the last commit frame among them.
struct WALIndex {
    let file: DigestFile
    /// Each page's latest committed frame: the offset of its page data.
    var latestFrame: [UInt32: Int64] = [:]
    /// The database's size in pages after the last committed transaction; nil when the log commits none.
    var pageCount: Int?

    init?(path: String, pageSize: Int) {
        guard let file = try? DigestFile(path: path) else { return nil }
        self.file = file
        let header = file.read(at: 0, count: 32)
        guard header.count == 32 else { return }
        func word(_ bytes: [UInt8], _ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let magic = word(header, 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683, Int(word(header, 8)) == pageSize else { return }
        let bigEndian = magic & 1 == 1
        var checksum = Self.checksum(header[0..<24], bigEndian: bigEndian, from: (0, 0))
        guard checksum == (word(header, 24), word(header, 28)) else { return }
        let salts = (word(header, 16), word(header, 20))
        var pending: [UInt32: Int64] = [:]
        var offset: Int64 = 32
        var frame = [UInt8](repeating: 0, count: 24 + pageSize)
        while offset + Int64(24 + pageSize) <= file.size {
            guard (try? file.read(into: &frame, at: offset, count: frame.count)) == frame.count else { break }
            guard (word(frame, 8), word(frame, 12)) == salts else { break }
            checksum = Self.checksum(frame[0..<8], bigEndian: bigEndian, from: checksum)
            checksum = Self.checksum(frame[24...], bigEndian: bigEndian, from: checksum)
            guard checksum == (word(frame, 16), word(frame, 20)) else { break }
            pending[word(frame, 0)] = offset + 24
            let commitSize = word(frame, 4)
            if commitSize > 0 {
                latestFrame.merge(pending) { $1 }
                pending.removeAll(keepingCapacity: true)
                pageCount = Int(commitSize)
            }
            offset += Int64(24 + pageSize)
        }
    }

    /// SQLite's WAL checksum over `bytes` (a multiple of 8), continuing from `start`.
    static func checksum(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, from start: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s0, s1) = start
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 4
            var index = 0
            while index + 1 < words {
                var x0 = raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
                var x1 = raw.loadUnaligned(fromByteOffset: index * 4 + 4, as: UInt32.self)
                if bigEndian {
                    x0 = UInt32(bigEndian: x0)
                    x1 = UInt32(bigEndian: x1)
                } else {
                    x0 = UInt32(littleEndian: x0)
                    x1 = UInt32(littleEndian: x1)
                }
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
                index += 2
            }
        }
        return (s0, s1)
    }
}
