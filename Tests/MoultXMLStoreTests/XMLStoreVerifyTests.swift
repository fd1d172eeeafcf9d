import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult verify` of a migration whose destination is an XML store, with external binary data: an XML
/// store holds the values inline and its SQLite copy names its files anew, so the verifier compares the
/// values' bytes. A destination with the source's bytes passes; one whose bytes differ fails (67).
@Suite(.serialized) struct XMLStoreVerifyTests {
    static let model = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/faults/convert-xml-loses-external-data/E.xcdatamodeld")

    /// A store at v1 of the fixture's model with a 4 KiB value in a file and a small one in its row,
    /// migrated to v2 as an XML store; the file's bytes.
    static func migrated(in directory: TemporaryDirectory) throws -> [UInt8] {
        let model = Self.model.path
        let created = try MoultProcess.run(["create", "s.sqlite", "--model", model, "--model-version", "v1"], currentDirectory: directory.url)
        try #require(created.exitCode == 0, "\(created.standardError)")
        let folder = directory.appending(".s_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var random = FuzzRandom(seed: 38)
        let bytes = (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let name = "AAAAAAAA-0000-4000-8000-000000000001"
        try Data(bytes).write(to: folder.appending(path: name))
        let database = try Database(url: directory.appending("s.sqlite"), mode: .readWrite)
        try database.execute(
            "INSERT INTO ZBLOB (Z_PK, Z_ENT, Z_OPT, ZDATA, ZNAME) VALUES (1, 1, 1, ?, 'one'), (2, 1, 1, ?, 'two')",
            [.data([0x02] + Array(name.utf8) + [0x00]), .data([0x01] + Array("inline".utf8))])
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 2")
        database.close()
        let migrate = try MoultProcess.run(
            ["migrate", "s.sqlite", "--model", model, "--to", "v2", "--output-type", "xml", "--output", "d.xml", "--quiet"], currentDirectory: directory.url)
        try #require(migrate.exitCode == 0, "\(migrate.standardError)")
        return bytes
    }

    static func verify(_ destination: String, in directory: TemporaryDirectory) throws -> MoultProcess.Result {
        try MoultProcess.run(["verify", "s.sqlite", destination, "--model", Self.model.path, "--to", "v2"], currentDirectory: directory.url)
    }

    @Test func externalBinaryDataIsVerifiedByItsBytes() throws {
        let directory = try TemporaryDirectory("xml-verify-external")
        defer { directory.remove() }
        let bytes = try Self.migrated(in: directory)
        let right = try Self.verify("d.xml", in: directory)
        #expect(right.exitCode == 0, "\(right.standardOutput)\(right.standardError)")
        #expect(right.standardOutput.contains("sample 2,") && !right.standardOutput.contains("FAIL"), "\(right.standardOutput)")

        // One byte of the 4 KiB value changed in the XML store: the sample finds no object holding the source's bytes.
        let text = try String(contentsOf: directory.appending("d.xml"), encoding: .utf8)
        let encoded = Data(bytes).base64EncodedString()
        var changed = bytes
        changed[10] ^= 0xFF
        let wrong = text.replacingOccurrences(of: String(encoded.prefix(76)), with: String(Data(changed).base64EncodedString().prefix(76)))
        try #require(wrong != text)
        try Data(wrong.utf8).write(to: directory.appending("wrong.xml"))
        let failed = try Self.verify("wrong.xml", in: directory)
        #expect(failed.exitCode == 67, "\(failed.standardOutput)\(failed.standardError)")
        #expect(failed.standardOutput.contains("FAIL sample: no Blob in the destination holds what BlobToBlob makes of Blob Z_PK 1"), "\(failed.standardOutput)")
    }
}
