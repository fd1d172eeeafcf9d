import Foundation
import MoultTestSupport
import Testing

@Suite struct InspectCommandTests {
    /// Each fixture store with the model folder and version that made it (Tests/Fixtures/version-hashes.json).
    static let fixtures: [(store: String, model: String, version: String)] = {
        struct Entry: Decodable { var model: String; var store: String }
        let entries = try! JSONDecoder().decode([Entry].self, from: Data(contentsOf: Fixtures.url("version-hashes.json")))
        var seen: Set<String> = []
        return entries.compactMap { entry in
            guard seen.insert(entry.store).inserted, FileManager.default.fileExists(atPath: Fixtures.url(entry.store).path) else { return nil }
            let versionFolder = (entry.model as NSString).deletingLastPathComponent
            let parent = (versionFolder as NSString).deletingLastPathComponent
            return (entry.store, parent.hasSuffix(".xcdatamodeld") ? parent : versionFolder,
                    ((versionFolder as NSString).lastPathComponent as NSString).deletingPathExtension)
        }
    }()

    @Test func inspectNamesTheVersionOfEveryFixtureStore() throws {
        #expect(Self.fixtures.count >= 12)
        for fixture in Self.fixtures {
            let store = Fixtures.url(fixture.store)
            let before = try Data(contentsOf: store)
            let result = try MoultProcess.run(["inspect", store.path, "--model", Fixtures.url(fixture.model).path, "--json"])
            #expect(result.exitCode == 0, "\(fixture.store): \(result.standardError)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            #expect(json["matchingVersion"] as? String == fixture.version, "\(fixture.store)")
            #expect((json["storeUUID"] as? String)?.count == 36)
            let hashes = try #require(json["versionHashes"] as? [String: String])
            #expect(hashes.values.allSatisfy { $0.count == 64 })
            let entities = try #require(json["entities"] as? [String: [String: Int]])
            #expect(Set(entities.keys) == Set(hashes.keys))
            #expect(try Data(contentsOf: store) == before)
        }
    }

    @Test func inspectCountsAndText() throws {
        let store = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let model = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld")
        let json = try MoultProcess.run(["inspect", store.path, "--model", model.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [String: [String: Int]])
        #expect(entities["Person"]?["count"] == 20)
        let cars = ["Car", "SportCar", "ExpensiveSportCar"].compactMap { entities[$0]?["count"] }.reduce(0, +)
        #expect(cars == 125)
        let text = try MoultProcess.run(["inspect", store.path, "--model", model.path])
        #expect(text.exitCode == 0)
        #expect(text.standardOutput.contains("matching version: SampleModel"))
        #expect(text.standardOutput.contains("store UUID: 753753D3-A961-4901-AB05-8CC48B1D3853"))
    }

    @Test func noVersionMatchesListsDifferences() throws {
        let store = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let model = Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
        let result = try MoultProcess.run(["inspect", store.path, "--model", model.path, "--json"])
        // As `migrate` (66): incompatible, with each version's differences.
        #expect(result.exitCode == 66)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["matchingVersion"] is NSNull)
        #expect((object["differences"] as? [String])?.contains { $0.contains("Car") } == true)
        #expect((object["versionDifferences"] as? [String: [String]])?.count == 4)
        #expect(result.standardError.contains("no version of CoreDataMigration_Example matches the store"), "\(result.standardError)")
    }

    @Test func badInputExitCodes() throws {
        let directory = try TemporaryDirectory("moult-cli")
        defer { directory.remove() }
        let text = directory.appending("notes.sqlite")
        try Data("not a database".utf8).write(to: text)
        let result = try MoultProcess.run(["inspect", text.path])
        #expect(result.exitCode == 65)
        #expect(result.standardError.contains("not a database"))
        #expect(try Data(contentsOf: text) == Data("not a database".utf8))
        let missing = try MoultProcess.run(["inspect", directory.appending("none.sqlite").path])
        #expect(missing.exitCode == 74)
    }

    @Test func createThenInspect() throws {
        let directory = try TemporaryDirectory("moult-cli")
        defer { directory.remove() }
        let model = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld")
        let store = directory.appending("New.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model.path, "--model-version", "SampleModel2"])
        #expect(created.exitCode == 0, "\(created.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["New.sqlite"])
        let inspected = try MoultProcess.run(["inspect", store.path, "--model", model.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(inspected.standardOutput.utf8)) as? [String: Any])
        #expect(object["matchingVersion"] as? String == "SampleModel2")
        let again = try MoultProcess.run(["create", store.path, "--model", model.path])
        #expect(again.exitCode == 74)
        #expect(again.standardError.contains("already exists"))
    }
}
