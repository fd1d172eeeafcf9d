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
    /// The table mirroring this mapping's associations in the destination, when a later mapping's
    /// to-ones are written at insert from them (see ``ToOnesAtInsert/mirror(_:)``).
    let mirrorTable: String?

    /// Stage 1 as one `INSERT … SELECT` per chunk, when the mapping allows it; nil otherwise.
    let bulkCopy: BulkCopy?

    /// The SQL form of stage 1: one destination object per source object, every attribute a constant or
    /// a plain copy of a source attribute of the same kind, the filter (if any) in SQL, the default
    /// policy. It writes exactly what the per-object path writes, without bringing the values into Swift.
    struct BulkCopy {
        /// `INSERT INTO <destination> … SELECT … FROM moult_source.<source> …`; its arguments are the
        /// first primary key, ``constants``, the chunk's bounds, then the filter's.
        ///
        /// It refuses (with ``CompiledMapping/refusal``, its changes undone) a chunk holding a row whose
        /// stored values the per-object path would convert or refuse rather than copy as they are (a
        /// REAL or an out-of-range integer in an integer column, a blob in a string column, a Boolean
        /// other than 0 or 1, a number that is not finite, a row of another entity in a table of one):
        /// such a chunk takes the per-object path, so that both paths make the same store or the same
        /// error. The guard is evaluated on each row as it is inserted, in the same read. Text that is
        /// not valid UTF-8 is told by ``MoultFunctions/validUTF8``: it takes the per-object path too,
        /// which refuses it (65), as `moult verify` does.
        let insertSQL: String
        let constants: [Value]
        /// The source keys the insert reads, in order, for the associations.
        let keysSQL: String
        /// `INSERT INTO main.<mirror> (source, destination) SELECT …`: the chunk's associations mirrored
        /// (arguments: the first primary key, the chunk's bounds, the filter's), when the mapping has a
        /// mirror table.
        var mirrorSQL: String? = nil
    }

    /// Stage 2's read, when every relationship is a direct lookup and the policy the default: only the
    /// keys and the to-one columns the lookups use, not the attributes.
    let keysOnlyRead: KeysOnlyRead?

    struct KeysOnlyRead {
        let sql: String
        /// For each to-one read: its slot, its column in the result, its companion column, and the
        /// destination's `Z_ENT` when there is no companion.
        let toOnes: [(slot: Int, column: Int, entityColumn: Int?, destinationNumber: Int32)]
    }

    /// The schema name the source is attached under on the destination's connection.
    static let attachedSource = "moult_source"

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
        insertedToOnes: [ToOnesAtInsert.Relationship] = [], mirrorsAssociations: Bool = false
    ) throws(MigrationError) {
        self.index = index
        self.omittedRelationships = omittedRelationships
        self.insertedToOnes = insertedToOnes
        let mirrorTable = mirrorsAssociations ? ToOnesAtInsert.mirror(index) : nil
        self.mirrorTable = mirrorTable
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

        // Attribute values, in the destination layout's order.
        var attributeValues: [AttributeValueSource] = []
        if let destination, let destinationName = mapping.destinationEntityName {
            for column in destination.attributes {
                let description = destinationModel.attribute(named: column.name, of: destinationName)
                let defaultForNil: Value = description.map { $0.isOptional ? .null : DefaultValues.value(of: $0) } ?? .null
                if let propertyMapping = mapping.attributeMapping(named: column.name) {
                    let text = propertyMapping.valueExpression ?? PropertyMapping.sourceValue(column.name)
                    if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: column.name) == nil {
                        attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
                    } else {
                        attributeValues.append(.expression(try compileExpression(text, property: column.name), defaultForNil: defaultForNil))
                    }
                } else if mapping.effectiveType == .copy, sourceSchema?.slot(of: column.name) != nil {
                    attributeValues.append(
                        .expression(
                            try compileExpression(PropertyMapping.sourceValue(column.name), property: column.name),
                            defaultForNil: defaultForNil))
                } else {
                    attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
                }
            }
        }
        self.attributeValues = attributeValues
        externalDataConversions = ExternalDataConversion.of(
            mapping, attributes: destination?.attributes ?? [], values: attributeValues, sourceModel: sourceModel, destinationModel: destinationModel)

        // Relationship values.
        var relationships: [(name: String, expression: CompiledExpression)] = []
        var relationshipMappings = mapping.relationshipMappings
        if mapping.effectiveType == .copy, let destinationName = mapping.destinationEntityName {
            for relationship in destinationModel.relationships(of: destinationName)
            where !relationship.isTransient && !relationshipMappings.contains(where: { $0.name == relationship.name }) {
                relationshipMappings.append(PropertyMapping(relationship.name))
            }
        }
        let inserted = Set(insertedToOnes.map(\.name))
        relationshipMappings.removeAll { omittedRelationships.contains($0.name) || inserted.contains($0.name) }
        for propertyMapping in relationshipMappings {
            guard let destination else { break }
            guard destination.toOne(named: propertyMapping.name) != nil || destination.toMany(named: propertyMapping.name) != nil
            else {
                if destinationModel.relationship(named: propertyMapping.name, of: destination.name)?.isTransient == true { continue }
                throw invalid("the destination entity '\(destination.name)' has no relationship of this name", property: propertyMapping.name)
            }
            let text =
                propertyMapping.valueExpression
                ?? PropertyMapping.destinationInstances(sourceRelationship: propertyMapping.name)
            if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: propertyMapping.name) == nil { continue }
            relationships.append((propertyMapping.name, try compileExpression(text, property: propertyMapping.name)))
        }
        self.relationships = relationships
        let schema = sourceSchema
        let sourceLayout = source
        directLookups = relationships.map { Self.directLookup($0.expression.node, schema: schema, source: sourceLayout) }

        // To-many source relationships the expressions read: loaded per chunk.
        var toManyLoads: [(slot: Int, name: String)] = []
        if let source, let sourceSchema {
            let texts = mapping.attributeMappings.compactMap(\.valueExpression)
                + relationshipMappings.map { $0.valueExpression ?? "$source.\($0.name)" } + [mapping.filterPredicate ?? ""]
            for toMany in source.toManyRelationships {
                guard let slot = sourceSchema.slot(of: toMany.name) else { continue }
                if texts.contains(where: { $0.contains(toMany.name) }) { toManyLoads.append((slot, toMany.name)) }
            }
        }
        self.toManyLoads = toManyLoads

        // The filter: in SQL when the pushdown compiler accepts it and SQLite can take the result, in
        // Swift otherwise. SQLite refuses SQL beyond its limits (an expression tree deeper than 1,000,
        // too many placeholders): a filter of 1,500 `AND` terms pushes down exactly, but no statement
        // holding it would prepare. Each statement that embeds the filter (the cursor's, the plan's,
        // the keys-only read, the bulk insert) adds a few levels around it: the check leaves a margin.
        if let text = mapping.filterPredicate, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let predicate: PredicateNode
            do {
                predicate = try PredicateNode(parsing: text)
            } catch {
                throw invalid("the filter predicate \(text) does not parse", underlying: error)
            }
            if let source, toManyLoads.isEmpty, let pushed = SQLPushdown(columns: Self.columnResolver(source)).predicate(predicate),
                sqlAccepts(Self.filterProbe(pushed.sql, source: source))
            {
                filterSQL = SQLCondition(pushed.sql, pushed.arguments)
                filter = nil
            } else {
                filterSQL = nil
                do {
                    filter = try compiler.compile(predicate)
                } catch {
                    throw invalid("the filter predicate \(text) does not compile", underlying: error)
                }
            }
        } else {
            filter = nil
            filterSQL = nil
        }
        keysOnlyRead = Self.keysOnlyRead(
            policy: policy, source: source, schema: sourceSchema, directLookups: directLookups, hasSwiftFilter: filter != nil,
            filterSQL: filterSQL)
        bulkCopy = Self.bulkCopy(
            policy: policy, source: source, destination: destination, attributeValues: attributeValues,
            externalDataConversions: externalDataConversions, hasSwiftFilter: filter != nil, filterSQL: filterSQL,
            tableEntityCount: sourceTableEntityCount, insertedToOnes: insertedToOnes, mirrorTable: mirrorTable)
    }

    /// A statement at least as deep as any that embeds a pushed-down filter, to prepare once and see
    /// whether SQLite takes it (see ``init(index:mappingModelIndex:name:mapping:sourceModel:destinationModel:sourceLayout:destinationLayout:policy:variables:sqlAccepts:)``).
    static func filterProbe(_ filter: String, source: EntityLayout) -> String {
        let margin = 8
        let wrapped = String(repeating: "+(", count: margin) + filter + String(repeating: ")", count: margin)
        return "SELECT Z_PK FROM \(source.table) WHERE Z_ENT = \(source.number) AND Z_PK > ? AND Z_PK <= ? AND (\(wrapped)) ORDER BY Z_PK"
    }

    /// The keys-only read of stage 2, when the relationships allow it.
    static func keysOnlyRead(
        policy: any EntityMigrationPolicy, source: EntityLayout?, schema: KeySchema?, directLookups: [DirectLookup?],
        hasSwiftFilter: Bool, filterSQL: SQLCondition?
    ) -> KeysOnlyRead? {
        guard policy is DefaultMigrationPolicy, !hasSwiftFilter, let source, let schema, directLookups.allSatisfy({ $0 != nil })
        else { return nil }
        var columns = ["Z_PK", "Z_ENT"]
        var toOnes: [(slot: Int, column: Int, entityColumn: Int?, destinationNumber: Int32)] = []
        for slot in Set(directLookups.compactMap { $0?.slot }).sorted() {
            guard let toOne = source.toOne(named: schema.keys[slot]) else { return nil }
            let column = columns.count
            columns.append(toOne.column)
            var entityColumn: Int?
            if let companion = toOne.entityColumn {
                entityColumn = columns.count
                columns.append(companion)
            }
            toOnes.append((slot, column, entityColumn, toOne.destinationNumber))
        }
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(source.table) WHERE Z_ENT = \(source.number) AND Z_PK > ? AND Z_PK <= ?"
        if let filterSQL { sql += " AND (\(filterSQL.sql))" }
        sql += " ORDER BY Z_PK"
        return KeysOnlyRead(sql: sql, toOnes: toOnes)
    }

    /// The SQL form of stage 1, when every attribute allows it.
    static func bulkCopy(
        policy: any EntityMigrationPolicy, source: EntityLayout?, destination: EntityLayout?,
        attributeValues: [AttributeValueSource], externalDataConversions: [ExternalDataReference.Conversion?] = [],
        hasSwiftFilter: Bool, filterSQL: SQLCondition?, tableEntityCount: Int = 1,
        insertedToOnes: [ToOnesAtInsert.Relationship] = [], mirrorTable: String? = nil
    ) -> BulkCopy? {
        guard policy is DefaultMigrationPolicy, !hasSwiftFilter, let source, let destination, !destination.isAbstract else { return nil }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var fits: [String] = []
        var selected = ["? + ROW_NUMBER() OVER (ORDER BY s.Z_PK) - 1", "\(destination.number)", "1"]
        var constants: [Value] = []
        for (offset, (column, value)) in zip(destination.attributes, attributeValues).enumerated() {
            columns.append(column.column)
            switch value {
            case .constant(let constant):
                selected.append("?")
                constants.append(DefaultValues.coerce(constant, to: column.type))
            case .expression(let expression, let defaultForNil):
                // Only `$source.<attribute>` of the same kind: the stored bytes are then what the
                // per-object path stores.
                let key: String
                switch expression.node {
                case .keyPath(.variable("source"), let components) where components.count == 1: key = components[0]
                case .keyPath(.evaluatedObject, let components) where components.count == 1: key = components[0]
                default: return nil
                }
                guard let attribute = source.attribute(named: key),
                    attribute.type == column.type || (attribute.type.isInteger && column.type.isInteger)
                else { return nil }
                fits.append(Self.storedAsDecoded("s.\(attribute.column)", type: attribute.type))
                // Its format changed with the external storage flag: converted in SQL as the per-object path does.
                var read = "s.\(attribute.column)"
                switch offset < externalDataConversions.count ? externalDataConversions[offset] : nil {
                case .mark?: read = "\(MoultFunctions.externalMark)(\(read))"
                case .inline?: read = "\(MoultFunctions.externalInline)(\(read))"
                case nil: break
                }
                if defaultForNil.isNull {
                    selected.append(read)
                } else {
                    selected.append("COALESCE(\(read), ?)")
                    constants.append(DefaultValues.coerce(defaultForNil, to: column.type))
                }
            }
        }
        // To-ones written at insert: the looked-up mapping's association, from its mirror table (NULL
        // without one, as the per-object path leaves it). A key that is not an integer takes the
        // per-object path, which decodes it.
        for inserted in insertedToOnes {
            guard let toOne = destination.toOne(named: inserted.name) else { return nil }
            let mirror = "main.\(SQLName.quoted(ToOnesAtInsert.mirror(inserted.lookup)))"
            let key = "s.\(SQLName.quoted(inserted.sourceColumn))"
            columns.append(toOne.column)
            selected.append("(SELECT m.destination FROM \(mirror) AS m WHERE m.source = \(key))")
            if let companion = toOne.entityColumn {
                columns.append(companion)
                selected.append("(SELECT \(inserted.targetEntity) FROM \(mirror) AS m WHERE m.source = \(key))")
            }
            fits.append("typeof(\(key)) IN ('null', 'integer')")
        }
        var condition = "s.Z_ENT = \(source.number) AND s.Z_PK > ? AND s.Z_PK <= ?"
        if let filterSQL { condition += " AND (\(filterSQL.sql))" }
        // The per-object cursor reads every row of a table of one entity (and refuses another Z_ENT),
        // but only its own entity's rows of a hierarchy table: the insert reads the same rows, and its
        // guard refuses the chunk at a row the per-object path would convert or refuse.
        var odd = fits.isEmpty ? [] : ["NOT \(SQLTerms.joined(fits, by: "AND"))"]
        var read = condition
        if tableEntityCount == 1 {
            read = "s.Z_PK > ? AND s.Z_PK <= ?" + (filterSQL.map { " AND (\($0.sql))" } ?? "")
            odd.append("s.Z_ENT IS NOT \(source.number)")
        }
        if !odd.isEmpty {
            // Z_OPT, 1 for every new object, carries the guard.
            selected[2] = "CASE WHEN \(SQLTerms.joined(odd, by: "OR")) THEN \(MoultFunctions.refuse)('\(refusal)') ELSE 1 END"
        }
        let mirrorSQL = mirrorTable.map {
            "INSERT INTO main.\(SQLName.quoted($0)) (source, destination) SELECT s.Z_PK, ? + ROW_NUMBER() OVER (ORDER BY s.Z_PK) - 1 "
                + "FROM \(attachedSource).\(source.table) s WHERE \(condition)"
        }
        let insert = """
            INSERT INTO main.\(destination.table) (\(columns.joined(separator: ", "))) \
            SELECT \(selected.joined(separator: ", ")) FROM \(attachedSource).\(source.table) s WHERE \(read)
            """
        let keys = "SELECT s.Z_PK FROM \(source.table) s WHERE \(condition) ORDER BY s.Z_PK"
        return BulkCopy(insertSQL: insert, constants: constants, keysSQL: keys, mirrorSQL: mirrorSQL)
    }

    /// The message of the bulk insert's guard (see ``BulkCopy/insertSQL``).
    static let refusal = "moult: a row of the chunk is not copied as it is stored"

    /// An SQL condition true when a column's stored value is exactly what the store cursor decodes for
    /// this type, so that copying it as it is writes what the per-object path writes.
    static func storedAsDecoded(_ column: String, type: AttributeType) -> String {
        let kind = "typeof(\(column))"
        switch type {
        case .integer16: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) BETWEEN -32768 AND 32767))"
        case .integer32: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) BETWEEN -2147483648 AND 2147483647))"
        case .integer64: return "\(kind) IN ('null', 'integer')"
        case .boolean: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) IN (0, 1)))"
        case .double, .float, .date:
            return "(\(kind) IN ('null', 'integer') OR (\(kind) = 'real' AND abs(\(column)) <= 1.7976931348623157e308))"
        case .decimal:
            return "(\(kind) IN ('null', 'integer') OR (\(kind) = 'real' AND abs(\(column)) <= 1e120 AND (\(column) = 0 OR abs(\(column)) >= 1e-100)))"
        case .string, .uri: return "(\(kind) = 'null' OR (\(kind) = 'text' AND \(MoultFunctions.validUTF8)(\(column))))"
        case .uuid: return "(\(kind) = 'null' OR (\(kind) = 'blob' AND length(\(column)) = 16))"
        case .binary, .transformable: return "\(kind) IN ('null', 'blob')"
        case .composite, .undefined, .objectID: return "1"
        }
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
