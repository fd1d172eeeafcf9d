import Foundation
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

private func model(_ entities: EntityDescription...) throws -> ObjectModel {
    try ObjectModel(entities: entities)
}

private func person(_ attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [], name: String = "Person", renamingIdentifier: String? = nil, parent: String? = nil, isAbstract: Bool = false) -> EntityDescription {
    EntityDescription(name: name, parent: parent, isAbstract: isAbstract, renamingIdentifier: renamingIdentifier, attributes: attributes, relationships: relationships)
}

private func reasons(_ body: () throws -> MappingModel) -> [MappingIssue.Reason] {
    do {
        _ = try body()
        return []
    } catch let error as MappingError {
        #expect(error.code == .notInferable)
        #expect(error.category == .incompatible)
        return error.issues.map(\.reason)
    } catch {
        Issue.record("unexpected \(error)")
        return []
    }
}

private func issues(_ body: () throws -> MappingModel) -> [MappingIssue] {
    do {
        _ = try body()
        return []
    } catch let error as MappingError {
        return error.issues
    } catch {
        return []
    }
}

@Suite struct InferenceRuleTests {
    let name = AttributeDescription(name: "name", type: .string)

    @Test func identicalModelsCopy() throws {
        let v1 = try model(person([name]))
        let mapping = try MappingModel.inferred(from: v1, to: v1)
        let entity = try #require(mapping.entityMapping(named: "PersonToPerson"))
        #expect(entity.mappingType == .copy)
        #expect(entity.attributeMapping(named: "name")?.valueExpression == "$source.name")
        #expect(entity.sourceEntityVersionHash == entity.destinationEntityVersionHash)
        #expect(entity.sourceEntityVersionHash != nil)
    }

    @Test func optionalAttributeAdded() throws {
        let v1 = try model(person([name]))
        let v2 = try model(person([name, AttributeDescription(name: "street", type: .string, isOptional: true)]))
        let entity = try #require(try MappingModel.inferred(from: v1, to: v2).entityMapping(named: "PersonToPerson"))
        #expect(entity.mappingType == .transform)
        #expect(entity.attributeMapping(named: "street") == PropertyMapping("street"))
    }

    @Test func requiredAttributeAddedNeedsADefault() throws {
        let v1 = try model(person([name]))
        let withDefault = try model(person([name, AttributeDescription(name: "age", type: .integer16, defaultValueString: "0")]))
        #expect(try MappingModel.inferred(from: v1, to: withDefault).entityMappings.count == 1)
        let without = try model(person([name, AttributeDescription(name: "age", type: .integer16)]))
        let found = issues { try MappingModel.inferred(from: v1, to: without) }
        #expect(found.map(\.reason) == [.requiredWithoutDefault])
        #expect(found.first?.entity == "Person")
        #expect(found.first?.property == "age")
    }

    @Test func attributeRemoved() throws {
        let v1 = try model(person([name, AttributeDescription(name: "nickname", type: .string, isOptional: true)]))
        let v2 = try model(person([name]))
        let entity = try #require(try MappingModel.inferred(from: v1, to: v2).entityMapping(named: "PersonToPerson"))
        #expect(entity.attributeMappings.map(\.name) == ["name"])
    }

    @Test func requiredBecomesOptional() throws {
        let v1 = try model(person([name]))
        let v2 = try model(person([AttributeDescription(name: "name", type: .string, isOptional: true)]))
        #expect(try MappingModel.inferred(from: v1, to: v2).entityMappings[0].attributeMapping(named: "name")?.valueExpression == "$source.name")
        // The other way is inferred as Core Data does (`$source.name`), with a warning: the objects
        // whose name is nil fail validation.
        let back = try MappingModel.inference(from: v2, to: v1)
        #expect(back.mapping.entityMappings[0].attributeMapping(named: "name")?.valueExpression == "$source.name")
        #expect(back.warnings.map(\.reason) == [.requiredWithoutDefault])
        #expect(back.warnings.first?.property == "name")
    }

    @Test func optionalBecomesRequiredWithDefault() throws {
        let v1 = try model(person([AttributeDescription(name: "name", type: .string, isOptional: true)]))
        let v2 = try model(person([AttributeDescription(name: "name", type: .string, defaultValueString: "anonymous")]))
        #expect(try MappingModel.inferred(from: v1, to: v2).entityMappings[0].attributeMapping(named: "name")?.valueExpression == "$source.name")
    }

    @Test func attributeRenamedThroughRenamingIdentifier() throws {
        let v1 = try model(person([AttributeDescription(name: "color", type: .string)]))
        let v2 = try model(person([AttributeDescription(name: "paintColor", type: .string, renamingIdentifier: "color")]))
        #expect(try MappingModel.inferred(from: v1, to: v2).entityMappings[0].attributeMapping(named: "paintColor")?.valueExpression == "$source.color")
        // Without the identifier, a required attribute appears from nowhere.
        let unlinked = try model(person([AttributeDescription(name: "paintColor", type: .string)]))
        #expect(reasons { try MappingModel.inferred(from: v1, to: unlinked) } == [.requiredWithoutDefault])
    }

    @Test func entityRenamedThroughRenamingIdentifier() throws {
        let v1 = try model(person([AttributeDescription(name: "color", type: .string)], name: "Car"))
        let v2 = try model(person([AttributeDescription(name: "color", type: .string)], name: "Automobile", renamingIdentifier: "Car"))
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(mapping.entityMappings.map(\.name) == ["CarToAutomobile"])
        #expect(mapping.entityMappings[0].mappingType == .transform)
        // Without it: Car removed, Automobile added.
        let unlinked = try model(person([AttributeDescription(name: "color", type: .string)], name: "Automobile"))
        let plain = try MappingModel.inferred(from: v1, to: unlinked)
        #expect(plain.entityMappings.map(\.effectiveType) == [.add, .remove])
    }

    @Test func renamesChainAcrossVersions() throws {
        // Stable identifiers: v3 still names the first name.
        let v1 = try model(person([AttributeDescription(name: "color", type: .string)], name: "Car"))
        let v2 = try model(person([AttributeDescription(name: "paintColor", type: .string, renamingIdentifier: "color")], name: "Automobile", renamingIdentifier: "Car"))
        let v3 = try model(person([AttributeDescription(name: "finish", type: .string, renamingIdentifier: "paintColor")], name: "Vehicle", renamingIdentifier: "Automobile"))
        // v3's identifiers name v2's names: without v2, Car looks removed and Vehicle added.
        let direct = try MappingModel.inferred(from: v1, to: v3)
        #expect(direct.entityMappings.map(\.name) == ["NoneToVehicle", "CarToNone"])
        let mapping = try MappingModel.inferred(from: v1, to: v3, through: [v2])
        #expect(mapping.entityMappings.map(\.name) == ["CarToVehicle"])
        #expect(mapping.entityMappings[0].attributeMapping(named: "finish")?.valueExpression == "$source.color")
        #expect(try MappingModel.inferred(from: v2, to: v3).entityMappings[0].attributeMapping(named: "finish")?.valueExpression == "$source.paintColor")
    }

    @Test func stableRenamingIdentifiersMatchDirectly() throws {
        let v1 = try model(person([AttributeDescription(name: "color", type: .string, renamingIdentifier: "colour")], name: "Car", renamingIdentifier: "car"))
        let v3 = try model(person([AttributeDescription(name: "finish", type: .string, renamingIdentifier: "colour")], name: "Vehicle", renamingIdentifier: "car"))
        let mapping = try MappingModel.inferred(from: v1, to: v3)
        #expect(mapping.entityMappings[0].attributeMapping(named: "finish")?.valueExpression == "$source.color")
    }

    @Test func losslessTypeChangesOnly() throws {
        let v1 = try model(person([AttributeDescription(name: "count", type: .integer16)]))
        let wider = try model(person([AttributeDescription(name: "count", type: .integer64)]))
        #expect(try MappingModel.inferred(from: v1, to: wider).entityMappings[0].attributeMapping(named: "count")?.valueExpression == "$source.count")
        let found = issues { try MappingModel.inferred(from: wider, to: v1) }
        #expect(found.map(\.reason) == [.lossyTypeChange])
        #expect(found.first?.property == "count")
        let text = try model(person([AttributeDescription(name: "count", type: .string)]))
        #expect(reasons { try MappingModel.inferred(from: v1, to: text) } == [.lossyTypeChange])
        #expect(AttributeConversion.isLossless(from: .float, to: .double))
        #expect(!AttributeConversion.isLossless(from: .double, to: .float))
        #expect(!AttributeConversion.isLossless(from: .integer64, to: .double))
    }

    // MARK: Relationships

    private func people(toMany: Bool = false, ordered: Bool = false, relationshipName: String = "friends", renamingIdentifier: String? = nil, optional: Bool = true) throws -> ObjectModel {
        let inverseName = "friendOf"
        return try model(
            person([name], relationships: [
                RelationshipDescription(name: relationshipName, destination: "Person", inverse: inverseName, isToMany: toMany, isOrdered: ordered, isOptional: optional, renamingIdentifier: renamingIdentifier),
                RelationshipDescription(name: inverseName, destination: "Person", inverse: relationshipName, isToMany: true),
            ]))
    }

    @Test func relationshipAddedAndRemoved() throws {
        let v1 = try model(person([name]))
        let v2 = try people()
        let added = try MappingModel.inferred(from: v1, to: v2).entityMappings[0]
        #expect(added.relationshipMapping(named: "friends") == PropertyMapping("friends"))
        let removed = try MappingModel.inferred(from: v2, to: v1).entityMappings[0]
        #expect(removed.relationshipMappings.isEmpty)
        // A required new relationship cannot be filled.
        let required = try model(
            person([name], relationships: [RelationshipDescription(name: "friends", destination: "Person", inverse: "friendOf", isOptional: false),
                RelationshipDescription(name: "friendOf", destination: "Person", inverse: "friends", isToMany: true)]))
        let found = issues { try MappingModel.inferred(from: v1, to: required) }
        #expect(found.map(\.reason) == [.requiredRelationshipAdded])
        #expect(found.first?.property == "friends")
    }

    /// `fidelity/required-to-many-empty`: a new non-optional to-many without a minimum count is
    /// inferred (existing objects get an empty set, which Core Data accepts); one with `minCount` is not.
    @Test func newNonOptionalToManyWithoutMinimumIsInferred() throws {
        let v1 = try model(person([name]))
        func withTags(minCount: Int) throws -> ObjectModel {
            try model(
                person([name], relationships: [
                    RelationshipDescription(name: "tags", destination: "Person", inverse: "taggedBy", isToMany: true, isOptional: false, minCount: minCount),
                    RelationshipDescription(name: "taggedBy", destination: "Person", inverse: "tags"),
                ]))
        }
        let added = try MappingModel.inference(from: v1, to: withTags(minCount: 0))
        #expect(added.mapping.entityMappings[0].relationshipMapping(named: "tags") == PropertyMapping("tags"))
        #expect(added.warnings.isEmpty)
        let found = issues { try MappingModel.inferred(from: v1, to: withTags(minCount: 2)) }
        #expect(found.map(\.reason) == [.requiredRelationshipAdded])
        #expect(found.first?.property == "tags")
    }

    /// `fidelity/integer64-to-double`: integers to Double or Float are inferred as Core Data infers
    /// them, with a warning naming the attribute where integers beyond 2^53 (2^24 for Float) round;
    /// none where every value is exact.
    @Test(arguments: [
        (AttributeType.integer64, AttributeType.double, "2^53" as String?), (.integer32, .float, "2^24"), (.integer64, .float, "2^24"),
        (.integer32, .double, nil), (.integer16, .float, nil),
    ])
    func integersToFloatingPointAreInferred(from: AttributeType, to: AttributeType, bound: String?) throws {
        let v1 = try model(person([AttributeDescription(name: "amount", type: from)]))
        let v2 = try model(person([AttributeDescription(name: "amount", type: to)]))
        let inferred = try MappingModel.inference(from: v1, to: v2)
        #expect(inferred.mapping.entityMappings[0].attributeMapping(named: "amount")?.valueExpression == "$source.amount")
        #expect(AttributeConversion.isInferable(from: from, to: to))
        if let bound {
            #expect(inferred.warnings.map(\.reason) == [.roundingTypeChange])
            #expect(inferred.warnings.first?.property == "amount")
            #expect(inferred.warnings.first?.message.contains("Person.amount") == true)
            #expect(inferred.warnings.first?.message.contains(bound) == true, "\(inferred.warnings)")
        } else {
            #expect(inferred.warnings.isEmpty, "\(inferred.warnings)")
        }
        // The way back still loses values: refused.
        #expect(reasons { try MappingModel.inferred(from: v2, to: v1) } == [.lossyTypeChange])
    }

    /// Older Xcode writes `optional="YES" minCount="1"` on optional to-one relationships; Core Data
    /// treats them as optional, so adding one is inferable (a to-many with a minimum is still required).
    @Test func optionalToOneWithMinimumCountOneIsOptional() throws {
        let v1 = try model(person([name]))
        let v2 = try model(
            person([name], relationships: [RelationshipDescription(name: "best", destination: "Person", isOptional: true, minCount: 1, maxCount: 1)]))
        let added = try MappingModel.inferred(from: v1, to: v2).entityMappings[0]
        #expect(added.relationshipMapping(named: "best") == PropertyMapping("best"))
        let toMany = try model(
            person([name], relationships: [RelationshipDescription(name: "best", destination: "Person", isToMany: true, isOptional: true, minCount: 1)]))
        #expect(reasons { try MappingModel.inferred(from: v1, to: toMany) } == [.requiredRelationshipAdded])
        // The same read from Xcode's XML.
        let versioned = try VersionedModel(contentsOf: Fixtures.packageRoot.appending(path: "Tests/ChainModels/Required.xcdatamodeld"))
        let inferred = try MappingModel.inference(from: "v1", to: "v2", in: versioned)
        #expect(inferred.mapping.entityMappings[0].relationshipMapping(named: "best") == PropertyMapping("best"))
        // `name` becomes required with no default value: inferred, with a warning.
        #expect(inferred.mapping.entityMappings[0].attributeMapping(named: "name")?.valueExpression == "$source.name")
        #expect(inferred.warnings.map(\.property) == ["name"])
    }

    /// v1 and v3 have `nickname`, v2 does not: inferred across the three, the values are kept.
    @Test func anAttributeRemovedAndAddedBackCorresponds() throws {
        let versioned = try VersionedModel(contentsOf: Fixtures.packageRoot.appending(path: "Tests/ChainModels/Returning.xcdatamodeld"))
        let mapping = try MappingModel.inferred(from: "v1", to: "v3", in: versioned)
        #expect(mapping.entityMappings[0].attributeMapping(named: "nickname")?.valueExpression == "$source.nickname")
        #expect(mapping.entityMappings[0].attributeMapping(named: "email")?.valueExpression == nil)
    }

    @Test func relationshipRenamed() throws {
        let v1 = try people()
        let v2 = try model(
            person([name], relationships: [
                RelationshipDescription(name: "pals", destination: "Person", inverse: "friendOf", renamingIdentifier: "friends"),
                RelationshipDescription(name: "friendOf", destination: "Person", inverse: "pals", isToMany: true),
            ]))
        let entity = try MappingModel.inferred(from: v1, to: v2).entityMappings[0]
        #expect(
            entity.relationshipMapping(named: "pals")?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.friends)"#)
    }

    @Test func toOneAndToManyAndOrderedChange() throws {
        let toOne = try people(toMany: false)
        let toMany = try people(toMany: true)
        let ordered = try people(toMany: true, ordered: true)
        for (from, to) in [(toOne, toMany), (toMany, toOne), (toMany, ordered), (ordered, toMany)] {
            let entity = try MappingModel.inferred(from: from, to: to).entityMappings[0]
            #expect(entity.relationshipMapping(named: "friends")?.valueExpression?.contains("$source.friends") == true)
        }
    }

    @Test func relationshipPointingElsewhereFails() throws {
        let v1 = try model(
            person([name], relationships: [RelationshipDescription(name: "pet", destination: "Dog")]),
            EntityDescription(name: "Dog"), EntityDescription(name: "Cat"))
        let v2 = try model(
            person([name], relationships: [RelationshipDescription(name: "pet", destination: "Cat")]),
            EntityDescription(name: "Dog"), EntityDescription(name: "Cat"))
        let found = issues { try MappingModel.inferred(from: v1, to: v2) }
        #expect(found.map(\.reason) == [.destinationEntityChanged])
        #expect(found.first?.property == "pet")
        // Pointing to a new parent of the old destination is fine.
        let v3 = try model(
            person([name], relationships: [RelationshipDescription(name: "pet", destination: "Animal")]),
            EntityDescription(name: "Animal"), EntityDescription(name: "Dog", parent: "Animal"))
        #expect(try MappingModel.inferred(from: v1, to: v3).entityMapping(named: "PersonToPerson") != nil)
    }

    @Test func attributeBecomingRelationshipFails() throws {
        let v1 = try model(person([name, AttributeDescription(name: "pet", type: .string, isOptional: true)]), EntityDescription(name: "Dog"))
        let v2 = try model(person([name], relationships: [RelationshipDescription(name: "pet", destination: "Dog")]), EntityDescription(name: "Dog"))
        #expect(reasons { try MappingModel.inferred(from: v1, to: v2) } == [.propertyKindChanged])
        #expect(reasons { try MappingModel.inferred(from: v2, to: v1) } == [.propertyKindChanged])
    }

    // MARK: Entities and hierarchies

    @Test func entitiesAddedAndRemoved() throws {
        let v1 = try model(person([name]))
        let v2 = try model(person([name]), EntityDescription(name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)]))
        let added = try MappingModel.inferred(from: v1, to: v2)
        #expect(added.entityMapping(named: "NoneToPet")?.mappingType == .add)
        let removed = try MappingModel.inferred(from: v2, to: v1)
        #expect(removed.entityMapping(named: "PetToNone")?.mappingType == .remove)
    }

    @Test func newParentAndPropertyMovedUp() throws {
        let v1 = try model(person([name]))
        let v2 = try model(
            EntityDescription(name: "Being", attributes: [AttributeDescription(name: "name", type: .string)]),
            person([], parent: "Being"))
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(mapping.entityMapping(named: "PersonToPerson")?.attributeMapping(named: "name")?.valueExpression == "$source.name")
        #expect(mapping.entityMapping(named: "NoneToBeing")?.mappingType == .add)
    }

    @Test func newChildAndPropertyMovedDown() throws {
        let v1 = try model(EntityDescription(name: "Being", attributes: [name]), person([], parent: "Being"))
        let v2 = try model(
            EntityDescription(name: "Being"), person([name], parent: "Being"),
            EntityDescription(name: "Robot", parent: "Being"))
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(mapping.entityMapping(named: "PersonToPerson")?.attributeMapping(named: "name")?.valueExpression == "$source.name")
        #expect(mapping.entityMapping(named: "NoneToRobot")?.mappingType == .add)
    }

    @Test func hierarchiesAreNeverMerged() throws {
        let v1 = try model(person([name]), EntityDescription(name: "Robot", attributes: [name]))
        let v2 = try model(EntityDescription(name: "Being", attributes: [name]), person([], parent: "Being"), EntityDescription(name: "Robot", parent: "Being"))
        let found = issues { try MappingModel.inferred(from: v1, to: v2) }
        #expect(found.map(\.reason) == [.hierarchiesMerged])
        #expect(found.first?.entity == "Being")
    }

    @Test func entityBecomingAbstractFails() throws {
        let v1 = try model(person([name]))
        let v2 = try model(person([name], isAbstract: true), EntityDescription(name: "Adult", parent: "Person"))
        #expect(reasons { try MappingModel.inferred(from: v1, to: v2) } == [.becameAbstract])
    }

    @Test func twoEntitiesClaimingOneSourceAreAmbiguous() throws {
        let v1 = try model(person([name]))
        let v2 = try model(person([name], name: "A", renamingIdentifier: "Person"), person([name], name: "B", renamingIdentifier: "Person"))
        #expect(reasons { try MappingModel.inferred(from: v1, to: v2) }.contains(.ambiguousRename))
    }

    /// Issue 22, item 8: two source properties whose renaming identifiers resolve to one destination
    /// property (one named as the identifier, one carrying it) are refused, naming both.
    @Test func twoSourcePropertiesResolvingToOneDestinationAreRefused() throws {
        let v1 = try model(person([
            AttributeDescription(name: "title", type: .string), AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title"),
        ]))
        let v2 = try model(person([AttributeDescription(name: "caption", type: .string, renamingIdentifier: "title")]))
        let found = issues { try MappingModel.inferred(from: v1, to: v2) }
        let ambiguity = try #require(found.first { $0.reason == .ambiguousRename })
        #expect(ambiguity.message.contains("Person.heading and Person.title") && ambiguity.message.contains("Person.caption"))
    }

    /// Issue 22, item 8: the same for two source entities carrying one renaming identifier.
    @Test func twoSourceEntitiesResolvingToOneDestinationAreRefused() throws {
        let v1 = try model(person([name], name: "A", renamingIdentifier: "Human"), person([name], name: "B", renamingIdentifier: "Human"))
        let v2 = try model(person([name], name: "Person", renamingIdentifier: "Human"))
        let found = issues { try MappingModel.inferred(from: v1, to: v2) }
        let ambiguity = try #require(found.first { $0.reason == .ambiguousRename })
        #expect(ambiguity.message.contains("A and B") && ambiguity.message.contains("Person"))
    }

    @Test func transientBecomingStoredNeedsADefault() throws {
        let v1 = try model(person([name, AttributeDescription(name: "cache", type: .string, isTransient: true)]))
        let v2 = try model(person([name, AttributeDescription(name: "cache", type: .string)]))
        #expect(reasons { try MappingModel.inferred(from: v1, to: v2) } == [.transientBecamePersistent])
        let withDefault = try model(person([name, AttributeDescription(name: "cache", type: .string, defaultValueString: "")]))
        #expect(try MappingModel.inferred(from: v1, to: withDefault).entityMappings[0].attributeMapping(named: "cache")?.valueExpression == nil)
    }

    @Test func everyProblemIsReportedNotJustTheFirst() throws {
        let v1 = try model(person([name, AttributeDescription(name: "count", type: .integer64)]))
        let v2 = try model(person([name, AttributeDescription(name: "count", type: .integer16), AttributeDescription(name: "age", type: .integer16)]))
        #expect(Set(reasons { try MappingModel.inferred(from: v1, to: v2) }) == [.lossyTypeChange, .requiredWithoutDefault])
    }
}

@Suite struct JeffreyBergierInferenceTests {
    static let url = Fixtures.url("jeffreybergier__CoreDataMigrationTests/CoreDataMigration/CoreDataMigration/Model.xcdatamodeld")
    static let versions = ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"]

    @Test(arguments: zip(versions.dropLast(), versions.dropFirst()))
    func consecutiveVersionsRename(_ from: String, _ to: String) throws {
        let model = try VersionedModel(contentsOf: Self.url)
        let mapping = try MappingModel.inferred(from: from, to: to, in: model)
        #expect(mapping.entityMappings.count == 1)
        let entity = try #require(mapping.entityMapping(named: "BasicEntityToBasicEntity"))
        #expect(entity.mappingType == .transform)
        let fromAttribute = from.replacingOccurrences(of: ".", with: "_").dropFirst() + "_name"
        let toAttribute = to.replacingOccurrences(of: ".", with: "_").dropFirst() + "_name"
        #expect(entity.attributeMappings == [PropertyMapping("v\(toAttribute)", "$source.v\(fromAttribute)")])
        #expect(mapping.sourceModel.name == from)
        #expect(mapping.destinationModel.name == to)
    }

    @Test func firstToLastFollowsTheChain() throws {
        let model = try VersionedModel(contentsOf: Self.url)
        #expect(model.versions.map(\.name) == Self.versions)
        let mapping = try MappingModel.inferred(from: "v1.0.0", to: "v2.0.0", in: model)
        #expect(mapping.entityMappings.map(\.name) == ["BasicEntityToBasicEntity"])
        #expect(mapping.entityMappings[0].attributeMappings == [PropertyMapping("v2_0_0_name", "$source.v1_0_0_name")])
        // Without the versions between, the rename is not visible: the old attribute is dropped.
        let direct = try MappingModel.inferred(from: model.versions[0].model, to: model.versions[4].model)
        #expect(direct.entityMappings[0].attributeMappings == [PropertyMapping("v2_0_0_name")])
    }
}
