public import MoultModel

/// Core Data's SQLite schema for a model: entity numbers, tables, columns, join tables and indexes.
///
/// The rules are those of CORE-DATA-FORMATS.md §3 (see the <doc:CoreDataStoreLayout> article): entities are
/// numbered (`Z_ENT`) roots first in case-insensitive name order, each followed by its sub-entities depth
/// first; each inheritance root gets one table `Z<ROOT>`; each persistent attribute and to-one
/// relationship a column `Z<NAME>`; a to-many is stored through its inverse's column, a hidden key
/// column, or a join table whose owner and names follow Core Data's walk over entities and each
/// entity's property order (`PropertyOrder`).
///
/// ```swift
/// let layout = try StoreLayout(model: model)
/// let car = layout.entity(named: "Car")!
/// print(car.number, car.table, car.column(for: "numberPlate")!)   // 1 ZCAR ZNUMBERPLATE
/// ```
public struct StoreLayout: Sendable, Hashable {
    /// The model this layout stores.
    public let model: ObjectModel
    /// Every entity, in `Z_ENT` order (index `n - 1` holds entity number `n`).
    public private(set) var entities: [EntityLayout] = []
    /// One table per inheritance root, in `Z_ENT` order of the roots.
    public private(set) var tables: [TableLayout] = []
    /// The join tables of many-to-many relationships.
    public private(set) var joinTables: [JoinTableLayout] = []
    /// The R-trees of location attributes and R-tree fetch indexes: a virtual table each, kept current
    /// by triggers.
    public private(set) var rTrees: [RTreeLayout] = []
    /// The `Z_DA_…` triggers that keep derived attributes current.
    public private(set) var derivedTriggers: [String] = []
    /// Why a derived attribute cannot be written as Core Data would (one message each): a store of this
    /// model can be read, not created.
    public private(set) var unwritableDerivations: [String] = []
    /// Fetch index elements on a to-many relationship (one message each): Core Data makes no index term
    /// for them, and neither does the layout; worth a warning, not a refusal.
    public private(set) var ignoredFetchIndexElements: [String] = []
    private var byName: [String: Int] = [:]

    /// Lays out a model.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/unknownName``) when a uniqueness constraint or fetch
    ///   index names a property that has no column.
    ///
    /// Laid out once per model (``/MoultModel/ObjectModel/memoized(_:_:)``): a chain asks each version for
    /// its layout at every step it takes part in.
    public init(model: ObjectModel) throws(StoreError) {
        self = try model.memoized("StoreLayout") { () throws(StoreError) in try StoreLayout(model: model, numbers: nil) }
    }

    /// Lays out a model with the entity numbers a store gives it (its `Z_PRIMARYKEY`) rather than
    /// computed ones: a store Core Data (or an earlier Moult) numbered otherwise is read as it is.
    ///
    /// Join-table names carry these numbers too.
    ///
    /// - Parameters:
    ///   - model: the model to lay out.
    ///   - numbers: `Z_ENT` by entity name, one distinct positive number for every entity.
    /// - Throws: ``StoreError`` as ``init(model:)``, and `.schemaMismatch` when `numbers` misses an
    ///   entity or gives two entities one number.
    public init(model: ObjectModel, numbers: [String: Int32]?) throws(StoreError) {
        if let numbers {
            for entity in model.entities where (numbers[entity.name] ?? 0) <= 0 {
                throw StoreError(.schemaMismatch, "entity \(entity.name) has no entity number", entity: entity.name)
            }
            let used = model.entities.compactMap { numbers[$0.name] }
            guard Set(used).count == used.count else {
                throw StoreError(.schemaMismatch, "two entities have the same entity number")
            }
        }
        self.model = model
        var builder = LayoutBuilder(model: model, numbers: numbers.map { given in given.filter { name, _ in model.entity(named: name) != nil } })
        try builder.build()
        entities = builder.entities
        tables = builder.tables
        joinTables = builder.joinTables
        rTrees = builder.rTrees
        derivedTriggers = builder.derivedTriggers
        unwritableDerivations = builder.unwritableDerivations
        ignoredFetchIndexElements = builder.ignoredFetchIndexElements
        for (index, entity) in entities.enumerated() { byName[entity.name] = index }
    }

    /// The layout of the entity with this name.
    public func entity(named name: String) -> EntityLayout? { byName[name].map { entities[$0] } }

    /// The layout of the entity with this `Z_ENT`.
    public func entity(number: Int32) -> EntityLayout? {
        let index = Int(number) - 1
        if entities.indices.contains(index), entities[index].number == number { return entities[index] }
        return entities.first { $0.number == number }
    }

    /// Checks that a store of this model can be written as Core Data writes it: every entity has a
    /// version hash and every derived attribute the triggers Core Data gives it.
    ///
    /// - Throws: ``StoreError`` `.invalidValue` (bad input, 65) naming each entity or attribute that
    ///   cannot be written, rather than a store with missing hashes or stale derived values.
    public func checkWritable() throws(StoreError) {
        var problems = unwritableDerivations
        // An entity whose derived attribute is already named above is not named twice.
        for name in model.entitiesWithUncomputableHash where !problems.contains(where: { $0.contains("'\(name).") }) {
            do {
                _ = try model.versionHash(ofEntity: name)
            } catch {
                problems.append(error.message)
            }
        }
        guard problems.isEmpty else {
            throw StoreError(
                .invalidValue, "a store of this model cannot be written as Core Data would: " + problems.joined(separator: "; "),
                entity: model.entitiesWithUncomputableHash.first)
        }
    }

    /// The table of an inheritance root's table name.
    public func table(named name: String) -> TableLayout? { tables.first { $0.name == name } }

    /// The SQL that creates the whole schema: Core Data's own tables, the entity tables, join tables and
    /// indexes, in an order SQLite accepts.
    public var schemaSQL: [String] {
        var sql = [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ]
        for table in tables { sql.append(table.createSQL) }
        for table in joinTables { sql.append(table.createSQL) }
        for table in tables { sql += table.indexes.map(\.createSQL) }
        for table in joinTables { sql += table.indexes.map(\.createSQL) }
        for rTree in rTrees { sql += [rTree.createSQL] + rTree.triggerSQL }
        sql += derivedTriggers
        return sql
    }
}

// MARK: - Entities

/// How one entity is stored.
public struct EntityLayout: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// Its `Z_ENT`.
    public var number: Int32
    /// The parent's `Z_ENT`, 0 for a root (`Z_PRIMARYKEY.Z_SUPER`).
    public var superNumber: Int32
    /// The root of its inheritance hierarchy.
    public var rootName: String
    /// The root's `Z_ENT`: the row of `Z_PRIMARYKEY` whose `Z_MAX` allocates this entity's primary keys.
    public var rootNumber: Int32
    /// The table holding its rows (its root's).
    public var table: String
    /// Its own `Z_ENT` and those of all its sub-entities, in order.
    public var hierarchyNumbers: [Int32]
    public var isAbstract: Bool
    /// Every persistent attribute, inherited ones first, in model order.
    public var attributes: [AttributeColumn] {
        didSet { attributePositions = Self.positions(attributes) }
    }
    /// Every persistent to-one relationship, inherited ones first.
    public var toOneRelationships: [ToOneColumn]
    /// Every persistent to-many relationship, inherited ones first.
    public var toManyRelationships: [ToManyLayout]
    /// The position in ``attributes`` of the first attribute of each name: an attribute found by name
    /// without scanning them (a step of a long history looks up each of hundreds of attributes, in
    /// both versions). A function of ``attributes``, so it changes neither equality nor hash.
    private var attributePositions: [String: Int]

    init(
        name: String, number: Int32, superNumber: Int32, rootName: String, rootNumber: Int32, table: String, hierarchyNumbers: [Int32],
        isAbstract: Bool, attributes: [AttributeColumn], toOneRelationships: [ToOneColumn], toManyRelationships: [ToManyLayout]
    ) {
        self.name = name
        self.number = number
        self.superNumber = superNumber
        self.rootName = rootName
        self.rootNumber = rootNumber
        self.table = table
        self.hierarchyNumbers = hierarchyNumbers
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.toOneRelationships = toOneRelationships
        self.toManyRelationships = toManyRelationships
        attributePositions = Self.positions(attributes)
    }

    private static func positions(_ attributes: [AttributeColumn]) -> [String: Int] {
        Dictionary(attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The column of an attribute or to-one relationship.
    public func column(for property: String) -> String? {
        attribute(named: property)?.column ?? toOneRelationships.first { $0.name == property }?.column
    }

    /// The attribute column with this name.
    public func attribute(named name: String) -> AttributeColumn? { attributePositions[name].map { attributes[$0] } }

    /// The to-one relationship with this name.
    public func toOne(named name: String) -> ToOneColumn? { toOneRelationships.first { $0.name == name } }

    /// The to-many relationship with this name.
    public func toMany(named name: String) -> ToManyLayout? { toManyRelationships.first { $0.name == name } }

    /// `Z_ENT = n` or `Z_ENT IN (…)` selecting this entity's rows (with its sub-entities or not), or nil
    /// when every row of the table qualifies.
    public func entityCondition(includingSubentities: Bool, tableEntityCount: Int) -> String? {
        let numbers = includingSubentities ? hierarchyNumbers : [number]
        if numbers.count == tableEntityCount { return nil }
        if numbers.count == 1 { return "Z_ENT = \(numbers[0])" }
        return "Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }
}

/// An attribute and its column.
public struct AttributeColumn: Sendable, Hashable {
    public var name: String
    public var type: AttributeType
    public var column: String
}

/// A to-one relationship and its columns.
public struct ToOneColumn: Sendable, Hashable {
    public var name: String
    public var destination: String
    /// The column holding the destination's `Z_PK`.
    public var column: String
    /// The companion column holding the destination's `Z_ENT`, present when the destination has sub-entities.
    public var entityColumn: String?
    /// The destination's `Z_ENT`, the object id's entity when there is no companion column.
    public var destinationNumber: Int32
}

/// How a to-many relationship is stored.
public struct ToManyLayout: Sendable, Hashable {
    public var name: String
    public var destination: String
    public var isOrdered: Bool
    public var storage: Storage

    public enum Storage: Sendable, Hashable {
        /// A column of the destination's table holds the source's `Z_PK`: the inverse to-one's column, or
        /// a hidden key when the relationship has no inverse. `entityColumn` is the inverse's companion
        /// column (the source's `Z_ENT`) when it has one; `orderColumn` (`Z_FOK_…`) orders an ordered one.
        case destinationColumn(table: String, column: String, entityColumn: String?, orderColumn: String?)
        /// A join table row per pair; `orderColumn` orders the destinations of an ordered relationship.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?)
    }
}

// MARK: - Tables

/// A column of a table.
public struct ColumnLayout: Sendable, Hashable {
    public var name: String
    /// The declared type Core Data writes: INTEGER, FLOAT, DECIMAL, TIMESTAMP, VARCHAR or BLOB.
    public var declaredType: String
}

/// An index of a table.
public struct IndexLayout: Sendable, Hashable {
    public var name: String
    public var table: String
    public var isUnique: Bool
    /// Indexed terms as Core Data writes them (`ZOWNER`, `ZMAKER COLLATE BINARY ASC`), their column names
    /// already quoted with ``SQLName/quoted(_:)``.
    public var terms: [String]
    /// The `WHERE` condition of a partial index, in SQL.
    public var condition: String?

    public init(name: String, table: String, isUnique: Bool, terms: [String], condition: String? = nil) {
        self.name = name
        self.table = table
        self.isUnique = isUnique
        self.terms = terms
        self.condition = condition
    }

    public var createSQL: String { createSQL(ifNotExists: false) }

    /// `CREATE INDEX`, with its `WHERE` for a partial index; `IF NOT EXISTS` when asked (a deferred
    /// clean-up run again).
    public func createSQL(ifNotExists: Bool) -> String {
        // Core Data writes two spaces after WHERE (`… WHERE  ZMONTHHIGHLIGHTBEINGFIRSTASSET IS NOT NULL`).
        "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(SQLName.quoted(name)) ON \(SQLName.quoted(table)) (\(terms.joined(separator: ", ")))"
            + (condition.map { " WHERE  \($0)" } ?? "")
    }
}

/// The table of one inheritance root.
public struct TableLayout: Sendable, Hashable {
    public var name: String
    /// The root entity's name.
    public var rootEntity: String
    /// `Z_ENT` of every entity stored here.
    public var entityNumbers: [Int32]
    /// Every column, `Z_PK`, `Z_ENT`, `Z_OPT` first.
    public var columns: [ColumnLayout]
    public var indexes: [IndexLayout]

    public var createSQL: String {
        let body = columns.map { column in
            column.name == "Z_PK" ? "Z_PK INTEGER PRIMARY KEY" : "\(SQLName.quoted(column.name)) \(column.declaredType)"
        }
        return "CREATE TABLE \(SQLName.quoted(name)) ( \(body.joined(separator: ", ")) )"
    }
}

/// The join table of a many-to-many relationship.
public struct JoinTableLayout: Sendable, Hashable {
    public var name: String
    /// The two key columns, in table order.
    public var columns: [String]
    /// `Z_FOK_` columns of ordered sides.
    public var orderColumns: [String]
    public var indexes: [IndexLayout]

    public var createSQL: String {
        let all = (columns + orderColumns).map { "\(SQLName.quoted($0)) INTEGER" }.joined(separator: ", ")
        return "CREATE TABLE \(SQLName.quoted(name)) ( \(all), PRIMARY KEY (\(columns.map(SQLName.quoted).joined(separator: ", "))) )"
    }
}

/// An R-tree: a virtual table kept current by three triggers on an entity's table. Core Data makes one
/// in two ways, each with its own text:
///
/// - for a **location attribute** (a transient Undefined attribute whose user info names two Double
///   attributes in `_NSLocationAttributeDerivedComponents`), `Z_RT_<Root entity>_<attribute>`, as
///   Photos' `GenericAsset.boundedByRect` (its store's schema, text for text, odd spacing included):
///
///   ```
///   CREATE VIRTUAL TABLE Z_RT_GenericAsset_boundedByRect USING RTREE (Z_PK INTEGER PRIMARY KEY,
///     ZLATITUDE_MIN FLOAT, ZLATITUDE_MAX FLOAT, ZLONGITUDE_MIN FLOAT, ZLONGITUDE_MAX FLOAT)
///   ```
/// - for an **R-tree fetch index**, `Z_<Entity>_<index>` with untyped columns and even spacing, by
///   Core Data's `NSSQLRTreeIndex` in its published decompiled form (no real store shows one).
///
/// Each element's column is both the minimum and the maximum of its dimension (a point).
public struct RTreeLayout: Sendable, Hashable {
    /// Which of Core Data's two makers the R-tree follows.
    public enum Form: Sendable, Hashable {
        /// `NSSQLLocationAttributeRTreeExtension`: a location attribute's R-tree.
        case locationAttribute
        /// `NSSQLRTreeIndex`: an R-tree fetch index.
        case fetchIndex
    }

    /// The virtual table's name: `Z_RT_<Root>_<attribute>` or `Z_<Entity>_<index>`.
    public var name: String
    /// The entity's table, whose rows the triggers copy.
    public var table: String
    /// The indexed columns, one dimension each.
    public var columns: [String]
    public var form: Form

    init(name: String, table: String, columns: [String], form: Form) {
        self.name = name
        self.table = table
        self.columns = columns
        self.form = form
    }

    private var boundColumns: String {
        (["Z_PK"] + columns.flatMap { [SQLName.quoted($0 + "_MIN"), SQLName.quoted($0 + "_MAX")] }).joined(separator: ", ")
    }

    /// The values the triggers insert. A location attribute's, from Photos: `NEW.Z_PK, NEW.ZLATITUDE
    /// ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE` (the first dimension's pair joined by " ,"); a
    /// fetch index's joined by ", " throughout.
    private var newValues: String {
        var text = "NEW.Z_PK"
        for (position, column) in columns.map(SQLName.quoted).enumerated() {
            text += position == 0 && form == .locationAttribute ? ", NEW.\(column) ,NEW.\(column)" : ", NEW.\(column), NEW.\(column)"
        }
        return text
    }

    public var createSQL: String {
        let type = form == .locationAttribute ? " FLOAT" : ""
        let dimensions = columns.flatMap { [SQLName.quoted($0 + "_MIN") + type, SQLName.quoted($0 + "_MAX") + type] }
        return "CREATE VIRTUAL TABLE \(SQLName.quoted(name)) USING RTREE (\((["Z_PK INTEGER PRIMARY KEY"] + dimensions).joined(separator: ", ")))"
    }

    /// The DELETE, INSERT and UPDATE triggers, in that order.
    public var triggerSQL: [String] {
        let (rTree, table) = (SQLName.quoted(name), SQLName.quoted(table))
        return [
            "CREATE TRIGGER \(SQLName.quoted(name + "_DELETE")) AFTER DELETE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(rTree) WHERE Z_PK = OLD.Z_PK ; END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_INSERT")) AFTER INSERT ON \(table) FOR EACH ROW BEGIN INSERT OR REPLACE INTO \(rTree) (\(boundColumns)) VALUES (\(newValues)) ; END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_UPDATE")) AFTER UPDATE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(rTree) WHERE Z_PK = NEW.Z_PK ; INSERT INTO \(rTree) (\(boundColumns)) VALUES (\(newValues)) ; END",
        ]
    }
}
