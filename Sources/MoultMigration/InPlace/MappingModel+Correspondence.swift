import Foundation
public import MoultMapping
public import MoultModel
public import MoultStore

extension MappingModel {
    /// What this mapping says in the terms of stores, when it is a lightweight one: each destination
    /// entity's source entity, each property's source property, and the values existing objects get.
    ///
    /// Only what Core Data's lightweight migration would do qualifies: entity mappings that add,
    /// remove, copy or transform without filter or policy, attribute values that are a source
    /// attribute (`$source.name`) or the default of a new attribute, relationship values that are the
    /// destination instances of a source relationship. Anything else (an expression, a filter, a
    /// policy, several mappings of one entity) is a heavyweight step.
    ///
    /// - Returns: the correspondence, or the reasons it has none.
    public func layoutCorrespondence(source: ObjectModel, destination: ObjectModel) -> Result<LayoutCorrespondence, InPlaceReasons> {
        var reasons: [String] = []
        var correspondence = LayoutCorrespondence()
        var destinationsSeen: Set<String> = []
        var sourcesSeen: Set<String> = []
        let mappings = orderedEntityMappings
        for mapping in mappings {
            let type = mapping.effectiveType
            switch type {
            case .add:
                guard let name = mapping.destinationEntityName, destination.entity(named: name) != nil else {
                    reasons.append("\(mapping.name) adds an entity the destination model does not have")
                    continue
                }
                if !destinationsSeen.insert(name).inserted { reasons.append("\(name) has several entity mappings") }
                continue
            case .remove:
                continue
            case .copy, .transform:
                break
            case .custom, .undefined:
                reasons.append("\(mapping.name) is a custom entity mapping")
                continue
            }
            guard let sourceName = mapping.sourceEntityName, let destinationName = mapping.destinationEntityName,
                source.entity(named: sourceName) != nil, destination.entity(named: destinationName) != nil
            else {
                reasons.append("\(mapping.name) names an entity the models do not have")
                continue
            }
            if let filter = mapping.filterPredicate, !filter.trimmingCharacters(in: .whitespaces).isEmpty {
                reasons.append("\(mapping.name) has a filter (\(filter))")
            }
            if mapping.entityMigrationPolicyClassName != nil || mapping.builtinPolicy != nil {
                reasons.append("\(mapping.name) has a migration policy")
            }
            if !destinationsSeen.insert(destinationName).inserted { reasons.append("\(destinationName) has several entity mappings") }
            if !sourcesSeen.insert(sourceName).inserted { reasons.append("the objects of \(sourceName) go to several entities") }
            correspondence.entities[destinationName] = sourceName

            var properties: [String: String] = [:]
            correspondAttributes(of: mapping, source: (source, sourceName), destination: (destination, destinationName), &properties, &correspondence, &reasons)
            correspondRelationships(
                of: mapping, among: mappings, source: (source, sourceName), destination: (destination, destinationName), &properties, &reasons)
            correspondence.properties[destinationName] = properties
        }
        return reasons.isEmpty ? .success(correspondence) : .failure(InPlaceReasons(reasons))
    }

    /// The source attribute of each attribute of a destination entity, the values its objects get
    /// where that attribute is new, or where a nil becomes a required attribute's default.
    private func correspondAttributes(
        of mapping: EntityMapping, source: (model: ObjectModel, entity: String), destination: (model: ObjectModel, entity: String),
        _ properties: inout [String: String], _ correspondence: inout LayoutCorrespondence, _ reasons: inout [String]
    ) {
        let (source, sourceName) = source
        let (destination, destinationName) = destination
        let type = mapping.effectiveType
        let sourceAttributes = source.attributes(of: sourceName).filter { !$0.isTransient }.map(\.name)
        // `$source.<name>` → name: an expression that is a source attribute's plain value, found without
        // writing every attribute's expression for every destination attribute.
        let plainValues = Dictionary(sourceAttributes.map { (PropertyMapping.sourceValue($0), $0) }, uniquingKeysWith: { first, _ in first })
        for attribute in destination.attributes(of: destinationName) where !attribute.isTransient {
            let propertyMapping = mapping.attributeMapping(named: attribute.name)
            var from: String?
            if let text = propertyMapping?.valueExpression {
                guard let name = plainValues[text] else {
                    reasons.append("\(mapping.name): the value of \(attribute.name) is an expression (\(Self.abridged(text)))")
                    continue
                }
                from = name
            } else if propertyMapping != nil || type == .copy {
                // A mapping without a value (or none, in a copy) takes the source's property of the
                // same name, as the streaming engine does (`$source.<name>`).
                if plainValues[PropertyMapping.sourceValue(attribute.name)] == attribute.name {
                    from = attribute.name
                } else if propertyMapping != nil, source.relationship(named: attribute.name, of: sourceName) != nil {
                    reasons.append("\(mapping.name): the value of \(attribute.name) is the source's relationship of that name")
                    continue
                }
            }
            if let from {
                properties[attribute.name] = from
                // A nil can only be in the store when the source attribute was optional.
                if !attribute.isOptional, source.attribute(named: from, of: sourceName)?.isOptional ?? true {
                    let value = DefaultValues.coerce(DefaultValues.value(of: attribute), to: attribute.attributeType)
                    if !value.isNull { correspondence.nilReplacements[destinationName, default: [:]][attribute.name] = value }
                }
            } else {
                let value = DefaultValues.coerce(DefaultValues.value(of: attribute), to: attribute.attributeType)
                if !value.isNull { correspondence.newAttributeValues[destinationName, default: [:]][attribute.name] = value }
            }
        }
    }

    /// The source relationship of each relationship of a destination entity.
    private func correspondRelationships(
        of mapping: EntityMapping, among mappings: [EntityMapping], source: (model: ObjectModel, entity: String), destination: (model: ObjectModel, entity: String),
        _ properties: inout [String: String], _ reasons: inout [String]
    ) {
        let (source, sourceName) = source
        let (destination, destinationName) = destination
        let type = mapping.effectiveType
        let sourceRelationships = source.relationships(of: sourceName).filter { !$0.isTransient }
        for relationship in destination.relationships(of: destinationName) where !relationship.isTransient {
            let propertyMapping = mapping.relationshipMapping(named: relationship.name)
            if let text = propertyMapping?.valueExpression {
                let candidate = sourceRelationships.first { old in
                    if PropertyMapping.destinationInstances(sourceRelationship: old.name) == text { return true }
                    // The named mapping must be the only one taking objects of the old destination's hierarchy.
                    let targets = mappings.filter { other in
                        other.destinationEntityName != nil
                            && other.sourceEntityName.map { source.entity($0, isKindOf: old.destinationEntity) } == true
                    }
                    return targets.count == 1
                        && PropertyMapping.destinationInstances(mapping: targets[0].name, sourceKeyPath: old.name) == text
                }
                guard let candidate else {
                    reasons.append("\(mapping.name): the value of \(relationship.name) is an expression (\(Self.abridged(text)))")
                    continue
                }
                properties[relationship.name] = candidate.name
            } else if propertyMapping != nil || type == .copy {
                // As for attributes: the source's relationship of the same name.
                if sourceRelationships.contains(where: { $0.name == relationship.name }) {
                    properties[relationship.name] = relationship.name
                } else if propertyMapping != nil, source.attribute(named: relationship.name, of: sourceName) != nil {
                    reasons.append("\(mapping.name): the value of \(relationship.name) is the source's attribute of that name")
                }
            }
        }
    }
}

/// Why a step cannot run in place by SQL alone.
public struct InPlaceReasons: Error, Sendable, Hashable, CustomStringConvertible {
    public var reasons: [String]

    public init(_ reasons: [String]) { self.reasons = reasons }

    public var description: String { reasons.joined(separator: "; ") }
}

extension MappingModel {
    /// An expression as a reason names it: whole when short, else its first 60 characters and an
    /// ellipsis (a step's reasons are one line of `plan`; `moult mapping` prints the whole expression).
    static func abridged(_ expression: String) -> String {
        expression.count <= 64 ? expression : String(expression.prefix(60)) + "…"
    }
}
