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

extension DataLoss: CustomStringConvertible {
    /// What is dropped and how much, as a person reads it: `Person.age (attribute, 12 non-nil values)`,
    /// `Note (every object, 3 objects)`.
    public var description: String {
        let amount: String
        switch (what.kind, count) {
        case (.entity, let n?): amount = "\(n) object\(n == 1 ? "" : "s")"
        case (_, let n?): amount = "\(n) non-nil value\(n == 1 ? "" : "s")"
        case (.entity, nil): amount = "objects not counted yet"
        case (_, nil): amount = "values not counted yet"
        }
        return "\(what.name) (\(what.kind == .entity ? "every object" : what.kind.rawValue), \(amount))"
    }
}
