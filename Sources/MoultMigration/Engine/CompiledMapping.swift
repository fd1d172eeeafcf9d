import Foundation
import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

/// One entity mapping, compiled once for the whole run: its expressions, its filter (in SQL when the
/// pushdown compiler accepts it), the columns it reads and writes.
final class CompiledMapping {
    /// Index in the plan's mapping list (and the association table's mapping number).
    let index: Int
    /// Which of the given mapping models the mapping comes from.
    let mappingModelIndex: Int
    /// The name, unique in the plan.
    let name: String
    let mapping: EntityMapping
    let source: EntityLayout?
    let destination: EntityLayout?
    let sourceSchema: KeySchema?
    let policy: any EntityMigrationPolicy

    /// The filter, when it runs in Swift.
    let filter: CompiledPredicate?
    /// The filter, when it runs in SQL.
    let filterSQL: (sql: String, arguments: [Value])?

    /// For each attribute of the destination layout (in layout order): how to get its value.
    let attributeValues: [AttributeValueSource]
    /// Relationship mappings, compiled.
    let relationships: [(name: String, expression: CompiledExpression)]
    /// How each slot of ``sourceSchema`` is read from the row (`SELECT` column order).
    let readers: [SlotReader]
    /// The `SELECT` list after `Z_PK, Z_ENT`.
    let selectColumns: [String]
    /// To-many relationships of the source that the mapping's expressions use, loaded per chunk.
    let toManyLoads: [(slot: Int, layout: ToManyLayout)]

    enum AttributeValueSource {
        case expression(CompiledExpression)
        case constant(Value)
    }

    enum SlotReader {
        case none
        case attribute(column: Int, type: AttributeType)
        case toOne(column: Int, entityColumn: Int?, destinationNumber: Int32)
    }

    init(
        index: Int, mappingModelIndex: Int, name: String, mapping: EntityMapping, sourceModel: ObjectModel, destinationModel: ObjectModel,
        sourceLayout: StoreLayout, destinationLayout: StoreLayout, policy: any EntityMigrationPolicy,
        variables: VariableLayout
    ) throws(MigrationError) {
        self.index = index
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
            guard let layout = sourceLayout.entity(named: sourceName), let schema = KeySchema(entity: sourceName, in: sourceModel)
            else { throw invalid("the source entity '\(sourceName)' is not in the source model") }
            source = layout
            sourceSchema = schema
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

        // The columns a source row is read from.
        var readers: [SlotReader] = []
        var columns: [String] = []
        if let source, let sourceSchema {
            for key in sourceSchema.keys {
                if let attribute = source.attribute(named: key) {
                    readers.append(.attribute(column: columns.count + 2, type: attribute.type))
                    columns.append(attribute.column)
                } else if let toOne = source.toOne(named: key) {
                    let column = columns.count + 2
                    columns.append(toOne.column)
                    var entityColumn: Int?
                    if let companion = toOne.entityColumn {
                        entityColumn = columns.count + 2
                        columns.append(companion)
                    }
                    readers.append(.toOne(column: column, entityColumn: entityColumn, destinationNumber: toOne.destinationNumber))
                } else {
                    readers.append(.none)
                }
            }
        }
        self.readers = readers
        self.selectColumns = columns

        let compiler = ExpressionCompiler(schema: sourceSchema ?? KeySchema(keys: []), variables: variables)
        func compileExpression(_ text: String, property: String) throws(MigrationError) -> CompiledExpression {
            do {
                return try compiler.compile(ExpressionNode(parsing: text))
            } catch {
                throw invalid("the value expression \(text) does not compile", property: property, underlying: error)
            }
        }

        // Attribute values, in the destination layout's order.
        var attributeValues: [AttributeValueSource] = []
        if let destination, let destinationName = mapping.destinationEntityName {
            for column in destination.attributes {
                let description = destinationModel.attribute(named: column.name, of: destinationName)
                if let propertyMapping = mapping.attributeMapping(named: column.name) {
                    let text = propertyMapping.valueExpression ?? "$source.\(Self.escapedKey(column.name))"
                    if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: column.name) == nil {
                        attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
                    } else {
                        attributeValues.append(.expression(try compileExpression(text, property: column.name)))
                    }
                } else if mapping.effectiveType == .copy, sourceSchema?.slot(of: column.name) != nil {
                    attributeValues.append(
                        .expression(try compileExpression("$source.\(Self.escapedKey(column.name))", property: column.name)))
                } else {
                    attributeValues.append(.constant(description.map(DefaultValues.value(of:)) ?? .null))
                }
            }
        }
        self.attributeValues = attributeValues

        // Relationship values.
        var relationships: [(name: String, expression: CompiledExpression)] = []
        var relationshipMappings = mapping.relationshipMappings
        if mapping.effectiveType == .copy, let destinationName = mapping.destinationEntityName {
            for relationship in destinationModel.relationships(of: destinationName) where !relationship.isTransient
            where !relationshipMappings.contains(where: { $0.name == relationship.name }) {
                relationshipMappings.append(PropertyMapping(relationship.name))
            }
        }
        for propertyMapping in relationshipMappings {
            guard let destination else { break }
            guard destination.toOne(named: propertyMapping.name) != nil || destination.toMany(named: propertyMapping.name) != nil
            else {
                if destinationModel.relationship(named: propertyMapping.name, of: destination.name)?.isTransient == true { continue }
                throw invalid("the destination entity '\(destination.name)' has no relationship of this name", property: propertyMapping.name)
            }
            let text =
                propertyMapping.valueExpression
                ?? "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(propertyMapping.name)\", $source.\(Self.escapedKey(propertyMapping.name)))"
            if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: propertyMapping.name) == nil { continue }
            relationships.append((propertyMapping.name, try compileExpression(text, property: propertyMapping.name)))
        }
        self.relationships = relationships

        // To-many source relationships the expressions read: loaded per chunk.
        var toManyLoads: [(slot: Int, layout: ToManyLayout)] = []
        if let source, let sourceSchema {
            let texts = mapping.attributeMappings.compactMap(\.valueExpression)
                + relationshipMappings.map { $0.valueExpression ?? "$source.\($0.name)" }
            for toMany in source.toManyRelationships {
                guard let slot = sourceSchema.slot(of: toMany.name) else { continue }
                if texts.contains(where: { $0.contains(toMany.name) }) { toManyLoads.append((slot, toMany)) }
            }
        }
        self.toManyLoads = toManyLoads

        // The filter: in SQL when the pushdown compiler accepts it, in Swift otherwise.
        if let text = mapping.filterPredicate, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let predicate: PredicateNode
            do {
                predicate = try PredicateNode(parsing: text)
            } catch {
                throw invalid("the filter predicate \(text) does not parse", underlying: error)
            }
            if let source, let pushed = SQLPushdown.compile(predicate, columns: Self.columnResolver(source)) {
                filterSQL = (pushed.sql, pushed.arguments)
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
    }

    /// The SQL column of each attribute key of an entity, for the pushdown compiler.
    static func columnResolver(_ layout: EntityLayout) -> (String) -> SQLColumn? {
        { key in
            guard let attribute = layout.attribute(named: key) else { return nil }
            return SQLColumn(name: attribute.column, type: attribute.type)
        }
    }

    /// A key written so that the expression parser reads it as a key, reserved words included.
    static func escapedKey(_ key: String) -> String {
        ExpressionKeyPath.escaped(key)
    }

    /// The `SELECT` reading this mapping's source rows of one primary-key range.
    var selectSQL: String? {
        guard let source else { return nil }
        var sql = "SELECT Z_PK, Z_ENT"
        for column in selectColumns { sql += ", \(column)" }
        sql += " FROM \(source.table) WHERE Z_ENT = \(source.number) AND Z_PK > ? AND Z_PK <= ?"
        if let filterSQL { sql += " AND (\(filterSQL.sql))" }
        sql += " ORDER BY Z_PK"
        return sql
    }
}
