import Foundation
import MoultTestSupport
import Testing

/// A to-one naming an object that does not exist (issue 40, item 6): Core Data's SQLite store keeps
/// one, an XML store cannot hold one, so converting such a store to XML is refused (65), naming the
/// objects, and nothing is written. (Reading one from XML is refused by the XML store's reader:
/// `XMLStoreIndexTests`, `XMLStoreRoundTripTests`.)
@Suite struct DanglingReferenceCommandTests {
    @Test func convertingToXMLRefusesAToOneToAMissingObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try MigrateCommandTests.generate("v3", persons: 40, in: directory, name: "s.sqlite")
        let output = directory.appending("s.xml")
        let arguments = ["convert", store.path, "--to", "xml", "--output", output.path, "--model", Fixtures.peopleModel.path]
        // The store as generated converts: the refusal below is the dangling value's.
        let clean = try MoultProcess.run(arguments)
        #expect(clean.exitCode == 0, "\(clean.standardError)")
        try FileManager.default.removeItem(at: output)

        try MigrateCommandTests.sqlite3(store, "UPDATE ZPERSON SET ZADDRESS = 9999 WHERE Z_PK IN (3, 8)")
        let refused = try MoultProcess.run(arguments)
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("2 to-one value(s)"), "\(refused.standardError)")
        #expect(refused.standardError.contains("Person Z_PK 3.address names Address Z_PK 9999"), "\(refused.standardError)")
        #expect(refused.standardError.contains("Person Z_PK 8.address names Address Z_PK 9999"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
