public import MoultModel

/// Which source element each element of a new model version comes from, over one lightweight step:
/// what an inferred mapping says, in the terms of stores (entities and properties by name, and the
/// values existing objects get), so that MoultStore can turn the difference between two
/// ``StoreLayout``s into SQL without knowing about mapping models.
///
/// ```swift
/// var correspondence = LayoutCorrespondence()
/// correspondence.entities["Automobile"] = "Car"                      // renamed entity
/// correspondence.properties["Automobile"] = ["paintColor": "color"]  // renamed attribute
/// let outcome = oldLayout.inPlaceChanges(to: newLayout, correspondence: correspondence)
/// ```
public struct LayoutCorrespondence: Sendable, Hashable {
    /// Destination entity → the source entity whose objects become its objects. A destination entity
    /// absent here is new (it has no objects yet); a source entity no destination names is removed.
    public var entities: [String: String]
    /// Destination entity → destination property → the source property of the source entity that
    /// holds its value (inherited properties included). A destination property absent here is new.
    public var properties: [String: [String: String]]
    /// Destination entity → new attribute → the value existing objects get (its default value). A new
    /// attribute absent here is nil for existing objects.
    public var newAttributeValues: [String: [String: Value]]
    /// Destination entity → attribute → the value that replaces a nil source value (the default of an
    /// attribute that became required).
    public var nilReplacements: [String: [String: Value]]

    public init(
        entities: [String: String] = [:], properties: [String: [String: String]] = [:],
        newAttributeValues: [String: [String: Value]] = [:], nilReplacements: [String: [String: Value]] = [:]
    ) {
        self.entities = entities
        self.properties = properties
        self.newAttributeValues = newAttributeValues
        self.nilReplacements = nilReplacements
    }
}

/// One SQL statement of an in-place migration, with its bound arguments.
public struct InPlaceStatement: Sendable, Hashable, CustomStringConvertible {
    public var sql: String
    public var arguments: [Value]

    public init(_ sql: String, _ arguments: [Value] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    public var description: String { arguments.isEmpty ? sql : "\(sql) -- \(arguments)" }
}

/// One change of a store's schema, and the SQL that makes it.
public struct InPlaceChange: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case dropIndex, addColumn, renameColumn, dropColumn, fillColumn, renameTable, rebuildTable, createTable,
            copyJoinTable, dropTable, createIndex, primaryKeys, modelCache
    }

    public var kind: Kind
    /// What changes, in words (`ZPERSON: add column ZSTATE VARCHAR`).
    public var summary: String
    public var statements: [InPlaceStatement]
    /// Whether the statements' cost grows with the number of rows (a copy, a fill, a dropped column),
    /// rather than only with the schema.
    public var touchesRows: Bool

    public var description: String { "\(kind.rawValue): \(summary)" }
}

/// The SQL of one lightweight step run in place.
public struct InPlaceScript: Sendable, Hashable {
    /// The changes, in the order they run.
    public var changes: [InPlaceChange]

    /// Every statement, in order.
    public var statements: [InPlaceStatement] { changes.flatMap(\.statements) }

    /// Whether no change copies, fills or rewrites rows: the step then costs the same whatever the
    /// number of objects.
    public var isSchemaOnly: Bool { !changes.contains(where: \.touchesRows) }
}

/// What the difference between two layouts becomes.
public enum InPlaceOutcome: Sendable, Hashable {
    /// The step runs in place by these statements.
    case script(InPlaceScript)
    /// The step cannot run in place by SQL alone, for these reasons (each names the entity or property).
    case unsupported([String])
}
