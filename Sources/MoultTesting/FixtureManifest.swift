import Crypto
public import Foundation
public import MoultModel
import MoultStore

/// The checksum manifest of a folder of frozen fixture stores (`moult test --freeze`): one line per
/// file, its SHA-256, the model version the store is at, and its path in the folder, separated by tabs
/// (a version's name or a path may hold spaces); a store's external data files each get a line of
/// their own. A fixture is one checkpointed store file: no `-wal`, `-shm` or `-journal` beside it. Lines
/// starting with `#` are comments.
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

    public struct Entry: Sendable, Hashable, Codable {
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

    /// The stores listed, by version: every entry but the files of a store's support folder
    /// (`.NAME_SUPPORT/…`, its external data); a store may be in a subfolder (`2024/v1.sqlite`).
    public var stores: [(version: String, path: String)] {
        entries.filter { !Self.isSupportFile($0.path) && !Self.isCompanion($0.path) }.map { ($0.version, $0.path) }
    }

    /// The suffixes of the files SQLite keeps beside a store: a fixture is one checkpointed file, so
    /// none of them may be beside it.
    public static let companionSuffixes = ["-wal", "-shm", "-journal"]

    static func isCompanion(_ path: String) -> Bool { companionSuffixes.contains { path.hasSuffix($0) } }

    /// Whether a path is inside a store's support folder (`.NAME_SUPPORT/`).
    static func isSupportFile(_ path: String) -> Bool {
        path.split(separator: "/").dropLast().contains { $0.hasPrefix(".") && $0.hasSuffix("_SUPPORT") }
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

    /// Checks every listed file of the folder against its checksum, and that nothing unlisted is
    /// beside a fixture: no `-wal`, `-shm` or `-journal` (listed or not: a fixture is one checkpointed
    /// file), no unlisted file in a store's support folder, no unlisted store anywhere in the folder.
    ///
    /// - Throws: ``FixtureError`` naming the first file missing, changed or unlisted.
    public func check(in folder: URL) throws(FixtureError) {
        let listed = Set(entries.map(\.path))
        for entry in entries {
            if Self.isCompanion(entry.path) {
                throw FixtureError("fixture \(entry.path) is listed in \(Self.fileName), but a fixture is one checkpointed store file: checkpoint the store (PRAGMA wal_checkpoint(TRUNCATE), journal_mode=DELETE) and list it alone")
            }
            let url = folder.appending(path: entry.path)
            guard let digest = try? Self.sha256(of: url) else {
                throw FixtureError("fixture \(entry.path) (version \(entry.version)) is listed in \(Self.fileName) but cannot be read")
            }
            guard digest == entry.sha256 else {
                throw FixtureError("fixture \(entry.path) (version \(entry.version)) changed since it was frozen: its SHA-256 is \(digest), the manifest says \(entry.sha256); it is refused")
            }
        }
        let manager = FileManager.default
        for store in stores {
            for suffix in Self.companionSuffixes where manager.fileExists(atPath: folder.appending(path: store.path).path + suffix) {
                throw FixtureError("fixture \(store.path) has a \(store.path)\(suffix) beside it, which \(Self.fileName) does not list: it would change what the fixture holds; remove it (or checkpoint it into the store and freeze the fixture again)")
            }
        }
        for file in Self.files(under: folder) where !listed.contains(file) && file != Self.fileName {
            let name = (file as NSString).lastPathComponent
            if Self.isSupportFile(file) {
                throw FixtureError("\(file) is in a fixture's support folder but \(Self.fileName) does not list it: a fixture's external data is listed file by file; remove it or freeze the fixture again")
            }
            if Self.isCompanion(file) { continue }  // Named above with its store, or beside no fixture.
            if [".sqlite", ".sqlite3", ".db", ".store"].contains(where: name.hasSuffix) || Self.isSQLite(folder.appending(path: file)) {
                throw FixtureError("\(file) is a store in the fixtures folder that \(Self.fileName) does not list: it would never be tested; list it (moult test --freeze) or remove it")
            }
        }
    }

    /// Checks that every listed store is at the version its line says, by its metadata's entity hashes.
    ///
    /// - Parameters:
    ///   - folder: The fixtures folder.
    ///   - model: The versioned model the fixtures are stores of.
    /// - Throws: ``FixtureError`` naming the first store whose metadata matches another version, or none.
    public func checkVersions(in folder: URL, model: VersionedModel) throws(FixtureError) {
        for store in stores {
            let metadata: StoreMetadata
            do {
                metadata = try StoreMetadata(contentsOf: folder.appending(path: store.path))
            } catch {
                throw FixtureError("fixture \(store.path) (listed as \(store.version)) cannot be read as a store: \(error)")
            }
            guard let found = model.version(matchingEntityHashes: metadata.entityHashes) else {
                throw FixtureError("fixture \(store.path) is listed as \(store.version), but its metadata matches no version of \(model.name); it is refused")
            }
            guard found.name == store.version else {
                throw FixtureError("fixture \(store.path) is listed as \(store.version), but its metadata matches \(found.name); it is refused (correct its line in \(Self.fileName))")
            }
        }
    }

    /// The regular files under a folder, as paths relative to it, in byte order.
    static func files(under folder: URL) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var files: [String] = []
        while let path = walker.nextObject() as? String {
            if walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular { files.append(path) }
        }
        return files.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// Whether a file starts with SQLite's header.
    static func isSQLite(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 16)).map { Array($0) == Array("SQLite format 3\u{0}".utf8) } ?? false
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
