public import Foundation
public import MoultModel
import MoultEngine

/// An entity of the source or destination model, as Core Data describes it to a policy.
///
/// ```swift
/// let keys = Array(sourceInstance.entity.attributesByName.keys)
/// let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: manager.destinationContext)
/// ```
open class NSEntityDescription: NSObject {
    /// The entity's name.
    public let name: String?
    /// The class name the model gives the entity's objects.
    public let managedObjectClassName: String!
    /// Whether the entity is abstract.
    public let isAbstract: Bool
    /// The entity's attributes (its ancestors' included), by name.
    public let attributesByName: [String: NSAttributeDescription]
    /// The entity's relationships (its ancestors' included), by name.
    public let relationshipsByName: [String: NSRelationshipDescription]
    /// The entity's user info.
    public let userInfo: [AnyHashable: Any]?
    let model: ObjectModel
    let entityName: String

    init(_ entity: EntityDescription, in model: ObjectModel) {
        self.model = model
        entityName = entity.name
        name = entity.name
        managedObjectClassName = entity.representedClassName ?? "NSManagedObject"
        isAbstract = entity.isAbstract
        var attributes: [String: NSAttributeDescription] = [:]
        for attribute in model.attributes(of: entity.name) { attributes[attribute.name] = NSAttributeDescription(attribute) }
        attributesByName = attributes
        var relationships: [String: NSRelationshipDescription] = [:]
        for relationship in model.relationships(of: entity.name) {
            relationships[relationship.name] = NSRelationshipDescription(relationship)
        }
        relationshipsByName = relationships
        userInfo = entity.userInfo
    }

    /// The entity's properties, attributes and relationships, by name.
    public var propertiesByName: [String: NSPropertyDescription] {
        var properties: [String: NSPropertyDescription] = attributesByName
        for (name, relationship) in relationshipsByName { properties[name] = relationship }
        return properties
    }

    /// The entity's properties.
    public var properties: [NSPropertyDescription] { Array(propertiesByName.values) }

    /// The entity's parent, if any.
    public var superentity: NSEntityDescription? {
        model.entity(named: entityName)?.parentName.flatMap { parent in model.entity(named: parent) }.map { NSEntityDescription($0, in: model) }
    }

    /// Whether the entity is this one or inherits from it.
    public func isKindOf(entity: NSEntityDescription) -> Bool {
        model.entity(entityName, isKindOf: entity.entityName)
    }

    /// Makes a new object of the named entity in a context: in the destination context, an object of
    /// the destination store, made by the engine (its primary key allocated, its attributes at the
    /// model's defaults until set).
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity of the context's model.
    ///   - context: The destination context (``NSMigrationManager/destinationContext``).
    /// - Returns: The new object. When it cannot be made (an unknown or abstract entity, the source
    ///   context), the hook that called this fails with the reason once it returns.
    open class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        context.insertNewObject(forEntityName: entityName)
    }

    /// The named entity of a context's model, or nil.
    open class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        context.entityDescription(named: entityName)
    }

    open override var description: String { "NSEntityDescription(\(entityName))" }
}

/// An attribute or a relationship of an entity.
open class NSPropertyDescription: NSObject {
    /// The property's name.
    public let name: String
    /// Whether the property may be nil.
    public let isOptional: Bool
    /// Whether the property is transient.
    public let isTransient: Bool
    /// The property's user info.
    public let userInfo: [AnyHashable: Any]?

    init(name: String, isOptional: Bool, isTransient: Bool, userInfo: [String: String]) {
        self.name = name
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.userInfo = userInfo
    }
}

/// Core Data's attribute types, with its raw values.
public enum NSAttributeType: UInt, Sendable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100
}

/// An attribute of an entity.
open class NSAttributeDescription: NSPropertyDescription {
    /// The attribute's type.
    public let attributeType: NSAttributeType
    /// The attribute's default value, as a policy reads it.
    public let defaultValue: Any?
    let type: AttributeType

    init(_ attribute: AttributeDescription) {
        type = attribute.attributeType
        attributeType = NSAttributeType(rawValue: UInt(attribute.attributeType.code)) ?? .undefinedAttributeType
        defaultValue = ValueBridge.foundationValue(DefaultValues.value(of: attribute))
        super.init(name: attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient, userInfo: attribute.userInfo)
    }
}

/// A relationship of an entity.
open class NSRelationshipDescription: NSPropertyDescription {
    /// Whether it holds many objects.
    public let isToMany: Bool
    /// Whether its objects are ordered (an `NSOrderedSet`).
    public let isOrdered: Bool
    /// The entity of its objects' name.
    public let destinationEntityName: String
    /// The inverse relationship's name.
    public let inverseName: String?
    /// Its minimum and maximum counts (0: no limit).
    public let minCount: Int
    public let maxCount: Int

    init(_ relationship: RelationshipDescription) {
        isToMany = relationship.isToMany
        isOrdered = relationship.isOrdered
        destinationEntityName = relationship.destinationEntity
        inverseName = relationship.inverseName
        minCount = relationship.minCount
        maxCount = relationship.maxCount
        super.init(
            name: relationship.name, isOptional: relationship.isOptional, isTransient: relationship.isTransient, userInfo: relationship.userInfo)
    }
}

