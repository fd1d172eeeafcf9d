import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Stage 2 as set operations (one `UPDATE … FROM` per relationship per chunk) makes the same store as
/// the per-object path, byte for byte, whatever the chunk size; a chunk it cannot take falls back.
@Suite struct SetRelationshipsTests {
    static let steps: [(from: String, mapping: String, to: String)] = [
        ("v2", "v2-to-v3", "v3"), ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5", "v5"), ("v4", "v4-to-v5-builtin", "v5"),
    ]

    @Test(arguments: steps, [1, 37, 1_000])
    func sameStoreAsPerObject(step: (from: String, mapping: String, to: String), chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let mappings = [try People.mapping(step.mapping)]
        let sets = directory.appending("sets.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        // Every link written in stage 2 (none left out, none written at insert), so that both paths
        // write them all.
        var setOptions = MigrationOptions(chunkSize: chunkSize)
        setOptions.skipRepeatedLinks = false
        setOptions.toOnesAtInsert = false
        setOptions.reorderCreatePasses = false
        try People.migrate(source, to: step.to, mappings: mappings, options: setOptions, output: sets)
        var options = setOptions
        options.setRelationships = false
        try People.migrate(source, to: step.to, mappings: mappings, options: options, output: perObject)
        try expectIdentical(sets, perObject, "\(step.mapping), chunks of \(chunkSize): set operations vs per object")
    }

    /// A relationship whose lookup finds objects of an entity it cannot hold (a policy of our own makes
    /// a Person where PersonToAddress should make an Address): the chunk falls back to the per-object
    /// path, which names the relationship and the object, the same error either way, and nothing is
    /// left at the output.
    @Test func wrongTargetEntityIsReportedAsPerObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 50, in: directory)
        var mapping = try People.mapping("v2-to-v3")
        let index = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToAddress" })
        mapping.entityMappings[index].entityMigrationPolicyClassName = "PersonInsteadOfAddress"
        var policies = People.policies
        policies.register("PersonInsteadOfAddress") { PersonInsteadOfAddress() }
        var messages: [String] = []
        for setRelationships in [true, false] {
            var options = MigrationOptions(chunkSize: 10)
            options.setRelationships = setRelationships
            let output = directory.appending("out-\(setRelationships).sqlite")
            let error = try #require(throws: MigrationError.self) {
                let migration = try ProgressiveMigration(
                    store: source, model: People.model, to: "v3", mappings: [mapping], policies: policies, options: options)
                try migration.run(output: output)
            }
            #expect(error.message.contains("the relationship 'address' of Person"), "\(error.message)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            messages.append(error.message)
        }
        #expect(messages.count == 2 && messages[0] == messages[1])
    }
}

/// Makes a Person (not the Address the mapping names) for each source person, and associates it.
struct PersonInsteadOfAddress: EntityMigrationPolicy {
    func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let made = try manager.createObject(entity: "Person", values: ["name": .string("stand-in"), "age": .int(1)])
        try manager.associate(source: source.objectID, destination: made, mapping: mapping)
    }
}
