import Foundation
import MoultTestSupport
import Testing

/// `--mapping DIR`: the steps' mappings found in a folder, recursively, by the versions they map.
@Suite struct MappingDiscoveryTests {
    static let model = Fixtures.peopleModel.path

    /// People's mappings spread over nested folders, with a JSON file that is no mapping beside them.
    static func folder(in directory: TemporaryDirectory, withBoth: Bool) throws -> URL {
        let root = directory.appending("maps")
        let manager = FileManager.default
        try manager.createDirectory(at: root.appending(path: "a/b"), withIntermediateDirectories: true)
        let places = ["v2-to-v3": "", "v3-to-v4": "a/b/", "v4-to-v5": "a/"]
        for (name, place) in places {
            try manager.copyItem(at: URL(filePath: MigrateCommandTests.mapping(name)), to: root.appending(path: "\(place)\(name).json"))
        }
        if withBoth {
            try manager.copyItem(at: URL(filePath: MigrateCommandTests.mapping("v4-to-v5-builtin")), to: root.appending(path: "a/b/v4-to-v5-builtin.json"))
        }
        try Data("{\"settings\": true}".utf8).write(to: root.appending(path: "a/settings.json"))
        return root
    }

    @Test func eachStepTakesTheMappingOfItsVersions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 120, in: directory)
        let maps = try Self.folder(in: directory, withBoth: false)
        let plan = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v4", "--mapping", maps.path])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("step 1: v1 -> v2 (inferred mapping)"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("step 2: v2 -> v3 (\(maps.path)/v2-to-v3.json)"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("step 3: v3 -> v4 (\(maps.path)/a/b/v3-to-v4.json)"), "\(plan.standardOutput)")
        // The JSON file that is no mapping is named, not dropped without a word.
        #expect(plan.standardError.contains("a/settings.json in the mapping folder is not a mapping model"), "\(plan.standardError)")
        // v4 -> v5 lies beyond the target: not used, not an error.
        let output = directory.appending("v4.sqlite")
        let migrate = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v4", "--mapping", maps.path, "--output", output.path, "--quiet",
        ])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        let verify = try MoultProcess.run(["verify", source.path, output.path, "--model", Self.model, "--to", "v4", "--mapping", maps.path])
        #expect(verify.exitCode == 0, "\(verify.standardOutput)")
    }

    @Test func twoCandidatesForAStepAreRefusedNamingBoth() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 20, in: directory)
        let maps = try Self.folder(in: directory, withBoth: true)
        let output = directory.appending("v5.sqlite")
        let result = try MoultProcess.run(
            ["migrate", source.path, "--model", Self.model, "--to", "v5", "--mapping", maps.path, "--output", output.path], tool: .people)
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("\(maps.path)/a/v4-to-v5.json") && result.standardError.contains("\(maps.path)/a/b/v4-to-v5-builtin.json"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // Below v4 the folder has one candidate per step: fine.
        let v3 = try MigrateCommandTests.generate("3", persons: 20, in: directory, name: "v3.sqlite")
        let plan = try MoultProcess.run(["plan", v3.path, "--model", Self.model, "--to", "v4", "--mapping", maps.path], tool: .people)
        #expect(plan.exitCode == 0, "\(plan.standardError)")
    }

    @Test func xcodeMappingModelsAreFoundBesideTheirModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = Fixtures.url("jdspoone__CoreDataMigrationExample/CoreDataMigration")
        let model = folder.appending(path: "CoreDataMigration.xcdatamodeld").path
        let store = directory.appending("notes.sqlite")
        let create = try MoultProcess.run(["create", store.path, "--model", model, "--model-version", "CoreDataMigration-v1.0"])
        #expect(create.exitCode == 0, "\(create.standardError)")
        let plan = try MoultProcess.run([
            "plan", store.path, "--model", model, "--mapping", folder.path, "--policy", "NoteToNotePolicy=default", "--policy", "ImageToImagePolicy=default",
        ])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        for (index, name) in ["v1.0-to-v1.1", "v1.1-to-v1.2", "v1.2-to-v1.3"].enumerated() {
            #expect(plan.standardOutput.contains("step \(index + 1): "), "\(plan.standardOutput)")
            #expect(plan.standardOutput.contains("/\(name).xcmappingmodel)"), "\(plan.standardOutput)")
        }
        let missing = try MoultProcess.run(["plan", store.path, "--model", model, "--mapping", directory.appending("nowhere").path])
        #expect(missing.exitCode != 0 && missing.standardError.contains("nowhere"), "\(missing.standardError)")
    }

    /// A file that says it is a Moult mapping but does not read as one (here cut short) is an error
    /// naming it: without it the step would be inferred, leaving out what the mapping carries.
    @Test func aBrokenMappingInTheFolderIsRefusedNotSkipped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 20, in: directory)
        let maps = try Self.folder(in: directory, withBoth: false)
        let file = maps.appending(path: "v2-to-v3.json")
        let text = try Data(contentsOf: file)
        try text.prefix(text.count / 2).write(to: file)
        let result = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v3", "--mapping", maps.path])
        #expect(result.exitCode == 65, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardError.contains("v2-to-v3.json"), "\(result.standardError)")
    }

    /// Issue 27: the bundled folder holds one mapping per step, so it can be given whole.
    @Test func theBundledMappingsFolderServesEveryStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 60, in: directory)
        let folder = Fixtures.datasets.appending(path: "People/Mappings").path
        let result = try MoultProcess.run(
            ["migrate", source.path, "--model", Self.model, "--to", "v5", "--mapping", folder, "--output", directory.appending("v5.sqlite").path, "--quiet"],
            tool: .people)
        #expect(result.exitCode == 0, "\(result.standardError)")
    }
}
