public import MoultModel

/// Source data a migration step does not carry to its destination: a whole entity no entity mapping
/// reads, or a property no value expression reads.
public struct UncarriedData: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case entity
        case attribute
        case relationship
    }

    public var kind: Kind
    /// The source entity (its own objects, not its sub-entities').
    public var entity: String
    /// The property, nil for a whole entity.
    public var property: String?

    public init(kind: Kind, entity: String, property: String? = nil) {
        self.kind = kind
        self.entity = entity
        self.property = property
    }

    /// `Person.nickname`, or `Pet` for a whole entity.
    public var name: String { property.map { "\(entity).\($0)" } ?? entity }
}

extension MappingModel {
    /// What of `source` the entity mappings of `mappings` (the passes of one step) do not carry, in
    /// byte order of entity names, whole entities before their properties.
    ///
    /// - A concrete source entity that no copy or transform mapping reads is dropped whole (a
    ///   `remove` mapping says so explicitly, and is listed the same).
    /// - An attribute is dropped when no value expression of the mappings of its entity reads it
    ///   (`$source.<name>`, first key of the path).
    /// - A relationship is dropped when neither it nor its inverse is read by the mappings of their
    ///   entities.
    /// - An entity whose mappings name a custom policy is not analysed property by property: the
    ///   policy may read anything.
    ///
    /// A property mapping without an expression reads the source property of its name, and a copy
    /// mapping every source property its destination entity has, as the engine runs them.
    public static func uncarried(by mappings: [MappingModel], source: ObjectModel, destination: ObjectModel) -> [UncarriedData] {
        let entityMappings = mappings.flatMap(\.entityMappings).filter { $0.effectiveType != .remove && $0.effectiveType != .add }
        var readers: [String: [EntityMapping]] = [:]
        for mapping in entityMappings {
            if let name = mapping.sourceEntityName { readers[name, default: []].append(mapping) }
        }
        func hasPolicy(_ mapping: EntityMapping) -> Bool {
            if mapping.effectiveType == .custom { return true }
            guard let name = mapping.entityMigrationPolicyClassName else { return false }
            return !name.isEmpty && name != "NSEntityMigrationPolicy"
        }
        func readKeys(_ entity: String) -> Set<String> {
            var keys: Set<String> = []
            for mapping in readers[entity] ?? [] {
                for property in mapping.attributeMappings + mapping.relationshipMappings {
                    guard let expression = property.valueExpression else {
                        keys.insert(property.name)
                        continue
                    }
                    keys.formUnion(ExpressionScanner.sourceKeys(in: expression, implicit: false))
                }
                if mapping.effectiveType == .copy, let made = mapping.destinationEntityName {
                    keys.formUnion(destination.attributes(of: made).map(\.name))
                    keys.formUnion(destination.relationships(of: made).map(\.name))
                }
            }
            return keys
        }
        var result: [UncarriedData] = []
        for name in source.entityNamesInByteOrder {
            guard let entity = source.entity(named: name), !entity.isAbstract else { continue }
            guard let own = readers[name], !own.isEmpty else {
                result.append(UncarriedData(kind: .entity, entity: name))
                continue
            }
            if own.contains(where: hasPolicy) { continue }
            let keys = readKeys(name)
            for attribute in source.attributes(of: name) where !attribute.isTransient && !keys.contains(attribute.name) {
                result.append(UncarriedData(kind: .attribute, entity: name, property: attribute.name))
            }
            for relationship in source.relationships(of: name) where !relationship.isTransient && !keys.contains(relationship.name) {
                // Carried from the other side when the inverse is read for some object it can hold.
                if let inverse = relationship.inverseName {
                    let holders = source.hierarchy(from: relationship.destinationEntity).map(\.name)
                    let carried = holders.contains { holder in
                        (readers[holder] ?? []).contains(where: hasPolicy) || readKeys(holder).contains(inverse)
                    }
                    if carried { continue }
                }
                result.append(UncarriedData(kind: .relationship, entity: name, property: relationship.name))
            }
        }
        return result
    }
}
