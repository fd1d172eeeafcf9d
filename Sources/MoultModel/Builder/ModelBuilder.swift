// MARK: - Parts

/// One piece of a model defined in code: an entity, a configuration or a fetch request template.
public enum ModelPart: Sendable, Hashable {
    case entity(EntityDescription)
    case configuration(ConfigurationDescription)
    case fetchRequest(FetchRequestTemplate)
}

/// One piece of an entity defined in code.
public enum EntityPart: Sendable, Hashable {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)
    case fetchedProperty(FetchedPropertyDescription)
    case uniquenessConstraint([String])
    case fetchIndex(FetchIndexDescription)
    case userInfo(key: String, value: String)
}

/// Something that can appear in an ``ObjectModel`` builder block: ``Entity``, ``Configuration``,
/// ``FetchRequest``, or your own type.
public protocol ModelComponent {
    var modelParts: [ModelPart] { get }
}

/// Something that can appear in an ``Entity`` builder block: ``Attribute``, ``Relationship``,
/// ``FetchedProperty``, ``Unique``, ``FetchIndex``, ``UserInfo``, or your own type.
public protocol EntityComponent {
    var entityParts: [EntityPart] { get }
}

// MARK: - Result builders

/// Collects the entities, configurations and fetch requests of a model block.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ component: some ModelComponent) -> [ModelPart] { component.modelParts }
    public static func buildExpression(_ entity: EntityDescription) -> [ModelPart] { [.entity(entity)] }
    public static func buildBlock(_ parts: [ModelPart]...) -> [ModelPart] { parts.flatMap { $0 } }
    public static func buildOptional(_ parts: [ModelPart]?) -> [ModelPart] { parts ?? [] }
    public static func buildEither(first parts: [ModelPart]) -> [ModelPart] { parts }
    public static func buildEither(second parts: [ModelPart]) -> [ModelPart] { parts }
    public static func buildArray(_ parts: [[ModelPart]]) -> [ModelPart] { parts.flatMap { $0 } }
    public static func buildLimitedAvailability(_ parts: [ModelPart]) -> [ModelPart] { parts }
}

/// Collects the properties, constraints, indexes and user info of an entity block.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ component: some EntityComponent) -> [EntityPart] { component.entityParts }
    public static func buildExpression(_ attribute: AttributeDescription) -> [EntityPart] { [.attribute(attribute)] }
    public static func buildExpression(_ relationship: RelationshipDescription) -> [EntityPart] { [.relationship(relationship)] }
    public static func buildBlock(_ parts: [EntityPart]...) -> [EntityPart] { parts.flatMap { $0 } }
    public static func buildOptional(_ parts: [EntityPart]?) -> [EntityPart] { parts ?? [] }
    public static func buildEither(first parts: [EntityPart]) -> [EntityPart] { parts }
    public static func buildEither(second parts: [EntityPart]) -> [EntityPart] { parts }
    public static func buildArray(_ parts: [[EntityPart]]) -> [EntityPart] { parts.flatMap { $0 } }
    public static func buildLimitedAvailability(_ parts: [EntityPart]) -> [EntityPart] { parts }
}

extension ObjectModel {
    /// Defines a model in code.
    ///
    /// ```swift
    /// let model = try ObjectModel(versionIdentifier: "2") {
    ///     Entity("Person") {
    ///         Attribute("name", .string).required()
    ///         Attribute("age", .integer16).defaultValue("0").range(min: "0", max: "150")
    ///         Relationship("address", to: "Address", inverse: "residents")
    ///         Unique("name")
    ///     }
    ///     Entity("Address") {
    ///         Attribute("street", .string)
    ///         Relationship("residents", toMany: "Person", inverse: "address").deleteRule(.cascade)
    ///     }
    ///     Configuration("Local", entities: "Person", "Address")
    /// }
    /// ```
    ///
    /// Properties are optional unless marked ``Attribute/required()``, as in Core Data and Xcode.
    ///
    /// - Throws: ``ModelError`` when the model does not hold together (see
    ///   ``init(entities:versionIdentifier:configurations:fetchRequests:)``).
    public init(versionIdentifier: String? = nil, @ModelBuilder _ content: () -> [ModelPart]) throws(ModelError) {
        var entities: [EntityDescription] = []
        var configurations: [ConfigurationDescription] = []
        var fetchRequests: [FetchRequestTemplate] = []
        for part in content() {
            switch part {
            case .entity(let entity): entities.append(entity)
            case .configuration(let configuration): configurations.append(configuration)
            case .fetchRequest(let request): fetchRequests.append(request)
            }
        }
        try self.init(
            entities: entities, versionIdentifier: versionIdentifier, configurations: configurations,
            fetchRequests: fetchRequests)
    }
}

// MARK: - Entity

/// An entity in a model block.
///
/// ```swift
/// Entity("Adult", parent: "Person") {
///     Attribute("companyName", .string)
/// }
/// .renamed(from: "Grownup")
/// ```
public struct Entity: ModelComponent, Sendable, Hashable {
    /// The entity being defined.
    public var definition: EntityDescription

    public init(_ name: String, parent: String? = nil, @EntityBuilder _ content: () -> [EntityPart] = { [] }) {
        definition = EntityDescription(name: name, parent: parent)
        for part in content() {
            switch part {
            case .attribute(let attribute): definition.attributes.append(attribute)
            case .relationship(let relationship): definition.relationships.append(relationship)
            case .fetchedProperty(let property): definition.fetchedProperties.append(property)
            case .uniquenessConstraint(let names): definition.uniquenessConstraints.append(names)
            case .fetchIndex(let index): definition.fetchIndexes.append(index)
            case .userInfo(let key, let value): definition.userInfo[key] = value
            }
        }
    }

    public var modelParts: [ModelPart] { [.entity(definition)] }

    private func with(_ change: (inout EntityDescription) -> Void) -> Entity {
        var copy = self
        change(&copy.definition)
        return copy
    }

    /// Marks the entity abstract: only its sub-entities have instances.
    public func abstract(_ isAbstract: Bool = true) -> Entity { with { $0.isAbstract = isAbstract } }
    /// The renaming identifier: the entity's name in the earlier version it is mapped from.
    public func renamed(from identifier: String) -> Entity { with { $0.renamingIdentifier = identifier } }
    /// A string that enters the version hash, to make a version incompatible on purpose.
    public func versionHashModifier(_ modifier: String) -> Entity { with { $0.versionHashModifier = modifier } }
    /// The class that represents the entity's objects.
    public func representedClassName(_ name: String) -> Entity { with { $0.representedClassName = name } }
}

// MARK: - Attribute

/// An attribute in an entity block. Optional unless marked ``required()``.
///
/// ```swift
/// Attribute("photo", .binary).externalStorage()
/// Attribute("email", .string).required().regularExpression(".+@.+")
/// ```
public struct Attribute: EntityComponent, Sendable, Hashable {
    /// The attribute being defined.
    public var definition: AttributeDescription

    public init(_ name: String, _ type: AttributeType) {
        definition = AttributeDescription(name: name, type: type, isOptional: true)
    }

    public var entityParts: [EntityPart] { [.attribute(definition)] }

    private func with(_ change: (inout AttributeDescription) -> Void) -> Attribute {
        var copy = self
        change(&copy.definition)
        return copy
    }

    /// Makes the attribute required (not optional).
    public func required() -> Attribute { with { $0.isOptional = false } }
    /// Sets whether the attribute is optional.
    public func optional(_ isOptional: Bool = true) -> Attribute { with { $0.isOptional = isOptional } }
    /// Makes the attribute transient: never stored, not part of the version hash.
    public func transient(_ isTransient: Bool = true) -> Attribute { with { $0.isTransient = isTransient } }
    /// The default value as Xcode writes it (`"0"`, `"YES"`, `"text"`).
    public func defaultValue(_ value: String) -> Attribute { with { $0.defaultValueString = value } }
    /// The default value of a Date attribute, seconds since 2001-01-01 00:00:00 UTC.
    public func defaultDate(_ secondsSinceReferenceDate: Double) -> Attribute {
        with { $0.defaultDateTimeInterval = secondsSinceReferenceDate }
    }
    /// Validation bounds: values for numbers, lengths for strings and data, as Xcode writes them.
    public func range(min: String? = nil, max: String? = nil) -> Attribute {
        with {
            $0.minValueString = min
            $0.maxValueString = max
        }
    }
    /// Validation bounds of a Date attribute, seconds since 2001-01-01 00:00:00 UTC.
    public func dateRange(min: Double? = nil, max: Double? = nil) -> Attribute {
        with {
            $0.minDateTimeInterval = min
            $0.maxDateTimeInterval = max
        }
    }
    /// A regular expression string values must match.
    public func regularExpression(_ pattern: String) -> Attribute { with { $0.regularExpressionString = pattern } }
    /// Lets Core Data keep large values outside the store (enters the version hash).
    public func externalStorage(_ allowed: Bool = true) -> Attribute {
        with { $0.allowsExternalBinaryDataStorage = allowed }
    }
    /// Keeps the value in the persistent history after the object is deleted (enters the version hash).
    public func preserveAfterDeletion(_ preserve: Bool = true) -> Attribute { with { $0.preserveAfterDeletion = preserve } }
    /// Marks the attribute indexed.
    public func indexed(_ isIndexed: Bool = true) -> Attribute { with { $0.isIndexed = isIndexed } }
    /// Uses a scalar type in generated code.
    public func scalar(_ usesScalar: Bool = true) -> Attribute { with { $0.usesScalarValueType = usesScalar } }
    /// The value transformer (and class) of a Transformable attribute.
    public func transformer(_ name: String, customClassName: String? = nil) -> Attribute {
        with {
            $0.valueTransformerName = name
            $0.customClassName = customClassName
        }
    }
    /// A string that enters the version hash, to make a version incompatible on purpose.
    public func versionHashModifier(_ modifier: String) -> Attribute { with { $0.versionHashModifier = modifier } }
    /// The renaming identifier: the attribute's name in the earlier version it is mapped from.
    public func renamed(from identifier: String) -> Attribute { with { $0.renamingIdentifier = identifier } }
    /// Makes the attribute derived from an expression. An entity with a derived attribute has no
    /// computable version hash.
    public func derived(_ expression: String) -> Attribute {
        with {
            $0.isDerived = true
            $0.derivationExpression = expression
        }
    }
    /// Adds a user info entry.
    public func userInfo(_ key: String, _ value: String) -> Attribute { with { $0.userInfo[key] = value } }
}

// MARK: - Relationship

/// A relationship in an entity block. Optional unless marked ``required()``.
///
/// ```swift
/// Relationship("owner", to: "Person", inverse: "cars")
/// Relationship("pages", toMany: "Page", inverse: "book").ordered().deleteRule(.cascade)
/// ```
public struct Relationship: EntityComponent, Sendable, Hashable {
    /// The relationship being defined.
    public var definition: RelationshipDescription

    /// A to-one relationship.
    public init(_ name: String, to destination: String, inverse: String? = nil) {
        definition = RelationshipDescription(name: name, destination: destination, inverse: inverse, isOptional: true)
    }

    /// A to-many relationship (unbounded unless ``count(min:max:)`` says otherwise).
    public init(_ name: String, toMany destination: String, inverse: String? = nil) {
        definition = RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: true, isOptional: true)
    }

    public var entityParts: [EntityPart] { [.relationship(definition)] }

    private func with(_ change: (inout RelationshipDescription) -> Void) -> Relationship {
        var copy = self
        change(&copy.definition)
        return copy
    }

    /// Makes the relationship required (not optional).
    public func required() -> Relationship { with { $0.isOptional = false } }
    /// Sets whether the relationship is optional.
    public func optional(_ isOptional: Bool = true) -> Relationship { with { $0.isOptional = isOptional } }
    /// Makes the relationship transient.
    public func transient(_ isTransient: Bool = true) -> Relationship { with { $0.isTransient = isTransient } }
    /// Makes a to-many relationship ordered (enters the version hash).
    public func ordered(_ isOrdered: Bool = true) -> Relationship { with { $0.isOrdered = isOrdered } }
    /// The minimum and maximum count (0 for an unbounded maximum).
    public func count(min: Int = 0, max: Int) -> Relationship {
        with {
            $0.minCount = min
            $0.maxCount = max
        }
    }
    /// What deleting the source object does to the destinations.
    public func deleteRule(_ rule: DeleteRule) -> Relationship { with { $0.deleteRule = rule } }
    /// The entity that declares the inverse, when it is not the destination (a parent of it).
    public func inverseEntity(_ name: String) -> Relationship { with { $0.inverseEntity = name } }
    /// A string that enters the version hash, to make a version incompatible on purpose.
    public func versionHashModifier(_ modifier: String) -> Relationship { with { $0.versionHashModifier = modifier } }
    /// The renaming identifier: the relationship's name in the earlier version it is mapped from.
    public func renamed(from identifier: String) -> Relationship { with { $0.renamingIdentifier = identifier } }
    /// Adds a user info entry.
    public func userInfo(_ key: String, _ value: String) -> Relationship { with { $0.userInfo[key] = value } }
}

// MARK: - Other entity parts

/// A fetched property in an entity block (kept in the model; never stored).
public struct FetchedProperty: EntityComponent, Sendable, Hashable {
    public var definition: FetchedPropertyDescription

    public init(_ name: String, entity: String, predicate: String? = nil) {
        definition = FetchedPropertyDescription(name: name, fetchEntity: entity, predicateString: predicate)
    }

    public var entityParts: [EntityPart] { [.fetchedProperty(definition)] }
}

/// A uniqueness constraint in an entity block: `Unique("firstName", "lastName")`.
public struct Unique: EntityComponent, Sendable, Hashable {
    public var propertyNames: [String]
    public init(_ propertyNames: String...) { self.propertyNames = propertyNames }
    public var entityParts: [EntityPart] { [.uniquenessConstraint(propertyNames)] }
}

/// A fetch index in an entity block: `FetchIndex("byName", "lastName", "firstName")`, ascending.
public struct FetchIndex: EntityComponent, Sendable, Hashable {
    public var definition: FetchIndexDescription
    public init(_ name: String, _ propertyNames: String...) {
        definition = FetchIndexDescription(name: name, elements: propertyNames.map { .init(property: $0) })
    }
    public init(_ name: String, elements: [FetchIndexDescription.Element]) {
        definition = FetchIndexDescription(name: name, elements: elements)
    }
    /// Makes it a partial index: only the rows the predicate selects (`"timestamp != nil"`) are indexed.
    public func partial(_ predicate: String) -> FetchIndex {
        var copy = self
        copy.definition.partialIndexPredicate = predicate
        return copy
    }
    /// An R-tree index over numeric properties (`FetchIndex.rTree("boundedByRect", "latitude", "longitude")`).
    public static func rTree(_ name: String, _ propertyNames: String...) -> FetchIndex {
        FetchIndex(name, elements: propertyNames.map { .init(property: $0, type: "RTree") })
    }
    public var entityParts: [EntityPart] { [.fetchIndex(definition)] }
}

/// A user info entry of an entity: `UserInfo("owner", "sync")`.
public struct UserInfo: EntityComponent, Sendable, Hashable {
    public var key: String
    public var value: String
    public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
    }
    public var entityParts: [EntityPart] { [.userInfo(key: key, value: value)] }
}

// MARK: - Other model parts

/// A configuration in a model block: `Configuration("Cloud", entities: "Post", "Tag")`.
public struct Configuration: ModelComponent, Sendable, Hashable {
    public var definition: ConfigurationDescription
    public init(_ name: String, entities: String..., usedWithCloudKit: Bool = false) {
        definition = ConfigurationDescription(name: name, entityNames: entities, usedWithCloudKit: usedWithCloudKit)
    }
    public var modelParts: [ModelPart] { [.configuration(definition)] }
}

/// A fetch request template in a model block: `FetchRequest("Adults", entity: "Person", predicate: "age >= 18")`.
public struct FetchRequest: ModelComponent, Sendable, Hashable {
    public var definition: FetchRequestTemplate
    public init(_ name: String, entity: String, predicate: String? = nil) {
        definition = FetchRequestTemplate(name: name, entity: entity, predicateString: predicate)
    }
    public var modelParts: [ModelPart] { [.fetchRequest(definition)] }
}
