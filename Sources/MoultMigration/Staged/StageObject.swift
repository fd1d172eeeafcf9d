public import MoultExpressions
public import MoultModel
import MoultStore

/// An object a handler fetched: read its values, set them, delete it. What it changes is written when
/// its chunk is committed.
public final class StageObject: ObjectRecord {
    public let objectID: ObjectID
    let row: ObjectRow
    private(set) var changes: [String: Value] = [:]
    public private(set) var isDeleted = false
    private unowned let store: StageStore
    private let keys: [String]
    private var loaded: [String: Value] = [:]

    init(row: ObjectRow, store: StageStore, keys: [String]) {
        self.objectID = row.id
        self.row = row
        self.store = store
        self.keys = keys
    }

    /// The entity of the object (a sub-entity of the one fetched, maybe).
    public var entity: String { store.layout.entity(number: objectID.entity)?.name ?? "" }

    /// A property's value (attributes and to-one relationships as stored; to-many ones as `.array` of
    /// `.object`); setting one changes an attribute or a to-one relationship.
    public subscript(key: String) -> Value {
        get { value(forKey: key) }
        set { changes[key] = newValue }
    }

    /// Deletes the object when its chunk is committed.
    public func delete() { isDeleted = true }

    public func value(forKey key: String) -> Value {
        if let changed = changes[key] { return changed }
        if let value = row[key] { return value }
        if let value = loaded[key] { return value }
        let value = store.toMany(key, of: self)
        loaded[key] = value
        return value
    }

    public func value(atSlot slot: Int) -> Value {
        slot < keys.count ? value(forKey: keys[slot]) : .null
    }
}

@available(*, unavailable)
extension StageObject: Sendable {}
