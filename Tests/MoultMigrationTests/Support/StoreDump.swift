import Crypto
import Foundation
import MoultModel
import MoultStore
import Testing

/// Every table of an SQLite store, row by row, ordered by primary key, plus its schema and its
/// metadata: what "two stores are identical" means in these tests.
struct StoreDump: Equatable, CustomStringConvertible {
    /// `CREATE` statements of tables and indexes, by name.
    var schema: [String: String]
    /// Rows of each table, ordered by every column (the primary key first for Core Data's tables).
    var tables: [String: [[Value]]]
    /// The metadata, parsed from `Z_METADATA`.
    var metadata: StoreMetadata

    /// Reads a store's tables.
    ///
    /// - Parameter ignoringStoreUUID: blank the store UUID in the metadata, and drop `Z_METADATA`'s
    ///   raw row (its `Z_UUID` column and its property list both hold the UUID; the parsed metadata
    ///   stays compared, key by key); Moult's record of the run that made the store (its arguments'
    ///   fingerprint, `StoreMetadata.runKey`) is an identity like the UUID, and is dropped too.
    init(_ url: URL, ignoringStoreUUID: Bool = false) throws {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        var schema: [String: String] = [:]
        try database.forEachRow("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name") { row in
            schema[row.string(at: 0) ?? ""] = row.string(at: 1)
        }
        self.schema = schema
        let names = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
            $0.string(at: 0) ?? ""
        }
        var tables: [String: [[Value]]] = [:]
        for name in names where !(ignoringStoreUUID && name == "Z_METADATA") {
            let columns = try database.columns(of: name)
            let order = (1...max(columns.count, 1)).map(String.init).joined(separator: ", ")
            tables[name] = try database.query("SELECT * FROM \(name) ORDER BY \(order)") { row in
                (0..<row.columnCount).map { row.value(at: $0) }
            }
        }
        self.tables = tables
        metadata = try StoreMetadata(reading: database)
        if ignoringStoreUUID {
            metadata.storeUUID = ""
            metadata.additionalKeys[StoreMetadata.runKey] = nil
        }
    }

    /// The first difference, in words, or nil when the dumps are equal.
    func difference(from other: StoreDump) -> String? {
        if schema != other.schema { return "schemas differ: \(schema) vs \(other.schema)" }
        if metadata != other.metadata { return "metadata differ: \(metadata) vs \(other.metadata)" }
        for name in Set(tables.keys).union(other.tables.keys).sorted() {
            let mine = tables[name] ?? []
            let theirs = other.tables[name] ?? []
            guard mine != theirs else { continue }
            if mine.count != theirs.count { return "\(name): \(mine.count) rows vs \(theirs.count)" }
            let index = mine.indices.first { mine[$0] != theirs[$0] } ?? 0
            return "\(name) row \(index): \(mine[index]) vs \(theirs[index])"
        }
        return nil
    }

    var description: String {
        tables.keys.sorted().map { "\($0): \(tables[$0]?.count ?? 0) rows" }.joined(separator: ", ")
    }
}

/// Expects two stores to be identical, table by table.
func expectIdentical(
    _ a: URL, _ b: URL, ignoringStoreUUID: Bool = false, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let first = try StoreDump(a, ignoringStoreUUID: ignoringStoreUUID)
    let second = try StoreDump(b, ignoringStoreUUID: ignoringStoreUUID)
    let difference = first.difference(from: second)
    #expect(difference == nil, "\(comment): \(difference ?? "")", sourceLocation: sourceLocation)
    #expect(!first.tables.isEmpty, sourceLocation: sourceLocation)
}

/// The SHA-256 of a file and its `-wal` companion, to prove that a migration left its source alone.
func checksum(_ url: URL) throws -> String {
    var hasher = SHA256()
    hasher.update(data: try Data(contentsOf: url))
    if let wal = try? Data(contentsOf: URL(filePath: url.path + "-wal")) { hasher.update(data: wal) }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
}
