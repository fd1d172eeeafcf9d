import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// End-to-end tests of `moult hash`: output shapes, and a clear message and exit code for bad input.
@Suite struct HashCommandTests {
    // MARK: - Output

    @Test func printsJSONInTheDocumentedShape() throws {
        let url = Fixtures.url(
            "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
        let result = try MoultProcess.run(["hash", url.path, "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let versions = try #require(root["versions"] as? [[String: Any]])
        #expect(versions.map { $0["name"] as? String } == [
            "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3",
            "CoreDataMigration_Example 4",
        ])
        #expect(versions.map { $0["current"] as? Bool } == [false, false, false, true])
        let third = versions[2]
        #expect(third["versionIdentifiers"] as? [String] != nil)
        let entities = try #require(third["entities"] as? [String: String])
        // The hashes Core Data wrote into CoreDataMigration_Example_3.sqlite.
        #expect(entities["Post"] == "8a55fd4ce6c31444313d4c97e0247ac5d3ed2528c484daeb70b4e481d36e2345")
        #expect(entities["Color"] == "c42610dacb82dfd67d8281d49d82916bd02493cb4cc897db9ca097fe7c9cb9e7")
    }

    @Test func printsTextWithTheCurrentVersion() throws {
        let result = try MoultProcess.run(["hash", Fixtures.peopleModel.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("v5 (current)"))
        #expect(result.standardOutput.contains("Person"))
        #expect(result.standardOutput.split(separator: "\n").first == "v1 [version identifiers: 1]")
    }

    @Test func derivedAttributeIsNotComputableNeverGuessed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(
            in: directory,
            """
            <entity name="Post"><attribute name="title" attributeType="String"/>\
            <attribute name="length" attributeType="Integer 64" derived="YES" derivationExpression="random()"/></entity>\
            <entity name="Tag"><attribute name="name" attributeType="String"/></entity>
            """)
        let result = try MoultProcess.run(["hash", "--json", model.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let version = try #require((root["versions"] as? [[String: Any]])?.first)
        let entities = try #require(version["entities"] as? [String: Any])
        #expect(entities["Post"] is NSNull)
        #expect((entities["Tag"] as? String)?.count == 64)
        let notes = try #require(version["notComputable"] as? [String: String])
        #expect(notes["Post"]?.contains("derived attribute 'length'") == true)
        let text = try MoultProcess.run(["hash", model.path])
        #expect(text.standardOutput.contains("Post  not computable"))
    }

    // MARK: - Bad input

    /// Writes `Bad.xcdatamodel/contents` holding these entities inside a `<model>`.
    private func writeVersion(in directory: TemporaryDirectory, _ entities: String, name: String = "Bad") throws -> URL {
        let folder = directory.appending("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            \(entities)
            </model>
            """
        try Data(xml.utf8).write(to: folder.appending(path: "contents"))
        return folder
    }

    private func expectFailure(
        _ path: URL, exitCode: Int32, mentions fragments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try MoultProcess.run(["hash", path.path])
        #expect(result.exitCode == exitCode, "\(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardOutput.isEmpty, sourceLocation: sourceLocation)
        #expect(result.standardError.hasPrefix("moult: error: "), sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(result.standardError.contains(fragment), "missing '\(fragment)' in: \(result.standardError)", sourceLocation: sourceLocation)
        }
    }

    @Test func malformedXML() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(in: directory, "<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"String\">\n</entity>")
        try expectFailure(model, exitCode: 65, mentions: ["Bad.xcdatamodel/contents:", "malformed XML"])
    }

    @Test func truncatedXML() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Data(contentsOf: Fixtures.peopleModel.appending(path: "v5.xcdatamodel/contents"))
        let folder = directory.appending("Truncated.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try source.prefix(source.count / 2).write(to: folder.appending(path: "contents"))
        try expectFailure(folder, exitCode: 65, mentions: ["Truncated.xcdatamodel/contents:", "malformed or truncated"])
    }

    @Test func emptyContentsFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data().write(to: folder.appending(path: "contents"))
        try expectFailure(folder, exitCode: 65, mentions: ["Empty.xcdatamodel/contents", "malformed XML"])
    }

    @Test func notAModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("Other.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?><plist><dict/></plist>".utf8).write(to: folder.appending(path: "contents"))
        try expectFailure(folder, exitCode: 65, mentions: ["Other.xcdatamodel/contents:1", "not <model>"])
    }

    @Test func unknownAttributeType() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(in: directory, "<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"Integer 128\"/>\n</entity>")
        try expectFailure(
            model, exitCode: 65, mentions: ["Bad.xcdatamodel/contents:4:", "unknown attributeType 'Integer 128'", "A.x"])
    }

    @Test func relationshipToMissingEntity() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(
            in: directory, "<entity name=\"A\">\n<relationship name=\"b\" maxCount=\"1\" destinationEntity=\"Nope\"/>\n</entity>")
        try expectFailure(
            model, exitCode: 65, mentions: ["Bad.xcdatamodel/contents:4:", "'A.b'", "'Nope', which does not exist"])
    }

    @Test func inverseThatDoesNotPointBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(
            in: directory,
            """
            <entity name="A">
            <relationship name="b" maxCount="1" destinationEntity="B" inverseName="a" inverseEntity="B"/>
            <relationship name="other" maxCount="1" destinationEntity="B"/>
            </entity>
            <entity name="B">
            <relationship name="a" maxCount="1" destinationEntity="A" inverseName="other" inverseEntity="A"/>
            </entity>
            """)
        try expectFailure(model, exitCode: 65, mentions: ["Bad.xcdatamodel/contents:4:", "'A.b'", "does not point back"])
    }

    @Test func cycleOfParentEntities() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(
            in: directory, "<entity name=\"A\" parentEntity=\"B\"/>\n<entity name=\"B\" parentEntity=\"A\"/>")
        try expectFailure(model, exitCode: 65, mentions: ["Bad.xcdatamodel/contents:3:", "cycle of parent entities", "'A'"])
    }

    @Test func currentVersionNamesAMissingVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.appending("Model.xcdatamodeld")
        try FileManager.default.copyItem(at: Fixtures.peopleModel, to: bundle)
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>v9.xcdatamodel</string></dict></plist>
            """
        try Data(plist.utf8).write(to: bundle.appending(path: ".xccurrentversion"))
        // Hashes do not need the current version (issue 10): hash says what it took; create, which needs it, stops.
        let hash = try MoultProcess.run(["hash", bundle.path])
        #expect(hash.exitCode == 0, "\(hash.standardError)")
        #expect(hash.standardOutput.contains("'v9.xcdatamodel'") && hash.standardOutput.contains("the last version, 'v5'"), "\(hash.standardOutput)")
        let create = try MoultProcess.run(["create", directory.appending("s.sqlite").path, "--model", bundle.path])
        #expect(create.exitCode == 65)
        for fragment in ["Model.xcdatamodeld/.xccurrentversion", "'v9.xcdatamodel'", "v1, v2, v3, v4, v5"] {
            #expect(create.standardError.contains(fragment), "missing '\(fragment)' in: \(create.standardError)")
        }
    }

    @Test func malformedCurrentVersionFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.appending("Model.xcdatamodeld")
        try FileManager.default.copyItem(at: Fixtures.peopleModel, to: bundle)
        try Data("<plist><dict><key>".utf8).write(to: bundle.appending(path: ".xccurrentversion"))
        let hash = try MoultProcess.run(["hash", bundle.path])
        #expect(hash.exitCode == 0 && hash.standardOutput.contains("malformed property list"), "\(hash.standardError)")
        let create = try MoultProcess.run(["create", directory.appending("s.sqlite").path, "--model", bundle.path])
        #expect(create.exitCode == 65)
        #expect(create.standardError.contains(".xccurrentversion") && create.standardError.contains("malformed property list"), "\(create.standardError)")
    }

    @Test func emptyFolder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.appending("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try expectFailure(bundle, exitCode: 65, mentions: ["Empty.xcdatamodeld", "no model version"])
    }

    @Test func versionFolderWithoutContents() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.appending("Model.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle.appending(path: "V1.xcdatamodel"), withIntermediateDirectories: true)
        // The folder is there, what it holds is no model Moult reads: bad input (65), not an I/O failure (issue 40).
        try expectFailure(bundle, exitCode: 65, mentions: ["V1.xcdatamodel/contents", "no 'contents' file"])
    }

    @Test func pathThatDoesNotExist() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try expectFailure(directory.appending("Missing.xcdatamodeld"), exitCode: 74, mentions: ["Missing.xcdatamodeld", "no such file"])
    }

    @Test func binaryGarbage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("Garbage.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: folder.appending(path: "contents"))
        try expectFailure(folder, exitCode: 65, mentions: ["Garbage.xcdatamodel/contents", "not UTF-8"])
    }

    /// `create` of a model with a part whose archived form is not known says the store carries no
    /// model cache, and why, rather than leaving it to be found later.
    @Test func createSaysWhenTheStoreCarriesNoModelCache() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try writeVersion(
            in: directory, #"<entity name="Item" representedClassName="Item" syncable="YES"><attribute name="code" optional="YES" attributeType="String" regularExpressionString="[A-Z]+"/></entity>"#,
            name: "Codes")
        let create = try MoultProcess.run(["create", directory.appending("s.sqlite").path, "--model", model.path])
        #expect(create.exitCode == 0, "\(create.standardError)")
        #expect(create.standardError.contains("no model cache") && create.standardError.contains("Item.code"), "\(create.standardError)")
    }
}
