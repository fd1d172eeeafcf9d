import Foundation
import MoultMapping
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

    /// v4 → v5 with AdultToCompany as a plain transform (one Company per adult, no uniquing policy)
    /// breaks Company's uniqueness constraint on `name`. The destination's unique index (Core Data's
    /// `Z_Company_UNIQUE_name`) refuses the second insert, so the run stops there with the mapping,
    /// the entity and the constraint named, and leaves nothing behind.
    @Test func aDuplicateBreakingAUniquenessConstraintStopsTheRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 200, in: directory)
        let url = Fixtures.datasets.appending(path: "People/Mappings/v4-to-v5.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entityMappings = try #require(json["entityMappings"] as? [[String: Any]])
        let index = try #require(entityMappings.firstIndex { $0["name"] as? String == "AdultToCompany" })
        entityMappings[index]["type"] = "transform"
        entityMappings[index]["policy"] = nil
        json["entityMappings"] = entityMappings
        let file = directory.appending("no-uniquing.json")
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: file)
        let names = try ObjectGraph(source, model: People.version("v4")).objects("Adult").compactMap { $0["companyName"]?.text }
        #expect(names.count > Set(names).count, "the source has adults sharing a company")
        let output = directory.appending("v5.sqlite")
        let error = try #require(throws: MigrationError.self) {
            try People.migrate(source, to: "v5", mappings: [MappingModel(contentsOf: file)], output: output)
        }
        // Issue 39: a validation failure (67) on every path, naming the entity, the attribute and the object.
        #expect(error.category.exitCode == 67, "\(error)")
        #expect(error.description.contains("Company: the uniqueness constraint on name is broken"), "\(error)")
        #expect(error.mapping == "AdultToCompany" && error.entity == "Company", "\(error)")
        #expect(error.description.contains("UNIQUE constraint failed: ZCOMPANY.ZNAME"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
    /// The rules on one row are first tried together, a hundred to a scan: a wide entity (more rules
    /// than SQLite's expression depth would allow in one condition) validates, and a rule broken by one
    /// row among hundreds is still found and named, in the order of the rules.
    @Test(arguments: [0, 150, 1_100])
    func aWideEntityIsValidatedRuleByRuleWhenARowBreaksOne(broken: Int) throws {
        let width = 1_200
        let v1 = try ObjectModel { Entity("Wide") { for n in 0..<width { Attribute("a\(n)", .integer32) } } }
        let v2 = try ObjectModel {
            Entity("Wide") { for n in 0..<width { Attribute("a\(n)", .integer32).required().range(min: "0", max: "9") } }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("wide.sqlite")
        let created = try SQLiteStore.create(at: store, model: v1)
        let writer = try created.makeWriter()
        try writer.write {
            for row in 0..<3 {
                var values: [String: Value] = [:]
                for n in 0..<width { values["a\(n)"] = .int(Int64((n + row) % 10)) }
                if row == 1, broken > 0 {
                    values["a\(broken)"] = .null
                    values["a\(broken + 1)"] = .int(12)
                }
                try writer.insert("Wide", values)
            }
        }
        created.database.close()
        let versions = try VersionedModel(name: "Wide", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let output = directory.appending("v2.sqlite")
        let migration = try ProgressiveMigration(store: store, model: versions, to: "v2")
        guard broken > 0 else {
            try migration.run(output: output)
            return
        }
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .validationFailed)
        #expect(error.failures.map(\.property) == ["a\(broken)", "a\(broken + 1)"], "\(error.failures)")
        #expect(error.failures.map(\.primaryKey) == [2, 2])
        #expect(error.failures.last?.rule.contains("above the maximum 9") == true, "\(error.failures)")
    }
}
