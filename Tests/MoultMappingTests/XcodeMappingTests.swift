import Foundation
import MoultMapping
import MoultTestSupport
import Testing

/// One entity mapping as `Tests/Fixtures/mapping-models.json` records it.
struct RecordedEntityMapping: Decodable {
    struct Property: Decodable {
        var kind: String
        var name: String
        var valueExpression: String?
    }
    var name: String
    var source: String?
    var destination: String?
    var mappingTypeName: String
    var order: Int
    var filterPredicate: String?
    var policyClassName: String?
    var properties: [Property]
}

enum RecordedMappings {
    static let all: [String: [RecordedEntityMapping]] = {
        let data = try! Data(contentsOf: Fixtures.url("mapping-models.json"))
        return try! JSONDecoder().decode([String: [RecordedEntityMapping]].self, from: data)
    }()

    static var files: [String] { all.keys.sorted() }
}

@Suite struct XcodeMappingTests {
    @Test func everyFixtureMappingModelIsRecorded() {
        #expect(RecordedMappings.files.count == 22)
    }

    @Test(arguments: RecordedMappings.files)
    func fixtureMappingModelReadsAsRecorded(_ file: String) throws {
        let url = Fixtures.url(file).deletingLastPathComponent()
        let mapping = try MappingModel(xcmappingModelAt: url)
        let recorded = try #require(RecordedMappings.all[file])
        #expect(mapping.entityMappings.map(\.name) == recorded.map(\.name))
        for expected in recorded {
            let actual = try #require(mapping.entityMapping(named: expected.name), "\(expected.name) missing")
            #expect(actual.sourceEntityName == expected.source, "\(expected.name)")
            #expect(actual.destinationEntityName == expected.destination, "\(expected.name)")
            #expect(actual.mappingType.rawValue == expected.mappingTypeName, "\(expected.name)")
            #expect(actual.order == expected.order, "\(expected.name)")
            #expect(actual.filterPredicate == expected.filterPredicate, "\(expected.name)")
            #expect(actual.entityMigrationPolicyClassName == expected.policyClassName, "\(expected.name)")
            let attributes = expected.properties.filter { $0.kind == "attribute" }
            let relationships = expected.properties.filter { $0.kind == "relationship" }
            #expect(actual.attributeMappings.map(\.name) == attributes.map(\.name), "\(expected.name)")
            #expect(actual.relationshipMappings.map(\.name) == relationships.map(\.name), "\(expected.name)")
            for property in attributes {
                #expect(actual.attributeMapping(named: property.name)?.valueExpression == property.valueExpression, "\(expected.name).\(property.name)")
            }
            for property in relationships {
                #expect(actual.relationshipMapping(named: property.name)?.valueExpression == property.valueExpression, "\(expected.name).\(property.name)")
            }
        }
    }

    @Test func wiboscoValueExpressionIsSourceColor() throws {
        let mapping = try MappingModel(
            xcmappingModelAt: Fixtures.url("wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration1to2.xcmappingmodel"))
        let post = try #require(mapping.entityMapping(named: "PostToPost"))
        #expect(post.attributeMapping(named: "hexColor")?.valueExpression == "$source.color")
        #expect(post.effectiveType == .transform)
        #expect(mapping.sourceModel.name == "CoreDataMigration_Example")
        #expect(mapping.destinationModel.name == "CoreDataMigration_Example 2")
    }

    @Test func undefinedTypesResolveAsCoreDataDoes() throws {
        let mapping = try MappingModel(
            xcmappingModelAt: Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel"))
        #expect(mapping.entityMapping(named: "NoneToMaker")?.effectiveType == .add)
        #expect(mapping.entityMapping(named: "CarToCar")?.effectiveType == .custom)
        #expect(mapping.entityMapping(named: "PersonToPerson")?.effectiveType == .transform)
    }

    @Test func userInfoIsDecoded() throws {
        let mapping = try MappingModel(xcmappingModelAt: Fixtures.url("jdspoone__CoreDataMigrationExample/CoreDataMigration/v1.2-to-v1.3.xcmappingmodel"))
        let infos = mapping.entityMappings.map(\.userInfo).filter { !$0.isEmpty }
        #expect(infos.contains(["sourceVersion": "v1.2"]))
    }

    @Test func missingFileIsNotFound() {
        #expect {
            try MappingModel(xcmappingModelAt: URL(filePath: "/nonexistent/X.xcmappingmodel"))
        } throws: { error in
            (error as? MappingError)?.code == .notFound
        }
    }

    @Test func malformedXMLNamesTheLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("xcmapping.xml")
        try Data("<database>\n\n<object type=\"XDDEVMAPPINGMODEL\">\n</object></database>".utf8).write(to: file)
        #expect {
            try MappingModel(xcmappingModelAt: file)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.code == .malformedXML && error.file == file.path && error.path == "line 3"
        }
    }

    @Test func textThatIsNotXMLIsMalformed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("xcmapping.xml")
        try Data("{ this is not XML <<".utf8).write(to: file)
        #expect {
            try MappingModel(xcmappingModelAt: file)
        } throws: { error in
            (error as? MappingError)?.code == .malformedXML
        }
    }

    @Test func danglingReferenceIsMalformed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("xcmapping.xml")
        try Data("""
            <database><object type="XDDEVMAPPINGMODEL" id="z1">
            <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z9"></relationship>
            </object></database>
            """.utf8).write(to: file)
        #expect {
            try MappingModel(xcmappingModelAt: file)
        } throws: { error in
            (error as? MappingError)?.code == .malformedXML && "\(error)".contains("z9")
        }
    }
}
