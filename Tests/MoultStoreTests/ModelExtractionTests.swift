import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The model a store carries, written out whole (``ModelCache/extraction(in:)``, `moult model extract`):
/// for every fixture store with a model cache, Photos' included, the extracted model has the store's
/// metadata hashes, reads back equal from its Xcode XML, and creates the store's schema.
@Suite struct ModelExtractionTests {
    static let stores = ModelCacheTests.cached + ["osxphotos__Photos-10.15.1/Photos.sqlite"]

    static func extraction(_ path: String) throws -> (ModelCache.Extraction, StoreMetadata) {
        let database = try Database(url: Fixtures.url(path), mode: .readOnly)
        defer { database.close() }
        let extraction = try #require(try ModelCache.extraction(in: database), "\(path) carries no model")
        return (extraction, try StoreMetadata(reading: database))
    }

    @Test(arguments: stores)
    func hashesXMLAndSchemaAreTheStoresOwn(_ path: String) throws {
        let (extraction, metadata) = try Self.extraction(path)
        let model = extraction.model
        #expect(model.entityVersionHashes() == metadata.entityHashes, "\(path)")
        // The Xcode model: read back, the same model, so the same hashes.
        let again = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(again == model, "\(path)")
        // Only what an entity declares: no sub-entity repeats an inherited property.
        for entity in model.entities where entity.parentName != nil {
            let inherited = Set(model.ancestors(of: entity.name).flatMap { $0.attributes.map(\.name) + $0.relationships.map(\.name) })
            #expect(inherited.isDisjoint(with: entity.attributes.map(\.name) + entity.relationships.map(\.name)), "\(path) \(entity.name)")
        }
        // The decoded model (sub-entities repeating their inherited properties) is the same model.
        let database = try Database(url: Fixtures.url(path), mode: .readOnly)
        defer { database.close() }
        let decoded = try #require(try ModelCache.model(in: database))
        for entity in decoded.entities {
            #expect(
                decoded.attributes(of: entity.name).map(\.name).sorted() == again.attributes(of: entity.name).map(\.name).sorted(),
                "\(path) \(entity.name)")
        }
        guard !path.hasPrefix("osxphotos") else { return }  // Photos' schema: PhotosSchemaTests
        try NormalisedSchema.expectCreated(from: again, toMatch: database, path)
    }

    /// SampleModel2_V2's cache holds what no other fixture does: fetched properties made in code, user
    /// info on one, a default of an app's own class, validation rules set in code, a bounded to-many and
    /// an unbounded one archived as -1, two configurations. What the XML holds is written; the rest is named.
    @Test func sampleModel2IsWrittenWholeOrNamed() throws {
        let (extraction, _) = try Self.extraction("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite")
        let model = extraction.model
        let author = try #require(model.entity(named: "Author"))
        #expect(author.fetchedProperties.map(\.name) == ["favFeedbacks", "feedbacks"])
        #expect(author.fetchedProperties[0].predicateString == "authorAlias == $FETCH_SOURCE.alias AND comment CONTAINS[c] $FETCHED_PROPERTY.userInfo.search")
        #expect(author.fetchedProperties[0].userInfo == ["search": "great"])
        #expect(author.fetchedProperties[1].predicateString == "authorAlias == $FETCH_SOURCE.alias")
        #expect(author.fetchedProperties.allSatisfy { $0.fetchEntity == "Feedback" })
        #expect(model.relationship(named: "pages", of: "Book")?.maxCount == 10_000)
        #expect(model.relationship(named: "books", of: "Author")?.maxCount == Int.max)
        #expect(model.configurations.map(\.name) == ["SampleConfigurationV2Part1", "SampleConfigurationV2Part2"])
        // Renaming identifiers equal to the name are the cache's way of saying none.
        #expect(model.entities.allSatisfy { $0.renamingIdentifier == nil })
        #expect(model.attribute(named: "frontCover", of: "Book")?.renamingIdentifier == "cover")
        // The derived attribute is not read-only in the XML, and its hash does not depend on it.
        #expect(model.attribute(named: "pagesCount", of: "Book").map { $0.isDerived && !$0.isReadOnly } == true)
        #expect(
            extraction.leftOut == [
                "Author.feedbacks: its fetch request's sort descriptors (rating ascending), which the model XML cannot hold",
                "Book.frontCover: its default value, an archived CoreDataPlus_Tests.Cover, has no form in the model XML",
                "Book.title: 2 validation rules set in code, which the model XML cannot hold",
            ])
        // The plain model reads no fetches (a store created from it keeps its cache).
        let database = try Database(url: Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"), mode: .readOnly)
        defer { database.close() }
        #expect(try ModelCache.model(in: database)?.entity(named: "Author")?.fetchedProperties == [])
    }

    /// Photos' cache: user info of every kind Core Data reads (the Z_ENT index's omission, the location
    /// attribute, the triggers' `NSTriggerKey`), expression elements, nothing left out.
    @Test func photosIsWrittenWhole() throws {
        let (extraction, _) = try Self.extraction("osxphotos__Photos-10.15.1/Photos.sqlite")
        let model = extraction.model
        #expect(extraction.leftOut == [])
        #expect(model.attribute(named: "assetVisible", of: "DetectedFace")?.userInfo["NSTriggerKey"]?.hasPrefix("(asset.trashedState == 0)") == true)
        let index = try #require(model.entity(named: "CloudFeedEntry")?.fetchIndexes.first { $0.name == "compoundIndex1" })
        #expect(index.elements.first == .init(property: "", expression: "entity", expressionType: "Undefined"))
        #expect(model.entity(named: "Asset")?.attributes.contains { $0.name == "boundedByRect" } == false)
        #expect(model.entity(named: "Asset")?.fetchIndexes == [])
    }

    /// A store without a model cache has no extraction; one whose cache is damaged is bad input naming it.
    @Test func noCacheAndDamagedCache() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ObjectModel { Entity("Item") { Attribute("name", .string) } }
        let created = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        try created.database.execute("DELETE FROM Z_MODELCACHE")
        #expect(try ModelCache.extraction(in: created.database) == nil)
        try created.database.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (x'0102030405')")
        #expect(throws: StoreError.self) { try ModelCache.extraction(in: created.database) }
        created.database.close()
    }

    /// Parts no fixture cache has, in an archive of our own shaped as Core Data's: fetch request
    /// templates (one printable, one with a function the printer does not take), a fetched property whose
    /// predicate cannot be printed (left out whole, named), a location attribute's components as an array.
    @Test func partsNoFixtureHas() throws {
        var writer = KeyedArchiveWriter()
        let root = writer.reserve(), entity = writer.reserve()
        let self_ = writer.add(className: "NSSelfExpression", fields: ["NSExpressionType": .integer(1)])
        func keyPath(_ path: String) -> PropertyListValue {
            let specifier = writer.add(className: "NSKeyPathSpecifierExpression", fields: ["NSKeyPath": writer.string(path), "NSExpressionType": .integer(10)])
            return .uid(writer.add(className: "NSKeyPathExpression", fields: [
                "NSOperand": .uid(self_), "NSSelectorName": writer.string("valueForKey:"), "NSArguments": writer.array([.uid(specifier)]),
            ]))
        }
        func comparison(_ left: PropertyListValue, _ type: Int64, _ right: PropertyListValue) -> PropertyListValue {
            let op = writer.add(className: "NSComparisonPredicateOperator", fields: ["NSOperatorType": .integer(type), "NSModifier": .integer(0), "NSOptions": .integer(0)])
            return .uid(writer.add(className: "NSComparisonPredicate", fields: ["NSLeftExpression": left, "NSPredicateOperator": .uid(op), "NSRightExpression": right]))
        }
        let five = PropertyListValue.uid(writer.add(className: "NSConstantValueExpression", fields: ["NSConstantValue": .uid(writer.add(.integer(5)))]))
        let function = PropertyListValue.uid(writer.add(className: "NSFunctionExpression", fields: ["NSSelectorName": writer.string("now")]))
        func request(_ predicate: PropertyListValue, limit: Int64 = 0) -> PropertyListValue {
            .uid(writer.add(className: "NSFetchRequest", fields: ["NSEntity": .uid(entity), "NSPredicate": predicate, "NSFetchLimit": .integer(limit)]))
        }
        let location = writer.dictionary([(writer.string("_NSLocationAttributeDerivedComponents"), writer.array([writer.string("x"), writer.string("y")]))])
        func attribute(_ name: String, _ type: Int64, transient: Bool = false, userInfo: PropertyListValue = KeyedArchiveWriter.null) -> PropertyListValue {
            .uid(writer.add(className: "NSAttributeDescription", classes: ["NSAttributeDescription", "NSPropertyDescription", "NSObject"], fields: [
                "NSPropertyName": writer.string(name), "NSAttributeType": .integer(type), "NSIsOptional": .bool(true), "NSIsTransient": .bool(transient),
                "NSUserInfo": userInfo, "NSEntity": .uid(entity),
            ]))
        }
        let fetched = writer.add(className: "NSFetchedPropertyDescription", classes: ["NSFetchedPropertyDescription", "NSPropertyDescription", "NSObject"], fields: [
            "NSPropertyName": writer.string("recent"), "NSFetchRequest": request(comparison(keyPath("x"), 2, function)), "NSEntity": .uid(entity),
        ])
        let properties = writer.dictionary([
            (writer.string("x"), attribute("x", 500)), (writer.string("y"), attribute("y", 500)),
            (writer.string("place"), attribute("place", 0, transient: true, userInfo: location)), (writer.string("recent"), .uid(fetched)),
        ])
        writer.set(entity, className: "NSEntityDescription", fields: ["NSEntityName": writer.string("Spot"), "NSProperties": properties])
        let templates = writer.dictionary([
            (writer.string("Far"), request(comparison(keyPath("x"), 3, five), limit: 10)), (writer.string("Now"), request(comparison(keyPath("x"), 0, function))),
        ])
        writer.set(root, className: "NSManagedObjectModel", fields: [
            "NSEntities": writer.dictionary([(writer.string("Spot"), .uid(entity))]), "NSFetchRequestTemplates": templates,
        ])
        let extraction = try ModelCache.extraction(compressed: ModelCache.compressed(writer.archive(root: root)))
        #expect(extraction.model.fetchRequests == [FetchRequestTemplate(name: "Far", entity: "Spot", predicateString: "x >= 5")])
        #expect(extraction.model.entity(named: "Spot")?.fetchedProperties == [])
        #expect(extraction.model.attribute(named: "place", of: "Spot")?.userInfo == ["_NSLocationAttributeDerivedComponents": "x,y"])
        #expect(
            extraction.leftOut == [
                "Spot.recent: the fetched property, whose predicate is in a form Moult does not print",
                "model: the fetch request template 'Far': its limit (10), which the model XML cannot hold",
                "model: the fetch request template 'Now', whose entity or predicate Moult cannot read",
            ])
        // The plain model has no fetches; both lay out the location attribute's R-tree.
        let plain = try ModelCache.model(compressed: ModelCache.compressed(writer.archive(root: root)))
        #expect(plain.fetchRequests == [])
        #expect(try StoreLayout(model: plain).rTrees.map(\.name) == ["Z_RT_Spot_place"])
        let again = try ObjectModel(xcodeContents: Data(extraction.model.xcodeContents().utf8))
        #expect(again == extraction.model)
        #expect(try StoreLayout(model: again).rTrees.map(\.name) == ["Z_RT_Spot_place"])
    }
}
