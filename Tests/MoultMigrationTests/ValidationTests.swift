import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Stage 3: the destination model's rules, every broken one listed with its object.
@Suite struct ValidationTests {
    /// A generated v1 store with persons 5 and 9 aged 200 and person 7 nameless (the model wants ages
    /// 0…150 and names of at least one character).
    static func brokenStore(in directory: TemporaryDirectory) throws -> URL {
        let source = try People.generate("v1", persons: 60, in: directory)
        let database = try Database(url: source, mode: .readWrite)
        try database.execute("UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK IN (5, 9)")
        try database.execute("UPDATE ZPERSON SET ZNAME = '' WHERE Z_PK = 7")
        database.close()
        return source
    }

    @Test func everyBrokenRuleIsListedAndNothingIsLeft() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.brokenStore(in: directory)
        let before = try checksum(source)
        let output = directory.appending("v2.sqlite")
        let error = try #require(throws: MigrationError.self) {
            try People.migrate(source, to: "v2", options: MigrationOptions(chunkSize: 8), output: output)
        }
        #expect(error.code == .validationFailed && error.category.exitCode == 67)
        let failures = error.failures.sorted { $0.primaryKey < $1.primaryKey }
        #expect(failures.map(\.primaryKey) == [5, 7, 9], "\(failures)")
        #expect(failures.allSatisfy { $0.entity == "Person" })
        #expect(failures.map(\.property) == ["age", "name", "age"])
        #expect(failures[0].rule.contains("above the maximum 150") && failures[2].rule.contains("above the maximum 150"))
        #expect(failures[1].rule.contains("below the minimum 1"), "\(failures[1])")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
        #expect(try checksum(source) == before)
    }

    @Test func stopAtTheFirstFailure() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.brokenStore(in: directory)
        let output = directory.appending("v2.sqlite")
        let error = try #require(throws: MigrationError.self) {
            try People.migrate(source, to: "v2", options: MigrationOptions(stopAtFirstValidationFailure: true), output: output)
        }
        #expect(error.code == .validationFailed)
        #expect(error.failures.count == 1, "\(error.failures)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func withoutValidationTheValuesPassAsTheyAre() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Self.brokenStore(in: directory)
        let output = directory.appending("v2.sqlite")
        try People.migrate(source, to: "v2", options: MigrationOptions(validate: false), output: output)
        let graph = try ObjectGraph(output, model: People.version("v2"))
        #expect(graph.objects("Person").filter { $0["age"] == .int(200) }.count == 2)
        #expect(graph.objects("Person").filter { $0["name"] == .string("") }.count == 1)
    }
}
