import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// Core Data's XML store on the command line: `convert`, `migrate` from and to XML (People v2 → v3 with
/// its mapping gives, object by object, what SQLite → SQLite gives), in place on an XML store,
/// `inspect`, and the binary store refused by name.
@Suite struct XMLStoreCommandTests {
    static let model = MigrateCommandTests.model

    static func run(_ arguments: [String]) throws {
        let result = try MoultProcess.run(arguments)
        #expect(result.exitCode == 0, "moult \(arguments.joined(separator: " ")): \(result.standardError)")
    }

    /// Every object of an XML store, by number, read with a version of the People model.
    static func objects(_ url: URL, version: String) throws -> [XMLStoreObject] {
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        let reader = try XMLStoreReader(url: url)
        try reader.bind(to: StoreLayout(model: try #require(versioned.version(named: version)).model))
        var objects: [XMLStoreObject] = []
        while let object = try reader.next() { objects.append(object) }
        return objects.sorted { $0.number < $1.number }
    }

    /// Every row of an SQLite store, entity by entity, in key order, read with a version of `model`.
    static func rows(_ url: URL, version: String, model: String = model) throws -> [ObjectRow] {
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        let store = try SQLiteStore(url: url, model: try #require(versioned.version(named: version)).model)
        defer { store.database.close() }
        var rows: [ObjectRow] = []
        for entity in store.layout.entities where !entity.isAbstract {
            let cursor = try store.objects(of: entity.name, includingSubentities: false)
            while let row = try cursor.next() { rows.append(row) }
        }
        return rows
    }

    @Test func peopleV2ToV3GivesTheSameObjectsWhateverTheStoreTypes() throws {
        let directory = try TemporaryDirectory("xml-people")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 120, in: directory)
        let mapping = MigrateCommandTests.mapping("v2-to-v3")
        func migrate(_ store: URL, _ output: String, _ extra: [String] = []) throws -> URL {
            let url = directory.appending(output)
            try Self.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--mapping", mapping, "--output", url.path, "--chunk-size", "25", "--quiet"] + extra)
            return url
        }
        let sourceXML = directory.appending("source.xml")
        try Self.run(["convert", source.path, "--to", "xml", "--output", sourceXML.path, "--model", Self.model])

        let sqliteToSQLite = try migrate(source, "a.sqlite")
        let xmlToSQLite = try migrate(sourceXML, "b.sqlite", ["--output-type", "sqlite"])
        let sqliteToXML = try migrate(source, "c.xml", ["--output-type", "xml"])
        let xmlToXML = try migrate(sourceXML, "d.xml")
        #expect(try StoreType(contentsOf: xmlToSQLite) == .sqlite && StoreType(contentsOf: sqliteToXML) == .xml && StoreType(contentsOf: xmlToXML) == .xml)

        // XML → SQLite: the same rows, key for key, as SQLite → SQLite.
        let expected = try Self.rows(sqliteToSQLite, version: "v3")
        #expect(expected.count > 120)
        #expect(try Self.rows(xmlToSQLite, version: "v3") == expected)
        // SQLite → XML and XML → XML: the same objects as SQLite → SQLite's store written as XML.
        let expectedXML = directory.appending("a.xml")
        try Self.run(["convert", sqliteToSQLite.path, "--to", "xml", "--output", expectedXML.path, "--model", Self.model])
        let expectedObjects = try Self.objects(expectedXML, version: "v3")
        #expect(expectedObjects.count == expected.count)
        #expect(try Self.objects(sqliteToXML, version: "v3") == expectedObjects)
        #expect(try Self.objects(xmlToXML, version: "v3") == expectedObjects)
        // No work folder is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".moult-xml") }.isEmpty)
    }

    @Test func inPlaceOnAnXMLStoreWritesANewFileAndKeepsTheOriginal() throws {
        let directory = try TemporaryDirectory("xml-in-place")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 40, in: directory)
        let store = directory.appending("People.xml")
        try Self.run(["convert", source.path, "--to", "xml", "--output", store.path, "--model", Self.model])
        let original = try Data(contentsOf: store)
        try Self.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--mapping", MigrateCommandTests.mapping("v2-to-v3"), "--quiet"])
        #expect(try Data(contentsOf: directory.appending("People~.xml")) == original)
        let migrated = try Self.objects(store, version: "v3")
        #expect(migrated.filter { $0.entity == "Person" }.count == 40)
        // In place keeps the type: another type needs --output.
        let refused = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--output-type", "sqlite"])
        #expect(refused.exitCode == 64 && refused.standardError.contains("--output DEST"))
    }

    @Test func convertRoundTripsByteForByteAndInspectReadsTheXMLStore() throws {
        let directory = try TemporaryDirectory("xml-convert")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("3", persons: 30, in: directory)
        let xml = directory.appending("store.data")   // the type is found from the content, not the name
        try Self.run(["convert", source.path, "--to", "xml", "--output", xml.path, "--model", Self.model])
        let sqlite = directory.appending("back.sqlite")
        try Self.run(["convert", xml.path, "--to", "sqlite", "--output", sqlite.path, "--model", Self.model])
        let again = directory.appending("again.xml")
        try Self.run(["convert", sqlite.path, "--to", "xml", "--output", again.path, "--model", Self.model])
        #expect(try Data(contentsOf: again) == Data(contentsOf: xml))

        let inspect = try MoultProcess.run(["inspect", xml.path, "--model", Self.model, "--json"])
        #expect(inspect.exitCode == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(inspect.standardOutput.utf8)) as? [String: Any])
        #expect(report["storeType"] as? String == "XML" && report["matchingVersion"] as? String == "v3")
        #expect((report["entities"] as? [String: [String: Int]])?["Person"]?["count"] == 30)

        // DEST already this conversion (a run killed after renaming it into place): already converted.
        let done = try MoultProcess.run(["convert", sqlite.path, "--to", "xml", "--output", again.path, "--model", Self.model])
        #expect(done.exitCode == 0 && done.standardOutput.contains("already converted"), "\(done.standardError)")
        #expect(try Data(contentsOf: again) == Data(contentsOf: xml))
        // Any other file at DEST is never overwritten.
        let other = directory.appending("other.xml")
        try Data("not this conversion".utf8).write(to: other)
        let exists = try MoultProcess.run(["convert", sqlite.path, "--to", "xml", "--output", other.path, "--model", Self.model])
        #expect(exists.exitCode == 74)
        #expect(try Data(contentsOf: other) == Data("not this conversion".utf8))
        let same = try MoultProcess.run(["convert", xml.path, "--to", "xml", "--output", directory.appending("x.xml").path, "--model", Self.model])
        #expect(same.exitCode == 64)
    }

    @Test func aBinaryStoreIsRefusedByName() throws {
        let directory = try TemporaryDirectory("xml-binary")
        defer { directory.remove() }
        let binary = directory.appending("People.binary")
        try Data("bplist00\u{0}\u{1}".utf8).write(to: binary)
        for arguments in [["inspect", binary.path], ["migrate", binary.path, "--model", Self.model, "--output", directory.appending("o.sqlite").path]] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 65)
            #expect(result.standardError.contains("NSBinaryStoreType"))
        }
        let truncated = directory.appending("cut.xml")
        try Data("<?xml version=\"1.0\"?>\n<database>\n    <databaseInfo>\n        <version>1".utf8).write(to: truncated)
        let result = try MoultProcess.run(["convert", truncated.path, "--to", "sqlite", "--output", directory.appending("c.sqlite").path, "--model", Self.model])
        #expect(result.exitCode == 65 && result.standardError.contains("cut.xml:4"))
    }
}
