import Foundation
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// The stages file is outside input: reading it and checking its stages against a model must end in
/// stages or a categorized error naming where, never a crash or an uncategorized error.
@Suite struct StagesFileFuzzTests {
    static let example = """
        {
          "format": "moult-stages/1",
          "stages": [
            { "lightweight": ["v1"], "label": "start" },
            { "custom": { "from": "v1", "to": { "name": "v2" },
                          "willMigrate": [
                            { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()", "size": "#size + 1" } },
                            { "deleteDuplicates": "Attachment", "by": ["name"] },
                            { "delete": "Attachment", "where": "#size > 900" },
                            { "insert": "Attachment", "values": { "name": "'new'", "dateCreated": "now()" } },
                            { "sql": "UPDATE ZATTACHMENT SET ZSIZE = 0 WHERE ZSIZE IS NULL" } ],
                          "didMigrate": [ { "update": "Attachment", "set": { "name": "uppercase:(name)" } } ] } }
          ]
        }
        """

    @Test func theExampleReads() throws {
        let file = try StagesFile(json: Data(Self.example.utf8))
        #expect(file.stages.count == 2)
        let planned = try StagedMigration.plan(file.stages, model: StagedMigrationTests.attachments)
        #expect(planned.map { $0.versions.map(\.name) } == [["v1"], ["v1", "v2"]])
        #expect(planned[1].willMigrate?.operations?.count == 5)
        #expect(planned[1].didMigrate?.operations?.count == 1)
    }

    /// The stages file of the documentation (MoultMigration.docc's "The stages file") reads, and runs on
    /// an Attachments store.
    @Test func theDocumentedExampleRuns() throws {
        let article = Fixtures.packageRoot.appending(path: "Sources/MoultMigration/MoultMigration.docc/StagesFileFormat.md")
        let readme = try String(contentsOf: article, encoding: .utf8)
        let section = try #require(readme.range(of: "# The stages file"))
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```json\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        let file = try StagesFile(json: Data(rest[open.upperBound..<close.lowerBound].utf8))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StagedMigrationTests.attachmentStore(3_000, in: directory)
        try StagedMigration(store: store, model: StagedMigrationTests.attachments, stages: file.stages, options: MigrationOptions(chunkSize: 250)).run()
        #expect(try StagedMigrationTests.version(of: store, in: StagedMigrationTests.attachments) == "v2")
        #expect(try StagedMigrationTests.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL") == 0)
        #expect(try StagedMigrationTests.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZSIZE > 900") == 0)
        #expect(try StagedMigrationTests.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZNAME = 'FILE-7'") == 1)
        // Its size is the model's default (0), not nil.
        #expect(try StagedMigrationTests.scalar(store, "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZNAME = 'README' AND ZSIZE = 0") == 1)
    }

    @Test(arguments: [
        ("{", "not JSON"),
        ("[]", "$: expected an object, found an array"),
        ("{\"stages\": []}", "$.stages: no stage"),
        ("{\"format\": \"moult-stages/9\", \"stages\": [{\"lightweight\": [\"v1\"]}]}", "$.format"),
        ("{\"stages\": [{\"lightweight\": [\"v1\"], \"custom\": {}}]}", "$.stages[0]: a stage is \"lightweight\" or \"custom\", not both"),
        ("{\"stages\": [{\"custom\": {\"from\": \"v1\"}}]}", "$.stages[0].custom.to: missing"),
        ("{\"stages\": [{\"custom\": {\"from\": \"v1\", \"to\": \"v2\", \"willMigrate\": [{\"update\": \"A\", \"set\": {\"x\": 1}}]}}]}", "$.stages[0].custom.willMigrate[0].set.x: expected a string, found a number"),
        ("{\"stages\": [{\"custom\": {\"from\": \"v1\", \"to\": \"v2\", \"willMigrate\": [{\"update\": \"A\", \"delete\": \"A\"}]}}]}", "one operation per object"),
        ("{\"stages\": [{\"custom\": {\"from\": \"v1\", \"to\": \"v2\", \"willMigrate\": [{\"drop\": \"A\"}]}}]}", "expected one of"),
        ("{\"stages\": [{\"lightweight\": [{\"hash\": \"x\"}]}]}", "$.stages[0].lightweight[0]: unknown key \"hash\""),
        ("{\"stages\": [{\"custom\": {\"from\": \"v1\", \"to\": \"v2\", \"mapping\": \"nowhere.json\"}}]}", "$.stages[0].custom.mapping: cannot read"),
    ])
    func badFilesSayWhere(_ text: String, _ expected: String) throws {
        let error = #expect(throws: MigrationError.self) { try StagesFile(json: Data(text.utf8), directory: URL(filePath: "/nonexistent")) }
        #expect(error?.category == .badInput)
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
    }

    @Test func randomStagesFilesEndInStagesOrACategorizedError() {
        let fuzzer = Fuzzer(
            name: "stages file", corpus: [Array(Self.example.utf8), Array("{\"stages\": [{\"lightweight\": [\"v1\", \"v2\"]}]}".utf8)],
            dictionary: ["\"lightweight\"", "\"custom\"", "\"from\"", "\"to\"", "\"checksum\"", "\"name\"", "\"willMigrate\"", "\"didMigrate\"",
                "\"update\"", "\"delete\"", "\"deleteDuplicates\"", "\"insert\"", "\"sql\"", "\"where\"", "\"set\"", "\"by\"", "\"values\"",
                "\"v1\"", "\"v2\"", "\"v3\"", "\"Attachment\"", "\"dateCreated\"", "\"now()\"", "null", "[]", "{}", "\"\"", ",", ":", "==", "nil",
                "\"mapping\"", "\"label\"", "9999999999999999999999", "-1", "true"])
        let report = fuzzer.run(smokeIterations: 400) { bytes in
            let file = try StagesFile(json: Data(bytes), directory: URL(filePath: "/nonexistent"))
            _ = try StagedMigration.plan(file.stages, model: StagedMigrationTests.attachments)
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] > 0 && report.exitCodes[65, default: 0] > 0, "\(report)")
    }
}
