import Foundation
import MoultTestSupport
import Testing

/// Issue 39: `moult test` fails when a migration loses data, and only then; its fixtures are what the
/// manifest says. Each regression case runs as its own `cmd.sh` is written.
@Suite struct TestCommandTrustTests {
    /// The E model of the regression cases (Blob {data, name}; v2 adds x).
    static func caseModel(_ name: String) -> String {
        Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/faults/\(name)/E.xcdatamodeld").path
    }

    // MARK: - The account is the truth

    /// A filter that rejects 40 of 40 objects: the account says so, and the test fails (67).
    @Test func aMappingDroppingEveryObjectFailsTheTest() throws {
        let run = try RegressionCase("faults", "test-passes-mapping-dropping-every-object").run()
        defer { run.remove() }
        #expect(run.output.contains("moult test: exit 67"), "\(run.output)")
        #expect(run.output.contains("Blob: dropped 40 objects (rejected by the filter of BlobToBlob)"), "\(run.output)")
        #expect(run.output.contains("account: FAILED: drops data the target version could hold"), "\(run.output)")
        #expect(run.output.contains("--allow-loss Blob"), "\(run.output)")
        #expect(!run.output.contains("all passed"), "\(run.output)")
        #expect(run.output.contains("Blobs in the generated source: 40; in the output path's result: 0"), "\(run.output)")
    }

    /// `plan --strict` and `migrate --strict` refuse (66) a filter that drops 1 of 2 objects.
    @Test func strictRefusesAFilterThatDropsObjects() throws {
        let run = try RegressionCase("faults", "strict-accepts-filter-dropping-objects").run()
        defer { run.remove() }
        #expect(run.output.contains("plan --strict: exit 66"), "\(run.output)")
        #expect(run.output.contains("migrate --strict: exit 66"), "\(run.output)")
        #expect(run.output.contains("drops 1 of 2 Blob objects: the filter of BlobToBlob rejects them"), "\(run.output)")
        #expect(!run.lines(containing: "Blobs: source 2, DEST").contains { $0.hasSuffix("DEST 1") }, "\(run.output)")
    }

    /// Without `--strict`, `plan` warns about the objects a filter drops, with their count.
    @Test func planWarnsAboutObjectsAFilterDrops() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("strict-accepts-filter-dropping-objects")
        let store = folder.appending("s.sqlite")
        #expect(try MoultProcess.run(["generate", store.path, "--model", model, "--model-version", "v1", "--objects", "30", "--seed", "2"]).exitCode == 0)
        let mapping = try Self.filteredMapping(model, filter: "name BEGINSWITH \"a\"", in: folder)
        let plan = try MoultProcess.run(["plan", store.path, "--model", model, "--to", "v2", "--mapping", mapping])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardError.contains("moult: warning: step 1 (v1 -> v2) drops "), "\(plan.standardError)")
        #expect(plan.standardError.contains("Blob objects: the filter of BlobToBlob rejects them"), "\(plan.standardError)")
    }

    /// In place too, `--strict` refuses (66) a filter that drops objects, before anything is written.
    @Test func strictInPlaceRefusesAFilterThatDropsObjects() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("strict-accepts-filter-dropping-objects")
        let store = folder.appending("s.sqlite")
        #expect(try MoultProcess.run(["generate", store.path, "--model", model, "--model-version", "v1", "--objects", "30", "--seed", "2"]).exitCode == 0)
        let before = try Data(contentsOf: store)
        let mapping = try Self.filteredMapping(model, filter: "name BEGINSWITH \"a\"", in: folder)
        let result = try MoultProcess.run(["migrate", store.path, "--model", model, "--to", "v2", "--mapping", mapping, "--strict", "--quiet"])
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("Blob objects: the filter of BlobToBlob rejects them"), "\(result.standardError)")
        #expect(try Data(contentsOf: store) == before)
    }

    /// `--allow-loss ENTITY` accepts the loss it names, and only that one; the account still reports it.
    @Test func allowLossAcceptsWhatItNames() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("test-passes-mapping-dropping-every-object")
        let mapping = try Self.filteredMapping(model, filter: "name BEGINSWITH \"a\"", in: folder)
        let base = ["test", model, "--to", "v2", "--mapping", mapping, "--objects", "20", "--version", "v1"]
        let wrong = try MoultProcess.run(base + ["--allow-loss", "Blob.name"])
        #expect(wrong.exitCode == 67, "\(wrong.standardOutput)")
        let allowed = try MoultProcess.run(base + ["--allow-loss", "Blob"])
        #expect(allowed.exitCode == 0, "\(allowed.standardOutput)\(allowed.standardError)")
        #expect(allowed.standardOutput.contains("Blob: dropped 20 objects (rejected by the filter of BlobToBlob)"), "\(allowed.standardOutput)")
        #expect(allowed.standardOutput.contains("all passed"))
    }

    /// The entity mapping's user info key `moultAllowLoss` allows its source entity's losses, as
    /// `--allow-loss` does.
    @Test func theMappingsUserInfoCanAllowALoss() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("test-passes-mapping-dropping-every-object")
        let mapping = try Self.inferredMapping(model, in: folder, named: "allowed.json") { first in
            first["filter"] = "name BEGINSWITH \"a\""
            first["userInfo"] = ["moultAllowLoss": "YES"]
        }
        let result = try MoultProcess.run(["test", model, "--to", "v2", "--mapping", mapping, "--objects", "20", "--version", "v1"])
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("Blob: dropped 20 objects (rejected by the filter of BlobToBlob)"), "\(result.standardOutput)")
    }

    /// People v3 → v4 splits Person into Adult (age >= 18) and Child (age < 18): the filters are
    /// complementary, so nothing is dropped, and each property is kept.
    @Test func complementaryFiltersDropNothing() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let mapping = Fixtures.datasets.appending(path: "People/Mappings/v3-to-v4.json").path
        let result = try MoultProcess.run(
            ["test", Fixtures.peopleModel.path, "--to", "v4", "--version", "v3", "--mapping", mapping, "--objects", "60", "--json"], tool: .people)
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let account = try #require((root["sources"] as? [[String: Any]])?.first?["account"] as? [[String: Any]])
        #expect(!account.contains { $0["fate"] as? String == "dropped" && $0["property"] == nil }, "\(account)")
        for entity in ["Adult", "Child"] {
            #expect(account.contains { $0["entity"] as? String == entity && $0["property"] as? String == "name" && $0["fate"] as? String == "kept" })
        }
    }

    /// A mapping that leaves a property the destination has unmapped loses its values: the test fails
    /// and names it; a property the destination version no longer has is the model's own drop and passes.
    @Test func anUnmappedPropertyTheDestinationHasFailsTheTest() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("test-passes-mapping-dropping-every-object")
        let mapping = try Self.inferredMapping(model, in: folder, named: "no-name.json") { first in
            first["attributes"] = (first["attributes"] as? [[String: Any]])?.filter { $0["name"] as? String != "name" }
        }
        let result = try MoultProcess.run(["test", model, "--to", "v2", "--mapping", mapping, "--objects", "20", "--version", "v1"])
        #expect(result.exitCode == 67, "\(result.standardOutput)")
        #expect(result.standardOutput.contains("Blob.name: dropped"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("--allow-loss Blob.name"), "\(result.standardOutput)")
    }

    /// The E model's inferred v1 → v2 mapping with a filter on its entity mapping.
    /// Found by the mutation test: a copy written `FUNCTION($source, "valueForKey:", "a10")` of a blob
    /// whose external storage v2 turns off kept Core Data's inline marker byte in the destination (the
    /// engine converted only `$source.a10`); every path agreed and verify passed, the account did not.
    @Test func aValueForKeyCopyOfAnExternalBlobIsConverted() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        #expect(try MoultProcess.run(["generate-models", folder.url.path, "--first", "4400", "--count", "1", "--seed", "1"]).exitCode == 0)
        let model = folder.appending("Pair4400.xcdatamodeld").path
        let inferred = try MoultProcess.run(["infer", "--model", model, "--from", "v1", "--to", "v2", "--json"])
        var json = try #require(try JSONSerialization.jsonObject(with: Data(inferred.standardOutput.utf8)) as? [String: Any])
        var mappings = try #require(json["entityMappings"] as? [[String: Any]])
        let index = try #require(mappings.firstIndex { $0["name"] as? String == "E6ToE6" })
        var attributes = try #require(mappings[index]["attributes"] as? [[String: Any]])
        let slot = try #require(attributes.firstIndex { $0["name"] as? String == "a10" })
        attributes[slot]["value"] = #"FUNCTION($source, "valueForKey:", "a10")"#
        mappings[index]["attributes"] = attributes
        mappings[index]["type"] = "transform"
        json["entityMappings"] = mappings
        let mapping = folder.appending("mapping.json")
        try JSONSerialization.data(withJSONObject: json).write(to: mapping)
        let result = try MoultProcess.run(["test", model, "--to", "v2", "--version", "v1", "--mapping", mapping.path, "--objects", "40", "--seed", "176"])
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("E6.a10: kept"), "\(result.standardOutput)")
    }

    static func filteredMapping(_ model: String, filter: String, in folder: TemporaryDirectory) throws -> String {
        try inferredMapping(model, in: folder, named: "filter.json") { $0["filter"] = filter }
    }

    /// A model's inferred mapping (the E model's v1 → v2 by default), its first entity mapping edited,
    /// written into `folder`.
    static func inferredMapping(
        _ model: String, from: String = "v1", to: String = "v2", in folder: TemporaryDirectory, named name: String, edit: (inout [String: Any]) -> Void
    ) throws -> String {
        let inferred = try MoultProcess.run(["infer", "--model", model, "--from", from, "--to", to, "--json"])
        var json = try #require(try JSONSerialization.jsonObject(with: Data(inferred.standardOutput.utf8)) as? [String: Any])
        var mappings = try #require(json["entityMappings"] as? [[String: Any]])
        edit(&mappings[0])
        json["entityMappings"] = mappings
        let url = folder.appending(name)
        try JSONSerialization.data(withJSONObject: json).write(to: url)
        return url.path
    }

    // MARK: - Fixtures are what the manifest says

    /// A `-wal` the manifest does not list, beside a frozen fixture: refused (65), named.
    @Test func anUnlistedWALBesideAFixtureIsRefused() throws {
        let run = try RegressionCase("faults", "test-fixture-unlisted-wal-bypasses-manifest").run()
        defer { run.remove() }
        #expect(run.output.contains("freeze: exit 0"), "\(run.output)")
        #expect(run.output.contains("moult test --fixtures: exit 65"), "\(run.output)")
        #expect(run.output.contains("fixture v2.sqlite has a v2.sqlite-wal beside it"), "\(run.output)")
        #expect(!run.output.contains("all passed"), "\(run.output)")
    }

    /// A v2 store listed as v1 is refused (65) by its metadata; `--junit FOLDER` is refused before the
    /// run (64) and leaves no temporary file.
    @Test func aFixtureListedAtTheWrongVersionIsRefused() throws {
        let run = try RegressionCase("faults", "test-fixture-manifest-version-not-checked").run()
        defer { run.remove() }
        #expect(run.output.contains("moult test: exit 65"), "\(run.output)")
        #expect(run.output.contains("fixture v2.sqlite is listed as v1, but its metadata matches v2"), "\(run.output)")
        #expect(run.lines(containing: "--junit FOLDER: exit").first?.hasSuffix("exit 64; left: ") == true, "\(run.output)")
    }

    /// Fixtures in a subfolder run, named by their path; an unlisted store in the folder and a store the
    /// run does not test are named, never skipped silently.
    @Test func fixturesInASubfolderRunAndNothingIsSkippedSilently() throws {
        let folder = try TemporaryDirectory("moult-trust")
        defer { folder.remove() }
        let model = Self.caseModel("test-passes-mapping-dropping-every-object")
        let frozen = folder.appending("frozen")
        #expect(try MoultProcess.run(["test", model, "--freeze", frozen.path, "--objects", "10", "--version", "v1"]).exitCode == 0)
        // The store moved into a subfolder, its manifest line with it.
        let fixtures = folder.appending("fixtures")
        try FileManager.default.createDirectory(at: fixtures.appending(path: "2024"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: frozen.appending(path: "v1.sqlite"), to: fixtures.appending(path: "2024/v1.sqlite"))
        if FileManager.default.fileExists(atPath: frozen.appending(path: ".v1_SUPPORT").path) {
            try FileManager.default.copyItem(at: frozen.appending(path: ".v1_SUPPORT"), to: fixtures.appending(path: "2024/.v1_SUPPORT"))
        }
        let manifest = try String(contentsOf: frozen.appending(path: "fixtures.manifest"), encoding: .utf8)
            .replacingOccurrences(of: "\tv1.sqlite", with: "\t2024/v1.sqlite").replacingOccurrences(of: "\t.v1_SUPPORT/", with: "\t2024/.v1_SUPPORT/")
        try Data(manifest.utf8).write(to: fixtures.appending(path: "fixtures.manifest"))
        let run = try MoultProcess.run(["test", model, "--to", "v2", "--version", "v1", "--fixtures", fixtures.path, "--objects", "10"])
        #expect(run.exitCode == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.contains("v1 → v2, fixture 2024/v1.sqlite (10 objects)"), "\(run.standardOutput)")
        // A store nobody listed is refused by name.
        try FileManager.default.copyItem(at: frozen.appending(path: "v1.sqlite"), to: fixtures.appending(path: "2024/old.sqlite"))
        let unlisted = try MoultProcess.run(["test", model, "--to", "v2", "--version", "v1", "--fixtures", fixtures.path, "--objects", "10"])
        #expect(unlisted.exitCode == 65)
        #expect(unlisted.standardError.contains("2024/old.sqlite is a store in the fixtures folder that fixtures.manifest does not list"), "\(unlisted.standardError)")
        try FileManager.default.removeItem(at: fixtures.appending(path: "2024/old.sqlite"))
        // A fixture at the target version is named as not tested.
        let atTarget = try MoultProcess.run(["test", model, "--to", "v1", "--version", "v2", "--fixtures", fixtures.path, "--objects", "10"])
        #expect(atTarget.standardError.contains("fixture 2024/v1.sqlite (version v1) is not tested: it is at the target version"), "\(atTarget.standardError)")
    }

    // MARK: - Says the right thing

    /// `moult test --version V` names a version; a bare `--version` prints Moult's version.
    @Test func aBareVersionPrintsMoultsVersion() throws {
        let bare = try MoultProcess.run(["test", "--version"])
        #expect(bare.exitCode == 0, "\(bare.standardError)")
        #expect(bare.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == (try MoultProcess.run(["--version"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// `--json` prints JSON alone on standard output, even when a version has nothing to migrate.
    @Test func jsonIsAllThereIsOnStandardOutput() throws {
        let model = Self.caseModel("test-passes-mapping-dropping-every-object")
        let result = try MoultProcess.run(["test", model, "--to", "v2", "--version", "v1", "--objects", "10", "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect((try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) != nil, "\(result.standardOutput)")
    }
}
