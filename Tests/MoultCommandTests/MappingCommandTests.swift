import Foundation
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

/// End-to-end tests of `moult mapping show` and `moult mapping convert`.
@Suite struct MappingCommandTests {
    /// Every `.xcmappingmodel` among the fixtures.
    static let mappingModels: [String] = {
        let root = Fixtures.root.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".xcmappingmodel") { result.append(path) }
        }
        return result.sorted()
    }()

    /// One property mapping as `Tests/Fixtures/mapping-models.json` records it.
    struct Recorded: Decodable {
        struct Property: Decodable {
            var kind: String
            var name: String
            var valueExpression: String?
        }
        var name: String
        var policyClassName: String?
        var properties: [Property]
    }

    static let recorded: [String: [Recorded]] = {
        let data = try! Data(contentsOf: Fixtures.url("mapping-models.json"))
        return try! JSONDecoder().decode([String: [Recorded]].self, from: data)
    }()

    @Test func everyFixtureMappingModelIsFound() {
        #expect(Self.mappingModels.count == Self.recorded.count && Self.mappingModels.count == 22)
    }

    /// `moult mapping show --json` loads each fixture mapping model and prints every expression, and
    /// each custom policy's class name, with no policy registered.
    @Test(arguments: mappingModels)
    func showPrintsEveryExpressionAndTheModelsHashes(_ file: String) throws {
        let result = try MoultProcess.run(["mapping", "show", Fixtures.url(file).path, "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        for side in ["source", "destination"] {
            let model = try #require(root[side] as? [String: Any])
            let hashes = try #require(model["entityVersionHashes"] as? [String: String])
            #expect(!hashes.isEmpty, "\(file) \(side)")
            #expect(hashes.values.allSatisfy { $0.count == 64 })
        }
        let mappings = try #require(root["entityMappings"] as? [[String: Any]])
        let expected = try #require(Self.recorded[file + "/xcmapping.xml"])
        #expect(mappings.map { $0["name"] as? String } == expected.map(\.name))
        for (printed, recorded) in zip(mappings, expected) {
            #expect(printed["policy"] as? String == recorded.policyClassName, "\(recorded.name)")
            let properties = ((printed["attributes"] as? [[String: Any]]) ?? []) + ((printed["relationships"] as? [[String: Any]]) ?? [])
            for property in recorded.properties {
                let match = properties.first { $0["name"] as? String == property.name }
                #expect(match != nil, "\(recorded.name).\(property.name)")
                #expect(match?["value"] as? String == property.valueExpression, "\(recorded.name).\(property.name)")
            }
        }
    }

    @Test func showTextListsModelsAndMappingsInOrder() throws {
        let file = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration1to2.xcmappingmodel")
        let result = try MoultProcess.run(["mapping", "show", file.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let mapping = try MappingModel(xcmappingModelAt: file)
        let postHash = try #require(mapping.sourceModel.entityVersionHashes["Post"])
        #expect(result.standardOutput.contains("Source model: CoreDataMigration_Example"))
        #expect(result.standardOutput.contains(postHash.hex))
        #expect(result.standardOutput.contains("1. PostToPost"))
        #expect(result.standardOutput.contains("attribute hexColor = $source.color"))
    }

    @Test func showReadsMoultsJSONFormatToo() throws {
        let file = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json")
        let result = try MoultProcess.run(["mapping", "show", file.path, "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let mappings = try #require(root["entityMappings"] as? [[String: Any]])
        #expect(mappings.count == (try MappingModel(jsonFile: file)).entityMappings.count)
    }

    /// `convert` writes Moult's JSON, with the models' hashes; it reads back to the same mapping model.
    @Test(arguments: mappingModels)
    func convertWritesJSONThatReadsBackEqual(_ file: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.appending("mapping.json")
        let result = try MoultProcess.run(["mapping", "convert", Fixtures.url(file).path, "--to", "json", "--output", output.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let converted = try MappingModel(jsonFile: output)
        let original = try MappingModel(xcmappingModelAt: Fixtures.url(file))
        #expect(converted == original)
        #expect(!converted.sourceModel.entityVersionHashes.isEmpty)
        #expect(!converted.destinationModel.entityVersionHashes.isEmpty)
    }

    @Test func convertToStandardOutput() throws {
        let file = Fixtures.url("jdspoone__CoreDataMigrationExample/CoreDataMigration/v1.0-to-v1.1.xcmappingmodel")
        let result = try MoultProcess.run(["mapping", "convert", file.path, "--to", "json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(try MappingModel(json: Data(result.standardOutput.utf8)) == (try MappingModel(xcmappingModelAt: file)))
    }

    @Test func convertToAnUnknownFormatIsUsage() throws {
        let file = Fixtures.url("jdspoone__CoreDataMigrationExample/CoreDataMigration/v1.0-to-v1.1.xcmappingmodel")
        let result = try MoultProcess.run(["mapping", "convert", file.path, "--to", "yaml"])
        #expect(result.exitCode == 64)
        #expect(result.standardError.contains("json"))
    }

    @Test func showOfAMissingFileIsAnIOError() throws {
        let result = try MoultProcess.run(["mapping", "show", "/nonexistent/X.xcmappingmodel"])
        #expect(result.exitCode == 74)
        #expect(result.standardError.contains("/nonexistent/X.xcmappingmodel"))
    }

    @Test func showOfAMalformedMappingIsBadInput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("bad.json")
        try Data("{\"entityMappings\": [{\"name\": 3}]}".utf8).write(to: file)
        let result = try MoultProcess.run(["mapping", "show", file.path])
        #expect(result.exitCode == 65)
        #expect(result.standardError.contains("entityMappings[0]"))
    }

    /// `moult infer --json` records the models' entity version hashes.
    @Test func inferJSONRecordsTheModelsHashes() throws {
        let model = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
        let result = try MoultProcess.run(["infer", "--model", model.path, "--from", "CoreDataMigration_Example 3", "--to", "CoreDataMigration_Example 4", "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let mapping = try MappingModel(json: Data(result.standardOutput.utf8))
        let versioned = try VersionedModel(contentsOf: model)
        #expect(mapping.sourceModel.entityVersionHashes == versioned.version(named: "CoreDataMigration_Example 3")?.model.entityVersionHashes())
        #expect(mapping.destinationModel.entityVersionHashes == versioned.version(named: "CoreDataMigration_Example 4")?.model.entityVersionHashes())
    }
}

extension MappingCommandTests {
    @Test func showPrintsABuiltInPolicy() throws {
        let file = Fixtures.datasets.appending(path: "People/BuiltinPolicy/v4-to-v5.json")
        let mapping = try MappingModel(jsonFile: file)
        let builtin = try #require(mapping.entityMappings.compactMap(\.builtinPolicy).first)
        let result = try MoultProcess.run(["mapping", "show", file.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("built-in policy: \(builtin)"))
    }
}

extension MappingCommandTests {
    /// The hashes of a mapping model's embedded models are what identifies it: a copy of wibosco's
    /// Migration2to3 given version 1's embedded source model (a mapping made before version 2 was
    /// edited) is refused for the v2 → v3 step; the original is planned (and its migration runs past
    /// matching: it then fails validation only because the custom policy is replaced by the default).
    @Test func migrateMatchesAnXcodeMappingByItsEmbeddedModels() throws {
        let fixture = Fixtures.url("wibosco__CoreDataMigration-Example")
        let mappings = fixture.appending(path: "CoreDataMigration-Example/CoreData/Migration/Mappings")
        let model = fixture.appending(path: "CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try directory.copyStore(fixture.appending(path: "CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite"))

        func sourceModelData(_ xml: String) throws -> Range<String.Index> {
            let start = try #require(xml.range(of: "<attribute name=\"sourcemodeldata\" type=\"binary\">"))
            let end = try #require(xml.range(of: "</attribute>", range: start.upperBound..<xml.endIndex))
            return start.upperBound..<end.lowerBound
        }
        let original = try String(contentsOf: mappings.appending(path: "Migration2to3.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let older = try String(contentsOf: mappings.appending(path: "Migration1to2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        var stale = original
        stale.replaceSubrange(try sourceModelData(original), with: older[try sourceModelData(older)])
        let staleMapping = directory.appending("Migration2to3.xcmappingmodel")
        try FileManager.default.createDirectory(at: staleMapping, withIntermediateDirectories: true)
        try Data(stale.utf8).write(to: staleMapping.appending(path: "xcmapping.xml"))

        // The mapping names a custom policy class: Core Data's default policy stands in for it.
        let arguments = [
            "migrate", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 3",
            "--policy", "Post2ToPost3MigrationPolicy=default", "--output",
        ]
        let refused = try MoultProcess.run(arguments + [directory.appending("refused.sqlite").path, "--mapping", staleMapping.path])
        #expect(refused.exitCode == 66, "\(refused.standardError)")
        #expect(refused.standardError.contains("Migration2to3.xcmappingmodel"))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("refused.sqlite").path))

        let planned = try MoultProcess.run([
            "plan", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 3",
            "--policy", "Post2ToPost3MigrationPolicy=default", "--mapping", mappings.appending(path: "Migration2to3.xcmappingmodel").path,
        ])
        #expect(planned.exitCode == 0, "\(planned.standardError)")
        #expect(planned.standardOutput.contains("Migration2to3"), "\(planned.standardOutput)")
        let stalePlan = try MoultProcess.run([
            "plan", store.path, "--model", model.path, "--to", "CoreDataMigration_Example 3",
            "--policy", "Post2ToPost3MigrationPolicy=default", "--mapping", staleMapping.path,
        ])
        #expect(stalePlan.exitCode == 66, "\(stalePlan.standardError)")
    }
}
