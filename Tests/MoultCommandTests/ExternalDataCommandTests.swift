import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22 item 2, `fidelity/external-binary-storage` (`Tests/Fixtures/regressions/fidelity/external-binary-storage/`):
/// a Binary Data attribute with `allowsExternalBinaryDataStorage` keeps a large value as a file in
/// `.<store name>_SUPPORT/_EXTERNAL_DATA/`, its column holding `0x02` + the file's name + `0x00`.
/// `migrate --output` used to copy the reference and not the file (exit 0, the value lost) and `verify`
/// passed; the destination now gets its own folder with every file a carried reference names, `verify`
/// checks each, and `inspect` counts them.
@Suite struct ExternalDataCommandTests {
    static let folder = Fixtures.url("regressions/fidelity/external-binary-storage")
    static let model = folder.appending(path: "B.xcdatamodeld").path
    static let removedModel = folder.appending(path: "Removed.xcdatamodeld").path
    /// v1 -> v3 not inferable directly (`score` String -> Integer 64), v1 -> v2 (by SQL) -> v3 is.
    static let chainModel = folder.appending(path: "Chain.xcdatamodeld").path
    static let names = ["6F1C2B3A-0000-4000-8000-000000000001", "6F1C2B3A-0000-4000-8000-000000000002", "6F1C2B3A-0000-4000-8000-000000000003"]

    /// A v1 store of `model` as the regression case builds it, with objects: 1, 2 and 3 external (their
    /// files 1 MiB, 200 KiB and 3 bytes of deterministic bytes), 4 in the row (`0x01` + bytes), 5 NULL.
    static func makeStore(_ directory: TemporaryDirectory, model: String = model, name: String = "b", withX: Bool = false) throws -> URL {
        let store = directory.appending("\(name).sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model, "--model-version", "v1"])
        try #require(created.exitCode == 0, "\(created.standardError)")
        let files = directory.appending(".\(name)_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        for (index, size) in [1 << 20, 200 << 10, 3].enumerated() {
            try bytes(seed: index + 1, count: size).write(to: files.appending(path: names[index]))
        }
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.write {
            let columns = withX ? "Z_PK, Z_ENT, Z_OPT, ZDATA, ZX" : "Z_PK, Z_ENT, Z_OPT, ZDATA"
            let marks = withX ? "?, 1, 1, ?, 7" : "?, 1, 1, ?"
            for key in 1...3 {
                try database.execute("INSERT INTO ZBLOB (\(columns)) VALUES (\(marks))", [.int(Int64(key)), .data(reference(names[key - 1]))])
            }
            try database.execute("INSERT INTO ZBLOB (\(columns)) VALUES (\(marks))", [.int(4), .data([0x01, 0xCA, 0xFE])])
            try database.execute("INSERT INTO ZBLOB (\(columns)) VALUES (\(marks))", [.int(5), .null])
            try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 5 WHERE Z_NAME = 'Blob'")
        }
        return store
    }

    static func reference(_ name: String) -> [UInt8] { [0x02] + Array(name.utf8) + [0] }

    static func bytes(seed: Int, count: Int) -> Data {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15
        return Data((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
    }

    static func column(_ store: URL, _ key: Int) throws -> [UInt8]? {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        guard case .data(let bytes)? = try database.scalar("SELECT ZDATA FROM ZBLOB WHERE Z_PK = \(key)") else { return nil }
        return bytes
    }

    static func file(_ store: URL, _ name: String) -> Data? {
        FileManager.default.contents(atPath: ExternalDataReference(fileName: name)!.url(besideStore: store).path)
    }

    static func inode(_ url: URL) -> UInt64? {
        var info = stat()
        return stat(url.path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    static let toV2 = ["--model", model, "--to", "v2", "--quiet"]

    // MARK: - fidelity/external-binary-storage

    /// The regression case: `migrate --output` gives `.bo_SUPPORT/_EXTERNAL_DATA/` every file the
    /// destination's references name, hard-linked (same inode), with the source's bytes; the references,
    /// the in-row value and the NULL are carried as they are; `verify` passes, and fails (67) once a
    /// destination file is changed or removed. Before the fix: no folder, and `verify` passed.
    @Test(arguments: [false, true])
    func migrateOutputCarriesTheExternalFiles(copiesOnly: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory)
        let output = directory.appending("bo.sqlite")
        let migrated = try MoultProcess.run(
            ["migrate", source.path] + Self.toV2 + ["--output", output.path] + (copiesOnly ? ["--copy-external-data"] : []))
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        for (index, name) in Self.names.enumerated() {
            #expect(try Self.column(output, index + 1) == Self.reference(name))
            let carried = try #require(Self.file(output, name), "\(name) is not beside bo.sqlite")
            #expect(carried == Self.file(source, name))
            let from = ExternalDataReference(fileName: name)!.url(besideStore: source)
            let to = ExternalDataReference(fileName: name)!.url(besideStore: output)
            #expect((Self.inode(from) == Self.inode(to)) == !copiesOnly, "linked unless told to copy")
        }
        #expect(try Self.column(output, 4) == [0x01, 0xCA, 0xFE])
        #expect(try Self.column(output, 5) == nil)
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.appending(".bo_SUPPORT/_EXTERNAL_DATA").path)
        #expect(Set(entries) == Set(Self.names), "no temporary file is left: \(entries)")

        let verify = ["verify", source.path, output.path, "--model", Self.model, "--to", "v2"]
        let passed = try MoultProcess.run(verify)
        #expect(passed.exitCode == 0, "\(passed.standardOutput)\(passed.standardError)")
        #expect(passed.standardOutput.contains("external-data 3"), "\(passed.standardOutput)")

        // A changed file (a copy, so that the source's stays as it was) and a missing one are caught.
        let changed = ExternalDataReference(fileName: Self.names[2])!.url(besideStore: output)
        try FileManager.default.removeItem(at: changed)
        try Data([1, 2, 4]).write(to: changed)
        let wrongBytes = try MoultProcess.run(verify)
        #expect(wrongBytes.exitCode == 67, "\(wrongBytes.standardOutput)")
        #expect(wrongBytes.standardOutput.contains("Blob 3 (Z_PK), attribute data") && wrongBytes.standardOutput.contains("does not hold the bytes"))
        #expect(Self.file(source, Self.names[2]) == Self.bytes(seed: 3, count: 3))
        try FileManager.default.removeItem(at: ExternalDataReference(fileName: Self.names[0])!.url(besideStore: output))
        let missing = try MoultProcess.run(verify)
        #expect(missing.exitCode == 67)
        #expect(missing.standardOutput.contains("Blob 1 (Z_PK), attribute data: its external file \(Self.names[0]) is not in"), "\(missing.standardOutput)")
    }

    /// A reference whose file the source lacks is kept, and said as a warning naming the object; the
    /// other files are carried, and `verify` lists it as not checked rather than failing.
    @Test func aReferenceWithNoFileInTheSourceIsAWarning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory)
        try FileManager.default.removeItem(at: ExternalDataReference(fileName: Self.names[1])!.url(besideStore: source))
        let output = directory.appending("bo.sqlite")
        let migrated = try MoultProcess.run(["migrate", source.path] + Self.toV2 + ["--output", output.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(
            migrated.standardError.contains("moult: warning: Blob 2 (Z_PK), attribute data: its external file \(Self.names[1]) is missing from the source"),
            "\(migrated.standardError)")
        #expect(try Self.column(output, 2) == Self.reference(Self.names[1]))
        #expect(Self.file(output, Self.names[0]) == Self.file(source, Self.names[0]))
        #expect(Self.file(output, Self.names[1]) == nil)
        let verify = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--to", "v2"])
        #expect(verify.exitCode == 0, "\(verify.standardOutput)")
        #expect(verify.standardOutput.contains("missing from the source too"), "\(verify.standardOutput)")
    }

    /// An attribute removed by the step carries nothing: no support folder for the destination.
    @Test func aRemovedAttributeCarriesNoFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory, model: Self.removedModel, withX: true)
        let output = directory.appending("bo.sqlite")
        let migrated = try MoultProcess.run(["migrate", source.path, "--model", Self.removedModel, "--to", "v2", "--quiet", "--output", output.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending(".bo_SUPPORT").path))
        #expect(Self.file(source, Self.names[0]) != nil, "the source's files stay")
    }

    // MARK: - Kill and resume

    /// Killed after a chunk's commit, or after the first file carried, the same command resumes and ends
    /// with the store and the files of a run never interrupted.
    @Test(arguments: ["after-sqlite-commit:2", "after-external-file:1", "after-marker:1"])
    func aKilledRunResumesToTheSameStoreAndFiles(fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory)
        let whole = directory.appending("whole.sqlite")
        let command = ["migrate", source.path] + Self.toV2 + ["--chunk-size", "1"]
        #expect(try MoultProcess.run(command + ["--output", whole.path]).exitCode == 0)

        let output = directory.appending("bo.sqlite")
        let killed = try MoultProcess.run(command + ["--output", output.path], environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let resumed = try MoultProcess.run(command + ["--output", output.path])
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")

        let dump = { (store: URL) throws -> [String] in
            let database = try Database(url: store, mode: .readOnly)
            defer { database.close() }
            return try database.query("SELECT Z_PK || ' ' || Z_ENT || ' ' || Z_OPT || ' ' || ZX || ' ' || quote(ZDATA) FROM ZBLOB ORDER BY Z_PK") {
                $0.string(at: 0) ?? ""
            }
        }
        #expect(try dump(output) == dump(whole))
        #expect(try StoreMetadata(contentsOf: output) == StoreMetadata(contentsOf: whole))
        for name in Self.names {
            #expect(Self.file(output, name) != nil && Self.file(output, name) == Self.file(whole, name), "\(name)")
        }
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.appending(".bo_SUPPORT/_EXTERNAL_DATA").path)
        #expect(Set(entries) == Set(Self.names), "\(entries)")
        #expect(try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--to", "v2"]).exitCode == 0)
    }

    /// A chain whose first step is made by SQL (an intermediate store in the steps folder) carries the
    /// files through it: the second step finds them beside the intermediate store, with no warning.
    @Test func aChainCarriesTheFilesThroughAnIntermediateStoreMadeBySQL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory, model: Self.chainModel)
        let output = directory.appending("bo.sqlite")
        let migrated = try MoultProcess.run(["migrate", source.path, "--model", Self.chainModel, "--to", "v3", "--output", output.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("2 step(s)"), "\(migrated.standardOutput)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        for (index, name) in Self.names.enumerated() {
            #expect(try Self.column(output, index + 1) == Self.reference(name))
            #expect(Self.file(output, name) != nil && Self.file(output, name) == Self.file(source, name), "\(name)")
        }
        let verify = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.chainModel, "--to", "v3"])
        #expect(verify.exitCode == 0, "\(verify.standardOutput)")
    }

    // MARK: - In place

    /// In place (a step by SQL), the references keep their names and the store its name: the files stay
    /// in `.b_SUPPORT/_EXTERNAL_DATA/`, untouched, and every reference still finds its file.
    @Test func inPlaceTheFilesStayWithTheStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.makeStore(directory)
        let before = Self.names.map { Self.file(store, $0) }
        let migrated = try MoultProcess.run(["migrate", store.path] + Self.toV2)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("warning"), "\(migrated.standardError)")
        #expect(Self.names.map { Self.file(store, $0) } == before)
        for (index, name) in Self.names.enumerated() { #expect(try Self.column(store, index + 1) == Self.reference(name)) }
        let inspect = try MoultProcess.run(["inspect", store.path, "--model", Self.model])
        #expect(inspect.standardOutput.contains("3 reference(s) in the store, 0 with no file"), "\(inspect.standardOutput)")
    }

    // MARK: - inspect

    /// `inspect` counts the files beside the store and, with the model, the references and those with
    /// no file.
    @Test func inspectCountsTheExternalFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.makeStore(directory)
        try FileManager.default.removeItem(at: ExternalDataReference(fileName: Self.names[2])!.url(besideStore: source))
        let withModel = try MoultProcess.run(["inspect", source.path, "--model", Self.model])
        #expect(withModel.exitCode == 0, "\(withModel.standardError)")
        #expect(withModel.standardOutput.contains("external data: 2 file(s) in "), "\(withModel.standardOutput)")
        #expect(withModel.standardOutput.contains("3 reference(s) in the store, 1 with no file"), "\(withModel.standardOutput)")
        let json = try MoultProcess.run(["inspect", source.path, "--model", Self.model, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let external = try #require(object["externalData"] as? [String: Any])
        #expect(external["files"] as? Int == 2 && external["references"] as? Int == 3 && external["missing"] as? Int == 1, "\(external)")
    }
}
