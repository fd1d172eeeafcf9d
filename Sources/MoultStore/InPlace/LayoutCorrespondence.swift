public import MoultModel
import Synchronization

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
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case dropIndex, addColumn, renameColumn, dropColumn, fillColumn, renameTable, rebuildTable, createTable,
            copyJoinTable, dropTable, createIndex, primaryKeys, modelCache, dropTriggers, computeDerived, createTriggers, stageLinks,
            convertExternalData
    }

    public var kind: Kind
    /// What changes, in words (`ZPERSON: add column ZSTATE VARCHAR`).
    public var summary: String {
        get { content.made.summary }
        set { content = Content(Made(summary: newValue, statements: statements)) }
    }
    public var statements: [InPlaceStatement] {
        get { content.made.statements }
        set { content = Content(Made(summary: summary, statements: newValue)) }
    }
    /// Whether the statements' cost grows with the number of rows (a copy, a fill, a dropped column),
    /// rather than only with the schema.
    public var touchesRows: Bool
    /// When the change is clean-up that can wait (a dropped column, a dropped table no name needs, an
    /// index): what to do later, on the migrated store. Nil when it cannot wait.
    public var deferred: InPlaceCleanup? = nil
    /// The summary and the statements, made now or when first asked for.
    private var content: Content

    init(kind: Kind, summary: String, statements: [InPlaceStatement], touchesRows: Bool, deferred: InPlaceCleanup? = nil) {
        self.kind = kind
        self.touchesRows = touchesRows
        self.deferred = deferred
        content = Content(Made(summary: summary, statements: statements))
    }

    /// A change whose summary and statements are made the first time either is asked for, once: the
    /// model cache's archive, which `moult plan` of a chain of hundreds of steps never prints.
    init(kind: Kind, touchesRows: Bool, making make: @escaping @Sendable () -> (summary: String, statements: [InPlaceStatement])) {
        self.kind = kind
        self.touchesRows = touchesRows
        content = Content(making: make)
    }

    public var description: String { "\(kind.rawValue): \(summary)" }

    /// A change's summary and statements.
    struct Made: Sendable, Hashable {
        var summary: String
        var statements: [InPlaceStatement]
    }

    /// ``Made``, or how to make it, made once and shared by the change's copies; equal when what they
    /// make is equal.
    final class Content: Sendable, Hashable {
        private let make: (@Sendable () -> Made)?
        private let memo: Mutex<Made?>

        init(_ made: Made) {
            make = nil
            memo = Mutex(made)
        }

        init(making make: @escaping @Sendable () -> (summary: String, statements: [InPlaceStatement])) {
            self.make = { let made = make(); return Made(summary: made.summary, statements: made.statements) }
            memo = Mutex(nil)
        }

        var made: Made {
            if let known = memo.withLock({ $0 }) { return known }
            // (`make` is set whenever nothing is kept yet.) Two threads asking at once may both make it: equal values.
            let value = make!()
            memo.withLock { $0 = value }
            return value
        }

        static func == (lhs: Content, rhs: Content) -> Bool { lhs.made == rhs.made }
        func hash(into hasher: inout Hasher) { hasher.combine(made) }
    }
}

/// The SQL of one lightweight step run in place.
public struct InPlaceScript: Sendable, Hashable {
    /// The changes, in the order they run.
    public var changes: [InPlaceChange]
    /// The old version's tables the script does not keep where they stand: each rebuilt into a new
    /// table, or dropped. What the store declared on them (``TableDeclaration``) goes with them.
    public var rebuiltTables: Set<String> = []
    /// The correspondence the script was made from, when it was made by
    /// ``StoreLayout/inPlaceChanges(to:correspondence:rebuilding:)`` (what a report of the step reads
    /// again, without finding it a second time).
    public var correspondence: LayoutCorrespondence? = nil

    /// Every statement, in order.
    public var statements: [InPlaceStatement] { changes.flatMap(\.statements) }

    /// Whether no change copies, fills or rewrites rows: the step then costs the same whatever the
    /// number of objects.
    public var isSchemaOnly: Bool { !changes.contains(where: \.touchesRows) }

    /// The script without the clean-up that can wait (Core Data's deferred lightweight migration), and
    /// that clean-up's statements, to run later on the migrated store, in order.
    public func deferringCleanup() -> (script: InPlaceScript, pending: [InPlaceCleanup]) {
        (InPlaceScript(changes: changes.filter { $0.deferred == nil }, rebuiltTables: rebuiltTables, correspondence: correspondence), changes.compactMap(\.deferred))
    }
}

/// Clean-up a deferred in-place migration leaves for later, recorded in the store's metadata as text
/// (never as SQL: what runs is made again from the layout of the store's version, and refused when
/// that layout still uses what the record names).
public enum InPlaceCleanup: Sendable, Hashable, CustomStringConvertible {
    /// A table no entity or relationship of the new version uses.
    case dropTable(String)
    /// A column its table no longer uses.
    case dropColumn(table: String, column: String)
    /// An index of the new layout, by name.
    case createIndex(String)

    /// The text recorded in the metadata.
    public var record: String {
        switch self {
        case .dropTable(let table): "drop-table \(table)"
        case .dropColumn(let table, let column): "drop-column \(table) \(column)"
        case .createIndex(let name): "create-index \(name)"
        }
    }

    /// Reads a recorded text; nil when it is not one.
    public init?(record: String) {
        let parts = record.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("drop-table", 2): self = .dropTable(parts[1])
        case ("drop-column", 3): self = .dropColumn(table: parts[1], column: parts[2])
        case ("create-index", 2): self = .createIndex(parts[1])
        default: return nil
        }
    }

    public var description: String { record }

    /// The statement that does it on a store of `layout`, or nil when the layout still uses what it
    /// names (a record that must not run).
    public func statement(in layout: StoreLayout) -> InPlaceStatement? {
        let coreData: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
        switch self {
        case .dropTable(let table):
            let used = Set(layout.tables.map(\.name) + layout.joinTables.map(\.name)).union(coreData)
            guard !used.contains(table), !table.lowercased().hasPrefix("sqlite_") else { return nil }
            return InPlaceStatement("DROP TABLE IF EXISTS \(SQLName.quoted(table, always: true))")
        case .dropColumn(let table, let column):
            guard let layoutTable = layout.table(named: table), !layoutTable.columns.contains(where: { $0.name == column }) else { return nil }
            return InPlaceStatement("ALTER TABLE \(SQLName.quoted(table, always: true)) DROP COLUMN \(SQLName.quoted(column, always: true))")
        case .createIndex(let name):
            guard let index = (layout.tables.flatMap(\.indexes) + layout.joinTables.flatMap(\.indexes)).first(where: { $0.name == name }) else {
                return nil
            }
            return InPlaceStatement(index.createSQL(ifNotExists: true))
        }
    }
}

/// What the difference between two layouts becomes.
public enum InPlaceOutcome: Sendable, Hashable {
    /// The step runs in place by these statements.
    case script(InPlaceScript)
    /// The step cannot run in place by SQL alone, for these reasons (each names the entity or property).
    case unsupported([String])
}
