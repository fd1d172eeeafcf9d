import Foundation
import MoultModel
import MoultTestSupport

/// The models the XML store tests read and write with.
enum XMLTestModels {
    /// Xcode's own model of a mapping model, as the fixtures' `xcmapping.xml` files (Core Data XML stores
    /// written by Xcode) show it: its entities are the ones their metadata hashes name, with the
    /// properties and types the files hold. The property mappings are sub-entities of an abstract
    /// `XDDevPropertyMapping`.
    static func xcodeMappingModel() throws -> ObjectModel {
        try ObjectModel {
            Entity("XDDevMappingModel") {
                Attribute("sourcemodelpath", .string)
                Attribute("destinationmodelpath", .string)
                Attribute("sourcemodeldata", .binary)
                Attribute("destinationmodeldata", .binary)
                Relationship("entitymappings", toMany: "XDDevEntityMapping", inverse: "mappingmodel")
            }
            Entity("XDDevEntityMapping") {
                Attribute("sourcename", .string)
                Attribute("destinationname", .string)
                Attribute("mappingtypename", .string)
                Attribute("mappingnumber", .integer16)
                Attribute("migrationpolicyclassname", .string)
                Attribute("userinfodata", .binary)
                Attribute("autogenerateexpression", .boolean)
                Relationship("mappingmodel", to: "XDDevMappingModel", inverse: "entitymappings")
                Relationship("attributemappings", toMany: "XDDevAttributeMapping", inverse: "entitymapping")
                Relationship("relationshipmappings", toMany: "XDDevRelationshipMapping", inverse: "entitymapping")
            }
            Entity("XDDevPropertyMapping") {
                Attribute("name", .string)
                Attribute("valueexpressiondata", .binary)
                Attribute("autogenerateexpression", .boolean)
            }
            .abstract()
            Entity("XDDevAttributeMapping", parent: "XDDevPropertyMapping") {
                Relationship("entitymapping", to: "XDDevEntityMapping", inverse: "attributemappings")
            }
            Entity("XDDevRelationshipMapping", parent: "XDDevPropertyMapping") {
                Relationship("entitymapping", to: "XDDevEntityMapping", inverse: "relationshipmappings")
            }
        }
    }

    /// The seven fixture mapping models' `xcmapping.xml`.
    static var xcmappingFiles: [URL] {
        let root = Fixtures.url("")
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var files: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent == "xcmapping.xml", !url.path.contains("/regressions/") { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// A model with every attribute type, a sub-entity, to-one, to-many, ordered and many-to-many
    /// relationships, and a to-one into a hierarchy (whose `Z_ENT` the SQLite store records).
    static func everyKindModel() throws -> ObjectModel {
        try ObjectModel {
            Entity("Item") {
                Attribute("small", .integer16)
                Attribute("medium", .integer32)
                Attribute("large", .integer64)
                Attribute("price", .decimal)
                Attribute("ratio", .double)
                Attribute("weight", .float)
                Attribute("title", .string)
                Attribute("done", .boolean)
                Attribute("created", .date)
                Attribute("blob", .binary)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
                Attribute("archived", .transformable)
                Relationship("owner", to: "Person", inverse: "items")
                Relationship("tags", toMany: "Tag", inverse: "items")
            }
            Entity("Person") {
                Attribute("name", .string)
                Relationship("items", toMany: "Item", inverse: "owner").ordered()
                Relationship("pet", to: "Animal", inverse: "keeper")
            }
            Entity("Employee", parent: "Person") {
                Attribute("badge", .integer32)
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("items", toMany: "Item", inverse: "tags")
            }
            Entity("Animal") {
                Attribute("name", .string)
                Relationship("keeper", to: "Person", inverse: "pet")
            }
            Entity("Dog", parent: "Animal") {
                Attribute("breed", .string)
            }
        }
    }
}
