import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@Suite struct DesignModelTests {
    /// A model with what enters version hashes: inheritance, abstract, to-many ordered, inverses, a
    /// self-inverse relationship, version hash modifiers, uniqueness constraints, transient, external
    /// storage, counts.
    static let model: ObjectModel = try! ObjectModel(entities: [
        EntityDescription(name: "Animal", isAbstract: true, versionHashModifier: "2", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "photo", type: .binary, isOptional: true, allowsExternalBinaryDataStorage: true),
            AttributeDescription(name: "scratch", type: .integer32, isOptional: true, isTransient: true),
        ], relationships: [
            RelationshipDescription(name: "keeper", destination: "Keeper", inverse: "animals", isOptional: true),
            RelationshipDescription(name: "friends", destination: "Animal", inverse: "friends", isToMany: true, isOrdered: true, minCount: 0, maxCount: 5),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription(name: "Cat", parent: "Animal", attributes: [
            AttributeDescription(name: "lives", type: .integer16, defaultValueString: "9", versionHashModifier: "lives-v2"),
        ]),
        EntityDescription(name: "Keeper", renamingIdentifier: "Zookeeper", attributes: [
            AttributeDescription(name: "since", type: .date, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "animals", destination: "Animal", inverse: "keeper", isToMany: true, isOptional: true, minCount: 1, deleteRule: .cascade),
        ]),
    ])

    @Test func aWrittenDesignArchiveDecodesToTheSameHashes() throws {
        let decoded = try ObjectModel(xcodeDesignArchive: DesignArchiveBuilder.archive(Self.model))
        #expect(decoded.entityVersionHashes() == Self.model.entityVersionHashes())
        #expect(decoded.entityVersionHashes().count == 3)
        #expect(decoded.versionIdentifier == "v1")
        let cat = try #require(decoded.entity(named: "Cat"))
        #expect(cat.parentName == "Animal")
        #expect(decoded.entity(named: "Animal")?.isAbstract == true)
        #expect(decoded.entity(named: "Keeper")?.renamingIdentifier == "Zookeeper")
        #expect(decoded.relationship(named: "friends", of: "Cat")?.isOrdered == true)
        #expect(decoded.relationship(named: "animals", of: "Keeper")?.deleteRule == .cascade)
        #expect(decoded.attribute(named: "lives", of: "Cat")?.defaultValueString == "9")
    }

    @Test func aChangeThatEntersTheHashIsSeen() throws {
        var entities = Self.model.entities
        entities[2].attributes[0].isOptional = false
        let changed = try ObjectModel(entities: entities)
        let decoded = try ObjectModel(xcodeDesignArchive: DesignArchiveBuilder.archive(changed))
        #expect(decoded.entityVersionHashes()["Keeper"] != Self.model.entityVersionHashes()["Keeper"])
        #expect(decoded.entityVersionHashes()["Cat"] == Self.model.entityVersionHashes()["Cat"])
    }

    @Test func anArchiveThatIsNotAModelIsRefused() throws {
        var writer = KeyedArchiveWriter()
        let root = writer.add(className: "NSKeyPathExpression", fields: [:])
        #expect {
            _ = try ObjectModel(xcodeDesignArchive: writer.archive(root: root))
        } throws: { error in
            (error as? ArchiveError)?.code == .malformedArchive && "\(error)".contains("XDPMModel")
        }
    }

    @Test func anEntityListedTwiceIsRefused() throws {
        // A package whose class bucket lists one entity under two names: shared objects that would
        // multiply the work are refused.
        var writer = KeyedArchiveWriter()
        let root = writer.reserve(), package = writer.reserve(), entity = writer.reserve()
        writer.set(entity, className: "XDPMEntity", fields: ["_name": writer.string("A")])
        let storage = writer.dictionary([(writer.string("A"), .uid(entity)), (writer.string("B"), .uid(entity))])
        writer.set(package, className: "XDModelPackage", fields: ["XDBucketForClassesstorage": storage])
        writer.set(root, className: "XDPMModel", fields: ["_xd_rootPackage": .uid(package)])
        #expect {
            _ = try ObjectModel(xcodeDesignArchive: writer.archive(root: root))
        } throws: { error in
            "\(error)".contains("listed twice")
        }
    }

    @Test func anUnknownAttributeTypeIsNamed() throws {
        var entities = Self.model.entities
        entities[2].attributes[0].attributeType = .undefined
        var bytes = DesignArchiveBuilder.archive(try ObjectModel(entities: entities))
        // Replace the type code 0 by 4242 in the archive's objects.
        var value = try PropertyListValue(binaryPropertyList: bytes)
        guard case .dictionary(var top) = value, case .array(var objects)? = top["$objects"] else { Issue.record("no objects"); return }
        for index in objects.indices where objects[index] == .integer(0) { objects[index] = .integer(4242) }
        top["$objects"] = .array(objects)
        value = .dictionary(top)
        bytes = value.binaryPropertyList()
        #expect {
            _ = try ObjectModel(xcodeDesignArchive: bytes)
        } throws: { error in
            (error as? ArchiveError)?.code == .unsupported && "\(error)".contains("Keeper.since") && "\(error)".contains("4242")
        }
    }
}

extension DesignModelTests {
    /// An archive of entities `E0`…`E<count - 1>`, each `E<n>`'s parent `E<n - 1>` (written by hand:
    /// ObjectModel itself refuses such a chain).
    static func inheritanceChain(_ count: Int) -> [UInt8] {
        var writer = KeyedArchiveWriter()
        let root = writer.reserve(), package = writer.reserve()
        let entities = (0..<count).map { _ in writer.reserve() }
        var bucket: [(key: PropertyListValue, value: PropertyListValue)] = []
        for (index, uid) in entities.enumerated() {
            var generalizations: [PropertyListValue] = []
            if index > 0 {
                generalizations.append(.uid(writer.add(className: "XDUMLGeneralizationImp", fields: ["_general": .uid(entities[index - 1])])))
            }
            writer.set(uid, className: "XDPMEntity", fields: [
                "_name": writer.string("E\(index)"), "XDBucketForGeneralizationsstorage": writer.array(generalizations),
            ])
            bucket.append((writer.string("E\(index)"), .uid(uid)))
        }
        writer.set(package, className: "XDModelPackage", fields: ["XDBucketForClassesstorage": writer.dictionary(bucket)])
        writer.set(root, className: "XDPMModel", fields: ["_xd_rootPackage": .uid(package)])
        return writer.archive(root: root)
    }

    @Test func inheritanceDeeperThanAnyModelIsRefused() throws {
        #expect(try ObjectModel(xcodeDesignArchive: Self.inheritanceChain(50)).entityVersionHashes().count == 50)
        #expect {
            _ = try ObjectModel(xcodeDesignArchive: Self.inheritanceChain(121))
        } throws: { error in
            (error as? ArchiveError)?.category.exitCode == 65 && "\(error)".contains("ancestors")
        }
    }

    @Test func inheritanceAsDeepAsAnyModelDecodesAndDeeperIsRefused() throws {
        // The deepest chain a model may hold (ObjectModel.maximumInheritanceDepth entities) goes through
        // the archive; one more level is refused, with 65, before any archive could hold it.
        let entities = (0..<ObjectModel.maximumInheritanceDepth).map { index in
            EntityDescription(name: "E\(index)", parent: index == 0 ? nil : "E\(index - 1)")
        }
        let deepest = try ObjectModel(entities: entities)
        let decoded = try ObjectModel(xcodeDesignArchive: DesignArchiveBuilder.archive(deepest))
        #expect(decoded.entities.count == entities.count)
        let tooDeep = entities + [EntityDescription(name: "E\(entities.count)", parent: "E\(entities.count - 1)")]
        #expect {
            _ = try ObjectModel(entities: tooDeep)
        } throws: { error in
            (error as? any CategorizedError)?.category.exitCode == 65 && "\(error)".contains("inheritance chain")
        }
    }

    @Test func parentsThatFormACycleAreRefused() throws {
        // Two entities, each the other's parent: written by hand, as no valid model has it.
        var writer = KeyedArchiveWriter()
        let root = writer.reserve(), package = writer.reserve(), a = writer.reserve(), b = writer.reserve()
        for (uid, name, parent) in [(a, "A", b), (b, "B", a)] {
            let generalization = writer.add(className: "XDUMLGeneralizationImp", fields: ["_general": .uid(parent)])
            writer.set(uid, className: "XDPMEntity", fields: [
                "_name": writer.string(name), "XDBucketForGeneralizationsstorage": writer.array([.uid(generalization)]),
            ])
        }
        let storage = writer.dictionary([(writer.string("A"), .uid(a)), (writer.string("B"), .uid(b))])
        writer.set(package, className: "XDModelPackage", fields: ["XDBucketForClassesstorage": storage])
        writer.set(root, className: "XDPMModel", fields: ["_xd_rootPackage": .uid(package)])
        #expect(throws: ArchiveError.self) { _ = try ObjectModel(xcodeDesignArchive: writer.archive(root: root)) }
    }
}
