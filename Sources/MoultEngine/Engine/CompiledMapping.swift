import Foundation
package import MoultExpressions
package import MoultMapping
package import MoultModel
package import MoultStore

/// One entity mapping, compiled once for the whole run: its expressions, its filter (in SQL when the
/// pushdown compiler accepts it), the columns it reads and writes.
package final class CompiledMapping {
    /// Index in the plan's mapping list (and the association table's mapping number).
    package let index: Int
    /// Which of the given mapping models the mapping comes from.
    let mappingModelIndex: Int
    /// The name, unique in the plan.
    package let name: String
    package let mapping: EntityMapping
    package let source: EntityLayout?
    package let destination: EntityLayout?
    let sourceSchema: KeySchema?
    let policy: any EntityMigrationPolicy

    /// The filter, when it runs in Swift.
    package let filter: CompiledPredicate?
    /// The filter, when it runs in SQL.
    let filterSQL: SQLCondition?

    /// For each attribute of the destination layout (in layout order): how to get its value.
    package let attributeValues: [AttributeValueSource]
    /// For each attribute of the destination layout: the change of format its value gets, when it copies a
    /// Binary Data attribute whose `allowsExternalBinaryDataStorage` differs (see ``ExternalDataConversion``).
    package let externalDataConversions: [ExternalDataReference.Conversion?]
    /// Relationship mappings, compiled.
    package let relationships: [(name: String, expression: CompiledExpression)]
    /// For each relationship, the shape Core Data's mapping models nearly always have,
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<M>", $source[.<to-one>])`,
    /// recognised once so that stage 2 looks the association up directly instead of evaluating the
    /// expression per object; nil for any other expression.
    let directLookups: [DirectLookup?]
    /// Relationship mappings left out of stage 2 because another mapping's to-one writes the same
    /// links (see ``RepeatedLinks``).
    let omittedRelationships: Set<String>
    /// To-ones written with the row in stage 1 (see ``ToOnesAtInsert``), left out of stage 2.
    let insertedToOnes: [ToOnesAtInsert.Relationship]
    /// Whether this mapping's associations are mirrored in a table of the destination, because a later
    /// mapping's to-ones are written at insert from them (see `EngineWorkTables.mirror(ofMapping:)`).
    let mirrorsAssociations: Bool

    /// Stage 1 as one `INSERT … SELECT` per chunk, when the mapping allows it; nil otherwise: one
    /// destination object per source object, every attribute a constant or a plain copy of a source
    /// attribute of the same kind, the filter (if any) in SQL, the default policy. It writes exactly
    /// what the per-object path writes, without bringing the values into Swift.
    let bulkCopy: EngineBulkCopy?

    /// Whether the built-in uniquing policy keeps its values in the mapping's key table (see
    /// `EngineKeyMap`) rather than in the policies' state: the run's decision (see ``ExecutionDecisions/keyMaps``).
    let keysInMap: Bool
    /// Stage 1 of the built-in uniquing policy as set operations per chunk, when the mapping allows it
    /// (see ``uniquing(_:index:source:destination:attributeValues:conversions:inSQL:filterSQL:tableEntityCount:mirror:)``).
    let keyMapCopy: EngineKeyMap?
    /// Whether each object keeps its source object's primary key: the run's decision (see ``KeptKeys``).
    let keepsKeys: Bool
    /// Whether a kept key is looked up first, because another mapping into the same hierarchy reads
    /// the same source entity (see ``KeptKeys/checked``): a key taken gets a fresh one.
    let checksKeptKeys: Bool

    /// Stage 2's read, when every relationship is a direct lookup and the policy the default: only the
    /// keys and the to-one columns the lookups use, not the attributes.
    let keysOnlyRead: KeysOnlyRead?

    struct KeysOnlyRead {
        let read: EngineChunkQueries.KeysRead
        /// The slot of each to-one the read gives, in its order.
        let slots: [Int]
    }

    /// A relationship value read straight from the association table.
    struct DirectLookup {
        /// The entity mapping whose destinations the relationship holds.
        let mappingName: String
        /// The source slot of the to-one relationship whose object is looked up; nil for `$source` itself.
        let slot: Int?
    }
    /// To-many relationships of the source that the mapping's expressions use, loaded per chunk, with
    /// their slot (after the cursor's attribute and to-one slots).
    let toManyLoads: [(slot: Int, name: String)]

    package enum AttributeValueSource {
        /// An expression, and the value a nil result stands for (the default of a required attribute:
        /// Core Data fills a required attribute that became non-optional with its default).
        case expression(CompiledExpression, defaultForNil: Value)
        case constant(Value)
    }

    package init(
        index: Int, mappingModelIndex: Int, name: String, mapping: EntityMapping, sourceModel: ObjectModel, destinationModel: ObjectModel,
        sourceLayout: StoreLayout, destinationLayout: StoreLayout, policy: any EntityMigrationPolicy,
        variables: VariableLayout, sqlAccepts: (String) -> Bool = { _ in true }, omitting omittedRelationships: Set<String> = [],
        insertedToOnes: [ToOnesAtInsert.Relationship] = [], mirrorsAssociations: Bool = false, keysInMap: Bool = false,
        keepsKeys: Bool = false, checksKeptKeys: Bool = false
    ) throws(MigrationError) {
        self.index = index
        self.keysInMap = keysInMap
        self.keepsKeys = keepsKeys
        self.checksKeptKeys = keepsKeys && checksKeptKeys
        self.omittedRelationships = omittedRelationships
        self.insertedToOnes = insertedToOnes
        self.mirrorsAssociations = mirrorsAssociations
        self.mappingModelIndex = mappingModelIndex
        self.name = name
        self.mapping = mapping
        self.policy = policy
        func invalid(_ message: String, property: String? = nil, underlying: (any Error)? = nil) -> MigrationError {
            MigrationError(
                .invalidMapping, property.map { "property '\($0)': \(message)" } ?? message, mapping: mapping.name,
                underlying: underlying)
        }

        if let sourceName = mapping.sourceEntityName {
            guard let layout = sourceLayout.entity(named: sourceName) else {
                throw invalid("the source entity '\(sourceName)' is not in the source model")
            }
            source = layout
            sourceSchema = Self.schema(of: layout)
        } else {
            source = nil
            sourceSchema = nil
        }
        if let destinationName = mapping.destinationEntityName {
            guard let layout = destinationLayout.entity(named: destinationName) else {
                throw invalid("the destination entity '\(destinationName)' is not in the destination model")
            }
            destination = layout
        } else {
            destination = nil
        }

        let sourceTableEntityCount = source.flatMap { sourceLayout.table(named: $0.table)?.entityNumbers.count } ?? 1
        var schemas: [String: KeySchema] = [:]
        for entity in sourceLayout.entities { schemas[entity.name] = Self.schema(of: entity) }
        let compiler = ExpressionCompiler(
            schema: sourceSchema ?? KeySchema(keys: []), schemas: schemas, variables: variables)
        func compileExpression(_ text: String, property: String) throws(MigrationError) -> CompiledExpression {
            do {
                return try compiler.compileExpression(text)
            } catch {
                throw invalid("the value expression \(text) does not compile", property: property, underlying: error)
            }
        }

        let attributeValues = try Self.attributeValues(
            of: mapping, destination: destination, destinationModel: destinationModel, sourceSchema: sourceSchema, compile: compileExpression)
        self.attributeValues = attributeValues
        externalDataConversions = ExternalDataConversion.of(
            mapping, attributes: destination?.attributes ?? [], values: attributeValues, sourceModel: sourceModel, destinationModel: destinationModel)

        let (relationships, relationshipMappings) = try Self.relationships(
            of: mapping, destination: destination, destinationModel: destinationModel, sourceSchema: sourceSchema,
            leavingOut: omittedRelationships.union(insertedToOnes.map(\.name)), compile: compileExpression, invalid: invalid)
        self.relationships = relationships
        let schema = sourceSchema
        let sourceLayout = source
        directLookups = relationships.map { Self.directLookup($0.expression.node, schema: schema, source: sourceLayout) }

        let toManyLoads = Self.toManyLoads(of: mapping, relationshipMappings: relationshipMappings, source: source, sourceSchema: sourceSchema)
        self.toManyLoads = toManyLoads

        (filter, filterSQL) = try Self.filter(
            of: mapping, source: source, readsToManys: !toManyLoads.isEmpty, sqlAccepts: sqlAccepts, compiler: compiler)
        keysOnlyRead = Self.keysOnlyRead(
            policy: policy, source: source, schema: sourceSchema, directLookups: directLookups, hasSwiftFilter: filter != nil,
            filterSQL: filterSQL)
        bulkCopy = Self.bulkCopy(
            policy: policy, source: source, destination: destination, attributeValues: attributeValues,
            externalDataConversions: externalDataConversions, hasSwiftFilter: filter != nil, filterSQL: filterSQL,
            tableEntityCount: sourceTableEntityCount, insertedToOnes: insertedToOnes, mirror: mirrorsAssociations ? index : nil,
            keys: keepsKeys ? (checksKeptKeys ? .keptUnlessTaken : .kept) : .numbered)
        keyMapCopy = Self.uniquing(
            policy, index: index, source: source, destination: destination, attributeValues: attributeValues,
            conversions: externalDataConversions, inSQL: filter == nil && insertedToOnes.isEmpty && toManyLoads.isEmpty, filterSQL: filterSQL,
            tableEntityCount: sourceTableEntityCount, mirror: mirrorsAssociations)
    }

    // MARK: - The parts of a compiled mapping

    /// The value of each attribute of the destination entity, in its layout's order: an expression
    /// (the property mapping's, or the source attribute of the same name in a copy), or a constant (the
    /// model's default) where nothing maps it.
    private static func attributeValues(
        of mapping: EntityMapping, destination: EntityLayout?, destinationModel: ObjectModel, sourceSchema: KeySchema?,
        compile compileExpression: (String, String) throws(MigrationError) -> CompiledExpression
    ) throws(MigrationError) -> [AttributeValueSource] {
        var attributeValues: [AttributeValueSource] = []
        guard let destination, let destinationName = mapping.destinationEntityName else { return [] }
        for column in destination.attributes {
            let description = destinationModel.attribute(named: column.name, of: destinationName)
            let defaultForNil: Value = description.map { $0.isOptional ? .null : DefaultValues.value(of: $0) } ?? .null
            if let propertyMapping = mapping.attributeMapping(named: column.name) {
                let text = propertyMapping.valueExpression ?? PropertyMapping.sourceValue(column.name)
                if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: column.name) == nil {
                    attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
                } else {
                    attributeValues.append(.expression(try compileExpression(text, column.name), defaultForNil: defaultForNil))
                }
            } else if mapping.effectiveType == .copy, sourceSchema?.slot(of: column.name) != nil {
                attributeValues.append(
                    .expression(try compileExpression(PropertyMapping.sourceValue(column.name), column.name), defaultForNil: defaultForNil))
            } else {
                attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
            }
        }
        return attributeValues
    }

    /// The relationships the mapping sets, with their compiled values, and every relationship mapping
    /// it runs (a copy's implicit ones included), less those `leavingOut` names (left out of stage 2, or
    /// written at insert).
    private static func relationships(
        of mapping: EntityMapping, destination: EntityLayout?, destinationModel: ObjectModel, sourceSchema: KeySchema?,
        leavingOut: Set<String>, compile compileExpression: (String, String) throws(MigrationError) -> CompiledExpression,
        invalid: (String, String?, (any Error)?) -> MigrationError
    ) throws(MigrationError) -> (relationships: [(name: String, expression: CompiledExpression)], mappings: [PropertyMapping]) {
        var relationships: [(name: String, expression: CompiledExpression)] = []
        var relationshipMappings = mapping.relationshipMappings
        if mapping.effectiveType == .copy, let destinationName = mapping.destinationEntityName {
            for relationship in destinationModel.relationships(of: destinationName)
            where !relationship.isTransient && !relationshipMappings.contains(where: { $0.name == relationship.name }) {
                relationshipMappings.append(PropertyMapping(relationship.name))
            }
        }
        relationshipMappings.removeAll { leavingOut.contains($0.name) }
        for propertyMapping in relationshipMappings {
            guard let destination else { break }
            guard destination.toOne(named: propertyMapping.name) != nil || destination.toMany(named: propertyMapping.name) != nil
            else {
                if destinationModel.relationship(named: propertyMapping.name, of: destination.name)?.isTransient == true { continue }
                throw invalid("the destination entity '\(destination.name)' has no relationship of this name", propertyMapping.name, nil)
            }
            let text =
                propertyMapping.valueExpression
                ?? PropertyMapping.destinationInstances(sourceRelationship: propertyMapping.name)
            if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: propertyMapping.name) == nil { continue }
            relationships.append((propertyMapping.name, try compileExpression(text, propertyMapping.name)))
        }
        return (relationships, relationshipMappings)
    }

    /// The to-many relationships of the source the mapping's expressions read (by name, in any of
    /// them): loaded per chunk into their slots.
    private static func toManyLoads(
        of mapping: EntityMapping, relationshipMappings: [PropertyMapping], source: EntityLayout?, sourceSchema: KeySchema?
    ) -> [(slot: Int, name: String)] {
        guard let source, let sourceSchema else { return [] }
        var toManyLoads: [(slot: Int, name: String)] = []
        let texts = mapping.attributeMappings.compactMap(\.valueExpression)
            + relationshipMappings.map { $0.valueExpression ?? "$source.\($0.name)" } + [mapping.filterPredicate ?? ""]
        for toMany in source.toManyRelationships {
            guard let slot = sourceSchema.slot(of: toMany.name) else { continue }
            if texts.contains(where: { $0.contains(toMany.name) }) { toManyLoads.append((slot, toMany.name)) }
        }
        return toManyLoads
    }

    /// The filter: in SQL when the pushdown compiler accepts it and SQLite can take the result, in
    /// Swift otherwise. SQLite refuses SQL beyond its limits (an expression tree deeper than 1,000,
    /// too many placeholders): a filter of 1,500 `AND` terms pushes down exactly, but no statement
    /// holding it would prepare. Each statement that embeds the filter (the cursor's, the plan's,
    /// the keys-only read, the bulk insert) adds a few levels around it: the check leaves a margin.
    private static func filter(
        of mapping: EntityMapping, source: EntityLayout?, readsToManys: Bool, sqlAccepts: (String) -> Bool, compiler: ExpressionCompiler
    ) throws(MigrationError) -> (filter: CompiledPredicate?, filterSQL: SQLCondition?) {
        guard let text = mapping.filterPredicate, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return (nil, nil) }
        let predicate: PredicateNode
        do {
            predicate = try PredicateNode(parsing: text)
        } catch {
            throw MigrationError(
                .invalidMapping, "the filter predicate \(text) does not parse", mapping: mapping.name, underlying: error)
        }
        if let source, !readsToManys, let pushed = SQLPushdown(columns: Self.columnResolver(source)).predicate(predicate),
            sqlAccepts(EngineChunkQueries.filterProbe(pushed.sql, source: source))
        {
            return (nil, SQLCondition(pushed.sql, pushed.arguments))
        }
        do {
            return (try compiler.compile(predicate), nil)
        } catch {
            throw MigrationError(
                .invalidMapping, "the filter predicate \(text) does not compile", mapping: mapping.name, underlying: error)
        }
    }

    /// The keys-only read of stage 2, when the relationships allow it.
    static func keysOnlyRead(
        policy: any EntityMigrationPolicy, source: EntityLayout?, schema: KeySchema?, directLookups: [DirectLookup?],
        hasSwiftFilter: Bool, filterSQL: SQLCondition?
    ) -> KeysOnlyRead? {
        guard policy is DefaultMigrationPolicy, !hasSwiftFilter, let source, let schema, directLookups.allSatisfy({ $0 != nil })
        else { return nil }
        var toOnes: [ToOneColumn] = []
        let slots = Set(directLookups.compactMap { $0?.slot }).sorted()
        for slot in slots {
            guard let toOne = source.toOne(named: schema.keys[slot]) else { return nil }
            toOnes.append(toOne)
        }
        return KeysOnlyRead(read: EngineChunkQueries.KeysRead(source: source, toOnes: toOnes, filter: filterSQL), slots: slots)
    }

    /// The SQL form of stage 1, when every attribute allows it.
    static func bulkCopy(
        policy: any EntityMigrationPolicy, source: EntityLayout?, destination: EntityLayout?,
        attributeValues: [AttributeValueSource], externalDataConversions: [ExternalDataReference.Conversion?] = [],
        hasSwiftFilter: Bool, filterSQL: SQLCondition?, tableEntityCount: Int = 1,
        insertedToOnes: [ToOnesAtInsert.Relationship] = [], mirror: Int? = nil, keys: EngineBulkCopy.Keys = .numbered
    ) -> EngineBulkCopy? {
        guard policy is DefaultMigrationPolicy, !hasSwiftFilter, let source, let destination, !destination.isAbstract else { return nil }
        var values: [EngineBulkCopy.Source] = []
        for (offset, (column, value)) in zip(destination.attributes, attributeValues).enumerated() {
            switch value {
            case .constant(let constant):
                values.append(.constant(DefaultValues.coerce(constant, to: column.type)))
            case .expression(let expression, let defaultForNil):
                // Its format changed with the external storage flag: converted in SQL as the per-object path does.
                let conversion = offset < externalDataConversions.count ? externalDataConversions[offset] : nil
                guard let copy = copied(expression, defaultForNil: defaultForNil, into: column, conversion: conversion, from: source)
                else { return nil }
                values.append(copy)
            }
        }
        // To-ones written at insert: the looked-up mapping's association, from its mirror table (NULL
        // without one, as the per-object path leaves it; the key itself when it names no source object
        // and the looked-up mapping keeps keys, as the per-object path keeps it).
        var inserted: [EngineBulkCopy.InsertedToOne] = []
        for relationship in insertedToOnes {
            guard let toOne = destination.toOne(named: relationship.name) else { return nil }
            inserted.append((toOne, relationship.lookup, relationship.sourceColumn, relationship.targetEntity, relationship.keptIfMissingFrom))
        }
        return EngineBulkCopy(
            source: source, destination: destination, values: values, insertedToOnes: inserted, filter: filterSQL,
            tableEntityCount: tableEntityCount, mirror: mirror, keys: keys)
    }

    /// An attribute's value as a plain copy in SQL, when its expression is `$source.<attribute>` of the
    /// same kind (the stored bytes are then what the per-object path stores); nil otherwise.
    static func copied(
        _ expression: CompiledExpression, defaultForNil: Value, into column: AttributeColumn, conversion: ExternalDataReference.Conversion?,
        from source: EntityLayout
    ) -> EngineBulkCopy.Source? {
        let key: String
        switch expression.node {
        case .keyPath(.variable("source"), let components) where components.count == 1: key = components[0]
        case .keyPath(.evaluatedObject, let components) where components.count == 1: key = components[0]
        default: return nil
        }
        guard let attribute = source.attribute(named: key), attribute.type == column.type || (attribute.type.isInteger && column.type.isInteger)
        else { return nil }
        return .copy(attribute, conversion: conversion, defaultForNil: replacement(defaultForNil, for: column))
    }

    /// The value a NULL is replaced with in SQL: nil for none.
    static func replacement(_ defaultForNil: Value, for column: AttributeColumn) -> Value? {
        // `Optional.none`, not `nil`: `Value` is itself expressible by `nil` (it would become `.null`).
        defaultForNil.isNull ? Optional<Value>.none : DefaultValues.coerce(defaultForNil, to: column.type)
    }

    /// The direct form of a relationship expression, when it has one.
    static func directLookup(_ node: ExpressionNode, schema: KeySchema?, source: EntityLayout?) -> DirectLookup? {
        guard case .function(let receiver?, "destinationInstancesForEntityMappingNamed:sourceInstances:", let arguments) = node,
            case .variable("manager") = receiver, arguments.count == 2, case .constant(.string(let name)) = arguments[0]
        else { return nil }
        switch arguments[1] {
        case .variable("source"):
            return DirectLookup(mappingName: name, slot: nil)
        case .keyPath(.variable("source"), let components) where components.count == 1:
            guard let source, source.toOne(named: components[0]) != nil, let slot = schema?.slot(of: components[0]) else { return nil }
            return DirectLookup(mappingName: name, slot: slot)
        default:
            return nil
        }
    }

    /// The slots of an entity's objects as the migration reads them: the store cursor's (attributes,
    /// then to-one relationships), then the to-many relationships.
    package static func schema(of layout: EntityLayout) -> KeySchema {
        var keys = layout.attributes.map(\.name) + layout.toOneRelationships.map(\.name)
        keys += layout.toManyRelationships.map(\.name)
        var destinations: [String: String] = [:]
        for toOne in layout.toOneRelationships { destinations[toOne.name] = toOne.destination }
        for toMany in layout.toManyRelationships { destinations[toMany.name] = toMany.destination }
        var types: [String: AttributeType] = [:]
        for attribute in layout.attributes { types[attribute.name] = attribute.type }
        return KeySchema(keys: keys, destinations: destinations, attributeTypes: types)
    }

    /// The SQL column of each attribute key of an entity, for the pushdown compiler.
    static func columnResolver(_ layout: EntityLayout) -> @Sendable (String) -> SQLColumn? {
        let columns = Dictionary(layout.attributes.map { ($0.name, SQLColumn(name: $0.column, type: $0.type)) }, uniquingKeysWith: { a, _ in a })
        return { key in columns[key] }
    }
}
