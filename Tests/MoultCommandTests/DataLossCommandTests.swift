import Foundation
import MoultTestSupport
import Testing

/// Issue 27, item 3: a migration that drops data says so with `warning:` lines and events, `--strict`
/// refuses it before anything is written, and a second migration in place never replaces the first
/// one's backup.
@Suite struct DataLossCommandTests {
    static let model = InPlaceCommandTests.model

    /// People v2 → v3 without its mapping: the inferred mapping does not read Person.state and street.
    @Test func forgettingTheMappingWarnsWithCounts() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--output", output.path, "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.hasPrefix("moult: warning: step 1 (v2 -> v3) drops ") }
        #expect(warnings.count == 2, "\(result.standardError)")
        #expect(warnings.contains { $0.contains("non-nil values of Person.state (attribute)") })
        #expect(warnings.contains { $0.contains("non-nil values of Person.street (attribute)") })
    }

    @Test func inPlaceWarnsBeforeItRunsAndRecordsAWarningEvent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory)
        let events = directory.appending("events.jsonl")
        let result = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v3", "--quiet", "--events", events.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardError.contains("moult: warning: step 1 (v2 -> v3) drops "), "\(result.standardError)")
        let lines = try String(contentsOf: events, encoding: .utf8).split(separator: "\n")
        let warning = try #require(lines.first { $0.contains("\"event\":\"warning\"") && $0.contains("notCarried") })
        #expect(warning.contains("Person.state") || warning.contains("\"property\":\"state\""), "\(warning)")
    }

    /// `--strict` refuses (66) with copy, in place and plan, naming each loss; nothing is written.
    @Test(arguments: ["output", "in place", "plan"])
    func strictRefusesBeforeWriting(path: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory)
        let before = try InPlaceFaultTests.snapshot(directory.url)
        var arguments = [path == "plan" ? "plan" : "migrate", store.path, "--model", Self.model, "--to", "v3", "--strict"]
        if path == "output" { arguments += ["--output", directory.appending("out.sqlite").path] }
        let result = try MoultProcess.run(arguments)
        #expect(result.exitCode == 66, "\(result.standardError)")
        #expect(result.standardError.contains("--strict: refused"), "\(result.standardError)")
        #expect(result.standardError.contains("Person.state"))
        #expect(result.standardError.contains("Person.street"))
        #expect(try InPlaceFaultTests.snapshot(directory.url) == before, "a refused run left every file as it found it")
    }

    /// With the mapping that carries everything, `--strict` lets the run through.
    @Test func strictAcceptsAMigrationThatDropsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 200, in: directory)
        let result = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.model, "--to", "v3", "--mapping", InPlaceCommandTests.mapping("v2-to-v3"), "--strict", "--quiet"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("warning:"), "\(result.standardError)")
    }

    /// A fleet's manifest line with `"strict": true` is refused (66, recorded in the results); a line
    /// without it migrates, its results saying what was not carried.
    @Test func aManifestLineCanBeStrict() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let strict = try InPlaceCommandTests.generate("2", persons: 100, in: directory, name: "a.sqlite")
        let lenient = try InPlaceCommandTests.generate("2", persons: 100, in: directory, name: "b.sqlite")
        let manifest = directory.appending("fleet.jsonl")
        let lines = [
            #"{"store": "\#(strict.path)", "model": "\#(Self.model)", "to": "v3", "output": "a-out.sqlite", "strict": true}"#,
            #"{"store": "\#(lenient.path)", "model": "\#(Self.model)", "to": "v3", "output": "b-out.sqlite"}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: manifest)
        let result = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path])
        #expect(result.exitCode == 66, "\(result.standardError)")
        let results = try String(contentsOf: directory.appending("fleet.jsonl.results.jsonl"), encoding: .utf8)
        let byStore = Dictionary(uniqueKeysWithValues: results.split(separator: "\n").map { line in
            (line.contains("a.sqlite") ? "a" : "b", String(line))
        })
        #expect(byStore["a"]?.contains("\"exitCode\":66") == true, "\(results)")
        #expect(byStore["a"]?.contains("--strict: refused") == true, "\(results)")
        #expect(byStore["b"]?.contains("\"exitCode\":0") == true, "\(results)")
        #expect(byStore["b"]?.contains("Person.state") == true, "\(results)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("a-out.sqlite").path))
    }

    @Test func strictIsRefusedWithStagesAndAMalformedManifestFlagIsBadInput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 10, in: directory)
        let stages = directory.appending("stages.json")
        try Data(#"{"stages": []}"#.utf8).write(to: stages)
        let staged = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--stages", stages.path, "--strict"])
        #expect(staged.exitCode == 64, "\(staged.standardError)")
        #expect(staged.standardError.contains("--strict does not apply to --stages"))
        let manifest = directory.appending("fleet.jsonl")
        try Data(#"{"store": "people.sqlite", "model": "\#(Self.model)", "strict": 1}"#.utf8).write(to: manifest)
        let fleet = try MoultProcess.run(["fleet", "migrate", "--manifest", manifest.path])
        #expect(fleet.exitCode == 65, "\(fleet.standardError)")
        #expect(fleet.standardError.contains("fleet.jsonl:1: \"strict\" must be true or false"), "\(fleet.standardError)")
    }

    /// A second migration in place keeps the first one's backup and numbers its own, saying so.
    @Test func aSecondMigrationInPlaceNumbersItsBackup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("1", persons: 100, in: directory)
        let first = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--to", "v2", "--quiet"])
        #expect(first.exitCode == 0, "\(first.standardError)")
        let original = try Data(contentsOf: directory.appending("people~.sqlite"))
        let second = try MoultProcess.run(
            ["migrate", store.path, "--model", Self.model, "--to", "v3", "--mapping", InPlaceCommandTests.mapping("v2-to-v3"), "--quiet"])
        #expect(second.exitCode == 0, "\(second.standardError)")
        #expect(try Data(contentsOf: directory.appending("people~.sqlite")) == original, "the first backup is left as it was")
        #expect(try InPlaceCommandTests.version(of: directory.appending("people~2.sqlite")) == "v2")
        #expect(second.standardOutput.contains("the original is kept as \(directory.appending("people~2.sqlite").path)"), "\(second.standardOutput)")
        #expect(second.standardOutput.contains("people~.sqlite is an earlier migration's original"), "\(second.standardOutput)")
    }
}
