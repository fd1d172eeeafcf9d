import CoreData
import Foundation
import MoultEngine
import MoultGenerate
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// A policy's fetches in the destination context (`FetchingPolicy`: attributes compared with
/// constants, to-ones with objects and nil, limits and offsets, a hierarchy, and forms SQL cannot say)
/// run with their predicates pushed down to SQL and all in Swift: the same store, at two chunk sizes,
/// on a generated store whose values take their types' edges; the objects the chunk changes (a weight,
/// an owner) are seen by the chunk's later fetches either way.
@Suite struct FetchPushdownTests {
    static func models() throws -> VersionedModel {
        func version(_ number: Int) throws -> ObjectModel {
            try ObjectModel(versionIdentifier: "\(number)") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("weight", .integer32)
                    Attribute("price", .double)
                    Attribute("made", .date)
                    Attribute("flag", .boolean)
                    if number == 2 { Attribute("found", .string) }
                    MoultModel.Relationship("owner", to: "Holder", inverse: "items")
                    MoultModel.Relationship("tag", to: "Tag", inverse: "items")
                }
                Entity("Holder") {
                    Attribute("name", .string)
                    MoultModel.Relationship("items", toMany: "Item", inverse: "owner")
                }
                Entity("VIP", parent: "Holder") { Attribute("level", .integer16) }
                Entity("Tag") {
                    Attribute("name", .string)
                    MoultModel.Relationship("items", toMany: "Item", inverse: "tag")
                }
            }
        }
        return try VersionedModel(name: "Items", versions: [.init(name: "v1", model: version(1)), .init(name: "v2", model: version(2))])
    }

    /// Item → Item with the policy; Holder, VIP and Tag inferred.
    static let mapping = MappingModel(source: .init(name: "v1"), destination: .init(name: "v2"), infersRest: true) {
        EntityMapping(name: "ItemToItem", type: .custom, source: "Item", destination: "Item", policy: "FetchingPolicy") {
            for key in ["name", "weight", "price", "made", "flag"] { PropertyMapping(key, "$source.\(key)") }
            MoultMapping.Relationship(
                "owner", "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"owner\", $source.owner)")
            MoultMapping.Relationship(
                "tag", "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"tag\", $source.tag)")
        }
    }

    static func migrate(_ source: URL, chunkSize: Int, inSQL: Bool, threads: Int = 1, output: URL) throws -> [String: Int] {
        var policies = PolicyRegistry()
        policies.register(FetchingPolicy.self, module: nil)
        var options = MigrationOptions(chunkSize: chunkSize)
        options.fetchesInSQL = inSQL
        options.threads = threads
        FetchingPolicy.statistics = [:]
        try ProgressiveMigration(store: source, model: try models(), to: "v2", mappings: [mapping], policies: policies, options: options)
            .run(output: output)
        return FetchingPolicy.statistics
    }

    @Test func fetchesInSQLFindWhatFetchesInSwiftFind() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("v1.sqlite")
        try StoreGenerator(model: try #require(try Self.models().version(named: "v1")?.model), objects: 240, seed: 17).generate(at: source)
        var dumps: [String: [String]] = [:]
        for chunkSize in [4, 10_000] {
            let inSQL = directory.appending("sql-\(chunkSize).sqlite"), inSwift = directory.appending("swift-\(chunkSize).sqlite")
            let pushed = try Self.migrate(source, chunkSize: chunkSize, inSQL: true, output: inSQL)
            let scanned = try Self.migrate(source, chunkSize: chunkSize, inSQL: false, output: inSwift)
            // The fast path was taken (and the slow one alone in the other run), then the two compare.
            #expect((pushed["inSQL"] ?? 0) > 0 && (pushed["scanned"] ?? 0) > 0, "chunk size \(chunkSize): \(pushed)")
            #expect(scanned["inSQL"] == 0 && (scanned["scanned"] ?? 0) > (pushed["scanned"] ?? 0), "chunk size \(chunkSize): \(scanned)")
            dumps["sql-\(chunkSize)"] = try StoreRows.dump(inSQL)
            dumps["swift-\(chunkSize)"] = try StoreRows.dump(inSwift)
            #expect(dumps["sql-\(chunkSize)"] == dumps["swift-\(chunkSize)"], "chunk size \(chunkSize): in SQL and in Swift, the same store")
        }
        #expect(dumps["sql-4"] == dumps["sql-10000"], "chunks of 4 and one chunk: the same store")
        // What the fetches found is there, and varies.
        let found = try StoreRows.query(directory.appending("sql-4.sqlite"), "SELECT ZFOUND FROM ZITEM").map { $0[0] }
        #expect(found.count == Set(found).count || Set(found).count > found.count / 2, "the fetches' results vary from object to object")
        let fetches = found.map { $0.split(separator: "|", omittingEmptySubsequences: false) }
        #expect(fetches.allSatisfy { $0.count == 17 })
        // Each fetch found objects for some items and none for others.
        for index in 0..<17 {
            let counts = Set(fetches.compactMap { $0.count == 17 ? $0[index].prefix { $0 != ":" } : nil })
            #expect(counts.count > 1, "fetch \(index + 1) found \(counts) objects for every item: \(fetches.prefix(3).map { $0[index] })")
        }
    }

    /// On two threads a policy still runs on the thread that runs the migration, one object after
    /// another, while the second reads the next chunk's source rows: the same store as on one.
    @Test func aPolicyOnTwoThreadsMakesTheStoreItMakesOnOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.appending("v1.sqlite")
        try StoreGenerator(model: try #require(try Self.models().version(named: "v1")?.model), objects: 200, seed: 23).generate(at: source)
        let one = directory.appending("one.sqlite"), two = directory.appending("two.sqlite")
        _ = try Self.migrate(source, chunkSize: 6, inSQL: true, threads: 1, output: one)
        _ = try Self.migrate(source, chunkSize: 6, inSQL: true, threads: 2, output: two)
        #expect(try StoreRows.dump(two) == StoreRows.dump(one))
    }
}
