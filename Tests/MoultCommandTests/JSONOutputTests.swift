import Foundation
import MoultTestSupport
import Testing

/// Issue 39, item 5: with `--json`, standard output holds the JSON and nothing else, on every command
/// that has the flag: what would print something else beside it is refused (64) or reported as JSON.
@Suite struct JSONOutputTests {
    static let people = Fixtures.peopleModel.path

    static func isJSON(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil
    }

    /// `plan --sql` prints SQL, which does not go with `--json` (64, nothing printed). `--events -` with
    /// `--json` is JSON lines: the events and the report, each line a JSON object (`EventsCommandTests`).
    @Test func whatWouldShareStandardOutputIsRefused() throws {
        let folder = try TemporaryDirectory("json-output")
        defer { folder.remove() }
        let store = folder.appending("p1.sqlite").path
        #expect(try MoultProcess.run(["create", store, "--model", Self.people, "--model-version", "v1"]).exitCode == 0)
        let result = try MoultProcess.run(["plan", store, "--model", Self.people, "--to", "v2", "--sql", "--json"])
        #expect(result.exitCode == 64, "\(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        for arguments in [
            ["plan", store, "--model", Self.people, "--to", "v2", "--events", "-", "--json"],
            ["migrate", store, "--model", Self.people, "--to", "v2", "--output", folder.appending("o.sqlite").path, "--events", "-", "--json"],
            ["verify", store, store, "--model", Self.people, "--to", "v1", "--events", "-", "--json"],
        ] {
            let run = try MoultProcess.run(arguments)
            let lines = run.standardOutput.split(separator: "\n").map(String.init)
            #expect(!lines.isEmpty && lines.allSatisfy(Self.isJSON), "\(arguments): \(run.standardOutput)")
        }
    }

    /// `test --freeze DIR --json`: the manifest and its files, as JSON.
    @Test func freezeReportsJSON() throws {
        let folder = try TemporaryDirectory("json-output")
        defer { folder.remove() }
        let result = try MoultProcess.run(["test", Self.people, "--freeze", folder.appending("frozen").path, "--version", "v1", "--objects", "5", "--json"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result.standardOutput)")
        let files = try #require(report["files"] as? [[String: Any]])
        #expect(files.first?["path"] as? String == "v1.sqlite" && files.first?["version"] as? String == "v1", "\(files)")
    }

    /// An XML store's migration run again into its finished DEST: the report as JSON, not a sentence.
    @Test func anXMLRunFoundFinishedReportsJSON() throws {
        let folder = try TemporaryDirectory("json-output")
        defer { folder.remove() }
        let sqlite = folder.appending("p1.sqlite").path
        let xml = folder.appending("p1.xml").path
        #expect(try MoultProcess.run(["create", sqlite, "--model", Self.people, "--model-version", "v1"]).exitCode == 0)
        #expect(try MoultProcess.run(["convert", sqlite, "--to", "xml", "--output", xml, "--model", Self.people]).exitCode == 0)
        let arguments = ["migrate", xml, "--model", Self.people, "--to", "v2", "--output", folder.appending("p2.xml").path, "--json"]
        for run in ["first", "again"] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 0, "\(run): \(result.standardError)")
            #expect(Self.isJSON(result.standardOutput), "\(run): \(result.standardOutput)")
        }
    }
}
