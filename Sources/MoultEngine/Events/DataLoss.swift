public import MoultMapping

/// Source data a step does not carry, with how much of it the step's source store holds.
public struct DataLoss: Sendable, Hashable {
    public var what: UncarriedData
    /// Objects (for an entity) or non-nil values (for a property; objects with at least one related
    /// object for a to-many relationship); nil when not counted.
    public var count: Int?

    public init(what: UncarriedData, count: Int?) {
        self.what = what
        self.count = count
    }

    /// A whole entity with objects, dropped.
    public var dropsObjects: Bool { what.kind == .entity && (count ?? 0) > 0 }
}
