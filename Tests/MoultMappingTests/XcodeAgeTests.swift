import Foundation
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

/// Mapping models as Xcode of every age writes them (issue 22, item 5).
@Suite struct XcodeAgeTests {
    static let revised = "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml"
    static let sectionsMapping = "<object type=\"XDDEVRELATIONSHIPMAPPING\" id=\"z102\">\n"
    static let sectionEntityMapping = "<object type=\"XDDEVENTITYMAPPING\" id=\"z109\">\n"

    /// The fixture (Post → Post with `sections`, and an entity mapping making Section) with
    /// attributes added to the `sections` relationship mapping and to the Section entity mapping.
    static func revisedMapping(sections: [String: String], section: [String: String] = [:]) throws -> MappingModel {
        var xml = try String(contentsOf: Fixtures.url(revised), encoding: .utf8)
        func attributes(_ values: [String: String]) -> String {
            values.sorted { $0.key < $1.key }.map { "        <attribute name=\"\($0.key)\" type=\"string\">\($0.value)</attribute>\n" }.joined()
        }
        for (anchor, values) in [(sectionsMapping, sections), (sectionEntityMapping, section)] {
            let range = try #require(xml.range(of: anchor))
            xml.replaceSubrange(range, with: anchor + attributes(values))
        }
        return try MappingModel(xcmappingXML: Data(xml.utf8))
    }

    static func sections(_ mapping: MappingModel) -> String? {
        mapping.entityMappings.first { $0.destinationEntityName == "Post" }?.relationshipMapping(named: "sections")?.valueExpression
    }

    /// Issue 22, item 5a: `sourcekeypath` = `$source` with `autogenerateexpression` and no mapping
    /// name is the source object itself, through the entity mapping that makes the relationship's
    /// destination (Section, in the embedded destination model) from the same source entity.
    @Test func sourceItselfFindsTheEntityMappingThatMakesTheDestination() throws {
        let mapping = try Self.revisedMapping(sections: ["sourcekeypath": "$source"], section: ["sourcename": "Post"])
        #expect(Self.sections(mapping)
            == "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PostToSection\", $source)")
    }

    /// Issue 22, item 5a: with a mapping name recorded, `$source` is the source object, not `$source.$source`.
    @Test func sourceItselfWithAMappingNameIsNotAKeyPathOnItself() throws {
        let mapping = try Self.revisedMapping(sections: ["sourcekeypath": "$source", "sourcemappingname": "PostToSection"], section: ["sourcename": "Post"])
        #expect(Self.sections(mapping)
            == "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PostToSection\", $source)")
        let keyPath = try Self.revisedMapping(sections: ["sourcekeypath": "$source.sections", "sourcemappingname": "SectionToSection"])
        #expect(Self.sections(keyPath)
            == "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"SectionToSection\", $source.sections)")
    }

    /// Issue 22, item 5a: when no entity mapping makes the destination from that source, the file is
    /// refused (65), naming the relationship mapping.
    @Test func sourceItselfWithNoEntityMappingToUseIsRefused() throws {
        #expect {
            _ = try Self.revisedMapping(sections: ["sourcekeypath": "$source"])
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.category.exitCode == 65 && error.description.contains("PostToPost.sections")
                && error.description.contains("no entity mapping makes Section from Post")
        }
    }

    /// Issue 22, item 5c: `\u3c00` (six characters: `<` as a byte-swapped UTF-16 unit) in
    /// `sourcefilterpredicatestring` is decoded, a surrogate pair too; an escaped backslash is not an escape.
    @Test func escapedCharactersInAFilterAreDecoded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let predicate = #"age \u3c00 18 AND score \u3e00= 3 AND tag == "\u3dd8\u00de" AND note != "a\\u3c00""#
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(entityAttributes: ["sourcefilterpredicatestring": predicate]), in: directory)
        let mapping = try MappingModel(xcmappingModelAt: url)
        #expect(mapping.entityMapping(named: "ItemToItem")?.filterPredicate
            == #"age < 18 AND score >= 3 AND tag == "😀" AND note != "a\\u3c00""#)
    }

    /// Issue 22, item 5c: an escape that is not valid UTF-16 (a lone surrogate) is left as written.
    @Test func anEscapeThatIsNotUTF16IsLeftAsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try XcodeMappingFile.write(XcodeMappingFile.xml(entityAttributes: ["sourcefilterpredicatestring": #"name != "\u3dd8""#]), in: directory)
        #expect(try MappingModel(xcmappingModelAt: url).entityMapping(named: "ItemToItem")?.filterPredicate == #"name != "\u3dd8""#)
    }
}
