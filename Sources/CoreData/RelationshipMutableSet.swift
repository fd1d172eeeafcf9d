import Foundation

/// What ``NSManagedObject/mutableSetValue(forKey:)`` gives: a to-many relationship of an object as a
/// mutable set, each change set on the object as it is made (``NSManagedObject/setValue(_:forKey:)``,
/// so the inverse follows), each read the relationship's current value.
///
/// ```swift
/// let tags = owner.mutableSetValue(forKey: "tags")
/// tags.remove(hidden)          // owner.tags no longer holds it, nor hidden.owners the owner
/// ```
///
/// Foundation's `NSMutableSet` on Linux runs its other members (`contains`, `allObjects`, `union`,
/// `minus`, iteration…) through the five this class gives, as on Apple platforms.
final class RelationshipMutableSet: NSMutableSet {
    private var owner: NSManagedObject?
    private var key = ""

    init(owner: NSManagedObject, key: String) {
        self.owner = owner
        self.key = key
        super.init(capacity: 0)
    }

    required init() {
        super.init(capacity: 0)
    }

    required init(capacity numItems: Int) {
        super.init(capacity: 0)
    }

    required init?(coder: NSCoder) { nil }

    /// The relationship's objects now, in key order.
    private var members: [NSManagedObject] {
        (owner?.value(forKey: key) as? Set<NSManagedObject> ?? []).sorted { $0.id < $1.id }
    }

    override var count: Int { members.count }

    override func member(_ object: Any) -> Any? {
        guard let object = object as? NSManagedObject else { return nil }
        return members.first { $0 == object }
    }

    override func objectEnumerator() -> NSEnumerator { NSArray(array: members).objectEnumerator() }

    override func add(_ object: Any) {
        guard let object = managedObject(object) else { return }
        var members = Set(members)
        guard members.insert(object).inserted else { return }
        owner?.setValue(members, forKey: key)
    }

    override func remove(_ object: Any) {
        guard let object = managedObject(object) else { return }
        var members = Set(members)
        guard members.remove(object) != nil else { return }
        owner?.setValue(members, forKey: key)
    }

    override func removeAllObjects() {
        guard count > 0 else { return }
        owner?.setValue(Set<NSManagedObject>(), forKey: key)
    }

    private func managedObject(_ value: Any) -> NSManagedObject? {
        if let object = value as? NSManagedObject { return object }
        owner?.managedObjectContext?.manager.fail("the to-many '\(key)' holds objects, not \(type(of: value))")
        return nil
    }
}
