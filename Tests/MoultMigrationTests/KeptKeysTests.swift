import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Objects keep the primary key of the source object each is made from (`KeptKeys`), as Core Data's
/// lightweight migration of an SQLite store keeps every `Z_PK`: an app's object URIs
/// (`x-coredata://<UUID>/<Entity>/p<Z_PK>`) still name the same objects. Where keys cannot be kept,
/// fresh keys come above every kept one, and `Z_PRIMARYKEY.Z_MAX` is never below the keys used.
@Suite struct KeptKeysTests {
    // MARK: - Inferred, a real store

    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"

    /// CoreDataPlus's SampleModel V1 store (Core Data's own, in WAL mode), inferred to V2 into
    /// `--output`: Car, SportCar and ExpensiveSportCar share ZCAR (the last renamed LuxuryCar), and
    /// every object of each keeps its key, its values and the key of its owner.
    @Test(arguments: [true, false])
    func inferredOutputKeepsTheKeysOfSubEntitiesOfASharedTable(bulkSQL: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.sampleModel)/Fixtures/SampleModel_V1.sqlite"))
        let model = try VersionedModel(contentsOf: Fixtures.url("\(Self.sampleModel)/SampleModel.xcdatamodeld"))
        let output = directory.appending("v2.sqlite")
        let migration = try ProgressiveMigration(
            store: source, model: model, to: "SampleModel2", options: MigrationOptions(chunkSize: 16, bulkSQL: bulkSQL))
        #expect(migration.steps.map(\.inferred) == [true])
        try migration.run(output: output)

        let before = try Self.keyed(source, model: model.version(named: "SampleModel")!.model)
        let after = try Self.keyed(output, model: model.version(named: "SampleModel2")!.model)
        let renamed = ["ExpensiveSportCar": "LuxuryCar"]
        #expect(before["SportCar"]?.isEmpty == false && before["ExpensiveSportCar"]?.isEmpty == false)
        for (entity, objects) in before {
            // V2 dropped Car.color and Person.id: what both versions store is compared.
            let migrated = after[renamed[entity] ?? entity] ?? [:]
            #expect(Set(migrated.keys) == Set(objects.keys), "\(entity)")
            for (key, values) in objects {
                let kept = migrated[key] ?? [:]
                #expect(values.filter { kept.keys.contains($0.key) } == kept, "\(entity) \(key)")
            }
        }
        #expect(try Self.maxima(output)["Car"] ?? 0 >= Self.maxima(source)["Car"] ?? .max)
    }

    /// The same migration told to number afresh (`keepKeys` off) moves the sub-entities' objects:
    /// the check above is one that fails when keys are not kept.
    @Test func numberingAfreshMovesThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.sampleModel)/Fixtures/SampleModel_V1.sqlite"))
        let model = try VersionedModel(contentsOf: Fixtures.url("\(Self.sampleModel)/SampleModel.xcdatamodeld"))
        let output = directory.appending("v2.sqlite")
        var options = MigrationOptions(chunkSize: 16)
        options.keepKeys = false
        try ProgressiveMigration(store: source, model: model, to: "SampleModel2", options: options).run(output: output)
        let before = try Self.keyed(source, model: model.version(named: "SampleModel")!.model)
        let after = try Self.keyed(output, model: model.version(named: "SampleModel2")!.model)
        #expect(after["SportCar"] != before["SportCar"])
    }

    // MARK: - People mapping models

    /// People v1 → v2 and v2 → v3 through their mapping models: each person keeps its key, and each
    /// address (one made per person that has one, the only objects of its hierarchy) its person's.
    @Test(arguments: [true, false])
    func peopleMappingsKeepKeysWhereOneToOne(bulkSQL: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let v1 = try People.generate("v1", persons: 300, in: directory)
        let v2 = directory.appending("v2-\(bulkSQL).sqlite")
        let options = MigrationOptions(chunkSize: 37, bulkSQL: bulkSQL)
        try People.migrate(v1, to: "v2", mappings: [try People.mapping("v1-to-v2")], options: options, output: v2)
        let persons = try Self.keyed(v1, model: People.version("v1"))["Person"] ?? [:]
        let migrated = try Self.keyed(v2, model: People.version("v2"))["Person"] ?? [:]
        #expect(persons.count == 300 && Set(migrated.keys) == Set(persons.keys))
        for (key, values) in persons { #expect(migrated[key]?["name"] == values["name"], "Person \(key)") }

        // v1 has no address to carry: v2 → v3 from a generated v2 store, whose persons have some.
        let generated = try People.generate("v2", persons: 300, in: directory)
        let sources = try Self.keyed(generated, model: People.version("v2"))["Person"] ?? [:]
        let v3 = directory.appending("v3-\(bulkSQL).sqlite")
        try People.migrate(generated, to: "v3", mappings: [try People.mapping("v2-to-v3")], options: options, output: v3)
        let after = try Self.keyed(v3, model: People.version("v3"))
        #expect(after["Person"]?.mapValues { $0["name"] } == sources.mapValues { $0["name"] })
        // Each address has its person's key, and the person points to it by that key.
        let addresses = after["Address"] ?? [:]
        #expect(!addresses.isEmpty)
        for (key, person) in after["Person"] ?? [:] where person["address"] != .null {
            #expect(person["address"] == .int(key) && addresses[key]?["street"] == sources[key]?["street"], "Person \(key)")
        }
        #expect(addresses.count == sources.values.filter { $0["street"] != .null || $0["state"] != .null }.count)
        #expect(try Self.maxima(v3)["Person"] == Self.maxima(generated)["Person"])
    }

    /// People v3 → v4 splits Person into Adult and Child by two filters on the same source entity:
    /// the two mappings' keys are looked up before they are kept, none is taken, so every adult and
    /// every child keeps its person's key, and every address its own.
    @Test(arguments: [true, false])
    func theSplitKeepsEveryPersonsKey(bulkSQL: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 400, in: directory)
        let output = directory.appending("v4.sqlite")
        try People.migrate(
            source, to: "v4", mappings: [try People.mapping("v3-to-v4")], options: MigrationOptions(chunkSize: 41, bulkSQL: bulkSQL),
            output: output)
        let before = try Self.keyed(source, model: People.version("v3"))
        let after = try Self.keyed(output, model: People.version("v4"))
        let persons = before["Person"] ?? [:]
        let adults = after["Adult"] ?? [:], children = after["Child"] ?? [:]
        #expect(!adults.isEmpty && !children.isEmpty && adults.count + children.count == persons.count)
        for (key, person) in persons {
            let made = (person["age"]?.integer ?? 0) >= 18 ? adults[key] : children[key]
            #expect(made?["name"] == person["name"] && made?["address"] == person["address"], "Person \(key)")
        }
        #expect(Set((after["Address"] ?? [:]).keys) == Set((before["Address"] ?? [:]).keys))
    }

    /// The split with filters that overlap (adults from 12): a person of 12 to 17 makes an adult and a
    /// child. The adult (made first) keeps the key; the child finds it taken and gets a fresh key above
    /// the source's largest, in source order. The bulk copy's chunks that meet a taken key take the
    /// per-object path, so both paths make the same store.
    @Test func overlappingFiltersGiveTheSecondObjectAFreshKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 300, in: directory)
        let mapping = try Self.overlappingSplit(in: directory)
        var stores: [URL] = []
        for bulkSQL in [true, false] {
            let output = directory.appending("v4-\(bulkSQL).sqlite")
            let options = MigrationOptions(chunkSize: 29, bulkSQL: bulkSQL)
            try People.migrate(source, to: "v4", mappings: [mapping], options: options, output: output)
            stores.append(output)
        }
        try expectIdentical(stores[0], stores[1], "bulk SQL vs per object")

        let persons = try Self.keyed(source, model: People.version("v3"))["Person"] ?? [:]
        let after = try Self.keyed(stores[0], model: People.version("v4"))
        let adults = after["Adult"] ?? [:], children = after["Child"] ?? [:]
        let largest = try #require(Self.maxima(source)["Person"])
        let both = persons.filter { (12..<18).contains($0.value["age"]?.integer ?? -1) }.keys.sorted()
        #expect(!both.isEmpty)
        for (key, person) in persons where (person["age"]?.integer ?? 0) >= 12 {
            #expect(adults[key]?["name"] == person["name"], "Adult \(key)")
        }
        for (key, person) in persons where (person["age"]?.integer ?? 0) < 12 {
            #expect(children[key]?["name"] == person["name"], "Child \(key)")
        }
        // The children of 12 to 17, numbered from above the source's largest key in their source order.
        let fresh = children.filter { $0.key > largest }
        #expect(fresh.keys.sorted() == Array((largest + 1)...(largest + Int64(both.count))))
        #expect(fresh.keys.sorted().map { fresh[$0]?["name"] } == both.map { persons[$0]?["name"] })
        #expect(try Self.maxima(stores[0])["Person"] == largest + Int64(both.count))
    }

    // MARK: - Killed and resumed, in place

    /// The overlapping split through the command line, killed in a chunk, between its two commits and
    /// after one, resumes to the store an uninterrupted run makes: the fresh keys are allocated from the
    /// counter each chunk's transaction saved, above the reserved source maximum.
    @Test(arguments: ["chunk-start:4", "after-lmdb-commit:6", "after-sqlite-commit:9", "after-rows:5"])
    func killedAndResumedEndsAsAnUninterruptedRun(fault: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v3", persons: 200, in: directory)
        _ = try Self.overlappingSplit(in: directory)
        let mapping = directory.appending("v3-to-v4-overlapping.json").path
        func arguments(_ output: URL) -> [String] {
            ["migrate", source.path, "--model", Fixtures.peopleModel.path, "--to", "v4", "--mapping", mapping, "--output", output.path,
             "--chunk-size", "15", "--quiet"]
        }
        let reference = directory.appending("reference.sqlite")
        let uninterrupted = try MoultProcess.run(arguments(reference))
        #expect(uninterrupted.exitCode == 0, "\(uninterrupted.standardError)")
        let output = directory.appending("resumed.sqlite")
        let killed = try MoultProcess.run(arguments(output), environment: ["MOULT_FAULT": fault])
        #expect(killed.terminatedBySignal, "\(fault): \(killed.standardError)")
        let resumed = try MoultProcess.run(arguments(output) + ["--resume"])
        #expect(resumed.exitCode == 0, "\(fault): \(resumed.standardError)")
        try expectIdentical(reference, output, fault)
        let largest = try #require(Self.maxima(source)["Person"])
        #expect(try Self.keyed(output, model: People.version("v4"))["Child"]?.keys.contains { $0 > largest } == true, "\(fault)")
    }

    /// In place, a step that streams (v3 → v4 through its mapping model: a new store swapped in) keeps
    /// every key as `--output` does, and `Z_MAX` stays the source's.
    @Test func inPlaceStreamedStepKeepsKeys() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try People.generate("v3", persons: 150, in: directory)
        let before = try Self.keyed(store, model: People.version("v3"))
        let maxima = try Self.maxima(store)
        let result = try MoultProcess.run([
            "migrate", store.path, "--model", Fixtures.peopleModel.path, "--to", "v4", "--mapping",
            Fixtures.peopleMapping("v3-to-v4").path, "--chunk-size", "20", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let after = try Self.keyed(store, model: People.version("v4"))
        var made = after["Adult"] ?? [:]
        made.merge(after["Child"] ?? [:]) { first, _ in first }
        #expect(made.mapValues { $0["name"] } == (before["Person"] ?? [:]).mapValues { $0["name"] })
        #expect(Set((after["Address"] ?? [:]).keys) == Set((before["Address"] ?? [:]).keys))
        let now = try Self.maxima(store)
        #expect(now["Person"] == maxima["Person"] && now["Address"] == maxima["Address"])
    }

    // MARK: - Helpers

    /// The v3 → v4 mapping with adults from 12, written beside the test's stores.
    static func overlappingSplit(in directory: TemporaryDirectory) throws -> MappingModel {
        let text = try String(contentsOf: Fixtures.peopleMapping("v3-to-v4"), encoding: .utf8)
        #expect(text.contains("\"age >= 18\""))
        let url = directory.appending("v3-to-v4-overlapping.json")
        try text.replacingOccurrences(of: "\"age >= 18\"", with: "\"age >= 12\"").write(to: url, atomically: true, encoding: .utf8)
        return try MappingModel(contentsOf: url)
    }

    /// Every object of a store by entity and key: its values by name, a to-one as its target's key.
    static func keyed(_ url: URL, model: ObjectModel) throws -> [String: [Int64: [String: Value]]] {
        let graph = try ObjectGraph(url, model: model)
        var result: [String: [Int64: [String: Value]]] = [:]
        for (entity, rows) in graph.rows {
            var objects: [Int64: [String: Value]] = [:]
            for row in rows {
                var values: [String: Value] = [:]
                for (slot, name) in row.shape.names.enumerated() {
                    if case .object(let id) = row[slot] { values[name] = .int(id.primaryKey) } else { values[name] = row[slot] }
                }
                objects[row.id.primaryKey] = values
            }
            result[entity] = objects
        }
        return result
    }

    /// `Z_PRIMARYKEY.Z_MAX` by entity name.
    static func maxima(_ url: URL) throws -> [String: Int64] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let rows = try database.query("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY") { ($0.string(at: 0) ?? "", $0.int64(at: 1)) }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }
}
