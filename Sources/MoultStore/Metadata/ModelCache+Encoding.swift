internal import MoultArchive
public import MoultModel

extension ModelCache {
    /// Why a model's cache cannot be written in Core Data's form: a part Moult cannot archive as Core
    /// Data does. The store is then created with an empty `Z_MODELCACHE`, which Core Data accepts.
    public struct Unencodable: Error, Sendable, Hashable {
        public var message: String
    }

    /// The content of `Z_MODELCACHE.Z_CONTENT` for a model: its NSKeyedArchiver archive in the shape of
    /// Core Data's compiled model (see the <doc:CoreDataStoreLayout> article), as stored DEFLATE blocks.
    ///
    /// - Throws: ``Unencodable`` for a model with a part whose archived form is not known: a regular
    ///   expression from the model XML, and bounds on a Decimal, Boolean or other non-number, non-string,
    ///   non-date attribute (numbers', strings' and dates' bounds are written by rule as
    ///   ``/MoultModel/ValidationRule/boundRules(of:)`` gives them; rules in the forms ``/MoultModel/ValidationRule`` carries are
    ///   written), fetched properties, fetch request templates,
    ///   configurations used with CloudKit, a partial or expression fetch index, a default value of a type other than
    ///   numbers, Booleans, strings and dates, a derivation Moult does not read, composite and
    ///   object ID attributes, and an undefined attribute that is not transient.
    public static func encoded(_ model: ObjectModel) throws(Unencodable) -> [UInt8] {
        // Once per model: an in-place plan of a long chain asks every version for it.
        try model.memoized("ModelCache.encoded") { () throws(Unencodable) in compressed(try archive(model)) }
    }

    /// The NSKeyedArchiver archive of a model, uncompressed.
    public static func archive(_ model: ObjectModel) throws(Unencodable) -> [UInt8] {
        var encoder = Encoder(model: model)
        let root = try encoder.encode()
        return encoder.writer.archive(root: root)
    }

    // MARK: - Encoding

    /// Core Data's archive of a compiled model, object by object. Every entity lists all its
    /// properties, inherited ones included, each a record of its own whose `NSEntity` is that entity;
    /// a relationship's inverse is the inverse's record in its destination.
    private struct Encoder {
        let model: ObjectModel
        var writer = KeyedArchiveWriter()
        /// NSKeyedArchiver writes each distinct string once.
        var strings: [String: Int] = [:]
        var entityUIDs: [String: Int] = [:]
        /// The record of a property in an entity: entity → property → UID.
        var propertyUIDs: [String: [String: Int]] = [:]
        var selfExpression: Int?
        var emptyDictionary: Int?
        /// The predicate and warning lists written for a set of rules: an inherited attribute's records
        /// share them, as in SampleModel2_V2's cache.
        var ruleLists: [[ValidationRule]: (predicates: PropertyListValue, warnings: PropertyListValue)] = [:]

        init(model: ObjectModel) { self.model = model }

        static let entityClasses = ["NSEntityDescription", "NSObject"]
        static let attributeClasses = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
        static let derivedClasses = ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject"]
        static let relationshipClasses = ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]

        mutating func string(_ text: String) -> PropertyListValue {
            if let uid = strings[text] { return .uid(uid) }
            let uid = writer.add(.string(text))
            strings[text] = uid
            return .uid(uid)
        }

        mutating func optionalString(_ text: String?) -> PropertyListValue {
            text.map { string($0) } ?? KeyedArchiveWriter.null
        }

        mutating func stringDictionary(_ entries: [String: String], className: String = "NSDictionary") -> PropertyListValue {
            // Core Data's archives share one empty user info dictionary.
            if entries.isEmpty, className == "NSDictionary" {
                if emptyDictionary == nil, case .uid(let uid) = writer.dictionary([]) { emptyDictionary = uid }
                return .uid(emptyDictionary!)
            }
            let sorted = entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            var pairs: [(key: PropertyListValue, value: PropertyListValue)] = []
            for (key, value) in sorted { pairs.append((string(key), string(value))) }
            return writer.dictionary(pairs, className: className)
        }

        mutating func encode() throws(Unencodable) -> Int {
            if let configuration = model.configurations.first(where: \.usedWithCloudKit) {
                throw Unencodable(message: "the configuration '\(configuration.name)' is used with CloudKit, whose archived form is not confirmed")
            }
            guard model.fetchRequests.isEmpty else {
                throw Unencodable(message: "the model has fetch request templates, whose archived form is not confirmed")
            }
            let root = writer.reserve()
            let names = model.entities.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for name in names { entityUIDs[name] = writer.reserve() }
            for name in names {
                for property in propertyNames(of: name) { propertyUIDs[name, default: [:]][property] = writer.reserve() }
            }
            for name in names { try encodeEntity(name, model: root) }

            // The entities, as Core Data's NSKnownKeysDictionary1: keys in a mapping strategy, values in order.
            let keys = writer.array(names.map { string($0) })
            let mapping = writer.add(
                className: "NSKnownKeysMappingStrategy1", classes: ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"],
                fields: ["keys": keys, "length": .integer(Int64(names.count)), "version": .integer(1)])
            let values = writer.array(names.map { .uid(entityUIDs[$0]!) })
            let entities = writer.add(
                className: "NSKnownKeysDictionary1",
                classes: ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"],
                fields: [
                    "searchMapping": .uid(mapping), "values": values, "emptyToken": string("__empty_slot_token_4c24_98dc_ac1e_b773__"),
                    "version": .integer(1),
                ])
            let identifierSet = writer.array(model.versionIdentifiers.map { string($0) }, className: "NSSet")
            var rootFields: [String: PropertyListValue] = [
                "NSEntities": .uid(entities), "NSFetchRequestTemplates": KeyedArchiveWriter.null, "NSVersionIdentifiers": identifierSet,
            ]
            // Configurations, as SampleModel2_V2's cache has them: name → an NSSet of its entities.
            if !model.configurations.isEmpty {
                var pairs: [(key: PropertyListValue, value: PropertyListValue)] = []
                for configuration in model.configurations {
                    let members = configuration.entityNames.compactMap { entityUIDs[$0] }.map { PropertyListValue.uid($0) }
                    pairs.append((string(configuration.name), writer.array(members, className: "NSSet")))
                }
                rootFields["NSConfigurations"] = writer.dictionary(pairs, className: "NSMutableDictionary")
            }
            writer.set(root, className: "NSManagedObjectModel", fields: rootFields)
            return root
        }

        /// Every property an entity has, its ancestors' first, in the order they are declared.
        func propertyNames(of entity: String) -> [String] {
            var names: [String] = []
            var seen: Set<String> = []
            for ancestor in model.ancestors(of: entity).reversed() + [model.entity(named: entity)].compactMap({ $0 }) {
                for name in ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name) where seen.insert(name).inserted {
                    names.append(name)
                }
            }
            return names
        }

        mutating func encodeEntity(_ name: String, model root: Int) throws(Unencodable) {
            guard let entity = model.entity(named: name) else { return }
            let subject = "entity '\(name)'"
            if let property = entity.fetchedProperties.first {
                throw Unencodable(message: "\(subject) has the fetched property '\(property.name)', whose archived fetch request Moult does not write")
            }
            var properties: [(key: PropertyListValue, value: PropertyListValue)] = []
            // The entity's properties looked up once (a lookup per property re-collects the inherited
            // ones: quadratic in a wide entity).
            let attributes = Dictionary(model.attributes(of: name).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let relationships = Dictionary(model.relationships(of: name).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for property in propertyNames(of: name) {
                let uid = propertyUIDs[name]![property]!
                if let attribute = attributes[property] {
                    try encodeAttribute(attribute, uid: uid, entity: name)
                } else if let relationship = relationships[property] {
                    try encodeRelationship(relationship, uid: uid, entity: name)
                }
                properties.append((string(property), .uid(uid)))
            }
            let subentities = model.subentities(of: name).map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            var fields: [String: PropertyListValue] = [
                "NSEntityName": string(name),
                "NSClassNameForEntity": optionalString(entity.representedClassName),
                "NSManagedObjectModel": .uid(root),
                "NSProperties": writer.dictionary(properties, className: "NSMutableDictionary"),
                "NSRenamingIdentifier": string(entity.renamingIdentifier ?? name),
                "NSSubentities": writer.dictionary(subentities.map { (string($0), .uid(entityUIDs[$0]!)) }, className: "NSMutableDictionary"),
                "NSSuperentity": entity.parentName.flatMap { entityUIDs[$0] }.map { .uid($0) } ?? KeyedArchiveWriter.null,
                "NSUserInfo": stringDictionary(entity.userInfo),
                "NSVersionHashModifier": optionalString(entity.versionHashModifier),
            ]
            if entity.isAbstract { fields["NSIsAbstract"] = .bool(true) }
            if !entity.uniquenessConstraints.isEmpty {
                var tuples: [PropertyListValue] = []
                for constraint in entity.uniquenessConstraints {
                    tuples.append(writer.array(constraint.map { string($0) }, className: "NSMutableArray"))
                }
                fields["NSUniqueTuples"] = writer.array(tuples, className: "NSMutableArray")
            }
            var indexes: [PropertyListValue] = []
            for index in entity.fetchIndexes {
                guard index.partialIndexPredicate == nil else {
                    throw Unencodable(message: "\(subject) has the partial fetch index '\(index.name)', whose archived predicate Moult does not write")
                }
                let indexUID = writer.reserve()
                var elements: [PropertyListValue] = []
                for element in index.elements {
                    guard !element.property.isEmpty, element.expression == nil else {
                        throw Unencodable(message: "\(subject) has the fetch index '\(index.name)' with an expression element")
                    }
                    elements.append(
                        .uid(writer.add(
                            className: "NSFetchIndexElementDescription",
                            fields: [
                                "NSAscending": .bool(element.ascending), "NSFetchIndexDescription": .uid(indexUID),
                                "NSFetchIndexElementType": .integer(element.isRTree ? 1 : 0), "NSPropertyName": string(element.property),
                            ])))
                }
                writer.set(
                    indexUID, className: "NSFetchIndexDescription",
                    fields: [
                        "NSEntity": .uid(entityUIDs[name]!), "NSIndexElements": writer.array(elements, className: "NSMutableArray"),
                        "NSIndexName": string(index.name), "NSPartialIndexPredicate": KeyedArchiveWriter.null,
                    ])
                indexes.append(.uid(indexUID))
            }
            // Core Data writes both lists on every entity of a model with fetch indexes (SampleModel_V2), each
            // binary index also as a compound index: the list of its properties' names. Some caches carry
            // empty lists in models without any (wibosco's); both read the same.
            if model.entities.contains(where: { !$0.fetchIndexes.isEmpty }) {
                var compound: [PropertyListValue] = []
                for index in entity.fetchIndexes where !index.isRTree {
                    compound.append(writer.array(index.elements.map { string($0.property) }, className: "NSMutableArray"))
                }
                fields["NSFetchIndexDescriptions"] = writer.array(indexes, className: "NSMutableArray")
                fields["NSCompoundIndexes"] = writer.array(compound, className: "NSMutableArray")
            }
            writer.set(entityUIDs[name]!, className: "NSEntityDescription", classes: Self.entityClasses, fields: fields)
        }

        /// The property record's common fields and its `_P` (see ``ModelCache``'s format article).
        mutating func propertyFields(
            name: String, entity: String, isOptional: Bool, isReadOnly: Bool, isTransient: Bool, isOrdered: Bool, renamingIdentifier: String?,
            userInfo: [String: String], versionHashModifier: String?
        ) -> [String: PropertyListValue] {
            var packed: Int64 = 0x1 | 0x10 | 0x20
            var fields: [String: PropertyListValue] = [
                "NSPropertyName": string(name), "NSEntity": .uid(entityUIDs[entity]!), "NSRenamingIdentifier": string(renamingIdentifier ?? name),
            ]
            if isOptional {
                fields["NSIsOptional"] = .bool(true)
                packed |= 0x2
            }
            if isReadOnly {
                fields["NSIsReadOnly"] = .bool(true)
                packed |= 0x4
            }
            if isTransient {
                fields["NSIsTransient"] = .bool(true)
                packed |= 0x8
            }
            if isOrdered {
                fields["NSIsOrdered"] = .bool(true)
                packed |= 0x400
            }
            if userInfo.isEmpty { packed |= 0x40 } else { fields["NSUserInfo"] = stringDictionary(userInfo) }
            if let modifier = versionHashModifier, !modifier.isEmpty { fields["NSVersionHashModifier"] = string(modifier) } else { packed |= 0x80 }
            fields["_P"] = .integer(packed)
            return fields
        }

        static func valueClassName(_ attribute: AttributeDescription) -> String? {
            switch attribute.attributeType {
            case .integer16, .integer32, .integer64, .double, .float, .boolean: "NSNumber"
            case .decimal: "NSDecimalNumber"
            case .string: "NSString"
            case .date: "NSDate"
            case .binary: "NSData"
            case .uuid: "NSUUID"
            case .uri: "NSURL"
            case .transformable, .undefined: attribute.customClassName
            case .objectID, .composite: nil
            }
        }

        mutating func defaultValue(_ attribute: AttributeDescription, subject: String) throws(Unencodable) -> PropertyListValue {
            if attribute.attributeType == .date {
                guard let interval = attribute.defaultDateTimeInterval else { return KeyedArchiveWriter.null }
                return .uid(writer.add(className: "NSDate", fields: ["NS.time": .real(interval)]))
            }
            guard let text = attribute.defaultValueString else { return KeyedArchiveWriter.null }
            switch attribute.attributeType {
            case .integer16, .integer32, .integer64:
                if let value = Int64(text) { return .uid(writer.add(.integer(value))) }
            case .double, .float:
                if let value = Double(text) { return .uid(writer.add(.real(value))) }
            case .boolean:
                switch text.lowercased() {
                case "yes", "true", "1": return .uid(writer.add(.bool(true)))
                case "no", "false", "0": return .uid(writer.add(.bool(false)))
                default: break
                }
            case .string:
                return string(text)
            default:
                break
            }
            throw Unencodable(message: "\(subject) has the default value '\(text)', whose archived form for its type Moult does not write")
        }

        mutating func encodeAttribute(_ attribute: AttributeDescription, uid: Int, entity: String) throws(Unencodable) {
            let subject = "the attribute '\(entity).\(attribute.name)'"
            guard [.objectID, .composite].contains(attribute.attributeType) == false else {
                throw Unencodable(message: "\(subject) is of type \(attribute.attributeType.rawValue), whose archived form is not confirmed")
            }
            // Undefined: type code 0, as Photos' cache holds `Asset.boundedByRect` (the shared Photos model was
            // rebuilt from it). Core Data allows the type only on a transient attribute; a stored one is not
            // written.
            guard attribute.attributeType != .undefined || attribute.isTransient else {
                throw Unencodable(message: "\(subject) is of type Undefined but not transient, which Core Data does not compile")
            }
            // The model XML's bounds, by rule: Core Data's attribute lists them as rules after its own
            // (the StoreLayout article gives the evidence). A pattern, and bounds of other types, are refused.
            let boundRules: [ValidationRule]
            do {
                boundRules = try ValidationRule.boundRules(of: attribute)
            } catch {
                throw Unencodable(message: "\(subject) \(error.message)")
            }
            let rules = attribute.validationRules + boundRules
            var fields = propertyFields(
                name: attribute.name, entity: entity, isOptional: attribute.isOptional, isReadOnly: attribute.isReadOnly || attribute.isDerived,
                isTransient: attribute.isTransient, isOrdered: false, renamingIdentifier: attribute.renamingIdentifier,
                userInfo: attribute.userInfo, versionHashModifier: attribute.versionHashModifier)
            fields["NSAttributeType"] = .integer(Int64(attribute.attributeType.code))
            fields["NSAttributeValueClassName"] = optionalString(Self.valueClassName(attribute))
            fields["NSDefaultValue"] = try defaultValue(attribute, subject: subject)
            fields["NSValueTransformerName"] = optionalString(attribute.valueTransformerName)
            fields["NSFlagsKey"] = .integer((attribute.allowsExternalBinaryDataStorage ? 0x04 : 0) | (attribute.preserveAfterDeletion ? 0x10 : 0))
            // Written only when set, as Core Data writes it (apptentive-ios' framework 754 cache, Photos').
            if attribute.isIndexed { fields["NSIsIndexed"] = .bool(true) }
            if !rules.isEmpty {
                let lists = try ruleLists(rules, subject: subject)
                fields["NSValidationPredicates"] = lists.predicates
                fields["NSValidationWarnings"] = lists.warnings
                // `_P`: 0x10 and 0x20 say "no predicates", "no warnings".
                if case .integer(let packed)? = fields["_P"] { fields["_P"] = .integer(packed & ~0x30) }
            }
            guard attribute.isDerived else {
                writer.set(uid, className: "NSAttributeDescription", classes: Self.attributeClasses, fields: fields)
                return
            }
            let expression: DerivationExpression
            do {
                expression = try DerivationExpression(attribute.derivationExpression ?? "")
            } catch {
                throw Unencodable(message: "\(subject): \(error.message)")
            }
            fields["NSDerivationExpression"] = .uid(encodeExpression(expression))
            fields["NSFilteringPredicate"] = KeyedArchiveWriter.null
            writer.set(uid, className: "NSDerivedAttributeDescription", classes: Self.derivedClasses, fields: fields)
        }

        /// An attribute's validation rules as SampleModel2_V2's cache holds `Book.title`'s: `NSArray`s of
        /// the predicates and of the warnings (strings, or error codes as numbers).
        mutating func ruleLists(_ rules: [ValidationRule], subject: String) throws(Unencodable) -> (predicates: PropertyListValue, warnings: PropertyListValue) {
            if let lists = ruleLists[rules] { return lists }
            var predicates: [PropertyListValue] = []
            var warnings: [PropertyListValue] = []
            for rule in rules {
                predicates.append(try rulePredicate(rule.predicate, subject: subject))
                switch rule.warning {
                case .message(let text): warnings.append(string(text))
                case .code(let code): warnings.append(.uid(writer.add(.integer(Int64(code)))))
                }
            }
            let lists = (predicates: writer.array(predicates), warnings: writer.array(warnings))
            ruleLists[rules] = lists
            return lists
        }

        mutating func rulePredicate(_ predicate: ValidationRule.Predicate, subject: String) throws(Unencodable) -> PropertyListValue {
            switch predicate {
            case .compound(let kind, let parts):
                var subpredicates: [PropertyListValue] = []
                for part in parts { subpredicates.append(try rulePredicate(part, subject: subject)) }
                return .uid(writer.add(
                    className: "NSCompoundPredicate", classes: ["NSCompoundPredicate", "NSPredicate", "NSObject"],
                    fields: ["NSCompoundPredicateType": .integer(Int64(kind.rawValue)), "NSSubpredicates": writer.array(subpredicates)]))
            case .comparison(let left, let op, let right):
                guard ValidationRule.Operator.knownTypes.contains(op.type) else {
                    throw Unencodable(message: "\(subject) has a validation rule with the operator type \(op.type), whose archived form is not confirmed")
                }
                let leftValue = ruleExpression(left), rightValue = ruleExpression(right)
                var fields: [String: PropertyListValue] = ["NSModifier": .integer(Int64(op.modifier)), "NSOperatorType": .integer(Int64(op.type))]
                let className: String
                switch op.type {
                case 0...3:
                    // The variant is the type in every record the fixtures hold.
                    className = "NSComparisonPredicateOperator"
                    fields["NSVariant"] = .integer(Int64(op.type))
                    fields["NSOptions"] = .integer(Int64(op.options))
                case 4:
                    className = "NSEqualityPredicateOperator"
                    fields["NSNegate"] = .bool(false)
                    fields["NSOptions"] = .integer(Int64(op.options))
                default:
                    className = "NSInPredicateOperator"
                    fields["NSFlags"] = .integer(Int64(op.options))
                }
                let operatorUID = writer.add(className: className, classes: [className, "NSPredicateOperator", "NSObject"], fields: fields)
                return .uid(writer.add(
                    className: "NSComparisonPredicate", classes: ["NSComparisonPredicate", "NSPredicate", "NSObject"],
                    fields: ["NSLeftExpression": leftValue, "NSPredicateOperator": .uid(operatorUID), "NSRightExpression": rightValue]))
            }
        }

        mutating func evaluatedObject() -> Int {
            if selfExpression == nil {
                selfExpression = writer.add(
                    className: "NSSelfExpression", classes: ["NSSelfExpression", "NSExpression", "NSObject"], fields: ["NSExpressionType": .integer(1)])
            }
            return selfExpression!
        }

        mutating func ruleExpression(_ expression: ValidationRule.Expression) -> PropertyListValue {
            switch expression {
            case .evaluatedObject:
                return .uid(evaluatedObject())
            case .key(let key):
                return keyPathExpression([key])
            case .constant(let constant):
                let value: PropertyListValue
                switch constant {
                case .null: value = KeyedArchiveWriter.null
                case .integer(let number): value = .uid(writer.add(.integer(number)))
                case .real(let number): value = .uid(writer.add(.real(number)))
                case .bool(let flag): value = .uid(writer.add(.bool(flag)))
                case .string(let text): value = string(text)
                }
                return .uid(writer.add(
                    className: "NSConstantValueExpression", classes: ["NSConstantValueExpression", "NSExpression", "NSObject"],
                    fields: ["NSConstantValue": value, "NSExpressionType": .integer(0)]))
            }
        }

        /// `valueForKey:` of a key path on the evaluated object, as Core Data archives `pages`.
        mutating func keyPathExpression(_ path: [String]) -> PropertyListValue {
            let selfUID = evaluatedObject()
            let specifier = writer.add(
                className: "NSKeyPathSpecifierExpression", classes: ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
                fields: ["NSExpressionType": .integer(10), "NSKeyPath": string(path.joined(separator: "."))])
            return .uid(writer.add(
                className: "NSKeyPathExpression", classes: ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
                fields: [
                    "NSOperand": .uid(selfUID), "NSSelectorName": string("valueForKey:"), "NSExpressionType": .integer(3),
                    "NSArguments": writer.array([.uid(specifier)], className: "NSMutableArray"),
                ]))
        }

        /// A derivation as Core Data archives it: a key path expression, or a function of
        /// `_NSPredicateUtilities` (`count:` of `pages` in CoreDataPlus' cache; the others by the same rule).
        mutating func encodeExpression(_ expression: DerivationExpression) -> Int {
            let selector: String
            var arguments: [PropertyListValue] = []
            switch expression.form {
            case .keyPath(let path):
                guard case .uid(let uid) = keyPathExpression(path) else { return 0 }
                return uid
            case .count(let path):
                selector = "count:"
                arguments = [keyPathExpression(path)]
            case .aggregate(let aggregate, let path):
                selector = aggregate.rawValue + ":"
                arguments = [keyPathExpression(path)]
            case .function(let function, let path):
                selector = function.rawValue + ":"
                arguments = [keyPathExpression(path)]
            case .now:
                selector = "now"
            }
            let operand = writer.add(
                className: "NSConstantValueExpression", classes: ["NSConstantValueExpression", "NSExpression", "NSObject"],
                fields: ["NSExpressionType": .integer(0), "NSConstantValueClassName": string("_NSPredicateUtilities")])
            return writer.add(
                className: "NSFunctionExpression", classes: ["NSFunctionExpression", "NSExpression", "NSObject"],
                fields: [
                    "NSOperand": .uid(operand), "NSSelectorName": string(selector), "NSExpressionType": .integer(4),
                    "NSArguments": writer.array(arguments),
                ])
        }

        mutating func encodeRelationship(_ relationship: RelationshipDescription, uid: Int, entity: String) throws(Unencodable) {
            var fields = propertyFields(
                name: relationship.name, entity: entity, isOptional: relationship.isOptional, isReadOnly: relationship.isReadOnly,
                isTransient: relationship.isTransient, isOrdered: relationship.isOrdered, renamingIdentifier: relationship.renamingIdentifier,
                userInfo: relationship.userInfo, versionHashModifier: relationship.versionHashModifier)
            let rules: [DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]
            fields["NSDeleteRule"] = .integer(rules[relationship.deleteRule] ?? 1)
            fields["NSDestinationEntity"] = entityUIDs[relationship.destinationEntity].map { .uid($0) } ?? KeyedArchiveWriter.null
            fields["_NSDestinationEntityName"] = string(relationship.destinationEntity)
            fields["NSMinCount"] = .integer(Int64(relationship.minCount))
            // Unbounded: -1 when read from a cache (Int.max here), 0 as Xcode writes it.
            fields["NSMaxCount"] = .integer(relationship.isToMany ? (relationship.maxCount == Int.max ? -1 : Int64(relationship.maxCount)) : 1)
            if let inverse = relationship.inverseName {
                let owner = relationship.inverseEntity ?? relationship.destinationEntity
                fields["NSInverseRelationship"] = propertyUIDs[owner]?[inverse].map { .uid($0) } ?? KeyedArchiveWriter.null
                fields["_NSInverseRelationshipName"] = string(inverse)
            } else {
                // Both keys, null: as Core Data (framework 973, 1523) and SwiftData write a relationship
                // without an inverse (Photos 10.15's codec, CartKit's modifiers and items).
                fields["NSInverseRelationship"] = KeyedArchiveWriter.null
                fields["_NSInverseRelationshipName"] = KeyedArchiveWriter.null
            }
            writer.set(uid, className: "NSRelationshipDescription", classes: Self.relationshipClasses, fields: fields)
        }
    }
}
