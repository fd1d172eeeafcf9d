import MoultArchive
import MoultModel

/// Writes a model as Xcode's design-time archive (an `XDPMModel`), shaped as the archives embedded in
/// the fixture `.xcmappingmodel` files are: a package holding entities by name, properties by name,
/// settings as stereotype properties whose `_default` is the value, parents through generalizations.
struct DesignArchiveBuilder {
    private var writer = KeyedArchiveWriter()
    private var entityUIDs: [String: Int] = [:]
    private var relationshipUIDs: [String: Int] = [:]
    private let yes: PropertyListValue
    /// Extra entity user info entries, each written by the closure (key → value reference), as Xcode
    /// 4-era models keep dictionaries there.
    private var extraEntityUserInfo: [(String, (inout KeyedArchiveWriter) -> PropertyListValue)] = []

    init() {
        yes = writer.string("YES")
    }

    /// The archive of `model`; `mutate` may change any stereotype value before it is written
    /// (key → value reference), to build malformed or unusual archives.
    static func archive(
        _ model: ObjectModel, versionIdentifier: String? = "v1",
        extraEntityUserInfo: [(String, (inout KeyedArchiveWriter) -> PropertyListValue)] = []
    ) -> [UInt8] {
        var builder = DesignArchiveBuilder()
        builder.extraEntityUserInfo = extraEntityUserInfo
        return builder.build(model, versionIdentifier: versionIdentifier)
    }

    private mutating func build(_ model: ObjectModel, versionIdentifier: String?) -> [UInt8] {
        let root = writer.reserve()
        let package = writer.reserve()
        for entity in model.entities { entityUIDs[entity.name] = writer.reserve() }
        for entity in model.entities {
            for relationship in entity.relationships { relationshipUIDs[entity.name + "." + relationship.name] = writer.reserve() }
        }
        var classes: [(PropertyListValue, PropertyListValue)] = []
        for entity in model.entities {
            write(entity, package: package)
            classes.append((writer.string(entity.name), .uid(entityUIDs[entity.name]!)))
        }
        let storage = writer.dictionary(classes.map { (key: $0.0, value: $0.1) }, className: "NSMutableDictionary")
        writer.set(
            package, className: "XDModelPackage", classes: ["XDModelPackage", "XDUMLPackageImp", "NSObject"],
            fields: ["_name": writer.string(""), "XDBucketForClassesstorage": storage, "XDBucketForClasseswasEncoded": yes, "_owner": KeyedArchiveWriter.null])
        writer.set(
            root, className: "XDPMModel", classes: ["XDPMModel", "XDModel", "NSObject"],
            fields: [
                "_xd_rootPackage": .uid(package),
                "_modelVersionIdentifier": versionIdentifier.map { writer.string($0) } ?? KeyedArchiveWriter.null,
            ])
        return writer.archive(root: root)
    }

    private mutating func value(_ value: PropertyListValue?) -> PropertyListValue {
        guard let value else { return KeyedArchiveWriter.null }
        return .uid(writer.add(value))
    }

    private mutating func string(_ text: String?) -> PropertyListValue {
        text.map { writer.string($0) } ?? KeyedArchiveWriter.null
    }

    /// A stereotype bucket: stereotype name → (key → value reference).
    private mutating func stereotypes(_ stereotypes: [(String, [(String, PropertyListValue)])], owner: Int) -> PropertyListValue {
        var entries: [(key: PropertyListValue, value: PropertyListValue)] = []
        for (name, values) in stereotypes {
            let stereotype = writer.reserve()
            var properties: [(key: PropertyListValue, value: PropertyListValue)] = []
            for (key, value) in values {
                let property = writer.add(
                    className: "XDUMLPropertyImp", classes: ["XDUMLPropertyImp", "NSObject"],
                    fields: ["_name": writer.string(key), "_default": value, "_owner": .uid(stereotype)])
                properties.append((writer.string(key), .uid(property)))
            }
            let storage = writer.dictionary(properties, className: "NSMutableDictionary")
            writer.set(
                stereotype, className: "XDUMLStereotypeImp", classes: ["XDUMLStereotypeImp", "NSObject"],
                fields: ["_name": writer.string(name), "_owner": .uid(owner), "XDBucketForOwnedAttributesstorage": storage])
            entries.append((writer.string(name), .uid(stereotype)))
        }
        return writer.dictionary(entries, className: "NSMutableDictionary")
    }

    private mutating func stringDictionary(_ dictionary: [String: String]) -> PropertyListValue {
        let entries = dictionary.sorted { $0.key < $1.key }.map { (key: writer.string($0.key), value: writer.string($0.value)) }
        return writer.dictionary(entries, className: "NSMutableDictionary")
    }

    private mutating func entityUserInfo(_ dictionary: [String: String]) -> PropertyListValue {
        var entries = dictionary.sorted { $0.key < $1.key }.map { (key: writer.string($0.key), value: writer.string($0.value)) }
        for (key, make) in extraEntityUserInfo { entries.append((key: writer.string(key), value: make(&writer))) }
        return writer.dictionary(entries, className: "NSMutableDictionary")
    }

    private mutating func write(_ entity: EntityDescription, package: Int) {
        let uid = entityUIDs[entity.name]!
        var properties: [(key: PropertyListValue, value: PropertyListValue)] = []
        for attribute in entity.attributes {
            properties.append((writer.string(attribute.name), .uid(write(attribute, owner: uid))))
        }
        for relationship in entity.relationships {
            properties.append((writer.string(relationship.name), .uid(write(relationship, of: entity.name, owner: uid))))
        }
        var constraints: [PropertyListValue] = []
        for constraint in entity.uniquenessConstraints {
            let names = constraint.map { writer.string($0) }
            constraints.append(writer.array(names, className: "NSMutableArray"))
        }
        let settings = stereotypes(
            [("XD_PStereotype", [
                ("XD_PSK_isAbstract", value(.bool(entity.isAbstract))),
                ("XD_PSK_versionHashModifier", string(entity.versionHashModifier)),
                ("XD_PSK_elementID", string(entity.renamingIdentifier)),
                ("XD_PSK_entityClassName", string(entity.representedClassName ?? entity.name)),
                ("XD_PSK_userInfo", entityUserInfo(entity.userInfo)),
                ("XDPMUniquenessConstraints", writer.array(constraints, className: "NSMutableArray")),
            ])], owner: uid)
        var generalizations: [PropertyListValue] = []
        if let parent = entity.parentName {
            generalizations.append(.uid(writer.add(
                className: "XDUMLGeneralizationImp", classes: ["XDUMLGeneralizationImp", "NSObject"],
                fields: ["_general": .uid(entityUIDs[parent]!), "_specific": .uid(uid), "_owner": .uid(uid), "_name": KeyedArchiveWriter.null])))
        }
        writer.set(
            uid, className: "XDPMEntity", classes: ["XDPMEntity", "XDUMLClassImp", "NSObject"],
            fields: [
                "_name": writer.string(entity.name), "_owner": .uid(package), "_isAbstract": .bool(entity.isAbstract),
                "XDBucketForOwnedAttributesstorage": writer.dictionary(properties, className: "NSMutableDictionary"),
                "XDBucketForStereotypesstorage": settings,
                "XDBucketForGeneralizationsstorage": writer.array(generalizations, className: "NSMutableArray"),
            ])
    }

    private mutating func commonSettings(optional: Bool, transient: Bool, modifier: String?, renaming: String?) -> [(String, PropertyListValue)] {
        [
            ("XD_PPSK_isOptional", value(.bool(optional))), ("XD_PPSK_isTransient", value(.bool(transient))),
            ("XD_PPSK_versionHashModifier", string(modifier)), ("XD_PPSK_elementID", string(renaming)),
            ("XD_PPSK_isIndexed", value(.bool(false))), ("XD_PPSK_userInfo", stringDictionary([:])),
        ]
    }

    private mutating func write(_ attribute: AttributeDescription, owner: Int) -> Int {
        let uid = writer.reserve()
        let settings = stereotypes(
            [
                ("XD_PPropStereotype", commonSettings(
                    optional: attribute.isOptional, transient: attribute.isTransient, modifier: attribute.versionHashModifier,
                    renaming: attribute.renamingIdentifier)),
                ("XD_PAtt_Stereotype", [
                    ("XD_PAttK_attributeType", value(.integer(Int64(attribute.attributeType.code)))),
                    ("XD_PAttK_defaultValueAsString", string(attribute.defaultValueString)),
                    ("XD_PAttK_allowsExternalBinaryDataStorage", value(.bool(attribute.allowsExternalBinaryDataStorage))),
                    ("XD_PAttK_valueTransformerName", string(attribute.valueTransformerName)),
                ]),
            ], owner: uid)
        writer.set(
            uid, className: "XDPMAttribute", classes: ["XDPMAttribute", "XDPMProperty", "XDUMLPropertyImp", "NSObject"],
            fields: ["_name": writer.string(attribute.name), "_owner": .uid(owner), "XDBucketForStereotypesstorage": settings])
        return uid
    }

    private mutating func write(_ relationship: RelationshipDescription, of entityName: String, owner: Int) -> Int {
        let uid = relationshipUIDs[entityName + "." + relationship.name]!
        let inverse: PropertyListValue = relationship.inverseName.map { name in
            .uid(relationshipUIDs[(relationship.inverseEntity ?? relationship.destinationEntity) + "." + name]!)
        } ?? KeyedArchiveWriter.null
        let rules: [DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]
        let settings = stereotypes(
            [
                ("XD_PPropStereotype", commonSettings(
                    optional: relationship.isOptional, transient: relationship.isTransient,
                    modifier: relationship.versionHashModifier, renaming: relationship.renamingIdentifier)),
                ("XD_PR_Stereotype", [
                    ("XD_PRK_destination", .uid(entityUIDs[relationship.destinationEntity]!)),
                    ("XD_PRK_inverseRelationship", inverse),
                    ("XD_PRK_isToMany", value(.bool(relationship.isToMany))),
                    ("XD_PRK_ordered", value(.bool(relationship.isOrdered))),
                    ("XD_PRK_minCount", value(.integer(Int64(relationship.minCount)))),
                    ("XD_PRK_maxCount", value(.integer(Int64(relationship.maxCount)))),
                    ("XD_PRK_deleteRule", value(.integer(rules[relationship.deleteRule]!))),
                ]),
            ], owner: uid)
        writer.set(
            uid, className: "XDPMRelationship", classes: ["XDPMRelationship", "XDPMProperty", "XDUMLPropertyImp", "NSObject"],
            fields: ["_name": writer.string(relationship.name), "_owner": .uid(owner), "XDBucketForStereotypesstorage": settings])
        return uid
    }
}
