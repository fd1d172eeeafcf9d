import Foundation
import MoultMapping
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A to-many relationship mapping whose every link the inverse to-one's mapping writes identically is
/// left out of stage 2 (see `RepeatedLinks`): the store is the same, byte for byte, whatever the chunk
/// size and whichever stage-2 path runs, and anything that breaks the proof keeps both writes.
@Suite struct RepeatedLinksTests {
    /// The relationship mappings left out for a mapping model from `from` to `to`, by mapping name.
    static func omitted(_ mappings: [MappingModel], from: String, to: String, persons: Int = 20) throws -> [String: Set<String>] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(from, persons: persons, in: directory)
        let migrator = StreamingMigrator(
            source: source, sourceModel: People.version(from), destinationModel: People.version(to), mappings: mappings,
            policies: People.policies, options: MigrationOptions())
        let store = try SQLiteStore(url: source, model: People.version(from), mode: .readOnly)
        defer { store.database.close() }
        let session = try Session(job: migrator.job, source: store, destination: nil)
        var result: [String: Set<String>] = [:]
        for mapping in session.mappings where !mapping.omittedRelationships.isEmpty { result[mapping.name] = mapping.omittedRelationships }
        return result
    }

    @Test func peopleStepsLeaveOutTheirToManySides() throws {
        #expect(try Self.omitted([People.mapping("v2-to-v3")], from: "v2", to: "v3") == ["PersonToAddress": ["residents"]])
        #expect(try Self.omitted([People.mapping("v3-to-v4")], from: "v3", to: "v4") == ["AddressToAddress": ["residents"]])
        #expect(
            try Self.omitted([People.mapping("v4-to-v5-builtin")], from: "v4", to: "v5")
                == ["AddressToAddress": ["residents"], "AdultToCompany": ["employees"], "ChildToSchool": ["students"]])
        // Policies of the application's own (v4-to-v5.json's) may write any column: nothing is left out.
        #expect(try Self.omitted([People.mapping("v4-to-v5")], from: "v4", to: "v5") == [:])
    }

    static let steps: [(from: String, mapping: String, to: String)] = [
        ("v2", "v2-to-v3", "v3"), ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5-builtin", "v5"),
    ]

    @Test(arguments: steps, [1, 37, 1_000])
    func sameStoreWithBothWrites(step: (from: String, mapping: String, to: String), chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let before = try checksum(source)
        let mappings = [try People.mapping(step.mapping)]
        let skipped = directory.appending("skipped.sqlite")
        try People.migrate(source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: chunkSize), output: skipped)
        for setRelationships in [true, false] {
            var options = MigrationOptions(chunkSize: chunkSize)
            options.skipRepeatedLinks = false
            options.setRelationships = setRelationships
            let both = directory.appending("both-\(setRelationships).sqlite")
            try People.migrate(source, to: step.to, mappings: mappings, options: options, output: both)
            try expectIdentical(skipped, both, "\(step.mapping), chunks of \(chunkSize), set operations \(setRelationships)")
        }
        #expect(try checksum(source) == before)
    }

    /// v2 → v3 with one side changed so that the two no longer write the same links: nothing is left
    /// out, and the column holds what the to-many side writes.
    @Test(arguments: ["no address", "address elsewhere", "splitting", "person filtered"])
    func brokenPairKeepsBothWrites(change: String) throws {
        var mapping = try People.mapping("v2-to-v3")
        let person = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToPerson" })
        let address = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToAddress" })
        var expected: [String: Set<String>] = [:]
        switch change {
        case "no address":
            // Only Address.residents sets ZADDRESS.
            mapping.entityMappings[person].relationshipMappings = []
        case "address elsewhere":
            // Person.address looks up PersonToPerson's own objects' mapping, not PersonToAddress: not the same links.
            mapping.entityMappings[person].relationshipMappings = [
                PropertyMapping(
                    "address", "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToAddress\", $source.name)")
            ]
        case "splitting":
            // Several addresses from one person: the to-many side writes the last, the to-one side the first.
            mapping.entityMappings[address].builtinPolicy = "split(keys: [street, state])"
        default:
            // A filter on the to-one side only: the links are still the same ones, and they are left out.
            mapping.entityMappings[person].filterPredicate = "age >= 30"
            expected = ["PersonToAddress": ["residents"]]
        }
        #expect(try Self.omitted([mapping], from: "v2", to: "v3") == expected, "\(change)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 120, in: directory)
        var outputs: [URL] = []
        for skip in [true, false] {
            var options = MigrationOptions(chunkSize: 17)
            options.skipRepeatedLinks = skip
            let output = directory.appending("out-\(skip).sqlite")
            try People.migrate(source, to: "v3", mappings: [mapping], options: options, output: output)
            outputs.append(output)
        }
        try expectIdentical(outputs[0], outputs[1], change)
        // Every person with an address keeps it (the writes that remain are enough).
        let store = try SQLiteStore(url: outputs[0], model: People.version("v3"), mode: .readOnly)
        defer { store.database.close() }
        let linked = try store.database.scalar("SELECT COUNT(*) FROM ZPERSON WHERE ZADDRESS IS NOT NULL")
        #expect(linked != .int(0) && linked != nil, "\(change)")
    }
}
