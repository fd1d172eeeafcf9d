import Foundation
import MoultTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// End-to-end tests of `moult test` and `moult generate`: every path run and compared, the account, the
/// JUnit report, frozen fixtures that stay honest.
@Suite struct TestCommandTests {
    static let everything = Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld").path
    static let jeffreybergier = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"

    /// The People model with one mapping per step (its folder holds two for v4 → v5).
    static func peopleMappings(in folder: TemporaryDirectory) throws -> String {
        let mappings = folder.appending("mappings")
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
        for name in ["v1-to-v2", "v2-to-v3", "v3-to-v4", "v4-to-v5"] {
            try FileManager.default.copyItem(
                at: Fixtures.datasets.appending(path: "People/Mappings/\(name).json"), to: mappings.appending(path: "\(name).json"))
        }
        return mappings.path
    }

    @Test func everyPathOfEveryPeopleVersionAgreesAndTheJUnitReportSaysSo() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let junit = folder.appending("report.xml")
        let result = try MoultProcess.run(
            ["test", Fixtures.peopleModel.path, "--mapping", try Self.peopleMappings(in: folder), "--objects", "120", "--seed", "4",
             "--junit", junit.path, "--json"], tool: .people)
        #expect(result.exitCode == 0, "\(result.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(root["passed"] as? Bool == true)
        let sources = try #require(root["sources"] as? [[String: Any]])
        #expect(sources.map { $0["version"] as? String } == ["v1", "v2", "v3", "v4"])
        for source in sources {
            let paths = try #require(source["paths"] as? [[String: Any]])
            #expect(paths.map { $0["path"] as? String } == ["output", "in place", "resumed"])
            #expect(paths.allSatisfy { $0["passed"] as? Bool == true })
            #expect((source["account"] as? [[String: Any]])?.isEmpty == false)
        }
        // v2 → v5 drops nothing the plan does not name; v1's persons are kept with their names.
        let v1Account = try #require(sources[0]["account"] as? [[String: Any]])
        #expect(v1Account.contains { $0["entity"] as? String == "Adult" && $0["property"] as? String == "name" && $0["fate"] as? String == "kept" })
        // The report parses, with one case per version and path, and an account case per store.
        let checker = JUnitChecker(data: try Data(contentsOf: junit))
        #expect(checker.problems.isEmpty, "\(checker.problems)")
        #expect(checker.testcases == 4 * 4 && checker.failures == 0)
    }

    @Test func theAccountCountsWhatPlanReportsDropped() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        // v1 → v2 of the generator's model drops Magazine.issue: the account counts its values as plan does.
        let store = folder.appending("v1.sqlite")
        let generated = try MoultProcess.run(["generate", store.path, "--model", Self.everything, "--model-version", "v1", "--objects", "90", "--seed", "2"])
        #expect(generated.exitCode == 0, "\(generated.standardError)")
        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.everything, "--json"])
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(planned["steps"] as? [[String: Any]])
        let notCarried = try #require(steps.first?["notCarried"] as? [[String: Any]])
        let issue = try #require(notCarried.first { $0["property"] as? String == "issue" })
        let result = try MoultProcess.run(["test", Self.everything, "--objects", "90", "--seed", "2", "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let account = try #require((root["sources"] as? [[String: Any]])?.first?["account"] as? [[String: Any]])
        let dropped = try #require(account.first { $0["fate"] as? String == "dropped" })
        #expect(dropped["entity"] as? String == "Magazine" && dropped["property"] as? String == "issue")
        #expect(dropped["count"] as? Int == issue["count"] as? Int)
        #expect((dropped["count"] as? Int ?? 0) > 0)
        #expect(account.contains { $0["property"] as? String == "mid" && $0["fate"] as? String == "converted" })
        #expect(account.contains { $0["property"] as? String == "words" && $0["fate"] as? String == "defaulted" })
        #expect(account.contains { $0["property"] as? String == "summary" && $0["fate"] as? String == "kept" })
    }

    /// Found by `moult test` on the generator's model: the copy wrote a Decimal back through
    /// Foundation's `NSDecimalNumber.doubleValue`, which on Linux is not correctly rounded, so a value
    /// such as -1491.57 came out as -1491.5700000000002 (MoultStore's `Statement.bind`; fixed).
    @Test func decimalsKeepTheirValueOnEveryPath() throws {
        let result = try MoultProcess.run(["test", Self.everything, "--objects", "200", "--seed", "1"])
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
    }

    /// Found by `moult test` on jeffreybergier's fixtures: a source with an empty `-wal` (a store Core Data
    /// closed) recorded its state with an empty WAL header, which `StoreFileState(text:)` could not read
    /// back (it splits on spaces, dropping the empty field), so a stopped run was refused as "source
    /// changed" (fixed: an empty header is written "."). Issue 39: such a store is no longer a fixture
    /// (a fixture is one checkpointed file: its `-wal` is refused, named, even when listed), so the stop
    /// and the resume are run as the resumed path runs them.
    @Test func aStoppedRunOfAStoreWithAnEmptyWALResumes() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let source = Fixtures.url("\(Self.jeffreybergier)/CoreDataMigrationTests/Example_v1.2.0.sqlite")
        let model = Fixtures.url("\(Self.jeffreybergier)/CoreDataMigration/Model.xcdatamodeld").path
        let fixtures = folder.appending("fixtures")
        try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
        var manifest = "moult-fixtures 1\n"
        for suffix in ["", "-wal", "-shm"] {
            let copy = fixtures.appending(path: "Example_v1.2.0.sqlite\(suffix)")
            try FileManager.default.copyItem(at: URL(filePath: source.path + suffix), to: copy)
            manifest += "\(try sha256(copy))\tv1.2.0\tExample_v1.2.0.sqlite\(suffix)\n"
        }
        try Data(manifest.utf8).write(to: fixtures.appending(path: "fixtures.manifest"))
        let refused = try MoultProcess.run(["test", model, "--version", "v1.2.0", "--fixtures", fixtures.path, "--objects", "40"])
        #expect(refused.exitCode == 65, "\(refused.standardOutput)")
        #expect(refused.standardError.contains("a fixture is one checkpointed store file"), "\(refused.standardError)")
        // Stopped after the first chunk's commit, then run again: it resumes and ends.
        let store = fixtures.appending(path: "Example_v1.2.0.sqlite")
        let output = folder.appending("out.sqlite")
        let arguments = ["migrate", store.path, "--model", model, "--output", output.path, "--chunk-size", "1", "--quiet"]
        let stopped = try MoultProcess.run(arguments, environment: ["MOULT_FAULT": "after-sqlite-commit:1"])
        #expect(stopped.exitCode != 0)
        let resumed = try MoultProcess.run(arguments)
        #expect(resumed.exitCode == 0, "\(resumed.standardError)")
        let verified = try MoultProcess.run(["verify", store.path, output.path, "--model", model])
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
    }

    @Test func theStagedPathRunsTheStagesFileAndAgrees() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let mapping = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json").path
        let stages = folder.appending("stages.json")
        try Data(#"{"stages": [{"custom": {"from": "v2", "to": "v3", "mapping": "\#(mapping)"}}]}"#.utf8).write(to: stages)
        let result = try MoultProcess.run(
            ["test", Fixtures.peopleModel.path, "--to", "v3", "--version", "v2", "--mapping", mapping, "--stages", stages.path, "--objects", "80"])
        #expect(result.exitCode == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("  staged: ok"))
        // With --stages every path runs them: staged, and staged stopped and resumed.
        #expect(result.standardOutput.contains("  staged, resumed: ok"))
        #expect(!result.standardOutput.contains("  output: "))
        #expect(result.standardOutput.contains("1 store, 2 paths: all passed"))
    }

    @Test func frozenFixturesAreCheckedAndAChangedOneIsRefusedByName() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let fixtures = folder.appending("fixtures")
        let freeze = try MoultProcess.run(["test", Self.everything, "--freeze", fixtures.path, "--objects", "60", "--seed", "3"])
        #expect(freeze.exitCode == 0, "\(freeze.standardError)")
        let manifest = try String(contentsOf: fixtures.appending(path: "fixtures.manifest"), encoding: .utf8)
        #expect(manifest.contains("\tv1\tv1.sqlite") && manifest.contains("\tv2\tv2.sqlite"))
        // A second freeze into the same folder is refused: fixtures are never overwritten.
        let again = try MoultProcess.run(["test", Self.everything, "--freeze", fixtures.path])
        #expect(again.exitCode == 74 && again.standardError.contains("fixtures.manifest"))
        // The fixtures are used (one generated store and one fixture for v1), then one byte changes.
        let used = try MoultProcess.run(["test", Self.everything, "--fixtures", fixtures.path, "--objects", "30", "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(used.standardOutput.utf8)) as? [String: Any])
        #expect((root["sources"] as? [[String: Any]])?.map { $0["store"] as? String } == ["generated", "fixture v1.sqlite"])
        let handle = try FileHandle(forWritingTo: fixtures.appending(path: "v1.sqlite"))
        try handle.seek(toOffset: 200)
        try handle.write(contentsOf: Data([0x5A]))
        try handle.close()
        let refused = try MoultProcess.run(["test", Self.everything, "--fixtures", fixtures.path])
        #expect(refused.exitCode == 65)
        #expect(refused.standardError.contains("fixture v1.sqlite (version v1) changed since it was frozen"), "\(refused.standardError)")
    }

    @Test func aMalformedManifestIsRefusedWithItsLine() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        try Data("moult-fixtures 1\nabc\tv1\tv1.sqlite\n".utf8).write(to: folder.appending("fixtures.manifest"))
        let result = try MoultProcess.run(["test", Self.everything, "--fixtures", folder.url.path])
        #expect(result.exitCode == 65)
        #expect(result.standardError.contains("fixtures.manifest:2: 'abc' is not a SHA-256"), "\(result.standardError)")
    }

    @Test func generateRefusesAnExistingStoreAndListsAndBreaksRules() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let store = folder.appending("g.sqlite")
        let first = try MoultProcess.run(["generate", store.path, "--model", Self.everything, "--model-version", "v1", "--objects", "50"])
        #expect(first.exitCode == 0 && first.standardOutput.contains("generated 50 objects of 6 entities"), "\(first.standardError)")
        let second = try MoultProcess.run(["generate", store.path, "--model", Self.everything, "--model-version", "v1"])
        #expect(second.exitCode == 74)
        let rules = try MoultProcess.run(["generate", "--list-rules", "--model", Self.everything, "--model-version", "v1"])
        let line = try #require(rules.standardOutput.split(separator: "\n").first { $0.hasSuffix("Book.pages maximum") })
        let number = String(line.split(separator: " ")[0])
        let broken = folder.appending("broken.sqlite")
        let breaking = try MoultProcess.run(["generate", broken.path, "--model", Self.everything, "--model-version", "v1", "--break-rule", number])
        #expect(breaking.exitCode == 0 && breaking.standardOutput.contains("breaks Book.pages maximum"))
        // The migrated store's validation catches exactly that object.
        let migrated = try MoultProcess.run(["migrate", broken.path, "--model", Self.everything, "--output", folder.appending("out.sqlite").path, "--quiet"])
        #expect(migrated.exitCode == 67 && migrated.standardError.contains("pages"), "\(migrated.standardError)")
        let unknown = try MoultProcess.run(["generate", folder.appending("x.sqlite").path, "--model", Self.everything, "--break-rule", "999"])
        #expect(unknown.exitCode == 64 && unknown.standardError.contains("--break-rule 999"))
    }

    @Test func planPrintsTheInPlaceSQLWithoutRunningIt() throws {
        let folder = try TemporaryDirectory("moult-test-command")
        defer { folder.remove() }
        let store = folder.appending("v1.sqlite")
        _ = try MoultProcess.run(["generate", store.path, "--model", Self.everything, "--model-version", "v1", "--objects", "20"])
        let before = try Data(contentsOf: store)
        let plan = try MoultProcess.run(["plan", store.path, "--model", Self.everything, "--sql"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains(#"ALTER TABLE "ZPROFILE" RENAME COLUMN "ZBIO" TO "ZSUMMARY";"#))
        #expect(plan.standardOutput.contains(#"ALTER TABLE "ZTHING" DROP COLUMN "ZISSUE";"#))
        #expect(plan.standardOutput.contains(#"UPDATE "ZCHAPTER" SET "ZWORDS" = ? WHERE 1; -- arguments: 7"#))
        #expect(try Data(contentsOf: store) == before)
    }

    private func sha256(_ url: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/sha256sum")
        process.arguments = [url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")[0].description
    }
}

/// The structure of the common JUnit XML schema, checked with Foundation's XML parser (see
/// `JUnitReportTests` in MoultTestingTests for the rules).
final class JUnitChecker: NSObject, XMLParserDelegate {
    var problems: [String] = []
    var testcases = 0, failures = 0
    private var stack: [String] = []
    private let parents = ["testsuites": "", "testsuite": "testsuites", "testcase": "testsuite", "failure": "testcase", "system-out": "testcase"]

    init(data: Data) {
        super.init()
        let parser = XMLParser(data: data)
        parser.delegate = self
        if !parser.parse() { problems.append("not well-formed") }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        if parents[name] != (stack.last ?? "") { problems.append("<\(name)> inside <\(stack.last ?? "")>") }
        if name == "testcase" {
            testcases += 1
            if attributes["name"] == nil || attributes["classname"] == nil { problems.append("testcase without name or classname") }
        }
        if name == "failure" { failures += 1 }
        stack.append(name)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { stack.removeLast() }
}

/// A few of the random model pairs of the long run (Benchmarks/scripts/model-pairs.sh), through every path.
@Suite struct RandomModelPairTests {
    @Test(arguments: [4, 5, 9, 10])
    func aRandomPairPassesEveryPath(pair: Int) throws {
        let folder = try TemporaryDirectory("model-pairs")
        defer { folder.remove() }
        let made = try MoultProcess.run(["generate-models", folder.url.path, "--first", String(pair), "--count", "1", "--seed", "1"])
        #expect(made.exitCode == 0, "\(made.standardError)")
        let model = folder.appending("Pair\(pair).xcdatamodeld")
        let changes = try String(contentsOf: model.appending(path: "changes.txt"), encoding: .utf8)
        #expect(!changes.isEmpty)
        let result = try MoultProcess.run(["test", model.path, "--objects", "40", "--seed", String(pair)])
        #expect(result.exitCode == 0, "\(changes)\n\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("1 store, 3 paths: all passed"))
    }

    @Test func pairsAreTheSameForASeed() throws {
        let folder = try TemporaryDirectory("model-pairs")
        defer { folder.remove() }
        for name in ["a", "b"] {
            _ = try MoultProcess.run(["generate-models", folder.appending(name).path, "--count", "3", "--seed", "9"])
        }
        for pair in 0..<3 {
            for file in ["v1.xcdatamodel/contents", "v2.xcdatamodel/contents", "changes.txt"] {
                let a = try Data(contentsOf: folder.appending("a/Pair\(pair).xcdatamodeld/\(file)"))
                #expect(try a == Data(contentsOf: folder.appending("b/Pair\(pair).xcdatamodeld/\(file)")))
            }
        }
    }
}
