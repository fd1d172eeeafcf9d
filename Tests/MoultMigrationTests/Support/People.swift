import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultPeople
import MoultStore
import MoultTestSupport
import Testing

/// The People scenario (Datasets/People) for tests: its model, mappings, policies, generated stores.
enum People {
    static let model: VersionedModel = try! VersionedModel(contentsOf: Fixtures.peopleModel)

    static var policies: PolicyRegistry {
        var registry = PolicyRegistry()
        PeoplePolicies.register(in: &registry)
        return registry
    }

    /// A People mapping file by name (`"v2-to-v3"`, see `Fixtures.peopleMapping(_:)`).
    static func mapping(_ name: String) throws -> MappingModel {
        try MappingModel(contentsOf: Fixtures.peopleMapping(name))
    }

    static func version(_ name: String) -> ObjectModel { model.version(named: name)!.model }

    /// Generates a store of `persons` persons at `version` in `directory`.
    @discardableResult
    static func generate(_ version: String, persons: Int, seed: UInt64 = 7, in directory: TemporaryDirectory, name: String? = nil) throws -> URL {
        let url = directory.appending(name ?? "people-\(version)-\(persons)-\(seed).sqlite")
        try PeopleGenerator(model: model, seed: seed).generate(version: version, persons: persons, at: url)
        return url
    }

    /// Migrates `store` to `target` progressively, with the People policies.
    @discardableResult
    static func migrate(
        _ store: URL, to target: String, mappings: [MappingModel] = [], options: MigrationOptions = MigrationOptions(),
        output: URL
    ) throws -> ProgressiveMigration {
        let migration = try ProgressiveMigration(store: store, model: model, to: target, mappings: mappings, policies: policies, options: options)
        try migration.run(output: output)
        // Every scenario migration is checked against its source by `moult verify`'s checks too.
        let failures = Failures()
        let report = try MigrationVerifier(migration: migration, destination: output, sampleSize: 50, seed: 11).run { failures.list.append($0) }
        // A run told not to validate may leave broken rules: verify finds those, and only those.
        #expect(report.passed || (!options.validate && Set(report.failures.keys) == [.validation]), "moult verify: \(failures.list)")
        #expect(report.checked[.validation] == 1 && report.checked[.metadata] ?? 0 > 0)
        // Counts and the sample, for one step and for chains alike; only what a policy makes is left out.
        if !migration.isUpToDate {
            #expect(report.checked[.count] ?? 0 > 0 && (report.sampled > 0 || ObjectGraph.isEmpty(store)), "\(report)")
            #expect(report.skipped.allSatisfy { $0.contains("runs a policy") }, "\(report.skipped)")
        }
        return migration
    }
}

/// Verification failures, collected.
final class Failures: @unchecked Sendable {
    var list: [VerificationFailure] = []
}

/// Every object of a store, by entity (each object under its own entity, not its parents').
struct ObjectGraph {
    /// Whether a store has no object at all.
    static func isEmpty(_ url: URL) -> Bool {
        guard let metadata = try? StoreMetadata(contentsOf: url), let version = People.model.version(matchingEntityHashes: metadata.entityHashes),
            let graph = try? ObjectGraph(url, model: version.model)
        else { return false }
        return graph.counts.values.allSatisfy { $0 == 0 }
    }

    let model: ObjectModel
    private(set) var rows: [String: [ObjectRow]] = [:]
    private var byID: [ObjectID: ObjectRow] = [:]

    init(_ url: URL, model: ObjectModel) throws {
        self.model = model
        let store = try SQLiteStore(url: url, model: model, mode: .readOnly)
        defer { store.database.close() }
        for entity in model.entities where !entity.isAbstract {
            let cursor = try store.objects(of: entity.name, includingSubentities: false)
            var list: [ObjectRow] = []
            while let row = try cursor.next() {
                list.append(row)
                byID[row.id] = row
            }
            rows[entity.name] = list
        }
    }

    /// Objects per entity (entities with none included).
    var counts: [String: Int] { rows.mapValues(\.count) }

    func objects(_ entity: String) -> [ObjectRow] { rows[entity] ?? [] }

    /// The object a to-one relationship of `row` points to.
    func target(of row: ObjectRow, _ relationship: String) -> ObjectRow? {
        guard case .object(let id)? = row[relationship] else { return nil }
        return byID[id]
    }

    /// The objects whose to-one `relationship` points to `row` (its to-many inverse).
    func sources(pointingTo row: ObjectRow, from entities: [String], via relationship: String) -> [ObjectRow] {
        entities.flatMap { objects($0) }.filter { $0[relationship] == .object(row.id) }
    }
}

/// What a person is, whatever the version stores it as: the values and everything it links to, by
/// content, so that two stores of different versions can be compared person by person.
struct PersonFacts: Hashable, Comparable, CustomStringConvertible {
    var kind: String
    var name: String
    var age: Int64
    var street: String?
    var state: String?
    /// The company's name (v4 `companyName`, v5 `company.name`).
    var company: String?
    /// The school's name (v4 `schoolName`, v5 `school.name`).
    var school: String?

    static func < (a: PersonFacts, b: PersonFacts) -> Bool { a.description < b.description }

    var description: String {
        "\(kind)(\(name), \(age), \(street ?? "-"), \(state ?? "-"), \(company ?? "-"), \(school ?? "-"))"
    }

    /// Every person of a graph, sorted.
    static func all(in graph: ObjectGraph) -> [PersonFacts] {
        ["Person", "Adult", "Child"].flatMap { kind in
            graph.objects(kind).map { row in
                let address = graph.target(of: row, "address")
                return PersonFacts(
                    kind: kind, name: row["name"]?.text ?? "", age: row["age"]?.integer ?? -1,
                    street: (address ?? row)["street"]?.text, state: (address ?? row)["state"]?.text,
                    company: row["companyName"]?.text ?? graph.target(of: row, "company")?["name"]?.text,
                    school: row["schoolName"]?.text ?? graph.target(of: row, "school")?["name"]?.text)
            }
        }.sorted()
    }

    /// The same person as v4 splits it: an adult from 18, a child under.
    var split: PersonFacts {
        var copy = self
        copy.kind = age >= 18 ? "Adult" : "Child"
        return copy
    }

    /// The same person without what a version lacks.
    func keeping(address: Bool) -> PersonFacts {
        var copy = self
        if !address {
            copy.street = nil
            copy.state = nil
        }
        return copy
    }
}

/// Expects two lists of persons to be equal, and says briefly how they differ when they are not.
func expectSamePersons(
    _ actual: [PersonFacts], _ expected: [PersonFacts], _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    let actualCounts = Dictionary(actual.map { ($0, 1) }, uniquingKeysWith: +)
    let expectedCounts = Dictionary(expected.map { ($0, 1) }, uniquingKeysWith: +)
    let extra = actualCounts.filter { expectedCounts[$0.key] != $0.value }.keys.sorted()
    let missing = expectedCounts.filter { actualCounts[$0.key] != $0.value }.keys.sorted()
    let message: String = "\(comment) \(actual.count) persons, expected \(expected.count); \(missing.count) differ, e.g. expected "
        + "\(missing.prefix(3).map(\.description)) but found \(extra.prefix(3).map(\.description))"
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}

extension Value {
    var text: String? { if case .string(let text) = self { text } else { nil } }
    var integer: Int64? { if case .int(let value) = self { value } else { nil } }
}
