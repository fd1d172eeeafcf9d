/// One version of a data model: Core Data's `NSManagedObjectModel`, with inheritance resolved.
///
/// Creating a model checks it: every parent and destination entity exists, inverses point back,
/// parents form no cycle. A model is a value; its lookups are precomputed.
///
/// ```swift
/// let model = try ObjectModel(entities: [
///     EntityDescription(name: "Person", attributes: [
///         AttributeDescription(name: "name", type: .string),
///     ]),
/// ])
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// The entities in the order the model lists them.
    public private(set) var entities: [EntityDescription]
    /// The developer's version identifier (`userDefinedModelVersionIdentifier`), a hint only.
    public var versionIdentifier: String? { didSet { derivedMemo = DerivedValueMemo() } }
    public var configurations: [ConfigurationDescription] { didSet { derivedMemo = DerivedValueMemo() } }
    public var fetchRequests: [FetchRequestTemplate] { didSet { derivedMemo = DerivedValueMemo() } }

    private var resolution: Resolution
    /// Each entity's version hash, computed once: the entities never change after `init`.
    let hashMemo = VersionHashMemo()
    /// The values derived from the whole model (``memoized(_:_:)``), made again when a property changes.
    private(set) var derivedMemo = DerivedValueMemo()

    /// Creates a model and resolves its inheritance.
    ///
    /// - Throws: ``ModelError`` when a parent or destination entity is missing, an inverse does not
    ///   point back, parents form a cycle, or two entities share a name.
    public init(
        entities: [EntityDescription],
        versionIdentifier: String? = nil,
        configurations: [ConfigurationDescription] = [],
        fetchRequests: [FetchRequestTemplate] = []
    ) throws(ModelError) {
        self.entities = entities
        self.versionIdentifier = versionIdentifier
        self.configurations = configurations
        self.fetchRequests = fetchRequests
        self.resolution = try Resolution(entities)
    }

    /// The most entities one inheritance chain may hold (an entity and its ancestors). Real models nest
    /// a few levels; the limit keeps the work per entity bounded on hostile input.
    public static let maximumInheritanceDepth = 100

    /// What the model holds that Core Data accepts though it is not consistent (two relationships of
    /// an entity naming one inverse, which points back at one of them), one sentence each: a command
    /// says them as warnings.
    public var warnings: [String] { resolution.warnings }

    /// The version identifiers of this model, as Core Data's `versionIdentifiers` holds them.
    public var versionIdentifiers: [String] { versionIdentifier.map { [$0] } ?? [] }

    // MARK: - Lookups

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        resolution.index[name].map { entities[$0] }
    }

    /// Entity names sorted by their UTF-8 bytes, the order Core Data hashes and numbers them in.
    public var entityNamesInByteOrder: [String] { resolution.byteOrderedNames }

    /// The entity's parent chain, nearest first.
    public func ancestors(of entityName: String) -> [EntityDescription] {
        var result: [EntityDescription] = []
        var current = entity(named: entityName)?.parentName
        while let name = current, let parent = entity(named: name) {
            result.append(parent)
            current = parent.parentName
        }
        return result
    }

    /// The root of the entity's inheritance hierarchy (the entity itself when it has no parent).
    public func root(of entityName: String) -> EntityDescription? {
        ancestors(of: entityName).last ?? entity(named: entityName)
    }

    /// The direct sub-entities, in model order.
    public func subentities(of entityName: String) -> [EntityDescription] {
        (resolution.children[entityName] ?? []).map { entities[$0] }
    }

    /// The entity and all its descendants, depth first, the entity first.
    public func hierarchy(from entityName: String) -> [EntityDescription] {
        guard let entity = entity(named: entityName) else { return [] }
        var result = [entity]
        for child in subentities(of: entityName).sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            result += hierarchy(from: child.name)
        }
        return result
    }

    /// Every attribute of the entity, inherited ones first (from the root down), then its own.
    ///
    /// A property an entity declares again under an inherited property's name replaces the inherited
    /// one (models rebuilt from a store's model cache list inherited properties on every sub-entity).
    public func attributes(of entityName: String) -> [AttributeDescription] {
        if let own = ownPropertiesOnly(of: entityName, \.attributes, \.attributePositions) { return own }
        return inheritedProperties(of: entityName, \.attributes, name: \.name).map(\.property)
    }

    /// Every relationship of the entity, inherited ones first (from the root down), then its own; a
    /// redeclared relationship replaces the inherited one, as for ``attributes(of:)``.
    public func relationships(of entityName: String) -> [RelationshipDescription] {
        if let own = ownPropertiesOnly(of: entityName, \.relationships, \.relationshipPositions) { return own }
        return inheritedProperties(of: entityName, \.relationships, name: \.name).map(\.property)
    }

    /// Every relationship of the entity with the entity that declares it, in the order of
    /// ``relationships(of:)``.
    public func relationshipsWithOwners(of entityName: String) -> [(property: RelationshipDescription, owner: String)] {
        inheritedProperties(of: entityName, \.relationships, name: \.name)
    }

    /// The properties a root entity declares, as they are, when no two share a name: what
    /// ``inheritedProperties(of:_:name:)`` would list, without copying them one by one (a model of
    /// hundreds of attributes is asked for them at every step of a long chain). Nil otherwise.
    private func ownPropertiesOnly<P>(
        of entityName: String, _ declared: KeyPath<EntityDescription, [P]>, _ positions: KeyPath<Resolution, [[String: Int]]>
    ) -> [P]? {
        guard let index = resolution.index[entityName], entities[index].parentName == nil else { return nil }
        let properties = entities[index][keyPath: declared]
        return resolution[keyPath: positions][index].count == properties.count ? properties : nil
    }

    private func inheritedProperties<P>(
        of entityName: String, _ declared: (EntityDescription) -> [P], name: (P) -> String
    ) -> [(property: P, owner: String)] {
        let chain = ancestors(of: entityName).reversed() + [entity(named: entityName)].compactMap { $0 }
        var result: [(property: P, owner: String)] = []
        var position: [String: Int] = [:]
        for owner in chain {
            for property in declared(owner) {
                if let existing = position[name(property)] {
                    result[existing] = (property, owner.name)
                } else {
                    position[name(property)] = result.count
                    result.append((property, owner.name))
                }
            }
        }
        return result
    }

    /// The attribute with this name on the entity, inherited ones included.
    public func attribute(named name: String, of entityName: String) -> AttributeDescription? {
        nearestDeclaration(of: name, in: entityName, resolution.attributePositions).map { entities[$0.entity].attributes[$0.property] }
    }

    /// The relationship with this name on the entity, inherited ones included.
    public func relationship(named name: String, of entityName: String) -> RelationshipDescription? {
        nearestDeclaration(of: name, in: entityName, resolution.relationshipPositions).map { entities[$0.entity].relationships[$0.property] }
    }

    /// Whether the entity has an attribute with this name, inherited ones included: ``attribute(named:of:)``
    /// without copying the attribute out (a mapping of hundreds of property mappings asks for each).
    public func hasAttribute(named name: String, of entityName: String) -> Bool {
        nearestDeclaration(of: name, in: entityName, resolution.attributePositions) != nil
    }

    /// Whether the entity has a relationship with this name, inherited ones included.
    public func hasRelationship(named name: String, of entityName: String) -> Bool {
        nearestDeclaration(of: name, in: entityName, resolution.relationshipPositions) != nil
    }

    /// Where the property named so is declared: by the entity, else by its nearest ancestor (the one
    /// ``attributes(of:)`` and ``relationships(of:)`` list), found by the entities' indexes of their
    /// properties, without listing them (models of hundreds of attributes are asked for each).
    ///
    /// `positions` is the resolution's `attributePositions` or `relationshipPositions`,
    /// passed as it is (a key path applied at every lookup cost more than the lookup).
    private func nearestDeclaration(
        of propertyName: String, in entityName: String, _ positions: [[String: Int]]
    ) -> (entity: Int, property: Int)? {
        var current = resolution.index[entityName]
        // (Parent cycles are refused when the model is made: the walk ends.)
        while let entity = current {
            if let property = positions[entity][propertyName] { return (entity, property) }
            current = entities[entity].parentName.flatMap { resolution.index[$0] }
        }
        return nil
    }

    /// The inverse of a relationship, if it has one.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName else { return nil }
        return self.relationship(named: inverseName, of: relationship.inverseEntity ?? relationship.destinationEntity)
    }

    /// Whether `entityName` is `ancestorName` or inherits from it.
    public func entity(_ entityName: String, isKindOf ancestorName: String) -> Bool {
        entityName == ancestorName || ancestors(of: entityName).contains { $0.name == ancestorName }
    }

    /// The entities of a configuration, or of the whole model when `configuration` is nil.
    public func entities(inConfiguration configuration: String?) -> [EntityDescription]? {
        guard let configuration, configuration != "Default" else { return entities }
        guard let config = configurations.first(where: { $0.name == configuration }) else { return nil }
        return config.entityNames.compactMap { entity(named: $0) }
    }

    public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
        lhs.entities == rhs.entities && lhs.versionIdentifier == rhs.versionIdentifier
            && lhs.configurations == rhs.configurations && lhs.fetchRequests == rhs.fetchRequests
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entities)
        hasher.combine(versionIdentifier)
    }
}

// MARK: - Resolution

extension ObjectModel {
    /// Precomputed lookups, derived from the entities.
    struct Resolution: Sendable {
        var index: [String: Int] = [:]
        var children: [String: [Int]] = [:]
        var byteOrderedNames: [String] = []
        /// Per entity (by position), the position of each attribute it declares, by name (the first of a name).
        var attributePositions: [[String: Int]] = []
        /// Per entity (by position), the position of each relationship it declares, by name.
        var relationshipPositions: [[String: Int]] = []
        /// What Core Data accepts and Moult reads, said once (``ObjectModel/warnings``).
        var warnings: [String] = []

        init(_ entities: [EntityDescription]) throws(ModelError) {
            try ModelNames.check(entities)
            for (position, entity) in entities.enumerated() {
                if index.updateValue(position, forKey: entity.name) != nil {
                    throw ModelError(.duplicateEntity, "two entities are named '\(entity.name)'", entity: entity.name)
                }
            }
            func positions(_ names: [String]) -> [String: Int] {
                Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            }
            attributePositions = entities.map { positions($0.attributes.map(\.name)) }
            relationshipPositions = entities.map { positions($0.relationships.map(\.name)) }
            for (position, entity) in entities.enumerated() {
                if let parent = entity.parentName {
                    guard index[parent] != nil else {
                        throw ModelError(
                            .missingEntity, "entity '\(entity.name)' names a parent entity '\(parent)' that does not exist",
                            entity: entity.name)
                    }
                    children[parent, default: []].append(position)
                }
            }
            // Parent cycles, and chains deeper than Moult takes (each entity walks its chain: the depth
            // limit keeps this, hashing and the layout from growing with the square of the model).
            for entity in entities {
                var seen: Set<String> = [entity.name]
                var current = entity.parentName
                while let name = current {
                    guard seen.insert(name).inserted else {
                        throw ModelError(
                            .inheritanceCycle,
                            "entity '\(entity.name)' has a cycle of parent entities: \(seen.sorted().joined(separator: ", "))",
                            entity: entity.name)
                    }
                    guard seen.count <= ObjectModel.maximumInheritanceDepth else {
                        throw ModelError(
                            .limitExceeded,
                            "the inheritance chain of entity '\(entity.name)' holds more than \(ObjectModel.maximumInheritanceDepth) entities, the most Moult takes",
                            entity: entity.name)
                    }
                    current = index[name].flatMap { entities[$0].parentName }
                }
            }
            byteOrderedNames = entities.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            try checkRelationships(entities)
            try checkRedeclaredProperties(entities)
        }

        private func inherited(_ entities: [EntityDescription], _ name: String) -> [RelationshipDescription] {
            var result: [RelationshipDescription] = []
            var current: String? = name
            var guardCount = 0
            while let n = current, let i = index[n], guardCount <= entities.count {
                result += entities[i].relationships
                current = entities[i].parentName
                guardCount += 1
            }
            return result
        }

        private mutating func checkRelationships(_ entities: [EntityDescription]) throws(ModelError) {
            for entity in entities {
                for relationship in entity.relationships {
                    guard index[relationship.destinationEntity] != nil else {
                        throw ModelError(
                            .missingEntity,
                            "relationship '\(entity.name).\(relationship.name)' has destination entity '\(relationship.destinationEntity)', which does not exist",
                            entity: entity.name, property: relationship.name)
                    }
                    guard let inverseName = relationship.inverseName else { continue }
                    let inverseEntity = relationship.inverseEntity ?? relationship.destinationEntity
                    guard index[inverseEntity] != nil else {
                        throw ModelError(
                            .missingEntity,
                            "relationship '\(entity.name).\(relationship.name)' names inverse entity '\(inverseEntity)', which does not exist",
                            entity: entity.name, property: relationship.name)
                    }
                    guard let inverse = inherited(entities, inverseEntity).first(where: { $0.name == inverseName }) else {
                        throw ModelError(
                            .badInverse,
                            "relationship '\(entity.name).\(relationship.name)' names inverse '\(inverseEntity).\(inverseName)', which does not exist",
                            entity: entity.name, property: relationship.name)
                    }
                    // The inverse must point back at this relationship, on this entity or an ancestor of it.
                    var kinds: Set<String> = []
                    var current: String? = entity.name
                    while let n = current, kinds.insert(n).inserted { current = index[n].flatMap { entities[$0].parentName } }
                    // Sub-entities of this entity also count: an inverse may name the hierarchy's root.
                    let pointsBack = inverse.inverseName == relationship.name
                        && (kinds.contains(inverse.destinationEntity) || isDescendant(entities, inverse.destinationEntity, of: entity.name))
                    // Two relationships of this entity naming one inverse that points back at the other
                    // (Xcode compiled and shipped such models; Core Data loads them): read, with a warning.
                    let sharer = inverse.inverseName.flatMap { name in
                        inherited(entities, entity.name).first { $0.name == name && $0.inverseName == inverseName }
                    }
                    if !pointsBack, let sharer, kinds.contains(inverse.destinationEntity) || isDescendant(entities, inverse.destinationEntity, of: entity.name) {
                        warnings.append(
                            "relationship '\(entity.name).\(relationship.name)' names inverse '\(inverseEntity).\(inverseName)', which points back at '\(entity.name).\(sharer.name)': Core Data accepts it, and so does Moult (both read the one link)")
                        continue
                    }
                    guard pointsBack else {
                        throw ModelError(
                            .badInverse,
                            "relationship '\(entity.name).\(relationship.name)' has inverse '\(inverseEntity).\(inverseName)', whose inverse is '\(inverse.inverseName ?? "nothing")' on '\(inverse.destinationEntity)': it does not point back",
                            entity: entity.name, property: relationship.name)
                    }
                }
            }
        }

        /// A sub-entity may list a property it inherits (models rebuilt from a store's model cache, and
        /// models written back from one, do): the same property is the inherited one; a different one
        /// under the same name (another type, destination, inverse, order…) is refused, as Xcode does.
        private func checkRedeclaredProperties(_ entities: [EntityDescription]) throws(ModelError) {
            for entity in entities where entity.parentName != nil {
                let own = entity.attributes.map { ($0.name, "attribute", PropertyValue.attribute($0)) }
                    + entity.relationships.map { ($0.name, "relationship", PropertyValue.relationship($0)) }
                for (name, kind, value) in own {
                    var current = entity.parentName
                    var steps = 0
                    while let ancestor = current, let position = index[ancestor], steps <= entities.count {
                        let declared = entities[position]
                        let inherited = declared.attribute(named: name).map(PropertyValue.attribute)
                            ?? declared.relationship(named: name).map(PropertyValue.relationship)
                        if let inherited {
                            guard inherited == value else {
                                throw ModelError(
                                    .conflictingProperty,
                                    "\(kind) '\(entity.name).\(name)' re-declares '\(ancestor).\(name)', which it inherits, differently (Xcode refuses a sub-entity property named as an inherited one)",
                                    entity: entity.name, property: name)
                            }
                            break
                        }
                        current = declared.parentName
                        steps += 1
                    }
                }
            }
        }

        private enum PropertyValue: Equatable {
            case attribute(AttributeDescription)
            case relationship(RelationshipDescription)
        }

        private func isDescendant(_ entities: [EntityDescription], _ name: String, of ancestor: String) -> Bool {
            var current = index[name].flatMap { entities[$0].parentName }
            var steps = 0
            while let n = current, steps <= entities.count {
                if n == ancestor { return true }
                current = index[n].flatMap { entities[$0].parentName }
                steps += 1
            }
            return false
        }
    }
}
