import Foundation
@testable import MoultMapping
import MoultExpressions
import MoultModel
import MoultTestSupport
import Testing

@Suite struct FixtureValidationTests {
    @Test(arguments: RecordedMappings.files)
    func fixtureMappingModelValidatesAgainstItsModels(_ file: String) throws {
        let url = Fixtures.url(file).deletingLastPathComponent()
        let mapping = try MappingModel(xcmappingModelAt: url)
        let sourceURL = try #require(MappingModel.locate(mapping.sourceModel, near: url), "source of \(file)")
        let destinationURL = try #require(MappingModel.locate(mapping.destinationModel, near: url), "destination of \(file)")
        #expect(sourceURL.lastPathComponent == mapping.sourceModel.path?.split(separator: "/").last.map(String.init))
        let source = try ObjectModel(contentsOf: sourceURL)
        let destination = try ObjectModel(contentsOf: destinationURL)
        let issues = mapping.validationIssues(source: source, destination: destination)
        #expect(issues.isEmpty, "\(issues)")
        // The same versions are found in the versioned model by name and by structure.
        let versioned = try VersionedModel(contentsOf: sourceURL.deletingLastPathComponent())
        #expect(mapping.version(.source, in: versioned)?.model == source)
        #expect(mapping.version(.destination, in: versioned)?.model == destination)
    }
}

@Suite struct PeopleMappingTests {
    static let pairs = [("v1", "v2"), ("v2", "v3"), ("v3", "v4"), ("v4", "v5")]

    @Test(arguments: pairs)
    func peopleMappingValidates(_ from: String, _ to: String) throws {
        let model = try VersionedModel(contentsOf: Fixtures.peopleModel)
        let url = Fixtures.datasets.appending(path: "People/Mappings/\(from)-to-\(to).json")
        let mapping = try MappingModel(contentsOf: url)
        #expect(mapping.sourceModel.name == from)
        let source = try #require(mapping.version(.source, in: model)).model
        let destination = try #require(mapping.version(.destination, in: model)).model
        let issues = mapping.validationIssues(source: source, destination: destination)
        #expect(issues.isEmpty, "\(issues)")
        // Reading back what is written gives the same mapping.
        #expect(try MappingModel(json: mapping.jsonData()) == mapping)
    }

    @Test func peopleV2ToV3Contents() throws {
        let mapping = try MappingModel(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json"))
        let address = try #require(mapping.entityMapping(named: "PersonToAddress"))
        #expect(address.filterPredicate == "street != nil OR state != nil")
        #expect(
            mapping.entityMapping(named: "PersonToPerson")?.relationshipMapping(named: "address")?.valueExpression
                == PropertyMapping.destinationInstances(mapping: "PersonToAddress", sourceKeyPath: nil))
    }

    @Test func peopleV1ToV2IsInferable() throws {
        let model = try VersionedModel(contentsOf: Fixtures.peopleModel)
        let inferred = try MappingModel.inferred(from: "v1", to: "v2", in: model)
        let written = try MappingModel(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v1-to-v2.json"))
        #expect(inferred.entityMappings.map(\.attributeMappings) == written.entityMappings.map(\.attributeMappings))
        // v3 → v4 makes Person abstract: not inferable.
        #expect(throws: MappingError.self) { try MappingModel.inferred(from: "v3", to: "v4", in: model) }
    }
}

@Suite struct ValidationErrorTests {
    let source = try! ObjectModel(entities: [
        EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer64)]),
    ])
    let destination = try! ObjectModel(entities: [
        EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer16)]),
    ])

    @Test func everyProblemIsNamedAndCollected() {
        let mapping = MappingModel {
            EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person", filter: "height > 2") {
                PropertyMapping("name", "$source.nmae")
                PropertyMapping("age", "$source.age")
                PropertyMapping("nickname", "$source.name")
                PropertyMapping("name", "FUNCTION($manager, \"x\"")
                Relationship("friends", mapping: "PersonToFriend", sourceKeyPath: "name")
            }
            EntityMapping(name: "GhostToPerson", type: .add, source: "Ghost", destination: "Person") {}
            EntityMapping(name: "PersonToPerson", type: .copy, source: "Person", destination: nil) {}
        }
        let issues = mapping.validationIssues(source: source, destination: destination)
        let found = Set(issues.map { "\($0.reason)|\($0.mapping ?? "")|\($0.property ?? "")" })
        let expected: Set<String> = [
            "bad mapping reference|PersonToPerson|",
            "missing property|PersonToPerson|",
            "missing property|PersonToPerson|name",
            "type mismatch|PersonToPerson|age",
            "missing property|PersonToPerson|nickname",
            "unparsable expression|PersonToPerson|name",
            "missing property|PersonToPerson|friends",
            "bad mapping reference|PersonToPerson|friends",
            "missing entity|GhostToPerson|",
            "inconsistent mapping type|GhostToPerson|",
            "inconsistent mapping type|PersonToPerson|",
        ]
        #expect(found == expected)
        #expect(throws: MappingError.self) { try mapping.validate(source: source, destination: destination) }
    }

    @Test func expressionsAndFiltersAreParsed() {
        let mapping = MappingModel {
            EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person", filter: "age >=") {
                PropertyMapping("name", "$source.name +")
                PropertyMapping("age", "($source.age * 2")
            }
        }
        let issues = mapping.validationIssues(source: source, destination: source).filter { $0.reason == .unparsableExpression }
        #expect(Set(issues.map { $0.property ?? "filter" }) == ["filter", "name", "age"])
        // The parser's message says where: line, column and a caret under the spot.
        let name = issues.first { $0.property == "name" }
        #expect(name?.message.contains("column") == true)
        #expect(name?.message.contains("^") == true)
    }

    @Test func recordedHashMustMatch() throws {
        var mapping = try MappingModel.inferred(from: source, to: source)
        #expect(mapping.validationIssues(source: source, destination: source).isEmpty)
        mapping.entityMappings[0].sourceEntityVersionHash = try destination.versionHash(ofEntity: "Person")
        #expect(mapping.validationIssues(source: source, destination: source).map(\.reason) == [.versionHashMismatch])
    }
}

/// The validator's shortcut for a plain copy (`$source.name`, not parsed again) says what the parser
/// says: no problem for a name that is no reserved word; a reserved word, in any case, is parsed.
@Suite struct PlainCopySyntaxTests {
    @Test func shortcutAgreesWithTheParser() {
        let keys = [
            "name", "b1", "_x", "x_9", "size", "SIZE", "Size", "and", "AND", "or", "not", "in", "IN", "nil", "null", "yes", "no", "true",
            "false", "self", "SELF", "any", "some", "all", "none", "first", "last", "between", "like", "contains", "matches", "beginswith",
            "endswith", "subquery", "function", "cast", "truepredicate", "falsepredicate", "uti", "count", "sum", "min", "max", "average",
        ]
        for key in keys {
            let text = "$source." + key
            let parses = (try? ExpressionNode(parsing: text)) != nil
            #expect((ExpressionScanner.syntaxProblem(in: text) == nil) == parses, "\(text)")
        }
    }
}
