public import MoultModel

extension ObjectModel {
    /// Decodes Xcode's design-time model, as an `.xcmappingmodel` embeds its source and destination
    /// models (`sourcemodeldata`, `destinationmodeldata` in `xcmapping.xml`): an NSKeyedArchiver
    /// archive of an `XDPMModel`.
    ///
    /// The archive is a UML-like graph: the model's package holds the entities (`XDPMEntity`) by
    /// name; an entity holds its properties (`XDPMAttribute`, `XDPMRelationship`) by name, its parent
    /// through a generalization (`_general`), and its Core Data settings as stereotype values
    /// (`XD_PSK_*` for entities, `XD_PPSK_*` for every property, `XD_PAttK_*` for attributes,
    /// `XD_PRK_*` for relationships). Everything that enters an entity's version hash is decoded (name,
    /// abstract, parent, version hash modifiers, uniqueness constraints; each property's kind,
    /// optional, transient, attribute type, external storage; each relationship's destination,
    /// inverse, counts, ordered), besides renaming identifiers, class names, defaults, user info and
    /// delete rules. Fetched properties and configurations are not decoded.
    ///
    /// ```swift
    /// let model = try ObjectModel(xcodeDesignArchive: Array(sourceModelData))
    /// let hashes = model.entityVersionHashes()
    /// ```
    ///
    /// - Throws: ``ArchiveError`` when the bytes are not such an archive, naming the object; the work
    ///   is bounded by the archive's size, so hostile bytes throw rather than run away.
    public init(xcodeDesignArchive bytes: [UInt8]) throws(ArchiveError) {
        var decoder = try DesignModelDecoder(archive: KeyedArchive(bytes))
        let (entities, versionIdentifier) = try decoder.decode()
        do {
            try self.init(entities: entities, versionIdentifier: versionIdentifier)
        } catch {
            throw ArchiveError(.malformedArchive, "the archived model is not a valid model: \(error.message)")
        }
    }
}

/// Walks an archived `XDPMModel`, counting its steps so that shared objects cannot make it run away.
private struct DesignModelDecoder {
    let archive: KeyedArchive
    private var steps = 0
    private let maximumSteps: Int

    init(archive: KeyedArchive) {
        self.archive = archive
        // A model visits each of its objects a few times; far more means objects are shared as no
        // model shares them.
        maximumSteps = 64 * archive.objects.count + 1_000
    }

    private mutating func step() throws(ArchiveError) {
        steps += 1
        guard steps <= maximumSteps else {
            throw ArchiveError(.malformedArchive, "the archive's objects are referenced far more often than a model's are")
        }
    }

    /// Counts a collection's entries as steps (after reading it: one read is linear in the archive).
    private mutating func counted<C: Collection>(_ collection: C) throws(ArchiveError) -> C {
        steps += collection.count
        try step()
        return collection
    }

    mutating func decode() throws(ArchiveError) -> (entities: [EntityDescription], versionIdentifier: String?) {
        let model = try archive.instance(archive.rootUID)
        guard model.classes.contains("XDPMModel") || model.classes.contains("XDModel") else {
            throw ArchiveError(.malformedArchive, "the archive's root is a \(model.className), not an Xcode model (XDPMModel)", location: "$objects[\(model.uid)]")
        }
        guard let package = try archive.instance(model, "_xd_rootPackage") else {
            throw ArchiveError(.malformedArchive, "the model has no root package (_xd_rootPackage)", location: "$objects[\(model.uid)]")
        }
        let versionIdentifier = try archive.string(model, "_modelVersionIdentifier")
        var entities: [EntityDescription] = []
        var seen = Set<Int>()
        for (name, uid) in try bucket(package, "XDBucketForClasses") {
            try step()
            guard seen.insert(uid).inserted else {
                throw ArchiveError(.malformedArchive, "entity '\(name)' is listed twice", location: "$objects[\(uid)]")
            }
            entities.append(try entity(uid, listedAs: name))
        }
        entities.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        try checkInheritanceDepth(entities)
        return (entities, versionIdentifier.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The deepest inheritance accepted: hashing an entity hashes its parent first, so a chain of
    /// thousands of entities would be deep recursion (real models have a few levels).
    static let maximumInheritanceDepth = ObjectModel.maximumInheritanceDepth

    private func checkInheritanceDepth(_ entities: [EntityDescription]) throws(ArchiveError) {
        var parents: [String: String] = [:]
        for entity in entities { parents[entity.name] = entity.parentName }
        for entity in entities {
            var depth = 0
            var current = entity.parentName
            while let name = current {
                depth += 1
                guard depth <= Self.maximumInheritanceDepth else {
                    throw ArchiveError(
                        .malformedArchive, "entity '\(entity.name)' has more than \(Self.maximumInheritanceDepth) ancestors (or its parents form a cycle)")
                }
                current = parents[name]
            }
        }
    }

    // MARK: - Entities

    private mutating func entity(_ uid: Int, listedAs listedName: String) throws(ArchiveError) -> EntityDescription {
        let object = try archive.instance(uid)
        guard object.classes.contains("XDPMEntity") else {
            throw ArchiveError(.malformedArchive, "'\(listedName)' is a \(object.className), not an entity (XDPMEntity)", location: "$objects[\(uid)]")
        }
        let name = try self.name(of: object)
        let settings = try stereotypeValues(object)
        var entity = EntityDescription(name: name)
        entity.isAbstract = try settings.bool("XD_PSK_isAbstract") ?? (object.fields["_isAbstract"]?.boolValue ?? false)
        entity.versionHashModifier = try settings.string("XD_PSK_versionHashModifier")
        entity.renamingIdentifier = try settings.string("XD_PSK_elementID")
        entity.representedClassName = try settings.string("XD_PSK_entityClassName")
        entity.userInfo = try counted(settings.stringDictionary("XD_PSK_userInfo"))
        entity.uniquenessConstraints = try counted(settings.constraints("XDPMUniquenessConstraints"))
        entity.parentName = try parent(of: object)
        for (propertyName, propertyUID) in try bucket(object, "XDBucketForOwnedAttributes") {
            try step()
            let property = try archive.instance(propertyUID)
            let where_ = "\(name).\(propertyName)"
            if property.classes.contains("XDPMAttribute") {
                entity.attributes.append(try attribute(property, name: propertyName, in: where_))
            } else if property.classes.contains("XDPMRelationship") {
                entity.relationships.append(try relationship(property, name: propertyName, in: where_))
            } else if property.classes.contains("XDPMFetchedProperty") {
                // Fetched properties do not enter version hashes.
                entity.fetchedProperties.append(FetchedPropertyDescription(name: propertyName))
            } else {
                throw ArchiveError(.unsupported, "property '\(where_)' is a \(property.className)", location: "$objects[\(propertyUID)]")
            }
        }
        entity.attributes.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        entity.relationships.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return entity
    }

    /// The parent entity's name: the `_general` of the entity's one generalization.
    private mutating func parent(of entity: ArchivedInstance) throws(ArchiveError) -> String? {
        guard let storage = try archive.reference(entity, "XDBucketForGeneralizationsstorage") else { return nil }
        let generalizations = try archive.elements(storage)
        guard generalizations.count <= 1 else {
            throw ArchiveError(.malformedArchive, "the entity has \(generalizations.count) parents", location: "$objects[\(entity.uid)]")
        }
        guard let uid = generalizations.first else { return nil }
        try step()
        let generalization = try archive.instance(uid)
        guard let general = try archive.instance(generalization, "_general") else {
            throw ArchiveError(.malformedArchive, "a generalization has no general entity (_general)", location: "$objects[\(uid)]")
        }
        return try name(of: general)
    }

    // MARK: - Properties

    private mutating func attribute(_ object: ArchivedInstance, name: String, in where_: String) throws(ArchiveError) -> AttributeDescription {
        let settings = try stereotypeValues(object)
        let code = try settings.integer("XD_PAttK_attributeType") ?? 0
        guard let type = Int32(exactly: code).flatMap(AttributeType.init(code:)) else {
            throw ArchiveError(.unsupported, "attribute '\(where_)' has the unknown attribute type \(code)", location: "$objects[\(object.uid)]")
        }
        var attribute = AttributeDescription(name: name, type: type)
        attribute.isOptional = try settings.bool("XD_PPSK_isOptional") ?? false
        attribute.isTransient = try settings.bool("XD_PPSK_isTransient") ?? false
        attribute.isIndexed = try settings.bool("XD_PPSK_isIndexed") ?? false
        attribute.versionHashModifier = try settings.string("XD_PPSK_versionHashModifier")
        attribute.renamingIdentifier = try settings.string("XD_PPSK_elementID")
        attribute.userInfo = try counted(settings.stringDictionary("XD_PPSK_userInfo"))
        attribute.defaultValueString = try settings.string("XD_PAttK_defaultValueAsString")
        attribute.minValueString = try settings.string("XD_PAttK_minValueString")
        attribute.maxValueString = try settings.string("XD_PAttK_maxValueString")
        attribute.valueTransformerName = try settings.string("XD_PAttK_valueTransformerName")
        attribute.regularExpressionString = try settings.string("XD_PAttK_regularExpressionString")
        attribute.allowsExternalBinaryDataStorage = try settings.bool("XD_PAttK_allowsExternalBinaryDataStorage") ?? false
        return attribute
    }

    private mutating func relationship(_ object: ArchivedInstance, name: String, in where_: String) throws(ArchiveError) -> RelationshipDescription {
        let settings = try stereotypeValues(object)
        guard let destinationUID = settings.values["XD_PRK_destination"], !archive.isNull(destinationUID) else {
            throw ArchiveError(.malformedArchive, "relationship '\(where_)' has no destination entity", location: "$objects[\(object.uid)]")
        }
        try step()
        let destination = try self.name(of: try archive.instance(destinationUID))
        var inverseName: String?, inverseEntity: String?
        if let inverseUID = settings.values["XD_PRK_inverseRelationship"], !archive.isNull(inverseUID) {
            try step()
            let inverse = try archive.instance(inverseUID)
            inverseName = try self.name(of: inverse)
            if let owner = try archive.instance(inverse, "_owner") { inverseEntity = try self.name(of: owner) }
        }
        let toMany = try settings.bool("XD_PRK_isToMany") ?? false
        let deleteRules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
        let ruleCode = try settings.integer("XD_PRK_deleteRule") ?? 1
        guard let rule = deleteRules[ruleCode] else {
            throw ArchiveError(.unsupported, "relationship '\(where_)' has the unknown delete rule \(ruleCode)", location: "$objects[\(object.uid)]")
        }
        let minCount = try settings.integer("XD_PRK_minCount") ?? 0
        let maxCount = try settings.integer("XD_PRK_maxCount")
        guard let min = Int(exactly: minCount), min >= 0, maxCount.map({ $0 >= 0 }) ?? true else {
            throw ArchiveError(.malformedArchive, "relationship '\(where_)' has the counts \(minCount)…\(maxCount.map(String.init) ?? "nil")", location: "$objects[\(object.uid)]")
        }
        let userInfo = try counted(settings.stringDictionary("XD_PPSK_userInfo"))
        return RelationshipDescription(
            name: name, destination: destination, inverse: inverseName, inverseEntity: inverseEntity, isToMany: toMany,
            isOrdered: try settings.bool("XD_PRK_ordered") ?? false, isOptional: try settings.bool("XD_PPSK_isOptional") ?? false,
            isTransient: try settings.bool("XD_PPSK_isTransient") ?? false, minCount: min, maxCount: maxCount.map { Int($0) },
            deleteRule: rule, renamingIdentifier: try settings.string("XD_PPSK_elementID"),
            versionHashModifier: try settings.string("XD_PPSK_versionHashModifier"),
            userInfo: userInfo)
    }

    // MARK: - Buckets and stereotypes

    /// An element's name (`_name`).
    private func name(of object: ArchivedInstance) throws(ArchiveError) -> String {
        guard let name = try archive.string(object, "_name"), !name.isEmpty else {
            throw ArchiveError(.malformedArchive, "a \(object.className) has no name", location: "$objects[\(object.uid)]")
        }
        return name
    }

    /// The entries of a `XDBucketFor<Name>storage` dictionary, by name.
    private mutating func bucket(_ owner: ArchivedInstance, _ bucket: String) throws(ArchiveError) -> [(String, Int)] {
        guard let storage = try archive.reference(owner, bucket + "storage") else { return [] }
        var result: [(String, Int)] = []
        for entry in try archive.stringKeyedEntries(storage) {
            try step()
            result.append((entry.key, entry.value))
        }
        return result
    }

    /// Every stereotype value of an element (`_default` of each property of each stereotype), by key.
    private mutating func stereotypeValues(_ owner: ArchivedInstance) throws(ArchiveError) -> StereotypeValues {
        var values: [String: Int] = [:]
        for (_, stereotypeUID) in try bucket(owner, "XDBucketForStereotypes") {
            let stereotype = try archive.instance(stereotypeUID)
            for (key, propertyUID) in try bucket(stereotype, "XDBucketForOwnedAttributes") {
                let property = try archive.instance(propertyUID)
                values[key] = try archive.reference(property, "_default") ?? 0
            }
        }
        return StereotypeValues(archive: archive, values: values, owner: owner.uid)
    }
}

/// The stereotype values of one element, read by key with the type each key holds.
private struct StereotypeValues {
    let archive: KeyedArchive
    /// Key → the UID of its value (0 for nil).
    let values: [String: Int]
    let owner: Int

    private func failure(_ key: String, _ expected: String, _ value: PropertyListValue) -> ArchiveError {
        ArchiveError(.malformedArchive, "\(key) should be \(expected), found \(value.summary)", location: "$objects[\(owner)]")
    }

    func bool(_ key: String) throws(ArchiveError) -> Bool? {
        guard let uid = values[key], !archive.isNull(uid) else { return nil }
        switch try archive.object(uid) {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .string(let text) where text == "YES" || text == "NO": return text == "YES"
        case let other: throw failure(key, "a boolean", other)
        }
    }

    func integer(_ key: String) throws(ArchiveError) -> Int64? {
        guard let uid = values[key], !archive.isNull(uid) else { return nil }
        switch try archive.object(uid) {
        case .integer(let value): return value
        case let other: throw failure(key, "an integer", other)
        }
    }

    /// A string; an empty one is nil (Xcode leaves cleared fields empty).
    func string(_ key: String) throws(ArchiveError) -> String? {
        guard let uid = values[key] else { return nil }
        guard let text = try archive.string(uid) else { return nil }
        return text.isEmpty ? nil : text
    }

    /// A user info dictionary; values of any property-list type are kept (see ``KeyedArchive/userInfo(_:)``).
    func stringDictionary(_ key: String) throws(ArchiveError) -> [String: String] {
        guard let uid = values[key], !archive.isNull(uid) else { return [:] }
        return try archive.userInfo(uid)
    }

    /// Uniqueness constraints: an array of arrays of property names.
    func constraints(_ key: String) throws(ArchiveError) -> [[String]] {
        guard let uid = values[key], !archive.isNull(uid) else { return [] }
        var result: [[String]] = []
        for constraint in try archive.elements(uid) {
            var names: [String] = []
            for element in try archive.elements(constraint) {
                guard let name = try archive.string(element) else {
                    throw ArchiveError(.malformedArchive, "\(key) holds a nil property name", location: "$objects[\(owner)]")
                }
                names.append(name)
            }
            result.append(names)
        }
        return result
    }
}
