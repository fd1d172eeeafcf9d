import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22 item 2, an attribute whose `allowsExternalBinaryDataStorage` changes between versions
/// (`Flag.xcdatamodeld` in `regressions/fidelity/external-binary-storage/`: v1 off, v2 on, v3 off): the
/// column's format changes with it. Off → on, the bare bytes are marked `0x01` (Core Data reads a value
/// whose first byte is not 1 as a file's name); on → off, `0x01` + bytes become the bytes and a file's
/// value is read into the row (the file is then not carried). In every path that writes a store: the
/// bulk copy, the per-object path, in place by SQL and in place streamed. Before: the bytes were
/// copied as they were (exit 0, every value misread).
@Suite struct ExternalDataFlagTests {
    typealias Blobs = ExternalDataCommandTests
    static let model = Blobs.folder.appending(path: "Flag.xcdatamodeld").path

    /// The values of a v1 store (flag off), by `Z_PK` from 1: bare bytes, one that looks like a
    /// reference, one that starts like a value kept in the row, an empty one and a nil.
    static let bare: [[UInt8]?] = [[0xCA, 0xFE], [0x02, 0x41, 0x00], [], nil, [0x01, 0x02]]

    static func bareStore(_ directory: TemporaryDirectory, name: String = "b") throws -> URL {
        let store = directory.appending("\(name).sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model, "--model-version", "v1"])
        try #require(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.write {
            for (index, value) in bare.enumerated() {
                try database.execute(
                    "INSERT INTO ZBLOB (Z_PK, Z_ENT, Z_OPT, ZDATA, ZX) VALUES (?, 1, 1, ?, 7)", [.int(Int64(index + 1)), value.map { .data($0) } ?? .null])
            }
            try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(bare.count) WHERE Z_NAME = 'Blob'")
        }
        return store
    }

    /// `ZDATA` of every row, in `Z_PK` order, as its storage class and bytes (a zero-length blob is not nil).
    static func values(_ store: URL) throws -> [String] {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT typeof(ZDATA) || ' ' || hex(ZDATA) FROM ZBLOB ORDER BY Z_PK") { $0.string(at: 0) ?? "" }
    }

    static func described(_ values: [[UInt8]?]) -> [String] {
        values.map { value in value.map { "blob " + $0.map { String(format: "%02X", $0) }.joined() } ?? "null " }
    }

    /// A mapping that copies `data` as it is and computes `x`, so that the step is streamed in place.
    static func streamingMapping(_ from: String, _ to: String, in directory: TemporaryDirectory) throws -> String {
        let url = directory.appending("\(from)-to-\(to).json")
        try Data(
            """
            {"source": {"name": "\(from)"}, "destination": {"name": "\(to)"}, "entityMappings": [{"name": "BlobToBlob", "type": "transform",
             "source": "Blob", "destination": "Blob", "attributes": [{"name": "data", "value": "$source.data"}, {"name": "x", "value": "$source.x + 0"}]}]}
            """.utf8
        ).write(to: url)
        return url.path
    }

    static func verify(_ source: URL, _ destination: URL, to version: String, mapping: [String] = []) throws -> MoultProcess.Result {
        try MoultProcess.run(["verify", source.path, destination.path, "--model", model, "--to", version] + mapping)
    }

    /// What v2 → v3 makes of ``ExternalDataCommandTests/makeStore``'s objects: each file's bytes, the
    /// bytes kept in the row without their marker, nil.
    static func inlined(_ source: URL) -> [String] {
        described(Blobs.names.map { name in Blobs.file(source, name).map { Array($0) } } + [[0xCA, 0xFE], nil])
    }

    /// `moult migrate SOURCE --to VERSION --output bo.sqlite` beside the source, in bulk or object by object.
    static func migrate(_ source: URL, to version: String, bulk: Bool) throws -> (result: MoultProcess.Result, output: URL) {
        let output = source.deletingLastPathComponent().appending(path: "bo.sqlite")
        let result = try MoultProcess.run(
            ["migrate", source.path, "--model", model, "--to", version, "--quiet", "--output", output.path] + (bulk ? [] : ["--no-bulk-sql"]))
        return (result, output)
    }

    // MARK: - Into a new store

    /// v1 → v2 (on) and v2 → v3 (off), `--output`, in bulk and object by object. Off → on: every non-nil
    /// value is `0x01` + its bytes, the empty one `0x01`. On → off: each file's bytes are read into its row,
    /// a value kept in the row loses its marker, and no file is carried (no support folder; the source's
    /// stay). `verify` passes.
    @Test(arguments: ["v2", "v3"], [true, false]) func migrateOutputConvertsTheValues(to version: String, bulk: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = version == "v2" ? try Self.bareStore(directory) : try Blobs.makeStore(directory, model: Self.model, version: "v2", withX: true)
        let expected = version == "v2" ? Self.described(Self.bare.map { $0.map { [0x01] + $0 } }) : Self.inlined(source)
        let (migrated, output) = try Self.migrate(source, to: version, bulk: bulk)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        #expect(try Self.values(output) == expected)
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".bo_SUPPORT").path), "no file is carried")
        #expect(version == "v2" || Blobs.names.allSatisfy { Blobs.file(source, $0) != nil }, "the source's files stay")
        let verified = try Self.verify(source, output, to: version)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)")
    }

    /// A reference whose file is missing cannot be read into the row: it becomes nil, said as a warning
    /// naming the object, the same in bulk and object by object.
    @Test(arguments: [true, false]) func onToOffAMissingFileBecomesNilAndIsSaid(bulk: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Blobs.makeStore(directory, model: Self.model, version: "v2", withX: true)
        try FileManager.default.removeItem(at: ExternalDataReference(fileName: Blobs.names[1])!.url(besideStore: source))
        let (migrated, output) = try Self.migrate(source, to: "v3", bulk: bulk)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(
            migrated.standardError.contains("moult: warning: Blob 2 (Z_PK), attribute data: its external file \(Blobs.names[1]) is missing"),
            "\(migrated.standardError)")
        #expect(try Self.values(output) == Self.inlined(source))
        #expect(try Self.values(output)[1] == "null ")
    }

    // MARK: - In place

    /// v1 → v2 in place, by SQL (the plan says so) and streamed: the values are marked where they stand;
    /// `verify` of the backup against the store passes.
    @Test(arguments: ["sql", "streamed"]) func inPlaceOffToOnMarksTheBytes(method: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.bareStore(directory)
        let mapping = method == "sql" ? [] : ["--mapping", try Self.streamingMapping("v1", "v2", in: directory)]
        if method == "sql" {
            let plan = try MoultProcess.run(["plan", store.path, "--model", Self.model, "--to", "v2"])
            #expect(plan.standardOutput.contains("convertExternalData: ZBLOB.ZDATA"), "\(plan.standardOutput)")
        }
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2"] + mapping)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains(method == "sql" ? ": by SQL" : ": streamed, then swapped in"), "\(migrated.standardOutput)")
        #expect(try Self.values(store) == Self.described(Self.bare.map { $0.map { [0x01] + $0 } }))
        let verified = try Self.verify(directory.appending("b~.sqlite"), store, to: "v2", mapping: mapping)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)")
    }

    /// v2 → v3 in place, by SQL and streamed: each file's bytes are read into its row; the files, which
    /// no row names any more, go from the store's folder once the step has committed, and stay the
    /// backup's (hard links made before the store changed, the same inodes); `verify` passes.
    @Test(arguments: ["sql", "streamed"]) func inPlaceOnToOffReadsTheFilesIntoTheRows(method: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Blobs.makeStore(directory, model: Self.model, version: "v2", withX: true)
        let expected = Self.inlined(store)
        let inodes = Blobs.names.map { Blobs.inode(ExternalDataReference(fileName: $0)!.url(besideStore: store)) }
        let mapping = method == "sql" ? [] : ["--mapping", try Self.streamingMapping("v2", "v3", in: directory)]
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3"] + mapping)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains(method == "sql" ? ": by SQL" : ": streamed, then swapped in"), "\(migrated.standardOutput)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        #expect(try Self.values(store) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending(".b_SUPPORT/_EXTERNAL_DATA").path).isEmpty)
        let backup = directory.appending("b~.sqlite")
        #expect(Blobs.names.map { Blobs.inode(ExternalDataReference(fileName: $0)!.url(besideStore: backup)) } == inodes)
        let verified = try Self.verify(backup, store, to: "v3", mapping: mapping)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)")
    }
}
