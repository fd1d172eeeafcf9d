internal import MoultArchive
public import MoultModel

/// The model a store carries: `Z_MODELCACHE.Z_CONTENT`, raw DEFLATE of an NSKeyedArchiver archive of
/// the compiled `NSManagedObjectModel` (CORE-DATA-FORMATS.md §3).
///
/// Decoding it lets Moult inspect and migrate a store whose model source is lost. What is read: each
/// entity's name, parent, abstractness, version hash modifier, renaming identifier, properties and
/// uniqueness constraints; each attribute's type, flags (optional, transient, read-only), modifier,
/// external-storage and preserve-after-deletion bits (`NSFlagsKey` 0x04 and 0x10), its minimum and
/// maximum (from rules of a bound's form, or `NSFlagsKey` 0x02 and 0x01 with `NSMinValueName` and
/// `NSMaxValueName`) and, for a derived
/// one, its derivation expression; each relationship's destination, inverse, counts, order and delete
/// rule; an entity's class name, a transformable or Undefined attribute's class name, an attribute's default value of a plain type (number, Boolean,
/// string, date), the user info of entities and properties, fetch indexes (expression elements
/// included), the model's configurations, and an attribute's validation rules in the forms
/// ``/MoultModel/ValidationRule`` carries. Fetched properties and fetch request templates are read only by
/// ``extraction(in:)``: they enter no hash and no column. An attribute's `NSIsIndexed` makes it indexed
/// (a column index, as Core Data made it before fetch indexes) in a cache with no fetch index at all: in
/// the caches of today's Core Data each indexed property also has its fetch index `by<Name>Index`,
/// which makes the index; a cache of framework 754 (apptentive-ios) has none.
/// Sub-entities list the properties they inherit, as every model cache does; inherited properties may
/// be proxies (`NSUnderlyingProperty`), read as the property they stand for.
///
/// ```swift
/// if let model = try ModelCache.model(in: store.database) {
///     print(try model.versionHash(ofEntity: "Book").hex)
/// }
/// ```
public enum ModelCache {
    /// The largest model archive inflated (Photos' is about 1 MiB).
    public static let inflatedLimit = 256 << 20

    /// The model in a store's `Z_MODELCACHE`, or nil when the store has none (an older store, or an
    /// empty table).
    ///
    /// Fetched properties and fetch request templates are left out: they enter no hash and no column,
    /// and ``encoded(_:)`` cannot write them back (a store created from a model with them would get an
    /// empty cache). ``extraction(in:)`` reads them, for a model written out whole.
    ///
    /// - Throws: ``StoreError`` `.corrupt` (bad input, 65) when the cache is there but cannot be decoded.
    public static func model(in database: Database) throws(StoreError) -> ObjectModel? {
        guard let blob = try content(of: database) else { return nil }
        return try model(compressed: blob, path: database.path)
    }

    /// The bytes of `Z_MODELCACHE.Z_CONTENT`, or nil when the store has no model cache.
    static func content(of database: Database) throws(StoreError) -> [UInt8]? {
        guard try database.tableExists("Z_MODELCACHE") else { return nil }
        guard case .data(let blob)? = try database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else { return nil }
        return blob
    }

    /// Decodes the content of `Z_MODELCACHE.Z_CONTENT`.
    public static func model(compressed: [UInt8], path: String? = nil) throws(StoreError) -> ObjectModel {
        try decoded(compressed: compressed, path: path, whole: false).model
    }

    /// Decodes the content of `Z_MODELCACHE.Z_CONTENT`: the model, and with `whole` its fetches too and
    /// what the decoder could not carry (see ``Extraction``).
    static func decoded(compressed: [UInt8], path: String?, whole: Bool) throws(StoreError) -> (model: ObjectModel, leftOut: [Decoder.LeftOut]) {
        let archive: [UInt8]
        do {
            archive = try RawDeflate.inflate(compressed, limit: inflatedLimit)
        } catch {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) is not valid DEFLATE data: \(error.message)", path: path)
        }
        do {
            var decoder = Decoder(archive: try KeyedArchive(archive), whole: whole)
            return (try decoder.model(), decoder.leftOut)
        } catch let error as ArchiveError {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) is not a readable model archive: \(error.message)", path: path)
        } catch let error as ModelError {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) holds a model Moult refuses: \(error.message)", path: path)
        } catch {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) cannot be read: \(error)", path: path)
        }
    }

    /// The compressed bytes of a `Z_MODELCACHE.Z_CONTENT` holding `archive` (stored DEFLATE blocks).
    public static func compressed(_ archive: [UInt8]) -> [UInt8] { RawDeflate.storedBlocks(archive) }

    // MARK: - Decoding

    static func decode(_ archive: KeyedArchive) throws -> ObjectModel {
        var decoder = Decoder(archive: archive)
        return try decoder.model()
    }

    struct Decoder {
        let archive: KeyedArchive
        /// Whether the model is read whole, fetched properties and fetch request templates included, and
        /// what cannot be carried is noted in ``leftOut`` (``ModelCache/extraction(in:)``).
        var whole = false
        /// What the cache holds that the decoded model does not carry (when `whole`).
        var leftOut: [LeftOut] = []
        /// The entity being decoded, for ``leftOut``.
        var entityName = ""

        /// Something of the cache the decoded model does not carry: on an entity, or one of its properties.
        struct LeftOut: Hashable {
            var entity: String
            var property: String?
            var reason: String
        }

        /// Notes what the model does not carry, when it is read whole.
        mutating func note(property: String?, _ reason: String) {
            if whole { leftOut.append(LeftOut(entity: entityName, property: property, reason: reason)) }
        }
        /// Steps taken, bounded so that a hostile archive cannot make the walk long.
        var steps = 0
        /// User info dictionaries already read, by UID: a cache shares one among many records.
        var userInfos: [Int: [String: String]] = [:]

        mutating func step() throws(ArchiveError) {
            steps += 1
            if steps > 10_000_000 { throw ArchiveError(.malformedArchive, "the model archive is too large to walk") }
        }

        /// The instance a predicate or expression walk reaches at `depth`: one step, at most 32 levels.
        mutating func nested(_ uid: Int, depth: Int) throws -> ArchivedInstance {
            try step()
            guard depth < 32 else { throw ArchiveError(.malformedArchive, "a predicate or expression nests too deeply", location: "$objects[\(uid)]") }
            return try archive.instance(uid)
        }

        mutating func model() throws -> ObjectModel {
            let root = try archive.instance(archive.rootUID)
            guard root.classes.contains("NSManagedObjectModel") else {
                throw ArchiveError(.malformedArchive, "the root object is a \(root.className), not an NSManagedObjectModel")
            }
            guard let entitiesUID = try archive.reference(root, "NSEntities") else {
                throw ArchiveError(.malformedArchive, "the model has no NSEntities")
            }
            var entities: [EntityDescription] = []
            for uid in try collection(entitiesUID) {
                try step()
                entities.append(try entity(try archive.instance(uid)))
            }
            entities.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            if entities.contains(where: { !$0.fetchIndexes.isEmpty }) {
                // A Core Data with fetch indexes: they make the indexes, NSIsIndexed none.
                for entity in entities.indices {
                    for attribute in entities[entity].attributes.indices { entities[entity].attributes[attribute].isIndexed = false }
                }
            }
            var identifier: String?
            if let identifiers = try archive.reference(root, "NSVersionIdentifiers") {
                identifier = try collection(identifiers).compactMap { (uid) throws -> String? in try archive.string(uid) }.sorted().first
            }
            // Configurations: name → the set of its entities.
            var configurations: [ConfigurationDescription] = []
            if let uid = try archive.reference(root, "NSConfigurations"), !archive.isNull(uid) {
                for (name, members) in try archive.stringKeyedEntries(uid) {
                    try step()
                    var names: [String] = []
                    for member in try collection(members) {
                        if let entity = try entityName(of: member) { names.append(entity) }
                    }
                    configurations.append(
                        ConfigurationDescription(name: name, entityNames: names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }))
                }
                configurations.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            }
            let requests = whole ? try fetchRequestTemplates(root) : []
            return try ObjectModel(entities: entities, versionIdentifier: identifier, configurations: configurations, fetchRequests: requests)
        }

        /// The element UIDs of an array or set, or the value UIDs of a dictionary (Core Data's
        /// `NSKnownKeysDictionary1` keeps its values in `values`, an empty slot holding `emptyToken`).
        func collection(_ uid: Int) throws -> [Int] {
            let instance = try archive.instance(uid)
            if instance.fields["NS.keys"] != nil { return try archive.entries(uid).map(\.value) }
            if let values = try archive.reference(instance, "values") {
                let empty = try archive.reference(instance, "emptyToken")
                return try archive.elements(values).filter { $0 != empty && !archive.isNull($0) }
            }
            return try archive.elements(uid)
        }

        func bool(_ owner: ArchivedInstance, _ key: String) throws -> Bool {
            switch try archive.value(owner, key) {
            case .bool(let value)?: value
            case .integer(let value)?: value != 0
            default: false
            }
        }

        func integer(_ owner: ArchivedInstance, _ key: String) throws -> Int? {
            if case .integer(let value)? = try archive.value(owner, key) { return Int(clamping: value) }
            return nil
        }

        func entityName(of uid: Int?) throws -> String? {
            guard let uid else { return nil }
            return try archive.string(try archive.instance(uid), "NSEntityName")
        }

        /// The user info of an entity or property (`NSUserInfo`), each value as text
        /// (``KeyedArchive/userInfo(_:)``), with one exception: the location attribute's
        /// `_NSLocationAttributeDerivedComponents`, an array of two attribute names in Photos' cache, is
        /// written `latitude,longitude`, the text form Core Data also takes (it removes the spaces and
        /// splits at commas), so that the model XML, whose user info holds text only, keeps its meaning.
        /// A dictionary that is not of property-list values keeps its string entries only, and one
        /// whose keys are not strings is left out with a note (user info enters no hash and no column,
        /// and a model set up in code may hold objects of its own).
        mutating func userInfo(_ owner: ArchivedInstance) throws -> [String: String] {
            guard let uid = try archive.reference(owner, "NSUserInfo") else { return [:] }
            if let known = userInfos[uid] { return known }
            try step()
            var info: [String: String]
            let entries: [(key: String, value: Int)]
            do {
                entries = try archive.stringKeyedEntries(uid)
            } catch {
                note(property: try? archive.string(owner, "NSPropertyName"), "its user info, which is not a dictionary of string keys")
                userInfos[uid] = [:]
                return [:]
            }
            steps += entries.count
            do {
                info = try archive.userInfo(uid)
            } catch {
                info = [:]
                for entry in entries {
                    if let text = try? archive.string(entry.value) { info[entry.key] = text }
                }
            }
            let locationKey = "_NSLocationAttributeDerivedComponents"
            if let entry = entries.first(where: { $0.key == locationKey }), let instance = try? archive.instance(entry.value),
                instance.fields["NS.objects"] != nil, instance.fields["NS.keys"] == nil
            {
                info[locationKey] = try archive.elements(entry.value).map { (uid) throws in try archive.string(uid) ?? "" }.joined(separator: ",")
            }
            userInfos[uid] = info
            return info
        }

        mutating func entity(_ instance: ArchivedInstance) throws -> EntityDescription {
            guard let name = try archive.string(instance, "NSEntityName") else {
                throw ArchiveError(.malformedArchive, "an entity has no name", location: "$objects[\(instance.uid)]")
            }
            entityName = name
            var entity = EntityDescription(
                name: name, parent: try entityName(of: try archive.reference(instance, "NSSuperentity")),
                isAbstract: try bool(instance, "NSIsAbstract"),
                versionHashModifier: try archive.string(instance, "NSVersionHashModifier"),
                renamingIdentifier: try archive.string(instance, "NSRenamingIdentifier"))
            entity.representedClassName = try archive.string(instance, "NSClassNameForEntity")
            entity.userInfo = try userInfo(instance)
            if let properties = try archive.reference(instance, "NSProperties") {
                var seen: Set<Int> = []
                for uid in try collection(properties) {
                    try step()
                    var property = try archive.instance(uid)
                    // An inherited property may be a proxy for the parent's.
                    while let underlying = try archive.reference(property, "NSUnderlyingProperty"), seen.insert(underlying).inserted {
                        property = try archive.instance(underlying)
                    }
                    if property.classes.contains("NSRelationshipDescription") {
                        entity.relationships.append(try relationship(property))
                    } else if property.classes.contains("NSAttributeDescription") {
                        entity.attributes.append(try attribute(property))
                    } else if whole, property.classes.contains("NSFetchedPropertyDescription") {
                        if let fetched = try fetchedProperty(property) { entity.fetchedProperties.append(fetched) }
                    }
                    // Fetched properties unless asked for (and any other kind) have no column and no hash: left out.
                }
                entity.attributes.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                entity.relationships.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                entity.fetchedProperties.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            }
            if let indexes = try archive.reference(instance, "NSFetchIndexDescriptions") {
                for uid in try collection(indexes) {
                    try step()
                    entity.fetchIndexes.append(try fetchIndex(try archive.instance(uid)))
                }
            }
            if let tuples = try archive.reference(instance, "NSUniqueTuples") {
                for tuple in try collection(tuples) {
                    var names: [String] = []
                    for element in try collection(tuple) {
                        try step()
                        if let text = try? archive.string(element) {
                            names.append(text)
                        } else if let property = try? archive.instance(element), let text = try archive.string(property, "NSPropertyName") {
                            names.append(text)
                        } else {
                            throw ArchiveError(.malformedArchive, "a uniqueness constraint of '\(name)' names no property")
                        }
                    }
                    entity.uniquenessConstraints.append(names)
                }
            }
            return entity
        }

        /// A fetch index (`NSFetchIndexDescription`: `NSIndexName`, `NSIndexElements` of
        /// `NSFetchIndexElementDescription` with `NSPropertyName`, `NSFetchIndexElementType` 0 binary or
        /// 1 R-tree, `NSAscending`; `NSPartialIndexPredicate`), as CoreDataPlus' SampleModel_V2.sqlite has it.
        ///
        /// An element whose `NSIndexedProperty` is an `NSExpressionDescription` is an expression element:
        /// Photos indexes `Z_ENT` so, the expression the key path `entity` (`valueForKey:` of `SELF`) and
        /// `NSExpressionType` its result type (0, Undefined); its generated name (`expression1`) is not kept.
        mutating func fetchIndex(_ instance: ArchivedInstance) throws -> FetchIndexDescription {
            guard let name = try archive.string(instance, "NSIndexName") else {
                throw ArchiveError(.malformedArchive, "a fetch index has no name", location: "$objects[\(instance.uid)]")
            }
            var elements: [FetchIndexDescription.Element] = []
            if let list = try archive.reference(instance, "NSIndexElements") {
                for uid in try collection(list) {
                    try step()
                    let element = try archive.instance(uid)
                    let type = try integer(element, "NSFetchIndexElementType") == 1 ? "RTree" : "Binary"
                    let ascending = try archive.value(element, "NSAscending") == nil ? true : try bool(element, "NSAscending")
                    if let indexed = try archive.instance(element, "NSIndexedProperty"), indexed.classes.contains("NSExpressionDescription") {
                        let code = try integer(indexed, "NSExpressionType") ?? 0
                        let resultType = AttributeType(code: Int32(clamping: code)) ?? .undefined
                        let text = try archive.reference(indexed, "NSExpression").map { (uid) throws in try expressionText(uid, depth: 0) } ?? ""
                        elements.append(.init(property: "", type: type, ascending: ascending, expression: text, expressionType: resultType.rawValue))
                    } else {
                        elements.append(.init(property: try archive.string(element, "NSPropertyName") ?? "", type: type, ascending: ascending))
                    }
                }
            }
            var partial: String?
            if let predicate = try archive.reference(instance, "NSPartialIndexPredicate") {
                partial = try predicateText(predicate, depth: 0)
            }
            return FetchIndexDescription(name: name, elements: elements, partialIndexPredicate: partial)
        }

        func propertyName(_ instance: ArchivedInstance) throws -> String {
            guard let name = try archive.string(instance, "NSPropertyName") else {
                throw ArchiveError(.malformedArchive, "a property has no name", location: "$objects[\(instance.uid)]")
            }
            return name
        }

        mutating func attribute(_ instance: ArchivedInstance) throws -> AttributeDescription {
            let name = try propertyName(instance)
            let code = try integer(instance, "NSAttributeType") ?? 0
            guard let type = AttributeType(code: Int32(clamping: code)) else {
                throw ArchiveError(.malformedArchive, "attribute '\(name)' has the unknown type code \(code)")
            }
            let flags = try integer(instance, "NSFlagsKey") ?? 0
            var attribute = AttributeDescription(
                name: name, type: type, isOptional: try bool(instance, "NSIsOptional"), isTransient: try bool(instance, "NSIsTransient"),
                isReadOnly: try bool(instance, "NSIsReadOnly"), valueTransformerName: try archive.string(instance, "NSValueTransformerName"))
            attribute.allowsExternalBinaryDataStorage = flags & 0x04 != 0
            attribute.preserveAfterDeletion = flags & 0x10 != 0
            attribute.isIndexed = try bool(instance, "NSIsIndexed")
            attribute.versionHashModifier = try archive.string(instance, "NSVersionHashModifier")
            attribute.renamingIdentifier = try archive.string(instance, "NSRenamingIdentifier")
            attribute.customClassName = type == .transformable || type == .undefined ? try archive.string(instance, "NSAttributeValueClassName") : nil
            attribute.userInfo = try userInfo(instance)
            // A default value of a plain type, as the model's text (an archived object of another class,
            // a transformable's, is left out).
            if let uid = try archive.reference(instance, "NSDefaultValue"), !archive.isNull(uid) {
                switch try archive.object(uid) {
                case .integer(let value): attribute.defaultValueString = type == .boolean ? (value != 0 ? "YES" : "NO") : String(value)
                case .real(let value): attribute.defaultValueString = String(value)
                case .bool(let value): attribute.defaultValueString = value ? "YES" : "NO"
                case .string(let text) where type == .string: attribute.defaultValueString = text
                case .dictionary where type == .string && (try? archive.instance(uid).fields["NS.string"]) != nil:
                    // An `NSString` or `NSMutableString` object (framework 754–851 archive such defaults so).
                    attribute.defaultValueString = try archive.string(uid)
                case .dictionary where type == .date:
                    if case .real(let time)? = try archive.instance(uid).fields["NS.time"] { attribute.defaultDateTimeInterval = time }
                case let value:
                    let kind = (try? archive.instance(uid).className).map { "an archived \($0)" } ?? value.summary
                    note(property: name, "its default value, \(kind), has no form in the model XML")
                }
            }
            attribute.validationRules = try validationRules(instance)
            // Rules of a bound's exact form are the model XML's bounds again (by rule, as written).
            ValidationRule.extractBounds(&attribute)
            // The older archived form Core Data's decoder still reads (`initWithCoder:`): `NSFlagsKey` 0x02
            // and 0x01 say a minimum and a maximum follow in `NSMinValueName` and `NSMaxValueName`. Not seen
            // in a fixture; a bound already read from a rule is kept.
            for (bit, key, isMinimum) in [(0x02, "NSMinValueName", true), (0x01, "NSMaxValueName", false)] where flags & bit != 0 {
                let present = attribute.attributeType == .date
                    ? (isMinimum ? attribute.minDateTimeInterval != nil : attribute.maxDateTimeInterval != nil)
                    : (isMinimum ? attribute.minValueString != nil : attribute.maxValueString != nil)
                guard !present else { continue }
                switch instance.fields[key] {
                case .integer(let value)?: ValidationRule.setBound(.integer(value), minimum: isMinimum, of: &attribute)
                case .real(let value)?: ValidationRule.setBound(.real(value), minimum: isMinimum, of: &attribute)
                default: break
                }
            }
            if instance.classes.contains("NSDerivedAttributeDescription") || instance.fields["NSDerivationExpression"] != nil {
                attribute.isDerived = true
                if let expression = try archive.reference(instance, "NSDerivationExpression") {
                    attribute.derivationExpression = try expressionText(expression, depth: 0)
                }
            }
            return attribute
        }

        mutating func relationship(_ instance: ArchivedInstance) throws -> RelationshipDescription {
            let name = try propertyName(instance)
            var destination = try archive.string(instance, "_NSDestinationEntityName")
            if destination == nil { destination = try entityName(of: try archive.reference(instance, "NSDestinationEntity")) }
            guard let destination else {
                throw ArchiveError(.malformedArchive, "relationship '\(name)' has no destination entity")
            }
            var inverseName = try archive.string(instance, "_NSInverseRelationshipName")
            var inverseEntity: String?
            if let inverse = try archive.reference(instance, "NSInverseRelationship") {
                let inverseInstance = try archive.instance(inverse)
                if inverseName == nil { inverseName = try archive.string(inverseInstance, "NSPropertyName") }
                inverseEntity = try entityName(of: try archive.reference(inverseInstance, "NSEntity"))
            }
            let maxCount = try integer(instance, "NSMaxCount") ?? 0
            let deleteRules: [Int: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
            return RelationshipDescription(
                name: name, destination: destination, inverse: inverseName, inverseEntity: inverseName == nil ? nil : (inverseEntity ?? destination),
                isToMany: maxCount != 1, isOrdered: try bool(instance, "NSIsOrdered"), isOptional: try bool(instance, "NSIsOptional"),
                isTransient: try bool(instance, "NSIsTransient"), isReadOnly: try bool(instance, "NSIsReadOnly"),
                minCount: try integer(instance, "NSMinCount") ?? 0, maxCount: maxCount == -1 ? Int.max : maxCount,
                deleteRule: deleteRules[try integer(instance, "NSDeleteRule") ?? 1] ?? .nullify,
                renamingIdentifier: try archive.string(instance, "NSRenamingIdentifier"),
                versionHashModifier: try archive.string(instance, "NSVersionHashModifier"), userInfo: try userInfo(instance))
        }
    }
}
