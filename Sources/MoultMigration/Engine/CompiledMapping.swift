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
    let filterSQL: SQLCondition?

    /// For each attribute of the destination layout (in layout order): how to get its value.
    let attributeValues: [AttributeValueSource]
    /// Relationship mappings, compiled.
    let relationships: [(name: String, expression: CompiledExpression)]
    /// To-many relationships of the source that the mapping's expressions use, loaded per chunk, with
    /// their slot (after the cursor's attribute and to-one slots).
    let toManyLoads: [(slot: Int, name: String)]

    enum AttributeValueSource {
        /// An expression, and the value a nil result stands for (the default of a required attribute:
        /// Core Data fills a required attribute that became non-optional with its default).
        case expression(CompiledExpression, defaultForNil: Value)
        case constant(Value)
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

        // Relationship values.
        var relationships: [(name: String, expression: CompiledExpression)] = []
        var relationshipMappings = mapping.relationshipMappings
        if mapping.effectiveType == .copy, let destinationName = mapping.destinationEntityName {
            for relationship in destinationModel.relationships(of: destinationName)
            where !relationship.isTransient && !relationshipMappings.contains(where: { $0.name == relationship.name }) {
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
                ?? PropertyMapping.destinationInstances(sourceRelationship: propertyMapping.name)
            if propertyMapping.valueExpression == nil, sourceSchema?.slot(of: propertyMapping.name) == nil { continue }
            relationships.append((propertyMapping.name, try compileExpression(text, property: propertyMapping.name)))
        }
        self.relationships = relationships

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

        // The filter: in SQL when the pushdown compiler accepts it, in Swift otherwise.
        if let text = mapping.filterPredicate, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let predicate: PredicateNode
            do {
                predicate = try PredicateNode(parsing: text)
            } catch {
                throw invalid("the filter predicate \(text) does not parse", underlying: error)
            }
            if let source, toManyLoads.isEmpty, let pushed = SQLPushdown(columns: Self.columnResolver(source)).predicate(predicate) {
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
    }

    /// The slots of an entity's objects as the migration reads them: the store cursor's (attributes,
    /// then to-one relationships), then the to-many relationships.
    static func schema(of layout: EntityLayout) -> KeySchema {
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
