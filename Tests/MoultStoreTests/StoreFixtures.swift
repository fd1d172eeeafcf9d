import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The fixture stores made by Core Data, each with the model version that made it
/// (from Tests/Fixtures/version-hashes.json).
struct FixtureStore: Sendable, CustomStringConvertible {
    /// The store, relative to Tests/Fixtures.
    var store: String
    /// The `.xcdatamodeld` (or bare `.xcdatamodel`), relative to Tests/Fixtures.
    var model: String
    /// The version's name.
    var version: String

    var storeURL: URL { Fixtures.url(store) }
    var modelURL: URL { Fixtures.url(model) }
    var description: String { (store as NSString).lastPathComponent }

    static let all: [FixtureStore] = {
        struct Entry: Decodable { var model: String; var store: String }
        let data = try! Data(contentsOf: Fixtures.url("version-hashes.json"))
        let entries = try! JSONDecoder().decode([Entry].self, from: data)
        var seen: Set<String> = []
        var result: [FixtureStore] = []
        for entry in entries where seen.insert(entry.store).inserted {
            guard FileManager.default.fileExists(atPath: Fixtures.url(entry.store).path) else { continue }
            let versionFolder = (entry.model as NSString).deletingLastPathComponent
            let parent = (versionFolder as NSString).deletingLastPathComponent
            let model = parent.hasSuffix(".xcdatamodeld") ? parent : versionFolder
            let version = ((versionFolder as NSString).lastPathComponent as NSString).deletingPathExtension
            result.append(FixtureStore(store: entry.store, model: model, version: version))
        }
        return result
    }()

    func loadVersion() throws -> VersionedModel.Version {
        let versioned = try VersionedModel(contentsOf: modelURL)
        return try require_(versioned.version(named: version), "no version \(version) in \(model)")
    }
}

/// `#require` for non-test helpers.
func require_<T>(_ value: T?, _ message: String) throws -> T {
    guard let value else { throw FixtureError(message: message) }
    return value
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// SHA-256-free checksum of a file's bytes (and its -wal/-shm), to show a file was not modified.
func fileFingerprint(_ url: URL) -> [String: Data] {
    var result: [String: Data] = [:]
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = url.path + suffix
        if let data = FileManager.default.contents(atPath: path) { result[suffix] = data }
    }
    return result
}

/// The schema of a database, normalised: tables with their (column, declared type) sets, and index
/// definitions with whitespace collapsed. Order is ignored.
struct NormalisedSchema: Equatable {
    var tables: [String: Set<String>]
    var indexes: Set<String>

    init(_ database: Database) throws {
        tables = [:]
        indexes = []
        let names = try database.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") {
            ($0.string(at: 0) ?? "", $0.string(at: 1) ?? "", $0.string(at: 2) ?? "")
        }
        for (type, name, sql) in names {
            switch type {
            case "table":
                let columns = try database.query("SELECT name, type, pk FROM pragma_table_info(?)", [.string(name)]) {
                    "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")\($0.int64(at: 2) > 0 ? " PK\($0.int64(at: 2))" : "")"
                }
                tables[name] = Set(columns)
            case "index":
                indexes.insert(sql.split(whereSeparator: \.isWhitespace).joined(separator: " "))
            default: break  // triggers: derived attributes, not produced (see StoreLayout docs)
            }
        }
    }
}

extension NormalisedSchema {
    /// Expects the store Moult creates from `model` to have `store`'s tables and indexes, persistent
    /// history (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`) aside.
    static func expectCreated(from model: ObjectModel, toMatch store: Database, _ label: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let created = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { created.database.close() }
        let ours = try NormalisedSchema(created.database)
        var theirs = try NormalisedSchema(store)
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        theirs.tables = theirs.tables.filter { !history.contains($0.key) }
        theirs.indexes = theirs.indexes.filter { index in !history.contains { index.contains(" ON \($0) ") } }
        #expect(ours.tables == theirs.tables, "\(label)")
        #expect(ours.indexes == theirs.indexes, "\(label)")
    }
}
