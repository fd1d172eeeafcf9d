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
/// string, date), the model's configurations, and an attribute's validation rules in the forms
/// ``ValidationRule`` carries. Fetched properties are left out: they enter no hash and no column.
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
    /// - Throws: ``StoreError`` `.corrupt` (bad input, 65) when the cache is there but cannot be decoded.
    public static func model(in database: Database) throws(StoreError) -> ObjectModel? {
        guard try database.tableExists("Z_MODELCACHE") else { return nil }
        guard case .data(let blob)? = try database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else { return nil }
        return try model(compressed: blob, path: database.path)
    }

    /// Decodes the content of `Z_MODELCACHE.Z_CONTENT`.
    public static func model(compressed: [UInt8], path: String? = nil) throws(StoreError) -> ObjectModel {
        let archive: [UInt8]
        do {
            archive = try RawDeflate.inflate(compressed, limit: inflatedLimit)
        } catch {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) is not valid DEFLATE data: \(error.message)", path: path)
        }
        do {
            return try decode(KeyedArchive(archive))
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

    private struct Decoder {
        let archive: KeyedArchive
        /// Steps taken, bounded so that a hostile archive cannot make the walk long.
        var steps = 0

        mutating func step() throws(ArchiveError) {
            steps += 1
            if steps > 10_000_000 { throw ArchiveError(.malformedArchive, "the model archive is too large to walk") }
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
            return try ObjectModel(entities: entities, versionIdentifier: identifier, configurations: configurations)
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

        mutating func entity(_ instance: ArchivedInstance) throws -> EntityDescription {
            guard let name = try archive.string(instance, "NSEntityName") else {
                throw ArchiveError(.malformedArchive, "an entity has no name", location: "$objects[\(instance.uid)]")
            }
            var entity = EntityDescription(
                name: name, parent: try entityName(of: try archive.reference(instance, "NSSuperentity")),
                isAbstract: try bool(instance, "NSIsAbstract"),
                versionHashModifier: try archive.string(instance, "NSVersionHashModifier"),
                renamingIdentifier: try archive.string(instance, "NSRenamingIdentifier"))
            entity.representedClassName = try archive.string(instance, "NSClassNameForEntity")
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
                    }
                    // Fetched properties (and any other kind) have no column and no hash: left out.
                }
                entity.attributes.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                entity.relationships.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
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
                    elements.append(.init(property: try archive.string(element, "NSPropertyName") ?? "", type: type, ascending: ascending))
                }
            }
            var partial: String?
            if let predicate = try archive.reference(instance, "NSPartialIndexPredicate") {
                partial = try predicateText(predicate, depth: 0)
            }
            return FetchIndexDescription(name: name, elements: elements, partialIndexPredicate: partial)
        }

        /// A partial-index predicate as text: comparisons of a key path with a constant, joined by AND
        /// (what the layout writes); any other form is spelt so that the layout refuses it.
        mutating func predicateText(_ uid: Int, depth: Int) throws -> String {
            try step()
            guard depth < 32 else { throw ArchiveError(.malformedArchive, "a predicate nests too deeply") }
            let predicate = try archive.instance(uid)
            switch predicate.className {
            case "NSCompoundPredicate":
                var parts: [String] = []
                if let list = try archive.reference(predicate, "NSSubpredicates") {
                    for part in try archive.elements(list) { parts.append(try predicateText(part, depth: depth + 1)) }
                }
                guard try integer(predicate, "NSCompoundPredicateType") == 1 else { return "<NSCompoundPredicate>" }
                return parts.joined(separator: " AND ")
            case "NSComparisonPredicate":
                guard let left = try archive.reference(predicate, "NSLeftExpression"),
                    let right = try archive.reference(predicate, "NSRightExpression"),
                    let operatorInstance = try archive.instance(predicate, "NSPredicateOperator")
                else { return "<NSComparisonPredicate>" }
                let symbols = [0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!="]
                var type = try integer(operatorInstance, "NSOperatorType") ?? -1
                if type == 4, try bool(operatorInstance, "NSNegate") { type = 5 }
                guard let symbol = symbols[type] else { return "<operator \(type)>" }
                return "\(try expressionText(left, depth: depth + 1)) \(symbol) \(try constantText(right))"
            default:
                return "<\(predicate.className)>"
            }
        }

        func constantText(_ uid: Int) throws -> String {
            let expression = try archive.instance(uid)
            guard expression.className == "NSConstantValueExpression" else { return "<\(expression.className)>" }
            switch try archive.value(expression, "NSConstantValue") {
            case nil: return "nil"
            case .integer(let value)?: return String(value)
            case .real(let value)?: return String(value)
            case .bool(let value)?: return value ? "YES" : "NO"
            default: return "<constant>"
            }
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
            attribute.versionHashModifier = try archive.string(instance, "NSVersionHashModifier")
            attribute.renamingIdentifier = try archive.string(instance, "NSRenamingIdentifier")
            attribute.customClassName = type == .transformable || type == .undefined ? try archive.string(instance, "NSAttributeValueClassName") : nil
            // A default value of a plain type, as the model's text (an archived object of another class,
            // a transformable's, is left out).
            if let uid = try archive.reference(instance, "NSDefaultValue"), !archive.isNull(uid) {
                switch try archive.object(uid) {
                case .integer(let value): attribute.defaultValueString = type == .boolean ? (value != 0 ? "YES" : "NO") : String(value)
                case .real(let value): attribute.defaultValueString = String(value)
                case .bool(let value): attribute.defaultValueString = value ? "YES" : "NO"
                case .string(let text) where type == .string: attribute.defaultValueString = text
                case .dictionary where type == .date:
                    if case .real(let time)? = try archive.instance(uid).fields["NS.time"] { attribute.defaultDateTimeInterval = time }
                default: break
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

        /// A property's validation rules: `NSValidationPredicates` paired with `NSValidationWarnings`
        /// (strings or error codes), as SampleModel2_V2's `Book.title` has them. Lists of unequal length,
        /// or a predicate in a form ``ValidationRule`` does not carry, give no rules: a rule enters no
        /// hash and no column, and a rule half read would be a different rule.
        mutating func validationRules(_ instance: ArchivedInstance) throws -> [ValidationRule] {
            guard let predicatesUID = try archive.reference(instance, "NSValidationPredicates"), !archive.isNull(predicatesUID),
                let warningsUID = try archive.reference(instance, "NSValidationWarnings"), !archive.isNull(warningsUID)
            else { return [] }
            let predicates = try archive.elements(predicatesUID), warnings = try archive.elements(warningsUID)
            guard predicates.count == warnings.count else { return [] }
            var rules: [ValidationRule] = []
            for (predicateUID, warningUID) in zip(predicates, warnings) {
                try step()
                let warning: ValidationRule.Warning
                switch try archive.object(warningUID) {
                case .string(let text): warning = .message(text)
                case .integer(let code): warning = .code(Int(clamping: code))
                default:
                    guard let text = try archive.string(warningUID) else { return [] }
                    warning = .message(text)
                }
                guard let predicate = try rulePredicate(predicateUID, depth: 0) else { return [] }
                rules.append(ValidationRule(predicate: predicate, warning: warning))
            }
            return rules
        }

        /// A validation predicate: `NSCompoundPredicate` (`NSCompoundPredicateType`, `NSSubpredicates`)
        /// or `NSComparisonPredicate` (`NSLeftExpression`, `NSPredicateOperator`, `NSRightExpression`).
        mutating func rulePredicate(_ uid: Int, depth: Int) throws -> ValidationRule.Predicate? {
            try step()
            guard depth < 32 else { throw ArchiveError(.malformedArchive, "a validation predicate nests too deeply") }
            let predicate = try archive.instance(uid)
            switch predicate.className {
            case "NSCompoundPredicate":
                guard let kind = ValidationRule.CompoundKind(rawValue: try integer(predicate, "NSCompoundPredicateType") ?? -1),
                    let list = try archive.reference(predicate, "NSSubpredicates")
                else { return nil }
                var parts: [ValidationRule.Predicate] = []
                for part in try archive.elements(list) {
                    guard let decoded = try rulePredicate(part, depth: depth + 1) else { return nil }
                    parts.append(decoded)
                }
                return .compound(kind, parts)
            case "NSComparisonPredicate":
                guard let left = try archive.reference(predicate, "NSLeftExpression"),
                    let right = try archive.reference(predicate, "NSRightExpression"),
                    let operatorInstance = try archive.instance(predicate, "NSPredicateOperator"),
                    let leftExpression = try ruleExpression(left), let rightExpression = try ruleExpression(right),
                    let type = try integer(operatorInstance, "NSOperatorType"), ValidationRule.Operator.knownTypes.contains(type),
                    operatorInstance.className == Self.operatorClass(type), !(try bool(operatorInstance, "NSNegate"))
                else { return nil }
                // A comparison operator's variant is its type in every record the fixtures hold (3 for >=, 1 for <=).
                if operatorInstance.className == "NSComparisonPredicateOperator", try integer(operatorInstance, "NSVariant") != type { return nil }
                let options = try integer(operatorInstance, operatorInstance.className == "NSInPredicateOperator" ? "NSFlags" : "NSOptions") ?? 0
                let modifier = try integer(operatorInstance, "NSModifier") ?? 0
                return .comparison(leftExpression, ValidationRule.Operator(type: type, modifier: modifier, options: options), rightExpression)
            default:
                return nil
            }
        }

        /// The class Foundation archives an operator type as.
        static func operatorClass(_ type: Int) -> String {
            switch type {
            case 0...3: "NSComparisonPredicateOperator"
            case 4: "NSEqualityPredicateOperator"
            default: "NSInPredicateOperator"
            }
        }

        /// An expression of a validation predicate: `SELF`, `valueForKey:` of a key of `SELF`, or a constant.
        func ruleExpression(_ uid: Int) throws -> ValidationRule.Expression? {
            let expression = try archive.instance(uid)
            switch expression.className {
            case "NSSelfExpression":
                return .evaluatedObject
            case "NSKeyPathExpression":
                guard try archive.string(expression, "NSSelectorName") == "valueForKey:",
                    let operand = try archive.instance(expression, "NSOperand"), operand.className == "NSSelfExpression",
                    let arguments = try archive.reference(expression, "NSArguments")
                else { return nil }
                let elements = try archive.elements(arguments)
                guard elements.count == 1, let specifier = try? archive.instance(elements[0]),
                    specifier.className == "NSKeyPathSpecifierExpression", let key = try archive.string(specifier, "NSKeyPath")
                else { return nil }
                return .key(key)
            case "NSConstantValueExpression":
                guard let uid = try archive.reference(expression, "NSConstantValue") else { return .constant(.null) }
                if archive.isNull(uid) { return .constant(.null) }
                switch try archive.object(uid) {
                case .integer(let value): return .constant(.integer(value))
                case .real(let value): return .constant(.real(value))
                case .bool(let value): return .constant(.bool(value))
                case .string(let text): return .constant(.string(text))
                default:
                    guard let text = try? archive.string(uid) else { return nil }
                    return .constant(.string(text))
                }
            default:
                return nil
            }
        }

        /// A derivation expression as Xcode writes it: a key path, or `keyPath.@count` for the function
        /// `count:` of a key path. Other functions are spelt as Foundation prints them, `selector(arguments)`
        /// (`canonical:(name)`, `sum:(items.price)`, `now()`), which ``DerivationExpression`` reads.
        mutating func expressionText(_ uid: Int, depth: Int) throws -> String {
            try step()
            guard depth < 32 else { throw ArchiveError(.malformedArchive, "a derivation expression nests too deeply") }
            let expression = try archive.instance(uid)
            switch expression.className {
            case "NSKeyPathSpecifierExpression":
                return try archive.string(expression, "NSKeyPath") ?? ""
            case "NSKeyPathExpression":
                if let arguments = try archive.reference(expression, "NSArguments"), let last = try archive.elements(arguments).last {
                    return try expressionText(last, depth: depth + 1)
                }
                return try archive.string(expression, "NSKeyPath") ?? ""
            case "NSFunctionExpression":
                let selector = try archive.string(expression, "NSSelectorName") ?? ""
                var arguments: [String] = []
                if let list = try archive.reference(expression, "NSArguments") {
                    for argument in try archive.elements(list) { arguments.append(try expressionText(argument, depth: depth + 1)) }
                }
                if selector == "count:", arguments.count == 1 { return arguments[0] + ".@count" }
                // Foundation's printing of a function expression: `canonical:(name)`, `sum:(items.price)`, `now()`.
                return "\(selector)(\(arguments.joined(separator: ", ")))"
            default:
                return "<\(expression.className)>"
            }
        }

        func relationship(_ instance: ArchivedInstance) throws -> RelationshipDescription {
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
                versionHashModifier: try archive.string(instance, "NSVersionHashModifier"))
        }
    }
}
