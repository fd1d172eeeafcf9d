import CoreData
import Foundation
import MoultEngine
import MoultGenerate
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// CoreDataPlus's `BookCoverToCoverMigrationPolicy`, rewritten by the build (`@objc` removed,
/// `#keyPath(BookV2.frontCover)` → `"frontCover"`): its title method called from a value expression,
/// `FUNCTION($entityPolicy, "destinationTitleForSourceBookTitle:manager:", $source.title, $manager)`,
/// through the dispatch table the build made; its mapping's user info (`modelVersion` V3) read. CoreDataPlus
/// builds its SampleModel2 in code; these two versions are the part of it the policy reads.
@Suite struct BookPolicyTests {
    static func models() throws -> VersionedModel {
        let v2 = try ObjectModel(versionIdentifier: "2") {
            Entity("Book") {
                Attribute("title", .string).required()
                Attribute("frontCover", .binary)
            }
        }
        let v3 = try ObjectModel(versionIdentifier: "3") {
            Entity("Book") {
                Attribute("title", .string).required()
                Relationship("cover", to: "Cover", inverse: "book")
            }
            Entity("Cover") {
                Attribute("data", .binary)
                Relationship("book", to: "Book", inverse: "cover")
            }
        }
        return try VersionedModel(name: "SampleModel2", versions: [.init(name: "V2", model: v2), .init(name: "V3", model: v3)])
    }

    static let mapping = """
        {
          "format": "moult-mapping/1",
          "source": { "name": "V2" },
          "destination": { "name": "V3" },
          "entityMappings": [
            {
              "name": "BookToBook", "type": "custom", "source": "Book", "destination": "Book",
              "policy": "BookCoverToCoverMigrationPolicy", "userInfo": { "modelVersion": "V3" },
              "attributes": [
                { "name": "title", "value": "FUNCTION($entityPolicy, \\"destinationTitleForSourceBookTitle:manager:\\", $source.title, $manager)" }
              ]
            }
          ]
        }
        """

    /// Every book keeps its title, computed by the policy's method; a front cover that is not a `Cover`
    /// (here, raw data) makes no `Cover`, as the policy's `as? Cover` says.
    @Test func theTitleComesFromThePolicysMethod() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.models()
        let source = directory.appending("v2.sqlite")
        try StoreGenerator(model: try #require(model.version(named: "V2")?.model), objects: 40, seed: 5).generate(at: source)
        let mappingURL = directory.appending("books.json")
        try Data(Self.mapping.utf8).write(to: mappingURL)
        let output = directory.appending("v3.sqlite")
        try ProgressiveMigration(
            store: source, model: model, to: "V3", mappings: [try MappingModel(contentsOf: mappingURL)], policies: PublicPolicyTests.policies,
            options: MigrationOptions(chunkSize: 9)
        ).run(output: output)
        let titles = try StoreRows.query(source, "SELECT ZTITLE FROM ZBOOK ORDER BY ZTITLE")
        #expect(titles.count == 40)
        #expect(try StoreRows.query(output, "SELECT ZTITLE FROM ZBOOK ORDER BY ZTITLE") == titles)
        #expect(try StoreRows.query(output, "SELECT COUNT(*) FROM ZCOVER") == [["0"]])
    }

    /// A selector the policy has no method for fails the mapping, naming the selector and the methods it has.
    @Test func anUnknownSelectorIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.models()
        let source = directory.appending("v2.sqlite")
        try StoreGenerator(model: try #require(model.version(named: "V2")?.model), objects: 5, seed: 5).generate(at: source)
        let mappingURL = directory.appending("books.json")
        try Data(Self.mapping.replacingOccurrences(of: "destinationTitleForSourceBookTitle:manager:", with: "titleFor:").utf8).write(to: mappingURL)
        let error = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(
                store: source, model: model, to: "V3", mappings: [try MappingModel(contentsOf: mappingURL)], policies: PublicPolicyTests.policies
            ).run(output: directory.appending("v3.sqlite"))
        }
        #expect("\(error)".contains("'titleFor:'") && "\(error)".contains("destinationTitleForSourceBookTitle:manager:"), "\(error)")
    }
}
