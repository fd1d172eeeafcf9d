import CoreData
import Foundation
import MoultEngine
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// The five public policy files, built by the policy build into this target (their classes
/// registered by the generated `CoreDataPolicyTestsPolicies`), run on their repositories' stores, each
/// result compared with what the policy's own logic gives, computed here from the source with SQL.
@Suite struct PublicPolicyTests {
    static var policies: PolicyRegistry {
        var registry = PolicyRegistry()
        CoreDataPolicyTestsPolicies.register(in: &registry)
        return registry
    }

    static func migrate(
        _ store: URL, model: String, to target: String, mapping: String, chunkSize: Int, output: URL, policies: PolicyRegistry = policies
    ) throws {
        let versioned = try VersionedModel(contentsOf: Fixtures.url(model))
        let mappingModel = try MappingModel(contentsOf: Fixtures.url(mapping))
        let migration = try ProgressiveMigration(
            store: store, model: versioned, to: target, mappings: [mappingModel], policies: policies,
            options: MigrationOptions(chunkSize: chunkSize))
        try migration.run(output: output)
    }

    /// The build registered the five classes, under their names and their module's, and the method
    /// CoreDataPlus's book policy offers value expressions under its selector.
    @Test func theBuildRegisteredTheFiveClasses() throws {
        let names = CoreDataPolicyTestsPolicies.classes.map(\.name)
        #expect(
            names == [
                "Post2ToPost3MigrationPolicy", "V2to3MakerPolicy", "BookCoverToCoverMigrationPolicy", "NoteToNotePolicy", "ImageToImagePolicy",
                "AdultToCompanyPolicy", "ChildToSchoolPolicy",
            ])
        let book = try #require(CoreDataPolicyTestsPolicies.classes.first { $0.name == "BookCoverToCoverMigrationPolicy" })
        #expect(book.selectors == ["destinationTitleForSourceBookTitle:manager:"])
        let registry = Self.policies
        for name in names {
            #expect(registry.names.contains(name) && registry.names.contains("CoreDataPolicyTests.\(name)"), "\(name) in \(registry.names)")
        }
    }

    // MARK: - CoreDataPlus: V2to3MakerPolicy

    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"

    /// CoreDataPlus's SampleModel 2 → 3: each car's `maker` name becomes one `Maker` per distinct name
    /// (the policy finds those already made among `registeredObjects`), related to its cars through
    /// `createdBy`; the same store at chunk sizes 1, 37 and 10,000.
    @Test func makersAreUniquedAmongRegisteredObjectsAtEveryChunkSize() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.sampleModel)/Fixtures/SampleModel_V2.sqlite"))
        let cars = try StoreRows.query(source, "SELECT ZNUMBERPLATE, IFNULL(ZMAKER, '') FROM ZCAR ORDER BY ZNUMBERPLATE")
        let expectedMakers = Set(cars.map { $0[1] }.filter { !$0.isEmpty })
        #expect(cars.count == 125 && expectedMakers.count == 10, "the fixture: \(cars.count) cars, \(expectedMakers.count) makers")

        var dumps: [Int: [String]] = [:]
        for chunkSize in [1, 37, 10_000] {
            let output = directory.appending("v3-\(chunkSize).sqlite")
            try Self.migrate(
                source, model: "\(Self.sampleModel)/SampleModel.xcdatamodeld", to: "SampleModel3",
                mapping: "\(Self.sampleModel)/MappingModels/V2toV3.xcmappingmodel", chunkSize: chunkSize, output: output)
            let makers = try StoreRows.query(output, "SELECT ZNAME FROM ZMAKER ORDER BY ZNAME").map { $0[0] }
            #expect(makers == expectedMakers.sorted(), "chunk size \(chunkSize): one maker per name")
            let made = try StoreRows.query(
                output, "SELECT ZCAR.ZNUMBERPLATE, IFNULL(ZMAKER.ZNAME, '') FROM ZCAR LEFT JOIN ZMAKER ON ZMAKER.Z_PK = ZCAR.ZCREATEDBY ORDER BY ZCAR.ZNUMBERPLATE")
            #expect(made == cars, "chunk size \(chunkSize): each car created by the maker it named")
            dumps[chunkSize] = try StoreRows.dump(output)
        }
        #expect(dumps[1] == dumps[10_000], "chunks of 1 and one chunk give the same store")
        #expect(dumps[37] == dumps[10_000], "chunks of 37 and one chunk give the same store")
    }

    // MARK: - wibosco: Post2ToPost3MigrationPolicy

    static let wibosco = "wibosco__CoreDataMigrationRevised-Example"

    /// wibosco's model 2 → 3: every post keeps its values and gets one section whose body is the post's
    /// content, whose title is the content's first four characters and "...", at index 0.
    @Test func eachPostGetsItsSection() throws {
        try Self.checkSections(policies: Self.policies)
    }

    /// The article's complete example (`SectionPolicy`, written like wibosco's policy), registered under
    /// the class name wibosco's mapping gives: the same store.
    @Test func theArticlesExampleRuns() throws {
        var policies = PolicyRegistry()
        policies.register(SectionPolicy.self, module: "MyApp", as: "Post2ToPost3MigrationPolicy")
        try Self.checkSections(policies: policies)
    }

    static func checkSections(policies: PolicyRegistry) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(
            Fixtures.url("\(Self.wibosco)/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite"))
        let posts = try StoreRows.query(source, "SELECT IFNULL(ZPOSTID, ''), IFNULL(ZHEXCOLOR, ''), IFNULL(ZCONTENT, '') FROM ZPOST ORDER BY ZPOSTID")
        #expect(posts.count == 10)
        for chunkSize in [3, 10_000] {
            let output = directory.appending("v3-\(chunkSize).sqlite")
            try Self.migrate(
                source, model: "\(Self.wibosco)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
                to: "CoreDataMigration_Example 3",
                mapping: "\(Self.wibosco)/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration2to3ModelMapping.xcmappingmodel",
                chunkSize: chunkSize, output: output, policies: policies)
            let sections = try StoreRows.query(
                output,
                """
                SELECT IFNULL(ZPOST.ZPOSTID, ''), IFNULL(ZPOST.ZHEXCOLOR, ''), IFNULL(ZSECTION.ZBODY, ''), IFNULL(ZSECTION.ZTITLE, ''), ZSECTION.ZINDEX
                FROM ZSECTION JOIN ZPOST ON ZPOST.Z_PK = ZSECTION.ZPOST ORDER BY ZPOST.ZPOSTID
                """)
            let expected = posts.map { post in
                [post[0], post[1], post[2], post[2].isEmpty ? "" : String(post[2].prefix(4)) + "...", "0"]
            }
            #expect(sections == expected, "chunk size \(chunkSize)")
            #expect(try StoreRows.query(output, "SELECT COUNT(*) FROM ZSECTION") == [["10"]])
        }
    }
}
