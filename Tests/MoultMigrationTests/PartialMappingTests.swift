import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Partial mappings (issue 41, item 4): a mapping gives only the entity mappings that need a policy
/// or an expression (`"inferRest": true`), and the rest of its step is inferred as a lightweight
/// step infers it. The store is the one the whole mapping written out by hand makes.
@Suite struct PartialMappingTests {
    /// People v4 → v5 (six entities, three relationships, a hierarchy): the whole mapping written out
    /// by hand, `Datasets/People/BuiltinPolicy/v4-to-v5.json`.
    static func wholeV4ToV5() throws -> MappingModel {
        try MappingModel(contentsOf: Fixtures.datasets.appending(path: "People/BuiltinPolicy/v4-to-v5.json"))
    }

    /// The entity mappings of the whole v4 → v5 mapping named `names`, as a partial mapping.
    static func partialV4ToV5(giving names: [String]) throws -> MappingModel {
        let whole = try wholeV4ToV5()
        let json = """
            {
              "format": "moult-mapping/1",
              "source": { "name": "v4" },
              "destination": { "name": "v5" },
              "inferRest": true,
              "entityMappings": []
            }
            """
        var partial = try MappingModel(json: Data(json.utf8))
        partial.entityMappings = names.map { whole.entityMapping(named: $0)! }
        for index in partial.entityMappings.indices { partial.entityMappings[index].order = nil }
        return partial
    }

    /// One entity mapping given, with a built-in policy (companies uniqued by name); Address, Adult,
    /// Child, Person and School inferred. The whole mapping by hand: the People file without its
    /// schools (no `ChildToSchool`, no `school` relationship). Same store, table by table, row by row;
    /// `moult verify` passes on it (`People.migrate`).
    @Test func oneEntityMappingWithAPolicyMakesTheStoreOfTheWholeMapping() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 300, in: directory)
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany"])
        var whole = try Self.wholeV4ToV5()
        whole.entityMappings.removeAll { $0.name == "ChildToSchool" }
        let child = try #require(whole.entityMappings.firstIndex { $0.name == "ChildToChild" })
        whole.entityMappings[child].relationshipMappings.removeAll { $0.name == "school" }

        let options = MigrationOptions(chunkSize: 37)
        let byPartial = directory.appending("partial.sqlite"), byWhole = directory.appending("whole.sqlite")
        let migration = try People.migrate(source, to: "v5", mappings: [partial], options: options, output: byPartial)
        try People.migrate(source, to: "v5", mappings: [whole], options: options, output: byWhole)

        // The step ran the completed mapping: the given entity mapping, and the rest inferred.
        let step = try #require(migration.steps.first)
        #expect(migration.steps.count == 1 && !step.inferred)
        #expect(!step.mapping.infersRest)
        #expect(step.mapping.inferredEntityMappingNames == ["AddressToAddress", "AdultToAdult", "ChildToChild", "PersonToPerson", "NoneToSchool"])
        #expect(step.mapping.entityMappings.map(\.name) == ["AddressToAddress", "AdultToAdult", "ChildToChild", "AdultToCompany", "PersonToPerson", "NoneToSchool"])

        let companies = try ObjectGraph(byPartial, model: People.version("v5")).objects("Company")
        #expect(!companies.isEmpty, "the policy made companies")
        try expectIdentical(byPartial, byWhole, ignoringStoreUUID: true, "partial vs whole")
    }

    /// Both entity mappings with policies given, the rest inferred: the store of the People file itself.
    @Test func twoPoliciesGivenMakeTheStoreOfThePeopleFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 200, seed: 5, in: directory)
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany", "ChildToSchool"])
        let byPartial = directory.appending("partial.sqlite"), byWhole = directory.appending("whole.sqlite")
        let migration = try People.migrate(source, to: "v5", mappings: [partial], output: byPartial)
        try People.migrate(source, to: "v5", mappings: [try Self.wholeV4ToV5()], output: byWhole)
        #expect(migration.steps[0].mapping.inferredEntityMappingNames == ["AddressToAddress", "AdultToAdult", "ChildToChild", "PersonToPerson"])
        try expectIdentical(byPartial, byWhole, ignoringStoreUUID: true, "partial vs the People file")
    }

    /// In place, a partial step runs as the chain plans it and makes what the streamed copy makes.
    @Test func inPlaceAcceptsAPartialStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 150, in: directory)
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany", "ChildToSchool"])
        let streamed = directory.appending("streamed.sqlite")
        try People.migrate(source, to: "v5", mappings: [partial], output: streamed)
        let store = try directory.copyStore(source, as: "people.sqlite")
        let migration = try InPlaceMigration(
            store: store, model: People.model, to: "v5", mappings: [partial], policies: People.policies, keepsBackup: false)
        #expect(!migration.chain.steps[0].mapping.inferredEntityMappingNames.isEmpty)
        try migration.run()
        try expectSameContent(store, streamed, model: People.version("v5"), "in place vs streamed")
    }

    /// The rest cannot be inferred (v3 → v4: Person becomes abstract, its objects split into Adult
    /// and Child) and the partial mapping gives only Address: refused before anything runs, exit
    /// 66, naming the mapping, the step and Person.
    @Test func aRestThatCannotBeInferredIsRefusedNamingTheEntity() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 20, in: directory)
        let json = """
            {
              "format": "moult-mapping/1", "source": { "name": "v3" }, "destination": { "name": "v4" }, "inferRest": true,
              "entityMappings": [
                { "name": "AddressToAddress", "type": "copy", "source": "Address", "destination": "Address" }
              ]
            }
            """
        let partial = try MappingModel(json: Data(json.utf8))
        let error = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: People.model, to: "v4", mappings: [partial], mappingLabels: ["partial.json"])
        }
        #expect(error.category.exitCode == 66, "\(error)")
        #expect(error.description.contains("partial.json") && error.description.contains("v3 → v4"), "\(error)")
        let cause = try #require(error.underlying as? MappingError)
        #expect(cause.code == .notInferable && cause.issues.contains { $0.entity == "Person" }, "\(cause)")
        #expect(!cause.issues.contains { $0.entity == "Address" }, "\(cause)")
    }

    /// A given mapping wins over the inferred one of its destination, and its source is not inferred
    /// removed; the relationships inferred for the other entities reach the objects it makes by its
    /// name.
    @Test func aGivenMappingTakesThePlaceOfTheInferredOne() throws {
        let partial = MappingModel(source: .init(name: "v4"), destination: .init(name: "v5"), infersRest: true) {
            EntityMapping(name: "Addresses", type: .transform, source: "Address", destination: "Address") {
                PropertyMapping("street", "uppercase:($source.street)")
                PropertyMapping("state", "$source.state")
            }
        }
        let completed = try partial.completion(from: "v4", to: "v5", in: People.model).mapping
        #expect(completed.entityMappings.filter { $0.destinationEntityName == "Address" }.map(\.name) == ["Addresses"])
        #expect(!completed.entityMappings.contains { $0.mappingType == .remove })
        #expect(!completed.isInferred(completed.entityMapping(named: "Addresses")!))
        let adult = try #require(completed.entityMapping(named: "AdultToAdult"))
        #expect(completed.isInferred(adult))
        #expect(adult.relationshipMapping(named: "address")?.valueExpression?.contains("\"Addresses\"") == true, "\(adult)")
        try completed.validate(source: People.version("v4"), destination: People.version("v5"))
        // Written out, the completed mapping is whole; the partial one says it infers the rest.
        #expect(partial.jsonText().contains("\"inferRest\": true"))
        #expect(try MappingModel(json: partial.jsonData()) == partial)
        #expect(!completed.jsonText().contains("inferRest"))
    }
}
