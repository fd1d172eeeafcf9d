public import MoultModel
import Foundation
import MoultExpressions

extension MappingModel {
    /// Checks the mapping model against its two models and throws every problem found.
    ///
    /// - Throws: ``MappingError`` with code ``MappingError/Code/invalidMapping`` whose
    ///   ``MappingError/issues`` each name the entity mapping and property concerned.
    public func validate(source: ObjectModel, destination: ObjectModel) throws(MappingError) {
        let found = validationIssues(source: source, destination: destination)
        guard found.isEmpty else {
            throw MappingError(
                .invalidMapping, "the mapping model does not fit its models: \(found.count) problem\(found.count == 1 ? "" : "s")", issues: found)
        }
    }

    /// Every problem of the mapping model against its two models, in mapping order.
    ///
    /// Checked: mapping names are unique; each named entity exists in its model; the mapping type fits
    /// the entities it names; each property mapping names a destination attribute (or relationship);
    /// `$source.<key>` in an expression or filter names a property of the source entity; a mapping named
    /// in `destinationInstancesForEntityMappingNamed:sourceInstances:` exists and makes objects the
    /// relationship can hold; a plain `$source.<attribute>` fits the destination attribute's type;
    /// recorded entity version hashes equal the models'.
    public func validationIssues(source: ObjectModel, destination: ObjectModel) -> [MappingIssue] {
        var issues: [MappingIssue] = []
        var seen: Set<String> = []
        for mapping in entityMappings where !seen.insert(mapping.name).inserted {
            issues.append(MappingIssue(.badMappingReference, "two entity mappings are named \(mapping.name)", mapping: mapping.name))
        }
        for mapping in entityMappings {
            issues += EntityMappingValidator(mappingModel: self, mapping: mapping, source: source, destination: destination).issues()
        }
        return issues
    }
}

private struct EntityMappingValidator {
    let mappingModel: MappingModel
    let mapping: EntityMapping
    let source: ObjectModel
    let destination: ObjectModel

    private func issue(_ reason: MappingIssue.Reason, _ message: String, property: String? = nil) -> MappingIssue {
        MappingIssue(reason, message, mapping: mapping.name, property: property)
    }

    func issues() -> [MappingIssue] {
        var issues: [MappingIssue] = []
        let name = mapping.name
        var sourceEntity: EntityDescription?
        var destinationEntity: EntityDescription?
        if let sourceName = mapping.sourceEntityName {
            sourceEntity = source.entity(named: sourceName)
            if sourceEntity == nil { issues.append(issue(.missingEntity, "the source model has no entity \(sourceName)")) }
        }
        if let destinationName = mapping.destinationEntityName {
            destinationEntity = destination.entity(named: destinationName)
            if destinationEntity == nil { issues.append(issue(.missingEntity, "the destination model has no entity \(destinationName)")) }
        }
        switch mapping.mappingType {
        case .add where mapping.sourceEntityName != nil:
            issues.append(issue(.inconsistentType, "\(name) is an add mapping but names a source entity"))
        case .remove where mapping.destinationEntityName != nil:
            issues.append(issue(.inconsistentType, "\(name) is a remove mapping but names a destination entity"))
        case .copy, .transform:
            if mapping.sourceEntityName == nil || mapping.destinationEntityName == nil {
                issues.append(issue(.inconsistentType, "\(name) is a \(mapping.mappingType.jsonName) mapping and needs a source and a destination entity"))
            }
        default: break
        }
        if let sourceEntity, let recorded = mapping.sourceEntityVersionHash, let actual = try? source.versionHash(ofEntity: sourceEntity.name), recorded != actual {
            issues.append(issue(.versionHashMismatch, "the recorded hash of \(sourceEntity.name) is \(recorded.hex); the source model's is \(actual.hex)"))
        }
        if let destinationEntity, let recorded = mapping.destinationEntityVersionHash,
            let actual = try? destination.versionHash(ofEntity: destinationEntity.name), recorded != actual
        {
            issues.append(issue(.versionHashMismatch, "the recorded hash of \(destinationEntity.name) is \(recorded.hex); the destination model's is \(actual.hex)"))
        }
        if let filter = mapping.filterPredicate {
            if let problem = ExpressionScanner.predicateSyntaxProblem(in: filter) {
                issues.append(issue(.unparsableExpression, "the filter '\(filter)' does not parse: \(problem)"))
            }
            issues += sourceKeys(in: filter, implicit: true).compactMap { key in
                guard let sourceEntity, !hasProperty(key, sourceEntity.name, in: source) else { return nil }
                return issue(.missingProperty, "the filter '\(filter)' names \(key), which \(sourceEntity.name) does not have")
            }
        }
        for property in mapping.attributeMappings {
            let attribute = destinationEntity.flatMap { destination.attribute(named: property.name, of: $0.name) }
            if let destinationEntity, attribute == nil {
                let kind = destination.relationship(named: property.name, of: destinationEntity.name) != nil ? " (it is a relationship)" : ""
                issues.append(issue(.missingProperty, "\(destinationEntity.name) has no attribute \(property.name)\(kind)", property: property.name))
            }
            issues += expressionIssues(property, sourceEntity: sourceEntity)
            if let attribute, let expression = property.valueExpression, let sourceEntity, let key = plainSourceKey(expression),
                let sourceAttribute = source.attribute(named: key, of: sourceEntity.name),
                !AttributeConversion.isInferable(from: sourceAttribute.attributeType, to: attribute.attributeType)
            {
                issues.append(
                    issue(
                        .typeMismatch,
                        "\(sourceEntity.name).\(key) is \(sourceAttribute.attributeType.rawValue) and \(attribute.name) is \(attribute.attributeType.rawValue)",
                        property: property.name))
            }
        }
        for property in mapping.relationshipMappings {
            let relationship = destinationEntity.flatMap { destination.relationship(named: property.name, of: $0.name) }
            if let destinationEntity, relationship == nil {
                let kind = destination.attribute(named: property.name, of: destinationEntity.name) != nil ? " (it is an attribute)" : ""
                issues.append(issue(.missingProperty, "\(destinationEntity.name) has no relationship \(property.name)\(kind)", property: property.name))
            }
            issues += expressionIssues(property, sourceEntity: sourceEntity)
            for referenced in mappingNames(in: property.valueExpression ?? "") {
                guard let target = mappingModel.entityMapping(named: referenced) else {
                    issues.append(issue(.badMappingReference, "the expression names the entity mapping \(referenced), which does not exist", property: property.name))
                    continue
                }
                if let relationship, let made = target.destinationEntityName, destination.entity(named: made) != nil,
                    !destination.entity(made, isKindOf: relationship.destinationEntity)
                {
                    issues.append(
                        issue(
                            .typeMismatch, "\(referenced) makes \(made) objects; \(property.name) holds \(relationship.destinationEntity) objects",
                            property: property.name))
                }
            }
        }
        return issues
    }

    private func hasProperty(_ key: String, _ entity: String, in model: ObjectModel) -> Bool {
        model.hasAttribute(named: key, of: entity) || model.hasRelationship(named: key, of: entity)
            || model.entity(named: entity)?.fetchedProperties.contains { $0.name == key } == true
    }

    private func expressionIssues(_ property: PropertyMapping, sourceEntity: EntityDescription?) -> [MappingIssue] {
        guard let expression = property.valueExpression else { return [] }
        var issues: [MappingIssue] = []
        if let problem = ExpressionScanner.syntaxProblem(in: expression) {
            issues.append(issue(.unparsableExpression, "'\(expression)': \(problem)", property: property.name))
        }
        if let sourceEntity {
            for key in sourceKeys(in: expression, implicit: false) where !hasProperty(key, sourceEntity.name, in: source) {
                issues.append(issue(.missingProperty, "'\(expression)' reads $source.\(key), which \(sourceEntity.name) does not have", property: property.name))
            }
        } else if expression.contains("$source") {
            issues.append(issue(.missingEntity, "'\(expression)' reads $source, but \(mapping.name) has no source entity", property: property.name))
        }
        return issues
    }

    /// The first key of each `$source.<key>` (and, in a filter, of each bare key path).
    private func sourceKeys(in text: String, implicit: Bool) -> [String] {
        ExpressionScanner.sourceKeys(in: text, implicit: implicit)
    }

    /// The key of an expression that is exactly `$source.<key>`.
    private func plainSourceKey(_ expression: String) -> String? {
        // `$source.name` with a plain name (nearly every property mapping of a long history): no scan, no trimming.
        if let key = ExpressionScanner.plainSourceKey(expression) { return ExpressionNode.keyText(key) == key ? key : nil }
        let keys = ExpressionScanner.sourceKeys(in: expression, implicit: false)
        guard keys.count == 1 else { return nil }
        // Trimmed only when it starts or ends with a space (Foundation's trimming costs more than the rest).
        let spaces = CharacterSet.whitespaces
        let ends = [expression.unicodeScalars.first, expression.unicodeScalars.last].compactMap { $0 }
        let trimmed = ends.contains(where: spaces.contains) ? expression.trimmingCharacters(in: spaces) : expression
        guard trimmed == PropertyMapping.sourceValue(keys[0]) else { return nil }
        return keys[0]
    }

    /// Mapping names passed to `destinationInstancesForEntityMappingNamed:sourceInstances:`.
    private func mappingNames(in expression: String) -> [String] {
        ExpressionScanner.entityMappingNames(in: expression)
    }
}
