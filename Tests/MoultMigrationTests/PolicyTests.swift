import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Synchronization
import Testing

/// Custom entity migration policies, found by the name a mapping gives them.
@Suite struct PolicyTests {
    /// Every hook a policy saw, shared between the policies a factory makes (one per pass).
    final class HookLog: Sendable {
        let calls = Mutex<[String]>([])
        func record(_ call: String) { calls.withLock { $0.append(call) } }
        var all: [String] { calls.withLock { $0 } }
    }

    /// Upper-cases every name, flags persons named "ZED" at validation, and logs its hooks.
    struct ShoutingPolicy: EntityMigrationPolicy {
        let log: HookLog

        func begin(mapping: EntityMapping, manager: MigrationManager) throws { log.record("begin \(mapping.name)") }

        func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.createDefaultDestinationInstance(for: source, mapping: mapping)
            let made = try manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source.objectID])
            #expect(made.count == 1)
            for object in made {
                try manager.setValue(.string((source.value(forKey: "name").text ?? "").uppercased()), forKey: "name", of: object)
            }
        }

        func endInstanceCreation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("endInstanceCreation") }
        func endRelationshipCreation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("endRelationshipCreation") }
        func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws { log.record("performCustomValidation") }
        func end(mapping: EntityMapping, manager: MigrationManager) throws { log.record("end") }
    }

    /// The People v2 → v3 mapping with PersonToPerson made custom, naming `policy`.
    static func mapping(policy: String, in directory: TemporaryDirectory) throws -> MappingModel {
        let url = Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entityMappings = try #require(json["entityMappings"] as? [[String: Any]])
        let index = try #require(entityMappings.firstIndex { $0["name"] as? String == "PersonToPerson" })
        entityMappings[index]["type"] = "custom"
        entityMappings[index]["policy"] = policy
        json["entityMappings"] = entityMappings
        let file = directory.appending("custom-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: file)
        return try MappingModel(contentsOf: file)
    }

    @Test func aPolicyRegisteredByNameRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 200, in: directory)
        let log = HookLog()
        var policies = People.policies
        policies.register("ShoutingPolicy") { ShoutingPolicy(log: log) }
        let output = directory.appending("v3.sqlite")
        // Qualified by a module, as Xcode writes class names: found by its last component.
        let mapping = try Self.mapping(policy: "MyApp.ShoutingPolicy", in: directory)
        let migration = try ProgressiveMigration(
            store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies, options: MigrationOptions(chunkSize: 30))
        try migration.run(output: output)

        let sourceFacts = PersonFacts.all(in: try ObjectGraph(source, model: People.version("v2")))
        let facts = PersonFacts.all(in: try ObjectGraph(output, model: People.version("v3")))
        let shouted = sourceFacts.map { person in
            var copy = person
            copy.name = person.name.uppercased()
            return copy
        }.sorted()
        expectSamePersons(facts, shouted)
        #expect(sourceFacts.contains { $0.name != $0.name.uppercased() }, "the source has names to upper-case")
        let calls = log.all
        for hook in ["begin PersonToPerson", "endInstanceCreation", "endRelationshipCreation", "performCustomValidation", "end"] {
            #expect(calls.contains(hook), "\(hook) in \(calls)")
        }
        #expect(calls.firstIndex(of: "endInstanceCreation")! < calls.firstIndex(of: "endRelationshipCreation")!)
        #expect(calls.last == "end")
    }

    @Test func aMissingPolicyIsAClearError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "MyApp.UnknownPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: People.policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .missingPolicy)
        #expect(error.category.exitCode == 65)
        #expect(error.description.contains("MyApp.UnknownPolicy"), "\(error)")
        #expect(error.mapping == "PersonToPerson" || error.description.contains("PersonToPerson"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }

    @Test func aPolicysValidationFailureFailsTheMigration() throws {
        struct RejectingPolicy: EntityMigrationPolicy {
            func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws {
                manager.reportValidationFailure(
                    ValidationFailure(entity: "Person", primaryKey: 3, property: "name", rule: "names must rhyme"))
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        var policies = People.policies
        policies.register("RejectingPolicy") { RejectingPolicy() }
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "RejectingPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .validationFailed)
        // The failure names the source object the destination object was made from, too.
        #expect(
            error.failures == [
                ValidationFailure(entity: "Person", primaryKey: 3, property: "name", rule: "names must rhyme", sourceEntity: "Person", sourcePrimaryKey: 3)
            ])
        #expect(error.description.contains("Person Z_PK 3.name: names must rhyme (made from the source object Person Z_PK 3)"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A relationship given an object of the wrong entity is refused, with the object and the
    /// relationship named, instead of writing a primary key that points at an unrelated row.
    @Test func aRelationshipToAnObjectOfAnotherEntityIsRefused() throws {
        struct MisdirectedPolicy: EntityMigrationPolicy {
            func createRelationships(
                for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
            ) throws {
                try manager.setRelationship("address", of: destination, to: [destination])
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        var policies = People.policies
        policies.register("MisdirectedPolicy") { MisdirectedPolicy() }
        let output = directory.appending("v3.sqlite")
        let mapping = try Self.mapping(policy: "MisdirectedPolicy", in: directory)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies)
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .evaluationFailed, "\(error)")
        #expect(error.description.contains("'address'") && error.description.contains("holds Address objects, not the Person"), "\(error)")
        #expect(error.mapping == "PersonToPerson" && error.primaryKey != nil)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".moult"))
    }
}
