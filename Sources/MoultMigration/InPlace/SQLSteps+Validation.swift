import MoultModel
package import MoultStore

extension SQLSteps {
    /// The destination properties whose rules an SQL step must check before it commits: those whose
    /// rules are new or differ from the rules their source property had. A property whose rules are
    /// the source's was valid under them already; re-checking it would cost a scan of its table and
    /// make a schema-only step depend on the number of objects.
    ///
    /// The streaming engine checks every rule of the destination model (stage 3). An SQL step checks
    /// the ones the step itself can break: a new attribute that is required or has a default, an
    /// attribute made required with no default (nils stay),
    /// new or tighter bounds, a new regular expression, a type change, a to-one made required, new
    /// counts on a to-many, a required relationship (or one with counts) that may lose objects of a
    /// removed entity (the SQL step clears those links, as the copy leaves them out).
    static func rulesTheStepCanBreak(
        _ correspondence: LayoutCorrespondence, source: ObjectModel, destination: ObjectModel
    ) -> [String: Set<String>] {
        var checked: [String: Set<String>] = [:]
        var inverses: [String: Set<String>] = [:]
        let removed = Set(source.entities.map(\.name)).subtracting(correspondence.entities.values)
        for (destinationEntity, sourceEntity) in correspondence.entities {
            let names = correspondence.properties[destinationEntity] ?? [:]
            var properties: Set<String> = []
            for attribute in destination.attributes(of: destinationEntity) where !attribute.isTransient {
                guard let from = names[attribute.name], let old = source.attribute(named: from, of: sourceEntity) else {
                    // A new attribute: every existing object holds the same value, its default or nil.
                    // Nil passes every rule but being required, so an optional one without a default
                    // is valid without a scan (which would make a schema-only step read every page).
                    if attribute.hasRules, !(attribute.defaultValueString == nil && attribute.isOptional) { properties.insert(attribute.name) }
                    continue
                }
                if attribute.ruleSignature != old.ruleSignature { properties.insert(attribute.name) }
            }
            for relationship in destination.relationships(of: destinationEntity) where !relationship.isTransient {
                guard let from = names[relationship.name], let old = source.relationship(named: from, of: sourceEntity) else {
                    if relationship.hasRules { properties.insert(relationship.name) }
                    continue
                }
                if relationship.ruleSignature != old.ruleSignature || relationship.destinationEntity != old.destinationEntity {
                    properties.insert(relationship.name)
                    // A relationship made a one-to-one: its inverse's objects must point back too
                    // (several objects may name one that names only one of them).
                    if !relationship.isToMany, let inverse = destination.inverse(of: relationship), !inverse.isToMany {
                        for holder in destination.hierarchy(from: relationship.destinationEntity) {
                            inverses[holder.name, default: []].insert(inverse.name)
                        }
                    }
                } else if relationship.hasRules,
                    source.hierarchy(from: old.destinationEntity).contains(where: { removed.contains($0.name) })
                {
                    properties.insert(relationship.name)
                }
            }
            if !properties.isEmpty { checked[destinationEntity, default: []].formUnion(properties) }
        }
        for (entity, names) in inverses { checked[entity, default: []].formUnion(names) }
        return checked
    }
}

extension InPlaceMigration {
    /// What an SQL step reads object by object, and why: its changes that copy, fill or rewrite rows,
    /// and the rules it checks (each a read of every object of the entity). Empty for a step whose cost
    /// does not grow with the number of objects; `moult plan` and the `inplace-step` event say it.
    ///
    /// ```swift
    /// InPlaceMigration.rowsRead(step, script: script)   // ["checks Person.age against v3's rules: reads every Person object"]
    /// ```
    package static func rowsRead(_ step: ProgressiveMigration.Step, script: InPlaceScript) -> [String] {
        var reads = script.changes.filter(\.touchesRows).map { "\($0.description): rewrites rows" }
        // The correspondence the script was made from (found again only for a script made otherwise).
        let found = script.correspondence.map { Result<LayoutCorrespondence, InPlaceReasons>.success($0) }
            ?? step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model)
        if case .success(let correspondence) = found {
            let checked = SQLSteps.rulesTheStepCanBreak(correspondence, source: step.from.model, destination: step.to.model)
            for (entity, properties) in checked.sorted(by: { $0.key < $1.key }) {
                let names = properties.sorted().map { "\(entity).\($0)" }.joined(separator: ", ")
                reads.append("checks \(names) against \(step.to.name)'s rules: reads every \(entity) object")
            }
        }
        return reads
    }
}

extension AttributeDescription {
    fileprivate var hasRules: Bool {
        !isOptional || minValueString != nil || maxValueString != nil || minDateTimeInterval != nil || maxDateTimeInterval != nil
            || !(regularExpressionString ?? "").isEmpty
    }

    fileprivate struct RuleSignature: Hashable {
        var type: AttributeType
        var isOptional: Bool
        var minimum: String?
        var maximum: String?
        var earliest: Double?
        var latest: Double?
        var pattern: String?
    }

    fileprivate var ruleSignature: RuleSignature {
        RuleSignature(
            type: attributeType, isOptional: isOptional, minimum: minValueString, maximum: maxValueString,
            earliest: minDateTimeInterval, latest: maxDateTimeInterval, pattern: regularExpressionString)
    }
}

extension RelationshipDescription {
    /// A to-one's rule is its being required; a to-many's are its counts (required or not, it may be
    /// empty without a minimum count, as the streaming engine's validation says).
    fileprivate var hasRules: Bool { isToMany ? minCount > 0 || maxCount > 0 : !isOptional }

    fileprivate struct RuleSignature: Hashable {
        var isToMany: Bool
        var isOptional: Bool
        var minCount: Int
        var maxCount: Int
    }

    fileprivate var ruleSignature: RuleSignature {
        RuleSignature(isToMany: isToMany, isOptional: isOptional, minCount: minCount, maxCount: maxCount)
    }
}
