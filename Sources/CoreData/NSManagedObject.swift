public import Foundation
import MoultModel
import MoultStore

/// What can be fetched: Core Data's `NSFetchRequestResult`.
public protocol NSFetchRequestResult: AnyObject {}

/// An object of the source or the destination store, as a policy sees it in a migration.
///
/// A destination object's values are what the run has made so far (the chunk being evaluated over what
/// earlier chunks committed); setting one records it for the chunk's transaction. A source object is
/// read-only. To-many values are sets of objects (`Set<NSManagedObject>`, which casts to `NSSet`), or an
/// `NSOrderedSet` for an ordered relationship; numbers and booleans are `NSNumber`s; binary data is
/// `Data` (which casts to `NSData`).
///
/// ```swift
/// let body = sourceInstance.value(forKey: "content") as? String
/// let section = NSEntityDescription.insertNewObject(forEntityName: "Section", into: manager.destinationContext)
/// section.setValue(body, forKey: "body")
/// section.setValue(destinationPost, forKey: "post")
/// ```
///
/// Two objects are equal when they are the same object of the same store, whichever instance holds it.
open class NSManagedObject: NSObject, NSFetchRequestResult {
    /// The object's entity.
    public let entity: NSEntityDescription
    /// The context the object belongs to.
    public private(set) weak var managedObjectContext: NSManagedObjectContext?
    let id: ObjectID
    /// The state used when the context holds none for the object (an object met while iterating).
    var ownState: ObjectState?

    init(entity: NSEntityDescription, context: NSManagedObjectContext, id: ObjectID) {
        self.entity = entity
        managedObjectContext = context
        self.id = id
    }

    /// The object's identity in its store.
    public var objectID: NSManagedObjectID {
        NSManagedObjectID(entity: entity, id: id, isDestination: managedObjectContext?.side == .destination)
    }

    /// Always false: the objects a migration hands out are read when first asked for a value.
    public var isFault: Bool { false }
    /// Whether the object was made by this migration (a destination object).
    public var isInserted: Bool { managedObjectContext?.side == .destination }
    public var isUpdated: Bool { false }
    public var isDeleted: Bool { false }

    /// The value of an attribute or relationship; nil for a key the entity does not have, which fails
    /// the policy's hook once it returns, as Core Data raises for it.
    open func value(forKey key: String) -> Any? {
        managedObjectContext?.value(of: self, forKey: key)
    }

    /// Sets an attribute or relationship of a destination object; see ``NSManagedObject``.
    open func setValue(_ value: Any?, forKey key: String) {
        managedObjectContext?.setValue(value, of: self, forKey: key)
    }

    /// An unordered to-many relationship as a mutable set: what is added to it or removed from it is
    /// set on the object at once, its inverse kept in step, as Core Data's proxy does.
    ///
    /// ```swift
    /// owner.mutableSetValue(forKey: "tags").remove(hiddenTag)
    /// ```
    ///
    /// An ordered to-many is set whole, as an `NSOrderedSet` (``setValue(_:forKey:)``): this module has
    /// no `mutableOrderedSetValue(forKey:)`, whose Foundation class Linux cannot subclass faithfully.
    open func mutableSetValue(forKey key: String) -> NSMutableSet {
        if let relationship = entity.relationshipsByName[key], !relationship.isToMany || relationship.isOrdered {
            managedObjectContext?.manager.fail(
                "mutableSetValue(forKey:) takes an unordered to-many; '\(key)' of \(entity.name ?? "?") is "
                    + (relationship.isToMany ? "ordered: set an NSOrderedSet with setValue(_:forKey:)" : "a to-one"))
        } else if entity.relationshipsByName[key] == nil {
            managedObjectContext?.manager.fail("the entity \(entity.name ?? "?") has no relationship '\(key)' (mutableSetValue(forKey:))")
        }
        return RelationshipMutableSet(owner: self, key: key)
    }

    /// ``value(forKey:)``: a migration has no accessors to bypass.
    open func primitiveValue(forKey key: String) -> Any? { value(forKey: key) }

    /// ``setValue(_:forKey:)``: a migration has no accessors to bypass.
    open func setPrimitiveValue(_ value: Any?, forKey key: String) { setValue(value, forKey: key) }

    /// The value at a key path through to-one relationships (`owner.name`).
    open func value(forKeyPath keyPath: String) -> Any? {
        var current: Any? = self
        for key in keyPath.split(separator: ".") {
            guard let object = current as? NSManagedObject else { return nil }
            current = object.value(forKey: String(key))
        }
        return current
    }

    /// The values of several keys; `NSNull` stands for nil, as in Core Data.
    open func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var values: [String: Any] = [:]
        for key in keys { values[key] = value(forKey: key) ?? NSNull() }
        return values
    }

    /// Sets several keys; `NSNull` stands for nil.
    open func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    open func willAccessValue(forKey key: String?) {}
    open func didAccessValue(forKey key: String?) {}
    open func willChangeValue(forKey key: String) {}
    open func didChangeValue(forKey key: String) {}

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObject else { return false }
        return other.id == id && other.managedObjectContext === managedObjectContext
    }

    open override var hash: Int { id.hashValue }

    open override var description: String {
        let side = managedObjectContext?.side == .destination ? "destination" : "source"
        return "<\(entity.name ?? "?") \(side) \(id.primaryKey)>"
    }
}

/// An object's identity: its entity and its primary key in the source or the destination store.
public final class NSManagedObjectID: NSObject, @unchecked Sendable {
    /// The object's entity.
    public let entity: NSEntityDescription
    let id: ObjectID
    let isDestination: Bool

    init(entity: NSEntityDescription, id: ObjectID, isDestination: Bool) {
        self.entity = entity
        self.id = id
        self.isDestination = isDestination
    }

    /// False: destination objects have their primary key from the start.
    public var isTemporaryID: Bool { false }

    /// `x-coredata:///Entity/pN`, the object's entity and primary key.
    public func uriRepresentation() -> URL {
        URL(string: "x-coredata:///\(entity.name ?? "?")/p\(id.primaryKey)")!
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectID else { return false }
        return other.id == id && other.isDestination == isDestination
    }

    public override var hash: Int { id.hashValue }
}

/// What a context knows of one object in the chunk being evaluated: its values as read, and the
/// to-many additions and removals the policy made before the list was read (applied to what the
/// store holds when it is).
final class ObjectState {
    let generation: Int
    var row: [String: Value]?
    /// The row a cursor gave, made into ``row`` when a value is first read (a fetch hands out many
    /// objects whose values nobody reads).
    var storeRow: ObjectRow?
    var toMany: [String: [ObjectID]] = [:]
    var added: [String: [ObjectID]] = [:]
    var removed: [String: Set<ObjectID>] = [:]
    /// To-one values set before the row was read, applied to it when it is.
    var rowChanges: [String: Value] = [:]

    init(generation: Int, row: [String: Value]? = nil, storeRow: ObjectRow? = nil) {
        self.generation = generation
        self.row = row
        self.storeRow = storeRow
    }

    /// ``row``, made from ``storeRow`` if need be; nil when neither was read.
    var cachedRow: [String: Value]? {
        if row == nil, let storeRow {
            var values: [String: Value] = [:]
            for (name, value) in zip(storeRow.shape.names, storeRow.values) { values[name] = value }
            for (key, value) in rowChanges { values[key] = value }
            rowChanges = [:]
            row = values
            self.storeRow = nil
        }
        return row
    }
}
