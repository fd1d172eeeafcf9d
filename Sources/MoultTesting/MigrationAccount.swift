public import MoultMapping
public import MoultModel

/// What a migration did with each property: kept, converted, defaulted or dropped, with how many
/// values (non-nil values; objects with at least one related object for a to-many; objects for a whole
/// entity).
///
/// ```swift
/// let account = MigrationAccount(lastMapping: step.mapping, stepSource: step.from.model, target: step.to.model,
///                                uncarried: steps.flatMap(\.uncarried), source: before, destination: after)
/// for line in account.lines { print(line) }
/// ```
public struct MigrationAccount: Sendable, Hashable {
    public enum Fate: String, Sendable, Hashable, Codable, CaseIterable {
        /// Copied unchanged (same name or renamed, same type).
        case kept
        /// Computed from the source by an expression or a type change.
        case converted
        /// No source: the destination's default (or nil).
        case defaulted
        /// Not carried: the source's values are gone.
        case dropped
    }

    /// One property (or a whole entity when `property` is nil) of one entity.
    public struct Line: Sendable, Hashable, Codable, CustomStringConvertible {
        public var entity: String
        public var property: String?
        public var fate: Fate
        public var count: Int

        public var description: String {
            "\(entity)\(property.map { ".\($0)" } ?? ""): \(fate.rawValue) \(count)"
        }
    }

    public var lines: [Line]

    /// The account of a migration into `destination`, whose last step's mapping is `lastMapping`.
    ///
    /// - Parameters:
    ///   - lastMapping: The mapping of the step that wrote the destination (its source model is
    ///     `stepSource`).
    ///   - stepSource: The model the last step read.
    ///   - target: The destination's model.
    ///   - uncarried: What every step leaves behind; counted in `source` where the first step dropped it.
    ///   - source: The store migrated.
    ///   - destination: The store the migration wrote.
    public init(
        lastMapping: MappingModel, stepSource: ObjectModel, target: ObjectModel, uncarried: [UncarriedData],
        source: StoreSnapshot, destination: StoreSnapshot
    ) {
        var lines: [Line] = []
        for mapping in lastMapping.entityMappings {
            guard let entity = mapping.destinationEntityName else { continue }
            for property in mapping.attributeMappings + mapping.relationshipMappings {
                let fate = Self.fate(of: property, mapping: mapping, source: stepSource, target: target, entity: entity)
                let count = destination.valueCounts[entity]?[property.name] ?? 0
                lines.append(Line(entity: entity, property: property.name, fate: fate, count: count))
            }
        }
        for what in uncarried {
            let count = what.property.map { source.valueCounts[what.entity]?[$0] ?? 0 } ?? source.objects[what.entity]?.count ?? 0
            lines.append(Line(entity: what.entity, property: what.property, fate: .dropped, count: count))
        }
        self.lines = lines.sorted { ($0.entity, $0.property ?? "", $0.fate.rawValue) < ($1.entity, $1.property ?? "", $1.fate.rawValue) }
    }

    /// How a property mapping fills its property.
    static func fate(of property: PropertyMapping, mapping: EntityMapping, source: ObjectModel, target: ObjectModel, entity: String) -> Fate {
        guard let expression = property.valueExpression, expression.contains("$source") else { return .defaulted }
        guard let sourceEntity = mapping.sourceEntityName,
            let destinationAttribute = target.attribute(named: property.name, of: entity)
        else { return expression.hasPrefix("FUNCTION($manager") || expression.hasPrefix("$source.") ? .kept : .converted }
        for sourceAttribute in source.attributes(of: sourceEntity) where expression == PropertyMapping.sourceValue(sourceAttribute.name) {
            return sourceAttribute.attributeType == destinationAttribute.attributeType ? .kept : .converted
        }
        return .converted
    }

    /// The dropped lines, as (entity, property) and count.
    public var dropped: [Line] { lines.filter { $0.fate == .dropped } }
}
