import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Real stores and mapping models made by Xcode and Core Data (Tests/Fixtures), migrated by Moult and
/// compared with the stores Core Data itself made at the destination version.
@Suite struct FixtureMigrationTests {
    // MARK: - wibosco: Migration1to2 (value expression) and Migration2to3 (custom policy)

    static let wibosco = "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData"
    static func wiboscoStore(_ number: Int) -> URL {
        Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_\(number).sqlite")
    }

    /// wibosco's `Post2ToPost3MigrationPolicy` in Moult's terms: the default post, plus one `Color`
    /// per post holding the post's `hexColor`, related to it. wibosco's policy gives each color a
    /// random `colorID`; this one derives it from the post's, so that a resumed migration writes the
    /// same store.
    struct PostToPostWithColorPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.createDefaultDestinationInstance(for: source, mapping: mapping)
            let colorID: Value = source.value(forKey: "postID").text.map { .string("color-" + $0) } ?? .null
            let color = try manager.createObject(entity: "Color", values: ["colorID": colorID, "hex": source.value(forKey: "hexColor")])
            try manager.state("colors").set(color, forKey: String(source.objectID.primaryKey))
        }

        func createRelationships(
            for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try manager.createDefaultRelationships(for: destination, source: source, mapping: mapping)
            guard let color = try manager.state("colors").objectID(forKey: String(source.objectID.primaryKey)) else {
                throw MigrationError(.evaluationFailed, "no color was made for post \(source.objectID)")
            }
            try manager.setRelationship("color", of: destination, to: [color])
        }
    }

    /// Every mapping given must be used by a step: only those of the steps from the store's version.
    static func wiboscoMigration(
        store: URL, to target: String, mappings names: [String] = ["Migration1to2", "Migration2to3"]
    ) throws -> ProgressiveMigration {
        let model = try VersionedModel(contentsOf: Fixtures.url("\(wibosco)/Model/CoreDataMigration_Example.xcdatamodeld"))
        let mappings = try names.map {
            try MappingModel(contentsOf: Fixtures.url("\(wibosco)/Migration/Mappings/\($0).xcmappingmodel"))
        }
        var policies = PolicyRegistry()
        policies.register("Post2ToPost3MigrationPolicy") { PostToPostWithColorPolicy() }
        return try ProgressiveMigration(
            store: store, model: model, to: target, mappings: mappings, policies: policies, options: MigrationOptions(chunkSize: 500))
    }

    /// Posts by `postID`: date and colour (an attribute up to v2, the related `Color`'s `hex` in v3).
    static func posts(_ url: URL) throws -> [String: (date: Value, color: String?)] {
        let metadata = try StoreMetadata(contentsOf: url)
        let model = try VersionedModel(contentsOf: Fixtures.url("\(wibosco)/Model/CoreDataMigration_Example.xcdatamodeld"))
        let version = try #require(model.version(matchingEntityHashes: metadata.entityHashes))
        let graph = try ObjectGraph(url, model: version.model)
        var result: [String: (date: Value, color: String?)] = [:]
        for post in graph.objects("Post") {
            let color = post["color"].flatMap { $0.text } ?? post["hexColor"]?.text ?? graph.target(of: post, "color")?["hex"]?.text
            result[post["postID"]?.text ?? ""] = (post["date"] ?? .null, color)
        }
        return result
    }

    /// Table and column names of a store's Core Data tables (the schema, without SQL formatting).
    static func columns(_ url: URL) throws -> [String: Set<String>] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE', 'Z_PRIMARYKEY')") {
            $0.string(at: 0) ?? ""
        }
        return try Dictionary(uniqueKeysWithValues: tables.map { ($0, Set(try database.columns(of: $0))) })
    }

    @Test func wiboscoV1ToV2WithItsMappingModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Self.wiboscoStore(1))
        let before = try checksum(source)
        let output = directory.appending("v2.sqlite")
        let migration = try Self.wiboscoMigration(store: source, to: "CoreDataMigration_Example 2", mappings: ["Migration1to2"])
        #expect(migration.steps.map(\.inferred) == [false])
        try migration.run(output: output)

        // The destination is what Core Data made at v2: same entity hashes, same tables and columns.
        let fixture = Self.wiboscoStore(2)
        #expect(try StoreMetadata(contentsOf: output).entityHashes == StoreMetadata(contentsOf: fixture).entityHashes)
        #expect(try Self.columns(output) == Self.columns(fixture))
        // Objects: wibosco's v1 and v2 stores hold different posts (no postID in common), so each
        // migrated post is compared with its source: `color` became `hexColor`, the rest is kept.
        let sourcePosts = try Self.posts(source)
        let migrated = try Self.posts(output)
        #expect(sourcePosts.count == 1_001 && migrated.count == 1_001)
        for (postID, post) in sourcePosts {
            let destination = try #require(migrated[postID], "post \(postID)")
            #expect(destination.date == post.date && destination.color == post.color, "post \(postID)")
        }
        #expect(try Set(Self.posts(fixture).keys).isDisjoint(with: sourcePosts.keys))
        #expect(try checksum(source) == before)
    }

    @Test func wiboscoV2ToV3WithItsCustomPolicyMatchesCoreDatasStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Self.wiboscoStore(2))
        let before = try checksum(source)
        let output = directory.appending("v3.sqlite")
        try Self.wiboscoMigration(store: source, to: "CoreDataMigration_Example 3", mappings: ["Migration2to3"]).run(output: output)

        let fixture = Self.wiboscoStore(3)
        #expect(try StoreMetadata(contentsOf: output).entityHashes == StoreMetadata(contentsOf: fixture).entityHashes)
        #expect(try Self.columns(output) == Self.columns(fixture))
        // wibosco's v3 store was made from the same 5,979 posts as its v2 store, plus 2,016 posts
        // created afterwards (absent here); its colors' `colorID`s are random UUIDs (ours are derived
        // from the post): those do not correspond. Every post of ours has its counterpart, with the
        // same date and a related Color of the same hex.
        let migrated = try Self.posts(output)
        let coreData = try Self.posts(fixture)
        #expect(migrated.count == 5_979 && coreData.count == 7_995)
        for (postID, post) in migrated {
            let expected = try #require(coreData[postID], "post \(postID)")
            #expect(post.date == expected.date, "post \(postID)")
            #expect(post.color != nil && post.color == expected.color, "post \(postID)")
        }
        // One color per post, each pointing back to its post (a one-to-one: both sides stored).
        let model = try Self.wiboscoMigration(store: source, to: "CoreDataMigration_Example 3", mappings: ["Migration2to3"]).targetVersion.model
        let graph = try ObjectGraph(output, model: model)
        #expect(graph.counts == ["Post": 5_979, "Color": 5_979])
        for post in graph.objects("Post") {
            let color = try #require(graph.target(of: post, "color"), "post \(post.id)")
            #expect(color["post"] == .object(post.id), "color \(color.id)")
        }
        #expect(try checksum(source) == before)
    }

    @Test func wiboscoV1ToV3ThroughBothMappingModels() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Self.wiboscoStore(1))
        let output = directory.appending("v3.sqlite")
        let migration = try Self.wiboscoMigration(store: source, to: "CoreDataMigration_Example 3")
        #expect(migration.steps.map(\.inferred) == [false, false])
        try migration.run(output: output)
        #expect(try StoreMetadata(contentsOf: output).entityHashes == StoreMetadata(contentsOf: Self.wiboscoStore(3)).entityHashes)
        let sourcePosts = try Self.posts(source)
        let migrated = try Self.posts(output)
        #expect(migrated.count == sourcePosts.count)
        for (postID, post) in sourcePosts {
            #expect(migrated[postID]?.color == post.color && migrated[postID]?.date == post.date, "post \(postID)")
        }
    }

    // MARK: - jeffreybergier: renaming identifiers, inferred

    @Test func jeffreybergierV1ToV2InferredKeepsEveryObject() throws {
        let folder = "jeffreybergier__CoreDataMigrationTests/CoreDataMigration"
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The data of these stores is in their -wal files: copyStore copies them too.
        let source = try directory.copyStore(Fixtures.url("\(folder)/CoreDataMigrationTests/Example_v1.0.0.sqlite"))
        let coreDataV2 = try directory.copyStore(Fixtures.url("\(folder)/CoreDataMigrationTests/Example_v2.0.0.sqlite"))
        let before = try checksum(source)
        let model = try VersionedModel(contentsOf: Fixtures.url("\(folder)/CoreDataMigration/Model.xcdatamodeld"))
        let output = directory.appending("v2.sqlite")
        let migration = try ProgressiveMigration(store: source, model: model, to: "v2.0.0")
        #expect(migration.sourceVersion.name == "v1.0.0")
        #expect(migration.steps.allSatisfy(\.inferred) && migration.steps.last?.to.name == "v2.0.0")
        try migration.run(output: output)

        let sourceObjects = try ObjectGraph(source, model: model.version(named: "v1.0.0")!.model).objects("BasicEntity")
        let migrated = try ObjectGraph(output, model: model.version(named: "v2.0.0")!.model).objects("BasicEntity")
        let expected = try ObjectGraph(coreDataV2, model: model.version(named: "v2.0.0")!.model).objects("BasicEntity")
        #expect(!sourceObjects.isEmpty)
        #expect(migrated.count == sourceObjects.count)
        // The attribute renamed four times keeps its value.
        #expect(migrated.compactMap { $0["v2_0_0_name"]?.text }.sorted() == sourceObjects.compactMap { $0["v1_0_0_name"]?.text }.sorted())
        // Core Data's own v2.0.0 store holds the same content and the same entity hashes.
        #expect(migrated.map { $0["v2_0_0_name"] } == expected.map { $0["v2_0_0_name"] })
        #expect(try StoreMetadata(contentsOf: output).entityHashes == StoreMetadata(contentsOf: coreDataV2).entityHashes)
        // The source and its -wal (which holds its data) are left as they were.
        #expect(try checksum(source) == before)
    }

    // MARK: - alemar11: V2toV3 with its custom policy

    /// CoreDataPlus's `V2to3MakerPolicy` in Moult's terms: each car as the default makes it, plus one
    /// `Maker` per distinct `maker` name (found or created, shared by the Car, SportCar and LuxuryCar
    /// mappings), set as the car's `createdBy`.
    struct MakerPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.createDefaultDestinationInstance(for: source, mapping: mapping)
            guard let name = source.value(forKey: "maker").text else { return }
            let makers = manager.state("makers")
            if try makers.objectID(forKey: name) == nil {
                try makers.set(try manager.createObject(entity: "Maker", values: ["name": .string(name)]), forKey: name)
            }
        }

        func createRelationships(
            for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try manager.createDefaultRelationships(for: destination, source: source, mapping: mapping)
            guard let name = source.value(forKey: "maker").text else { return }
            guard let maker = try manager.state("makers").objectID(forKey: name) else {
                throw MigrationError(.evaluationFailed, "no maker was made for '\(name)'")
            }
            try manager.setRelationship("createdBy", of: destination, to: [maker])
        }
    }

    @Test func alemar11V2ToV3WithTheMakerPolicy() throws {
        let folder = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(folder)/Fixtures/SampleModel_V2.sqlite"))
        let before = try checksum(source)
        let model = try VersionedModel(contentsOf: Fixtures.url("\(folder)/SampleModel.xcdatamodeld"))
        let mapping = try MappingModel(contentsOf: Fixtures.url("\(folder)/MappingModels/V2toV3.xcmappingmodel"))
        var policies = PolicyRegistry()
        policies.register("V2to3MakerPolicy") { MakerPolicy() }
        let output = directory.appending("v3.sqlite")
        let migration = try ProgressiveMigration(
            store: source, model: model, to: "SampleModel3", mappings: [mapping], policies: policies, options: MigrationOptions(chunkSize: 16))
        #expect(migration.sourceVersion.name == "SampleModel2")
        #expect(migration.steps.map(\.inferred) == [false])
        try migration.run(output: output)

        let v3 = model.version(named: "SampleModel3")!.model
        #expect(try StoreMetadata(contentsOf: output).entityHashes == v3.entityVersionHashes())
        let sourceGraph = try ObjectGraph(source, model: model.version(named: "SampleModel2")!.model)
        let graph = try ObjectGraph(output, model: v3)
        let cars = ["Car", "SportCar", "LuxuryCar"]
        for entity in cars + ["Person"] {
            #expect(graph.counts[entity] == sourceGraph.counts[entity], "\(entity)")
        }
        let makerNames = Set(cars.flatMap { sourceGraph.objects($0) }.compactMap { $0["maker"]?.text })
        #expect(makerNames.count == 10)
        #expect(graph.objects("Maker").compactMap { $0["name"]?.text }.sorted() == makerNames.sorted())
        // Each car made by the maker its source named, with its number plate, model and owner kept.
        func describe(_ car: ObjectRow, _ graph: ObjectGraph, maker: String?) -> String {
            let owner = graph.target(of: car, "owner")
            return "\(car["numberPlate"] ?? .null) \(car["model"] ?? .null) \(maker ?? "-") \(owner?["firstName"] ?? .null) \(owner?["lastName"] ?? .null)"
        }
        for entity in cars {
            let expected = sourceGraph.objects(entity).map { describe($0, sourceGraph, maker: $0["maker"]?.text) }.sorted()
            let actual = graph.objects(entity).map { describe($0, graph, maker: graph.target(of: $0, "createdBy")?["name"]?.text) }.sorted()
            #expect(actual == expected, "\(entity)")
        }
        #expect(try checksum(source) == before)
    }
}
