import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// Names Xcode refuses are refused when a model is created; a sub-entity re-declaring an inherited
/// relationship is the inherited one when equal, refused when different.
@Suite struct ModelNameTests {
    static func model(entity: String = "Item", attribute: String = "title", relationship: String = "owner") throws(ModelError) -> ObjectModel {
        try ObjectModel {
            Entity(entity) {
                Attribute(attribute, .string)
                Relationship(relationship, to: "Owner", inverse: "items")
            }
            Entity("Owner") { Relationship("items", toMany: entity, inverse: relationship) }
        }
    }

    @Test(arguments: ["Item", "Item2", "Big_Item", "\u{C9}tude", "X"])
    func entityNamesXcodeAccepts(_ name: String) throws {
        #expect(try Self.model(entity: name).entity(named: name) != nil)
    }

    @Test(arguments: [
        ("", "the name is empty"), ("item", "uppercase"), ("2Item", "uppercase"), ("_Item", "uppercase"),
        ("It em", "' '"), ("It.em", "'.'"), ("It\"em", "'\"'"), ("It-em", "'-'"), ("It\u{0}em", "U+0"),
    ])
    func entityNamesXcodeRefuses(_ name: String, _ why: String) {
        #expect {
            _ = try Self.model(entity: name)
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.code == .invalidName && error.entity == name && error.message.contains("entity name '\(name)'")
                && error.message.contains(why) && error.category == .badInput
        }
    }

    @Test(arguments: [("Title", "lowercase"), ("1title", "lowercase"), ("ti tle", "' '"), ("ti'tle", "'''"), ("ti.tle", "'.'"), ("", "empty")])
    func propertyNamesXcodeRefuses(_ name: String, _ why: String) {
        for (attribute, relationship) in [(name, "owner"), ("title", name)] {
            #expect {
                _ = try Self.model(attribute: attribute, relationship: relationship)
            } throws: { error in
                guard let error = error as? ModelError else { return false }
                return error.code == .invalidName && error.entity == "Item" && error.property == name && error.message.contains(why)
            }
        }
    }

    @Test func anXcodeFileWithABadNameIsLocated() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Good">
                    <attribute name="fine" attributeType="String"/>
                    <attribute name="not fine" attributeType="String"/>
                </entity>
            </model>
            """
        #expect {
            _ = try ObjectModel(xcodeContents: Data(xml.utf8), path: "M.xcdatamodel/contents")
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.description.hasPrefix("M.xcdatamodel/contents:5: invalid name: attribute name 'Good.not fine'")
        }
    }

    // MARK: - Re-declared relationships

    static func hierarchy(redeclared: RelationshipDescription?) throws(ModelError) -> ObjectModel {
        let tags = RelationshipDescription(name: "tags", destination: "Tag", inverse: "owners", isToMany: true)
        var sub = EntityDescription(name: "Sub", parent: "Base")
        if let redeclared { sub.relationships = [redeclared] }
        return try ObjectModel(entities: [
            EntityDescription(name: "Base", relationships: [tags]),
            sub,
            EntityDescription(name: "Tag", relationships: [RelationshipDescription(name: "owners", destination: "Base", inverse: "tags", isToMany: true)]),
        ])
    }

    @Test func anEqualRedeclarationIsTheInheritedRelationship() throws {
        let tags = try #require(try Self.hierarchy(redeclared: nil).entity(named: "Base")?.relationship(named: "tags"))
        let model = try Self.hierarchy(redeclared: tags)
        #expect(model.relationships(of: "Sub").map(\.name) == ["tags"])
    }

    @Test func aDifferentRedeclarationIsRefusedNamingBoth() {
        var different = RelationshipDescription(name: "tags", destination: "Tag", inverse: "owners", isToMany: true)
        different.isOrdered = true
        #expect {
            _ = try Self.hierarchy(redeclared: different)
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.code == .conflictingProperty && error.message.contains("'Sub.tags'") && error.message.contains("'Base.tags'")
                && error.category == .badInput
        }
    }

    @Test func anAttributeRedeclaredDifferentlyOrTwiceIsRefused() throws {
        let title = AttributeDescription(name: "title", type: .string)
        let same = try ObjectModel(entities: [
            EntityDescription(name: "Base", attributes: [title]), EntityDescription(name: "Sub", parent: "Base", attributes: [title]),
        ])
        #expect(same.attributes(of: "Sub") == [title])
        var number = title
        number.attributeType = .integer64
        for entities in [
            [EntityDescription(name: "Base", attributes: [title]), EntityDescription(name: "Sub", parent: "Base", attributes: [number])],
            [EntityDescription(name: "Base", attributes: [title]), EntityDescription(name: "Sub", parent: "Base", relationships: [
                RelationshipDescription(name: "title", destination: "Base")
            ])],
        ] {
            #expect {
                _ = try ObjectModel(entities: entities)
            } throws: { error in
                guard let error = error as? ModelError else { return false }
                return error.code == .conflictingProperty && error.message.contains("'Sub.title' re-declares 'Base.title'")
            }
        }
        #expect {
            _ = try ObjectModel(entities: [EntityDescription(name: "A", attributes: [title, title])])
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.code == .conflictingProperty && error.message.contains("two properties named 'title'") && error.property == "title"
        }
    }

    // MARK: - Inheritance depth

    static func chain(_ count: Int) throws(ModelError) -> ObjectModel {
        try ObjectModel(entities: (0..<count).map { index in
            EntityDescription(
                name: "E\(index)", parent: index == 0 ? nil : "E\(index - 1)", attributes: [AttributeDescription(name: "a\(index)", type: .string)])
        })
    }

    @Test func inheritanceChainsHaveALimit() throws {
        // Found by probing: a 500-entity chain took minutes to hash (each entity re-hashed its ancestors).
        let deepest = try Self.chain(ObjectModel.maximumInheritanceDepth)
        let results = deepest.versionHashResults()
        #expect(results.count == ObjectModel.maximumInheritanceDepth)
        let last = "E\(ObjectModel.maximumInheritanceDepth - 1)"
        #expect(try results[last]?.get() == deepest.versionHash(ofEntity: last))
        #expect {
            _ = try Self.chain(ObjectModel.maximumInheritanceDepth + 1)
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.code == .limitExceeded && error.category == .badInput && error.entity == "E100"
                && error.message.contains("more than 100 entities")
        }
    }
}
