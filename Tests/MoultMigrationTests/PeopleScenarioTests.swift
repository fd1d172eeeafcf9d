import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The People scenario end to end (DESIGN.md §7, Datasets/People/README.md): each step migrates a
/// generated store and checks the destination object by object, with what each object links to.
@Suite struct PeopleScenarioTests {
    // MARK: - Steps

    @Test func v1ToV2AddsEmptyAddressFields() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 800, in: directory)
        let before = try checksum(source)
        let output = directory.appending("v2.sqlite")
        let migration = try People.migrate(source, to: "v2", options: MigrationOptions(chunkSize: 97), output: output)
        #expect(migration.steps.map(\.inferred) == [true])

        let sourceGraph = try ObjectGraph(source, model: People.version("v1"))
        let graph = try ObjectGraph(output, model: People.version("v2"))
        #expect(graph.counts == ["Person": 800])
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph))
        #expect(graph.objects("Person").allSatisfy { $0["street"] == .null && $0["state"] == .null })
        try expectVersion(output, "v2")
        #expect(try checksum(source) == before)
    }

    @Test func v2ToV3MovesAddressesIntoTheirOwnEntity() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 1_000, in: directory)
        let before = try checksum(source)
        let output = directory.appending("v3.sqlite")
        let migration = try People.migrate(
            source, to: "v3", mappings: [People.mapping("v2-to-v3")], options: MigrationOptions(chunkSize: 128), output: output)
        #expect(migration.steps.map(\.inferred) == [false])
        try checkV3(output, from: try ObjectGraph(source, model: People.version("v2")))
        #expect(try checksum(source) == before)
    }

    @Test func v3ToV4SplitsPersonsIntoAdultsAndChildren() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 1_000, in: directory)
        let before = try checksum(source)
        let output = directory.appending("v4.sqlite")
        try People.migrate(source, to: "v4", mappings: [People.mapping("v3-to-v4")], options: MigrationOptions(chunkSize: 150), output: output)

        let sourceGraph = try ObjectGraph(source, model: People.version("v3"))
        let graph = try ObjectGraph(output, model: People.version("v4"))
        let sourcePersons = sourceGraph.objects("Person")
        let adults = sourcePersons.filter { ($0["age"]?.integer ?? 0) >= 18 }.count
        #expect(adults > 0 && adults < sourcePersons.count)
        #expect(graph.counts == ["Adult": adults, "Child": sourcePersons.count - adults, "Address": sourceGraph.objects("Address").count])
        #expect(graph.objects("Adult").allSatisfy { ($0["age"]?.integer ?? -1) >= 18 })
        #expect(graph.objects("Child").allSatisfy { ($0["age"]?.integer ?? 99) < 18 })
        // Same persons, split by age, each with the address it had (street and state by content).
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph).map(\.split).sorted())
        // Still one resident per address: no address was duplicated or shared by the split.
        for address in graph.objects("Address") {
            #expect(graph.sources(pointingTo: address, from: ["Adult", "Child"], via: "address").count == 1, "\(address.id)")
        }
        try expectVersion(output, "v4")
        #expect(try checksum(source) == before)
    }

    @Test func v4ToV5ExtractsUniqueCompaniesAndSchools() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v4", persons: 2_000, in: directory)
        let before = try checksum(source)
        let output = directory.appending("v5.sqlite")
        try People.migrate(source, to: "v5", mappings: [People.mapping("v4-to-v5")], options: MigrationOptions(chunkSize: 250), output: output)
        try checkV5(output, from: try ObjectGraph(source, model: People.version("v4")))
        #expect(try checksum(source) == before)
    }

    // MARK: - Progressive

    @Test func v1ToV3WithoutAMappingFromV1() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 600, in: directory)
        let output = directory.appending("v3.sqlite")
        let migration = try People.migrate(
            source, to: "v3", mappings: [People.mapping("v2-to-v3")], options: MigrationOptions(chunkSize: 64), output: output)
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name) \($0.inferred)" } == ["v1->v2 true", "v2->v3 false"])
        // v1 persons have no address: none is made.
        let sourceGraph = try ObjectGraph(source, model: People.version("v1"))
        let graph = try ObjectGraph(output, model: People.version("v3"))
        #expect(graph.counts == ["Person": 600, "Address": 0])
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph))
        try expectVersion(output, "v3")
        // The intermediate v2 store is gone.
        #expect(!FileManager.default.fileExists(atPath: migration.stepsDirectory(for: output).path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == [source.lastPathComponent, "v3.sqlite"].sorted())
    }

    @Test func storesAtV1AndV2BothReachV3() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mappings = [try People.mapping("v2-to-v3")]
        let v1 = try People.generate("v1", persons: 500, in: directory)
        let v2 = try People.generate("v2", persons: 500, in: directory)
        let fromV1 = directory.appending("from-v1.sqlite")
        let fromV2 = directory.appending("from-v2.sqlite")
        // The same call for both: the store's version picks the path.
        for (source, output) in [(v1, fromV1), (v2, fromV2)] {
            try People.migrate(source, to: "v3", mappings: mappings, output: output)
            try expectVersion(output, "v3")
        }
        #expect(try ObjectGraph(fromV1, model: People.version("v3")).counts == ["Person": 500, "Address": 0])
        try checkV3(fromV2, from: try ObjectGraph(v2, model: People.version("v2")))
    }

    @Test func v1ToV5ThroughEveryStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 400, in: directory)
        let output = directory.appending("v5.sqlite")
        let mappings = try ["v2-to-v3", "v3-to-v4", "v4-to-v5"].map(People.mapping)
        let migration = try People.migrate(source, to: "v5", mappings: mappings, options: MigrationOptions(chunkSize: 33), output: output)
        #expect(migration.steps.map(\.to.name) == ["v3", "v4", "v5"])
        let sourceFacts = PersonFacts.all(in: try ObjectGraph(source, model: People.version("v2")))
        let graph = try ObjectGraph(output, model: People.version("v5"))
        // Generated v2 persons have neither company nor school names: no Company, no School.
        expectSamePersons(PersonFacts.all(in: graph), sourceFacts.map(\.split).sorted())
        #expect(graph.counts["Company"] == 0 && graph.counts["School"] == 0)
        try expectVersion(output, "v5")
    }

    // MARK: - Checks

    /// A v3 destination made from a v2 graph: one address per person that had a street or a state,
    /// linked to that person only.
    private func checkV3(_ output: URL, from sourceGraph: ObjectGraph, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let graph = try ObjectGraph(output, model: People.version("v3"))
        let persons = sourceGraph.objects("Person")
        let withAddress = persons.filter { $0["street"] != .null || $0["state"] != .null }.count
        #expect(withAddress > 0 && withAddress < persons.count, sourceLocation: sourceLocation)
        #expect(graph.counts == ["Person": persons.count, "Address": withAddress], sourceLocation: sourceLocation)
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph), sourceLocation: sourceLocation)
        for address in graph.objects("Address") {
            let residents = graph.sources(pointingTo: address, from: ["Person"], via: "address")
            #expect(residents.count == 1, "address \(address.id)", sourceLocation: sourceLocation)
        }
        try expectVersion(output, "v3", sourceLocation: sourceLocation)
    }

    /// A v5 destination made from a v4 graph.
    private func checkV5(_ output: URL, from sourceGraph: ObjectGraph, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let graph = try ObjectGraph(output, model: People.version("v5"))
        let companyNames = Set(sourceGraph.objects("Adult").compactMap { $0["companyName"]?.text })
        let schoolNames = Set(sourceGraph.objects("Child").compactMap { $0["schoolName"]?.text })
        #expect(companyNames.contains("Apple") && companyNames.count > 1, sourceLocation: sourceLocation)
        #expect(schoolNames.count > 1, sourceLocation: sourceLocation)
        #expect(
            graph.counts == [
                "Adult": sourceGraph.objects("Adult").count, "Child": sourceGraph.objects("Child").count,
                "Address": sourceGraph.objects("Address").count, "Company": companyNames.count, "School": schoolNames.count,
            ], sourceLocation: sourceLocation)

        // One company per distinct name; Apple makes phones, the others the default.
        let companies = graph.objects("Company")
        #expect(Set(companies.compactMap { $0["name"]?.text }) == companyNames, sourceLocation: sourceLocation)
        for company in companies {
            let expected = company["name"]?.text == "Apple" ? "makes phones" : "makes stuff"
            #expect(company["business"]?.text == expected, "\(company["name"]?.text ?? "?")", sourceLocation: sourceLocation)
            #expect(!graph.sources(pointingTo: company, from: ["Adult"], via: "company").isEmpty, sourceLocation: sourceLocation)
        }
        let schools = graph.objects("School")
        #expect(Set(schools.compactMap { $0["name"]?.text }) == schoolNames, sourceLocation: sourceLocation)
        for school in schools {
            #expect(!graph.sources(pointingTo: school, from: ["Child"], via: "school").isEmpty, sourceLocation: sourceLocation)
        }

        // Each adult's company is the one named after its companyName, each child's school after its
        // schoolName, each address the one it had (compared by content).
        expectSamePersons(PersonFacts.all(in: graph), PersonFacts.all(in: sourceGraph), sourceLocation: sourceLocation)
        #expect(graph.objects("Adult").contains { graph.target(of: $0, "company") == nil }, sourceLocation: sourceLocation)
        try expectVersion(output, "v5", sourceLocation: sourceLocation)
    }
}

/// Expects a store's metadata to hold exactly the entity hashes of a People version.
func expectVersion(_ url: URL, _ version: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let metadata = try StoreMetadata(contentsOf: url)
    #expect(metadata.entityHashes == People.version(version).entityVersionHashes(), sourceLocation: sourceLocation)
    #expect(People.model.version(matchingEntityHashes: metadata.entityHashes)?.name == version, sourceLocation: sourceLocation)
}
