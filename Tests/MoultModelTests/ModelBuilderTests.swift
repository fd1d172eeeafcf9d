import Foundation
import MoultModel
import MoultTestSupport
import Testing

@Suite struct ModelBuilderTests {
    static func people(includeCompany: Bool) throws -> ObjectModel {
        try ObjectModel(versionIdentifier: "4") {
            Entity("Person") {
                Attribute("name", .string).required().range(min: "1")
                Attribute("age", .integer16).required().defaultValue("0").range(min: "0", max: "150").scalar()
                Relationship("address", to: "Address", inverse: "residents")
                Unique("name")
                FetchIndex("byName", "name")
                UserInfo("owner", "people team")
            }
            .abstract()
            .representedClassName("Person")
            Entity("Adult", parent: "Person") {
                if includeCompany {
                    Attribute("companyName", .string)
                }
            }
            Entity("Address") {
                Attribute("street", .string).renamed(from: "line1")
                Relationship("residents", toMany: "Person", inverse: "address").deleteRule(.cascade).ordered()
                FetchedProperty("adults", entity: "Adult", predicate: "address == $FETCH_SOURCE")
            }
            for name in ["Tag", "Label"] {
                Entity(name) { Attribute("title", .string) }
            }
            Configuration("Local", entities: "Person", "Adult", "Address")
            FetchRequest("Adults", entity: "Person", predicate: "age >= 18")
        }
    }

    @Test func buildsWhatItSays() throws {
        let model = try Self.people(includeCompany: true)
        #expect(model.entities.map(\.name) == ["Person", "Adult", "Address", "Tag", "Label"])
        #expect(model.versionIdentifiers == ["4"])
        let person = try #require(model.entity(named: "Person"))
        #expect(person.isAbstract && person.representedClassName == "Person" && person.userInfo == ["owner": "people team"])
        #expect(person.uniquenessConstraints == [["name"]] && person.fetchIndexes.map(\.name) == ["byName"])
        let age = try #require(person.attribute(named: "age"))
        #expect(!age.isOptional && age.defaultValueString == "0" && age.maxValueString == "150" && age.usesScalarValueType)
        let address = try #require(person.relationship(named: "address"))
        #expect(address.isOptional && !address.isToMany && address.maxCount == 1 && address.inverseEntity == "Address")
        let residents = try #require(model.entity(named: "Address")?.relationship(named: "residents"))
        #expect(residents.isToMany && residents.isOrdered && residents.maxCount == 0 && residents.deleteRule == .cascade)
        #expect(model.entity(named: "Address")?.attribute(named: "street")?.renamingIdentifier == "line1")
        #expect(model.attributes(of: "Adult").map(\.name) == ["name", "age", "companyName"])
        #expect(model.configurations == [ConfigurationDescription(name: "Local", entityNames: ["Person", "Adult", "Address"])])
        #expect(model.fetchRequests.map(\.name) == ["Adults"])
        #expect(try Self.people(includeCompany: false).attributes(of: "Adult").map(\.name) == ["name", "age"])
    }

    @Test func builtModelRoundTripsThroughXcodeFormat() throws {
        let model = try Self.people(includeCompany: true)
        let again = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(again == model)
        let versioned = try VersionedModel(
            name: "People",
            versions: [
                .init(name: "People", model: try Self.people(includeCompany: false)), .init(name: "People 2", model: model),
            ], currentVersionName: "People 2")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try versioned.write(to: directory.appending("People.xcdatamodeld"))
        let reread = try VersionedModel(contentsOf: directory.appending("People.xcdatamodeld"))
        #expect(reread == versioned)
    }

    @Test func builderModelsAreChecked() {
        #expect(throws: ModelError.self) {
            try ObjectModel { Entity("A") { Relationship("b", to: "Missing") } }
        }
        #expect(throws: ModelError.self) {
            try ObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a") }
                Entity("B") { Relationship("a", to: "A", inverse: "other") }
            }
        }
        #expect(throws: ModelError.self) {
            try ObjectModel {
                Entity("A", parent: "B")
                Entity("B", parent: "A")
            }
        }
    }
}
