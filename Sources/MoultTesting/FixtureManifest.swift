import Crypto
public import Foundation
public import MoultModel

/// The checksum manifest of a folder of frozen fixture stores (`moult test --freeze`): one line per
/// file, its SHA-256, the model version the store is at, and its path in the folder, separated by tabs
/// (a version's name or a path may hold spaces); a store's external data files and its `-wal` and
/// `-shm` companions each get a line of their own. Lines starting with `#` are comments.
///
/// ```text
/// moult-fixtures 1
/// 3f7a…e1⇥v1⇥v1.sqlite
/// 09bc…44⇥v1⇥.v1_SUPPORT/_EXTERNAL_DATA/6F1C2B3A-0000-4000-8000-000000000001
/// ```
///
/// A fixture whose bytes no longer match its line is refused, never trusted: ``check(in:)`` names it.
public struct FixtureManifest: Sendable, Hashable {
    /// The manifest's file name in a fixtures folder.
    public static let fileName = "fixtures.manifest"
    static let header = "moult-fixtures 1"

    public struct Entry: Sendable, Hashable {
        public var sha256: String
        public var version: String
        /// The path relative to the fixtures folder.
        public var path: String

        public init(sha256: String, version: String, path: String) {
            self.sha256 = sha256
            self.version = version
            self.path = path
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// The stores listed, by version: the entries at the folder's top level, but for a store's
    /// `-wal`, `-shm` and `-journal` companions (listed too, so that a changed one is refused).
    public var stores: [(version: String, path: String)] {
        entries.filter { entry in
            !entry.path.contains("/") && !["-wal", "-shm", "-journal"].contains { entry.path.hasSuffix($0) }
        }.map { ($0.version, $0.path) }
    }

    // MARK: - Reading

    /// Reads a manifest's text.
    ///
    /// - Parameters:
    ///   - bytes: The manifest's bytes (UTF-8 text).
    ///   - file: The manifest's path, for messages.
    /// - Throws: ``FixtureError`` (bad input) naming the line and what is wrong with it.
    public init(bytes: [UInt8], file: String) throws(FixtureError) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FixtureError("\(file): the manifest is not UTF-8 text")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard lines.first.map(String.init) == Self.header else {
            throw FixtureError("\(file):1: expected the header '\(Self.header)', found '\(lines.first.map { String($0.prefix(60)) } ?? "")'")
        }
        var entries: [Entry] = []
        var seen: Set<String> = []
        for (offset, line) in lines.enumerated().dropFirst() where !line.isEmpty && !line.hasPrefix("#") {
            let place = "\(file):\(offset + 1)"
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else {
                throw FixtureError("\(place): expected 'SHA-256<tab>VERSION<tab>PATH' (three fields separated by tabs), found \(fields.count) field\(fields.count == 1 ? "" : "s")")
            }
            let (hash, version, path) = (String(fields[0]), String(fields[1]), String(fields[2]))
            guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw FixtureError("\(place): '\(hash.prefix(80))' is not a SHA-256 (64 lowercase hexadecimal digits)")
            }
            guard !version.isEmpty else { throw FixtureError("\(place): the version is empty") }
            guard Self.isSafeRelativePath(path) else {
                throw FixtureError("\(place): '\(path.prefix(200))' is not a path inside the fixtures folder (relative, no '..', no empty part)")
            }
            guard seen.insert(path).inserted else { throw FixtureError("\(place): '\(path)' is listed twice") }
            entries.append(Entry(sha256: hash, version: version, path: path))
        }
        self.entries = entries
    }

    static func isSafeRelativePath(_ path: String) -> Bool {
        guard !path.hasPrefix("/"), !path.utf8.contains(0), path != FixtureManifest.fileName else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// The manifest as text.
    public var text: String {
        ([Self.header, "# SHA-256, model version, path (separated by tabs): a fixture whose bytes changed is refused"]
            + entries.map { "\($0.sha256)\t\($0.version)\t\($0.path)" }).joined(separator: "\n") + "\n"
    }

    // MARK: - Checking

    /// Checks every listed file of the folder against its checksum.
    ///
    /// - Throws: ``FixtureError`` naming the first file missing or changed.
    public func check(in folder: URL) throws(FixtureError) {
        for entry in entries {
            let url = folder.appending(path: entry.path)
            guard let digest = try? Self.sha256(of: url) else {
                throw FixtureError("fixture \(entry.path) (version \(entry.version)) is listed in \(Self.fileName) but cannot be read")
            }
            guard digest == entry.sha256 else {
                throw FixtureError("fixture \(entry.path) (version \(entry.version)) changed since it was frozen: its SHA-256 is \(digest), the manifest says \(entry.sha256); it is refused")
            }
        }
    }

    /// The SHA-256 of a file, as 64 lowercase hexadecimal digits, read a block at a time.
    public static func sha256(of url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty { hasher.update(data: block) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// A fixtures folder or manifest that cannot be trusted: malformed, or a fixture changed or missing.
public struct FixtureError: CategorizedError, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var category: FailureCategory { .badInput }
    public var description: String { message }
}
