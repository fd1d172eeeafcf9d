public import MoultModel

extension MappingModel {
    /// Infers the mapping Core Data's lightweight migration would use between two model versions.
    ///
    /// Entities and properties correspond by name, or through renaming identifiers: a destination
    /// element whose renaming identifier is the name (or the renaming identifier) of a source element
    /// is that element renamed. Renames chained over several versions (v2 renamed `a` to `b`, v3
    /// renamed `b` to `c`) are followed through `intermediates`, the versions between the two in order.
    ///
    /// The rules, as Core Data's: attributes and relationships may be added or removed; an attribute may
    /// become optional, or required when it has a default value; a relationship may change between
    /// to-one and to-many and between unordered and ordered; entities may be added, removed, renamed, get
    /// a new parent or new children, and properties may move up or down their hierarchy; hierarchies are
    /// never merged. An attribute's type may change only where every value converts without loss
    /// (integer widening, Integer 16/32 to Double, Float to Double, integers to Decimal, Boolean to
    /// integers), or from an integer type to Double or Float, which Core Data infers too: inferred
    /// with a warning (``MappingIssue/Reason/roundingTypeChange``) that integers beyond 2^53 (2^24
    /// for Float) round. A to-many relationship is required only by a minimum count, so a new
    /// non-optional to-many without one is inferred (existing objects get an empty set).
    ///
    /// An attribute that was optional and becomes required keeps the expression `$source.<name>`: the
    /// engine gives a nil the destination attribute's default value, as Core Data does; with no default
    /// value it is still inferred (as Core Data does), with a warning (``inference(from:to:through:sourceName:destinationName:)``),
    /// and the objects whose value is nil fail validation. A to-one relationship marked optional with
    /// a minimum count of 1 (as older Xcode writes) is optional: adding one is inferable.
    ///
    /// ```swift
    /// let mapping = try MappingModel.inferred(from: v1, to: v3, through: [v2])
    /// ```
    /// - Parameters:
    ///   - source: The model of the existing store.
    ///   - destination: The model to migrate to.
    ///   - intermediates: The versions between them, oldest first, to follow chained renames.
    ///   - sourceName: The source version's name, recorded in ``sourceModel``.
    ///   - destinationName: The destination version's name, recorded in ``destinationModel``.
    /// - Throws: ``MappingError`` with code ``MappingError/Code/notInferable`` (category incompatible)
    ///   whose ``MappingError/issues`` name every entity and property that prevents inference, and why.
    public static func inferred(
        from source: ObjectModel, to destination: ObjectModel, through intermediates: [ObjectModel] = [],
        sourceName: String? = nil, destinationName: String? = nil
    ) throws(MappingError) -> MappingModel {
        try inference(from: source, to: destination, through: intermediates, sourceName: sourceName, destinationName: destinationName).mapping
    }

    /// ``inferred(from:to:through:sourceName:destinationName:)`` with the warnings of the inference:
    /// what is inferred as Core Data does but will fail validation for some objects (an optional
    /// attribute that becomes required with no default value fails for each object whose value is nil).
    public static func inference(
        from source: ObjectModel, to destination: ObjectModel, through intermediates: [ObjectModel] = [],
        sourceName: String? = nil, destinationName: String? = nil
    ) throws(MappingError) -> InferredMapping {
        var inference = Inference(source: source, destination: destination, chain: [source] + intermediates + [destination])
        return try finish(&inference, sourceName: sourceName, destinationName: destinationName)
    }

    /// Runs an inference's rules: its mapping and warnings, or the issues that prevent it.
    static func finish(_ inference: inout Inference, sourceName: String?, destinationName: String?) throws(MappingError) -> InferredMapping {
        let (source, destination) = (inference.source, inference.destination)
        let mappings = inference.run()
        if !inference.issues.isEmpty {
            let count = inference.issues.count
            throw MappingError(
                .notInferable,
                "no lightweight mapping exists from \(sourceName ?? "the source model") to \(destinationName ?? "the destination model"): \(count) problem\(count == 1 ? "" : "s")",
                issues: inference.issues)
        }
        let mapping = MappingModel(
            source: ModelReference(name: sourceName, entityVersionHashes: source.entityVersionHashes()),
            destination: ModelReference(name: destinationName, entityVersionHashes: destination.entityVersionHashes()),
            entityMappings: mappings)
        return InferredMapping(mapping: mapping, warnings: inference.warnings)
    }

    /// Infers the mapping between two versions of a versioned model, following renames through the
    /// versions between them.
    ///
    /// - Throws: ``MappingError``: ``MappingError/Code/modelNotFound`` when a version does not exist,
    ///   ``MappingError/Code/notInferable`` as ``inferred(from:to:through:sourceName:destinationName:)``.
    public static func inferred(from sourceVersion: String, to destinationVersion: String, in model: VersionedModel) throws(MappingError) -> MappingModel {
        try inference(from: sourceVersion, to: destinationVersion, in: model).mapping
    }

    /// ``inferred(from:to:in:)`` with the inference's warnings.
    public static func inference(from sourceVersion: String, to destinationVersion: String, in model: VersionedModel) throws(MappingError) -> InferredMapping {
        let (from, to, between) = try step(from: sourceVersion, to: destinationVersion, in: model)
        return try inference(from: from, to: to, through: between, sourceName: sourceVersion, destinationName: destinationVersion)
    }

    /// The models of two versions of `model` and of the versions between them, in the step's direction.
    ///
    /// - Throws: ``MappingError/Code/modelNotFound`` when a version does not exist.
    static func step(
        from sourceVersion: String, to destinationVersion: String, in model: VersionedModel
    ) throws(MappingError) -> (source: ObjectModel, destination: ObjectModel, between: [ObjectModel]) {
        guard let from = model.version(named: sourceVersion) else {
            throw MappingError(.modelNotFound, "the model '\(model.name)' has no version '\(sourceVersion)' (it has \(model.versions.map(\.name).joined(separator: ", ")))")
        }
        guard let to = model.version(named: destinationVersion) else {
            throw MappingError(.modelNotFound, "the model '\(model.name)' has no version '\(destinationVersion)' (it has \(model.versions.map(\.name).joined(separator: ", ")))")
        }
        let names = model.versions.map(\.name)
        let start = names.firstIndex(of: from.name)!, end = names.firstIndex(of: to.name)!
        let between: [ObjectModel]
        if start < end {
            between = model.versions[(start + 1)..<end].map(\.model)
        } else if start > end {
            between = model.versions[(end + 1)..<start].reversed().map(\.model)
        } else {
            between = []
        }
        return (from.model, to.model, between)
    }
}

/// An inferred mapping and what the inference warns about.
public struct InferredMapping: Sendable, Hashable {
    public var mapping: MappingModel
    /// Inferred as Core Data does, but some objects may fail validation (each names the entity and
    /// property).
    public var warnings: [MappingIssue]
}

// MARK: - Correspondence

/// Which source element each destination element comes from, over one step between two versions.
struct Correspondence {
    /// Destination entity → source entity.
    var entities: [String: String] = [:]
    /// Destination entity → (destination property → source property), over all properties, inherited
    /// ones included.
    var properties: [String: [String: String]] = [:]
}

/// Matches destination elements to source elements: by renaming identifier (naming the source
/// element, or equal to its renaming identifier), then by name.
///
/// A renaming identifier that resolves to more than one source element (one named so and another
/// with that renaming identifier, or two with that renaming identifier) is never resolved by order:
/// `onSourceAmbiguity` is told the destination element and every source element, and the
/// destination element is left unmatched.
private func match(
    destination: [(name: String, renamingIdentifier: String?)], source: [(name: String, renamingIdentifier: String?)],
    onAmbiguity: (_ source: String, _ destinations: [String]) -> Void,
    onSourceAmbiguity: (_ destination: String, _ sources: [String]) -> Void
) -> [String: String] {
    let sourceNames = Set(source.map(\.name))
    var byIdentifier: [String: [String]] = [:]
    for element in source {
        if let identifier = element.renamingIdentifier { byIdentifier[identifier, default: []].append(element.name) }
    }
    var result: [String: String] = [:]
    var claimed: [String: [String]] = [:]
    for element in destination {
        var found: String?
        if let identifier = element.renamingIdentifier {
            var candidates = byIdentifier[identifier] ?? []
            if sourceNames.contains(identifier), !candidates.contains(identifier) { candidates.insert(identifier, at: 0) }
            if candidates.count > 1 {
                onSourceAmbiguity(element.name, candidates.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
                continue
            }
            found = candidates.first
        }
        if found == nil, sourceNames.contains(element.name) { found = element.name }
        if let found {
            result[element.name] = found
            claimed[found, default: []].append(element.name)
        }
    }
    for (source, destinations) in claimed where destinations.count > 1 {
        onAmbiguity(source, destinations.sorted())
        for name in destinations where name != source { result[name] = nil }
    }
    return result
}

struct Inference {
    let source: ObjectModel
    let destination: ObjectModel
    let chain: [ObjectModel]
    var issues: [MappingIssue] = []
    /// What is inferred but may fail at validation.
    var warnings: [MappingIssue] = []

    /// The chain's correspondence composed beforehand (by an ``InferenceCache``), with the
    /// ambiguities of its last step; nil to compose it here.
    var precomposed: (correspondence: Correspondence, ambiguities: [MappingIssue])?

    /// The entity mappings a partial mapping gives (``MappingModel/infersRest``), in their order: each
    /// takes the place of the inferred mapping of its destination entity, the sources they read are not
    /// inferred removed, and inferred relationships reach the objects they make. Empty for a whole
    /// inference.
    var given: [EntityMapping] = []

    init(source: ObjectModel, destination: ObjectModel, chain: [ObjectModel]) {
        self.source = source
        self.destination = destination
        self.chain = chain
    }

    private mutating func step(from older: ObjectModel, to newer: ObjectModel, reportAmbiguity: Bool) -> Correspondence {
        let (result, ambiguities) = Self.correspondence(from: older, to: newer)
        if reportAmbiguity { issues += ambiguities }
        return result
    }

    /// Which element of `older` each element of `newer` is (by renaming identifier, then by name), and
    /// the renames that are ambiguous.
    static func correspondence(from older: ObjectModel, to newer: ObjectModel) -> (Correspondence, [MappingIssue]) {
        var result = Correspondence()
        var ambiguities: [MappingIssue] = []
        result.entities = match(
            destination: newer.entities.map { ($0.name, $0.renamingIdentifier) },
            source: older.entities.map { ($0.name, $0.renamingIdentifier) }
        ) { sourceName, destinations in
            ambiguities.append(
                MappingIssue(
                    .ambiguousRename, "entities \(destinations.joined(separator: " and ")) all claim to be the source entity \(sourceName)",
                    entity: sourceName))
        } onSourceAmbiguity: { destinationName, sources in
            ambiguities.append(
                MappingIssue(
                    .ambiguousRename,
                    "source entities \(sources.joined(separator: " and ")) both resolve to the destination entity \(destinationName) by its renaming identifier",
                    entity: destinationName))
        }
        for (newEntity, oldEntity) in result.entities {
            let newProperties = newer.attributes(of: newEntity).filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) }
                + newer.relationships(of: newEntity).filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) }
            let oldProperties = older.attributes(of: oldEntity).map { ($0.name, $0.renamingIdentifier) }
                + older.relationships(of: oldEntity).map { ($0.name, $0.renamingIdentifier) }
            result.properties[newEntity] = match(destination: newProperties, source: oldProperties) { sourceName, destinations in
                ambiguities.append(
                    MappingIssue(
                        .ambiguousRename,
                        "properties \(destinations.joined(separator: " and ")) of \(newEntity) all claim to be \(oldEntity).\(sourceName)",
                        entity: newEntity, property: sourceName))
            } onSourceAmbiguity: { destinationName, sources in
                ambiguities.append(
                    MappingIssue(
                        .ambiguousRename,
                        "source properties \(sources.map { "\(oldEntity).\($0)" }.joined(separator: " and ")) both resolve to \(newEntity).\(destinationName) by its renaming identifier",
                        entity: newEntity, property: destinationName))
            }
        }
        return (result, ambiguities)
    }

    /// The correspondence from the last model of the chain to the first, composed step by step.
    private mutating func composed() -> Correspondence {
        var result: Correspondence
        if let precomposed {
            // The chain composed already (``InferenceCache``), its last step's ambiguities with it.
            result = precomposed.correspondence
            issues += precomposed.ambiguities
        } else {
            result = composedChain()
        }
        guard chain.count > 2 else { return result }
        return withDirectCorrespondences(result)
    }

    /// The steps of the chain composed, from its last model to its first.
    private mutating func composedChain() -> Correspondence {
        var steps: [Correspondence] = []
        for index in 1..<chain.count {
            steps.append(step(from: chain[index - 1], to: chain[index], reportAmbiguity: index == chain.count - 1 || chain.count == 2))
        }
        var result = steps.last!
        for earlier in steps.dropLast().reversed() {
            var next = Correspondence()
            for (destinationEntity, middleEntity) in result.entities {
                guard let sourceEntity = earlier.entities[middleEntity] else { continue }
                next.entities[destinationEntity] = sourceEntity
                var properties: [String: String] = [:]
                for (destinationProperty, middleProperty) in result.properties[destinationEntity] ?? [:] {
                    if let sourceProperty = earlier.properties[middleEntity]?[middleProperty] { properties[destinationProperty] = sourceProperty }
                }
                next.properties[destinationEntity] = properties
            }
            result = next
        }
        return result
    }

    /// `result` with what the first and last models' direct correspondence adds.
    private func withDirectCorrespondences(_ chained: Correspondence) -> Correspondence {
        var result = chained
        // Core Data compares the two models only: an element with no source through the versions
        // between (removed in one, added back later) still corresponds by name or renaming
        // identifier directly, when that source element is not claimed through the chain.
        let direct = Self.correspondence(from: chain[0], to: chain[chain.count - 1]).0
        let claimedEntities = Set(result.entities.values)
        for (destinationEntity, sourceEntity) in direct.entities
        where result.entities[destinationEntity] == nil && !claimedEntities.contains(sourceEntity) {
            result.entities[destinationEntity] = sourceEntity
            result.properties[destinationEntity] = direct.properties[destinationEntity] ?? [:]
        }
        for (destinationEntity, sourceEntity) in result.entities where direct.entities[destinationEntity] == sourceEntity {
            var properties = result.properties[destinationEntity] ?? [:]
            let claimed = Set(properties.values)
            for (destinationProperty, sourceProperty) in direct.properties[destinationEntity] ?? [:]
            where properties[destinationProperty] == nil && !claimed.contains(sourceProperty) {
                properties[destinationProperty] = sourceProperty
            }
            result.properties[destinationEntity] = properties
        }
        return result
    }

    // MARK: Rules

    mutating func run() -> [EntityMapping] {
        let correspondence = composed()
        let covered = Set(given.compactMap(\.destinationEntityName))
        var sourceToDestination: [String: [String]] = [:]
        for (destinationEntity, sourceEntity) in correspondence.entities where !covered.contains(destinationEntity) {
            sourceToDestination[sourceEntity, default: []].append(destinationEntity)
        }
        for mapping in given {
            guard let sourceEntity = mapping.sourceEntityName, let destinationEntity = mapping.destinationEntityName,
                sourceToDestination[sourceEntity]?.contains(destinationEntity) != true
            else { continue }
            sourceToDestination[sourceEntity, default: []].append(destinationEntity)
        }
        let consumed = Set(given.compactMap(\.sourceEntityName))
        let givenNames = Set(given.map(\.name))
        let given = self.given
        // The mapping that makes `destinationEntity` objects of `sourceEntity` objects: the given one
        // when one is given, nil when several are (a relationship then finds them by its source).
        let mappingName = { (sourceEntity: String?, destinationEntity: String?) -> String? in
            if let destinationEntity, covered.contains(destinationEntity) {
                let named = given.filter { $0.sourceEntityName == sourceEntity && $0.destinationEntityName == destinationEntity }
                return named.count == 1 ? named[0].name : nil
            }
            return "\(sourceEntity ?? "None")To\(destinationEntity ?? "None")"
        }
        func inferredName(_ sourceEntity: String?, _ destinationEntity: String?) -> String {
            let name = "\(sourceEntity ?? "None")To\(destinationEntity ?? "None")"
            if givenNames.contains(name) {
                issues.append(
                    MappingIssue(
                        .badMappingReference,
                        "the entity mapping inferred for \(destinationEntity ?? sourceEntity ?? "?") would be named \(name), as a given entity mapping is: give that one another name",
                        entity: destinationEntity ?? sourceEntity))
            }
            return name
        }

        checkHierarchies(correspondence, leaving: covered)
        var mappings: [EntityMapping] = []
        for destinationName in destination.entityNamesInByteOrder {
            if covered.contains(destinationName) {
                mappings += given.filter { $0.destinationEntityName == destinationName }
                continue
            }
            let entity = destination.entity(named: destinationName)!
            let destinationHash = try? destination.versionHash(ofEntity: destinationName)
            guard let sourceName = correspondence.entities[destinationName], let sourceEntity = source.entity(named: sourceName) else {
                mappings.append(
                    EntityMapping(
                        name: inferredName(nil, destinationName), type: .add, source: nil, destination: destinationName,
                        destinationVersionHash: destinationHash))
                continue
            }
            if entity.isAbstract && !sourceEntity.isAbstract {
                issues.append(
                    MappingIssue(
                        .becameAbstract,
                        "\(sourceName) has objects of its own but its destination \(destinationName) is abstract: say which sub-entity each object becomes in a mapping model",
                        entity: destinationName))
            }
            let properties = correspondence.properties[destinationName] ?? [:]
            let attributes = attributeMappings(destinationName, sourceName, properties)
            let relationships = relationshipMappings(destinationName, sourceName, properties, sourceToDestination, mappingName)
            let sourceHash = try? source.versionHash(ofEntity: sourceName)
            let unchanged = sourceName == destinationName && sourceHash != nil && sourceHash == destinationHash
                && attributes.allSatisfy { $0.valueExpression == PropertyMapping.sourceValue($0.name) }
            mappings.append(
                EntityMapping(
                    name: inferredName(sourceName, destinationName), type: unchanged ? .copy : .transform, source: sourceName,
                    destination: destinationName, sourceVersionHash: sourceHash, destinationVersionHash: destinationHash,
                    attributes: attributes, relationships: relationships))
        }
        // Given mappings that make no destination object (removes, policies of no destination entity).
        mappings += given.filter { $0.destinationEntityName == nil }
        for sourceName in source.entityNamesInByteOrder where sourceToDestination[sourceName] == nil && !consumed.contains(sourceName) {
            mappings.append(
                EntityMapping(
                    name: inferredName(sourceName, nil), type: .remove, source: sourceName, destination: nil,
                    sourceVersionHash: try? source.versionHash(ofEntity: sourceName)))
        }
        for index in mappings.indices { mappings[index].order = index + 1 }
        return mappings
    }

    /// Hierarchies are never merged: entities from two source hierarchies may not share a destination root.
    /// The destination entities in `covered` have given mappings, which may merge what they like.
    private mutating func checkHierarchies(_ correspondence: Correspondence, leaving covered: Set<String>) {
        var sourceRoots: [String: [String: String]] = [:]  // destination root → source root → a destination entity
        for destinationName in destination.entityNamesInByteOrder where !covered.contains(destinationName) {
            guard let sourceName = correspondence.entities[destinationName], let destinationRoot = destination.root(of: destinationName)?.name,
                let sourceRoot = source.root(of: sourceName)?.name
            else { continue }
            if sourceRoots[destinationRoot]?[sourceRoot] == nil { sourceRoots[destinationRoot, default: [:]][sourceRoot] = destinationName }
        }
        for (destinationRoot, roots) in sourceRoots.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
            let described = roots.sorted { $0.key < $1.key }.map { "\($0.value) (from the hierarchy of \($0.key))" }
            issues.append(
                MappingIssue(
                    .hierarchiesMerged,
                    "the hierarchy of \(destinationRoot) would merge entities of separate source hierarchies: \(described.joined(separator: ", "))",
                    entity: destinationRoot))
        }
    }

    private static func hasDefault(_ attribute: AttributeDescription) -> Bool {
        attribute.defaultValueString != nil || attribute.defaultDateTimeInterval != nil
    }

    private mutating func attributeMappings(_ destinationName: String, _ sourceName: String, _ properties: [String: String]) -> [PropertyMapping] {
        var result: [PropertyMapping] = []
        for attribute in destination.attributes(of: destinationName) where !attribute.isTransient {
            let sourceProperty = properties[attribute.name]
            if let sourceProperty, source.relationship(named: sourceProperty, of: sourceName) != nil {
                issues.append(
                    MappingIssue(
                        .propertyKindChanged, "\(sourceName).\(sourceProperty) is a relationship; its destination \(attribute.name) is an attribute",
                        entity: destinationName, property: attribute.name))
                continue
            }
            guard let sourceProperty, let old = source.attribute(named: sourceProperty, of: sourceName) else {
                if !attribute.isOptional && !Self.hasDefault(attribute) {
                    issues.append(
                        MappingIssue(
                            .requiredWithoutDefault,
                            "the new attribute \(destinationName).\(attribute.name) is required and has no default value for existing objects",
                            entity: destinationName, property: attribute.name))
                }
                result.append(PropertyMapping(attribute.name))
                continue
            }
            if old.isTransient {
                if !attribute.isOptional && !Self.hasDefault(attribute) {
                    issues.append(
                        MappingIssue(
                            .transientBecamePersistent,
                            "\(sourceName).\(old.name) was transient (never stored); \(destinationName).\(attribute.name) is stored, required and has no default value",
                            entity: destinationName, property: attribute.name))
                }
                result.append(PropertyMapping(attribute.name))
                continue
            }
            if let exponent = AttributeConversion.roundingExponent(from: old.attributeType, to: attribute.attributeType) {
                // Core Data infers integers to Double or Float; the values beyond the destination's
                // exact integers round (inferred, said).
                warnings.append(
                    MappingIssue(
                        .roundingTypeChange,
                        "\(sourceName).\(old.name) is \(old.attributeType.rawValue) and \(destinationName).\(attribute.name) is \(attribute.attributeType.rawValue): integers beyond 2^\(exponent) in magnitude round to the nearest \(attribute.attributeType.rawValue)",
                        entity: destinationName, property: attribute.name))
            } else if !AttributeConversion.isLossless(from: old.attributeType, to: attribute.attributeType) {
                issues.append(
                    MappingIssue(
                        .lossyTypeChange,
                        "\(sourceName).\(old.name) is \(old.attributeType.rawValue) and \(destinationName).\(attribute.name) is \(attribute.attributeType.rawValue): not every value converts without loss",
                        entity: destinationName, property: attribute.name))
            }
            if old.isOptional && !attribute.isOptional && !Self.hasDefault(attribute) {
                // Core Data infers `$source.<name>` here; only the objects whose value is nil fail, at
                // validation. Inferred too, with a warning.
                warnings.append(
                    MappingIssue(
                        .requiredWithoutDefault,
                        "\(sourceName).\(old.name) is optional and \(destinationName).\(attribute.name) is required with no default value: every object whose \(old.name) is nil will fail validation",
                        entity: destinationName, property: attribute.name))
            }
            result.append(PropertyMapping(attribute.name, PropertyMapping.sourceValue(old.name)))
        }
        return result
    }

    private mutating func relationshipMappings(
        _ destinationName: String, _ sourceName: String, _ properties: [String: String], _ sourceToDestination: [String: [String]],
        _ mappingName: (String?, String?) -> String?
    ) -> [PropertyMapping] {
        var result: [PropertyMapping] = []
        for relationship in destination.relationships(of: destinationName) where !relationship.isTransient {
            let sourceProperty = properties[relationship.name]
            if let sourceProperty, source.attribute(named: sourceProperty, of: sourceName) != nil {
                issues.append(
                    MappingIssue(
                        .propertyKindChanged, "\(sourceName).\(sourceProperty) is an attribute; its destination \(relationship.name) is a relationship",
                        entity: destinationName, property: relationship.name))
                continue
            }
            guard let sourceProperty, let old = source.relationship(named: sourceProperty, of: sourceName), !old.isTransient else {
                // A to-one relationship is required only when not optional: older Xcode writes
                // optional="YES" minCount="1" on optional to-ones, and Core Data treats them as optional.
                // A to-many is required only by a minimum count: existing objects get an empty set,
                // which Core Data accepts for a non-optional to-many without `minCount`.
                if relationship.isToMany ? relationship.minCount > 0 : !relationship.isOptional {
                    issues.append(
                        MappingIssue(
                            .requiredRelationshipAdded,
                            "the new relationship \(destinationName).\(relationship.name) is required: existing objects have nothing to point to",
                            entity: destinationName, property: relationship.name))
                }
                result.append(PropertyMapping(relationship.name))
                continue
            }
            // Every migrated object the relationship held must belong to the new destination entity.
            // (A given mapping that makes objects of another kind from them, as a policy making a
            // Company of each Adult, is not what the relationship holds.)
            let covered = Set(given.compactMap(\.destinationEntityName))
            let targets = source.hierarchy(from: old.destinationEntity).flatMap { entity in
                (sourceToDestination[entity.name] ?? []).map { (entity.name, $0) }
            }.filter { !covered.contains($0.1) || destination.entity($0.1, isKindOf: relationship.destinationEntity) }
            let misfits = targets.filter { !destination.entity($0.1, isKindOf: relationship.destinationEntity) }
            if targets.isEmpty || !misfits.isEmpty {
                let detail = targets.isEmpty
                    ? "no entity of \(old.destinationEntity)'s hierarchy is migrated"
                    : misfits.map { "\($0.0) becomes \($0.1)" }.joined(separator: ", ")
                issues.append(
                    MappingIssue(
                        .destinationEntityChanged,
                        "\(sourceName).\(old.name) points to \(old.destinationEntity) and \(destinationName).\(relationship.name) to \(relationship.destinationEntity), but \(detail), which is not a \(relationship.destinationEntity)",
                        entity: destinationName, property: relationship.name))
                continue
            }
            let expression = targets.count == 1 ? mappingName(targets[0].0, targets[0].1) : nil
            result.append(
                PropertyMapping(
                    relationship.name,
                    expression.map { PropertyMapping.destinationInstances(mapping: $0, sourceKeyPath: old.name) }
                        ?? PropertyMapping.destinationInstances(sourceRelationship: old.name)))
        }
        return result
    }
}

/// Which attribute type changes keep every value, and which Core Data infers though some values round.
public enum AttributeConversion {
    /// Whether a lightweight migration converts `from` to `to`: every lossless change
    /// (``isLossless(from:to:)``), and integers to Double or Float, which Core Data infers though the
    /// integers beyond the destination's exact range round (``roundingExponent(from:to:)``).
    public static func isInferable(from: AttributeType, to: AttributeType) -> Bool {
        isLossless(from: from, to: to) || roundingExponent(from: from, to: to) != nil
    }

    /// For an integer type converted to a floating type that cannot hold all its values: `e` such that
    /// integers beyond 2^e in magnitude may round (53 for Double, 24 for Float); nil otherwise.
    ///
    /// ```swift
    /// AttributeConversion.roundingExponent(from: .integer64, to: .double)   // 53
    /// AttributeConversion.roundingExponent(from: .integer32, to: .double)   // nil: every value is exact
    /// ```
    public static func roundingExponent(from: AttributeType, to: AttributeType) -> Int? {
        switch (from, to) {
        case (.integer64, .double): 53
        case (.integer32, .float), (.integer64, .float): 24
        default: nil
        }
    }

    /// Whether every value of `from` converts to `to` without loss.
    ///
    /// Same type; Integer 16 → 32 → 64; Boolean → any integer; Integer 16 → Float; Integer 16/32 →
    /// Double; any integer → Decimal; Float → Double.
    public static func isLossless(from: AttributeType, to: AttributeType) -> Bool {
        if from == to { return true }
        switch (from, to) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.boolean, .integer16), (.boolean, .integer32), (.boolean, .integer64): return true
        case (.integer16, .float), (.integer16, .double), (.integer32, .double): return true
        case (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal): return true
        case (.float, .double): return true
        default: return false
        }
    }
}
