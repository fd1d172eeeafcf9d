import Foundation
import MoultMapping
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// An attribute whose `allowsExternalBinaryDataStorage` changes, inside the engine: the bulk copy
/// converts in SQL (proved taken first), and makes the store the per-object path makes; the removal of
/// files after an in-place step never takes a file the committed store names.
@Suite struct ExternalDataConversionTests {
    static let model = try! VersionedModel(contentsOf: Fixtures.url("regressions/fidelity/external-binary-storage/Flag.xcdatamodeld"))
    static let name = "6F1C2B3A-0000-4000-8000-000000000001"

    /// A Flag store at `version` with 300 objects: at v1 bare bytes, at v2 one file reference in ten, the
    /// others kept in the row; one value in seven nil.
    static func store(_ version: String, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.appending("\(version).sqlite")
        let store = try SQLiteStore.create(at: url, model: try #require(model.version(named: version)).model)
        defer { store.database.close() }
        let files = ExternalDataReference.folder(besideStore: url)
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try store.database.write {
            for key in 1...300 {
                var value: Value = .data((0..<(key % 5)).map { UInt8(truncatingIfNeeded: $0 &* key) })
                if version == "v2", case .data(let bytes) = value {
                    // One in ten a file (of 0xEE and its key), the others kept in the row.
                    if key % 10 == 0 {
                        let name = String(format: "6F1C2B3A-0000-4000-8000-%012d", key)
                        try Data([0xEE, UInt8(truncatingIfNeeded: key)]).write(to: files.appending(path: name))
                        value = .data(ExternalDataReference(fileName: name)!.columnBytes)
                    } else {
                        value = .data(ExternalDataReference.marked(bytes))
                    }
                }
                if key % 7 == 0 { value = .null }
                try store.database.execute("INSERT INTO ZBLOB (Z_PK, Z_ENT, Z_OPT, ZDATA, ZX) VALUES (?, 1, 1, ?, ?)", [.int(Int64(key)), value, .int(Int64(key))])
            }
            try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 300 WHERE Z_NAME = 'Blob'")
        }
        return url
    }

    /// v1 → v2 (marked) and v2 → v3 (read into the rows): the bulk insert wraps the column in the SQL
    /// function, and its store is the per-object path's, row for row.
    @Test(arguments: [("v1", "v2", "moult_external_mark(s.ZDATA)"), ("v2", "v3", "moult_external_inline(s.ZDATA)")])
    func theBulkCopyConvertsAsThePerObjectPathDoes(step: (from: String, to: String, call: String)) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.store(step.from, in: directory)
        let from = try #require(Self.model.version(named: step.from)).model, to = try #require(Self.model.version(named: step.to)).model
        let migrator = StreamingMigrator(
            source: source, sourceModel: from, destinationModel: to,
            mappings: [try MappingModel.inferred(from: step.from, to: step.to, in: Self.model)])
        let opened = try SQLiteStore(url: source, model: from)
        let session = try Session(job: migrator.job, source: opened, destination: nil)
        let insert = try #require(session.mappings.first?.bulkCopy?.insertSQL, "the mapping is copied in bulk")
        #expect(insert.contains(step.call), "\(insert)")
        opened.database.close()

        var outputs: [URL] = []
        for bulkSQL in [true, false] {
            let output = directory.appending("\(step.to)-\(bulkSQL).sqlite")
            try ProgressiveMigration(store: source, model: Self.model, to: step.to, options: MigrationOptions(chunkSize: 64, bulkSQL: bulkSQL))
                .run(output: output)
            outputs.append(output)
        }
        try expectIdentical(outputs[0], outputs[1], ignoringStoreUUID: true, "\(step.from) → \(step.to): bulk SQL vs per object")
        let database = try Database(url: outputs[0], mode: .readOnly)
        defer { database.close() }
        if step.to == "v2" {
            // Every value marked as kept in the row (the empty ones too), the nils nil.
            #expect(try database.scalar("SELECT COUNT(*) FROM ZBLOB WHERE substr(ZDATA, 1, 1) IS NOT x'01'") == .int(300 / 7))
        } else {
            #expect(try database.scalar("SELECT hex(ZDATA) FROM ZBLOB WHERE Z_PK = 20") == .string("EE14"), "the file's bytes")
            #expect(try database.scalar("SELECT hex(ZDATA) FROM ZBLOB WHERE Z_PK = 23") == .string("00172E"), "the marker dropped")
        }
    }

    // MARK: - Removing files after an in-place step

    static let unnamed = "6F1C2B3A-0000-4000-8000-000000000999"

    /// A v2 store with a file no row names, and a record of removals for it and for `others`, made for
    /// `version`, as a step writes it before its commit; then the removals completed.
    static func completeRemovals(of others: [String], recordedFor version: String, in directory: TemporaryDirectory) throws -> URL {
        let store = try Self.store("v2", in: directory)
        let work = RunNames.inPlaceWork(for: store)
        try RunFolder.make(work)
        try Data([1]).write(to: ExternalDataReference(fileName: unnamed)!.url(besideStore: store))
        let model = try #require(Self.model.version(named: version)).model
        let record = ExternalDataRemovals(
            version: VersionHashes.digest(StoreMetadata(model: model).entityHashes),
            columns: try StoreLayout(model: model).externalStorageTableColumns.map { [$0.table, $0.column] }, files: others + [unnamed])
        try JSONEncoder().encode(record).write(to: work.appending(path: ExternalDataBackup.removalsRecord))
        ExternalDataBackup.completeRemovals(of: store, work: work)
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: ExternalDataBackup.removalsRecord).path), "the record goes")
        return store
    }

    static func exists(_ name: String, besideStore store: URL) -> Bool {
        FileManager.default.fileExists(atPath: ExternalDataReference(fileName: name)!.url(besideStore: store).path)
    }

    /// A record naming a file a row of the committed store still names: that file stays, the others go.
    @Test func aFileTheCommittedStoreNamesIsNeverRemoved() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let named = "6F1C2B3A-0000-4000-8000-000000000010"
        let store = try Self.completeRemovals(of: [named], recordedFor: "v2", in: directory)
        #expect(Self.exists(named, besideStore: store), "a row names it")
        #expect(!Self.exists(Self.unnamed, besideStore: store))
    }

    /// A record for a version the store is not at (its step never committed) removes nothing.
    @Test func aRecordForAnotherVersionRemovesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.completeRemovals(of: [], recordedFor: "v3", in: directory)
        #expect(Self.exists(Self.unnamed, besideStore: store))
    }
}
