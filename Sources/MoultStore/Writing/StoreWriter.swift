public import MoultModel

/// Inserts objects and relationships into a store, in batches, the way Core Data writes them.
///
/// Primary keys are allocated per inheritance root, continuing from `Z_PRIMARYKEY.Z_MAX`; `Z_MAX` is
/// written back by ``savePrimaryKeys()``, which ``write(_:)`` calls before committing, so a committed
/// batch always leaves `Z_MAX` right. Insert statements are prepared once per entity and reused.
///
/// ```swift
/// let writer = try store.makeWriter()
/// try writer.write {
///     let person = try writer.insert("Person", ["name": "Ada"])
///     let car = try writer.insert("Car", ["maker": "Fiat", "owner": .object(person)])
///     _ = car
/// }
/// ```
///
/// A new object gets `Z_OPT` 1. A to-one value is `.object(ObjectID)` (its companion `Z_ENT` column is
/// filled when the destination has sub-entities). To-many relationships are written with
/// ``relate(_:_:to:)``: through the inverse's column, a hidden key, or join rows.
public final class StoreWriter {
    public let database: Database
    public let layout: StoreLayout
    /// The last primary key used, per root entity's `Z_ENT`.
    private var maxKeys: [Int32: Int64] = [:]
    private var dirtyRoots: Set<Int32> = []
    private var insertSQL: [Int32: String] = [:]

    init(database: Database, layout: StoreLayout) throws(StoreError) {
        self.database = database
        self.layout = layout
        let statement = try database.statement("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY")
        try statement.bind([])
        defer { statement.reset() }
        while try statement.step() {
            maxKeys[Int32(truncatingIfNeeded: statement.int64(at: 0))] = statement.int64(at: 1)
        }
    }

    /// The shape of the values ``insert(_:values:primaryKey:)`` takes for an entity (the cursor's shape).
    public func shape(of entityName: String) throws(StoreError) -> ObjectShape {
        ObjectShape(entity: try entity(entityName))
    }

    private func entity(_ name: String) throws(StoreError) -> EntityLayout {
        guard let entity = layout.entity(named: name) else {
            throw StoreError(.unknownName, "the model has no entity '\(name)'", path: database.path, entity: name)
        }
        return entity
    }

    // MARK: - Primary keys

    /// Allocates the next primary key of an entity's hierarchy.
    public func allocatePrimaryKey(for entityName: String) throws(StoreError) -> Int64 {
        try allocatePrimaryKeys(for: entityName, count: 1).lowerBound
    }

    /// Allocates `count` consecutive primary keys of an entity's hierarchy.
    public func allocatePrimaryKeys(for entityName: String, count: Int) throws(StoreError) -> ClosedRange<Int64> {
        let root = try entity(entityName).rootNumber
        let first = (maxKeys[root] ?? 0) + 1
        let last = first + Int64(max(count, 1)) - 1
        maxKeys[root] = last
        dirtyRoots.insert(root)
        return first...last
    }

    /// Raises the last primary key of an entity's hierarchy to at least `key` (saved with the next
    /// batch, as an allocation is), so that keys allocated from then on come above it: a migration
    /// reserves the keys its objects keep from their source objects this way.
    ///
    /// ```swift
    /// try writer.reservePrimaryKeys(through: 5_000, for: "Person")
    /// let next = try writer.allocatePrimaryKey(for: "Person")    // 5_001
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key the hierarchy's counter reaches at least.
    ///   - entityName: An entity of the hierarchy.
    /// - Throws: ``StoreError`` (`.unknownName`) when the model has no such entity.
    public func reservePrimaryKeys(through key: Int64, for entityName: String) throws(StoreError) {
        let root = try entity(entityName).rootNumber
        guard key > (maxKeys[root] ?? 0) else { return }
        maxKeys[root] = key
        dirtyRoots.insert(root)
    }

    /// The last primary key used in an entity's hierarchy.
    public func lastPrimaryKey(for entityName: String) throws(StoreError) -> Int64 {
        maxKeys[try entity(entityName).rootNumber] ?? 0
    }

    /// Writes `Z_MAX` of every root whose keys advanced since the last save.
    public func savePrimaryKeys() throws(StoreError) {
        for root in dirtyRoots.sorted() {
            try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.int(maxKeys[root] ?? 0), .int(Int64(root))])
        }
        dirtyRoots.removeAll()
    }

    /// Runs a batch in one transaction and saves `Z_MAX` before committing; on throw, everything
    /// including the key counters rolls back.
    public func write<T>(_ body: () throws -> T) throws -> T {
        let saved = maxKeys
        let savedDirty = dirtyRoots
        do {
            return try database.write {
                let result = try body()
                try savePrimaryKeys()
                return result
            }
        } catch {
            maxKeys = saved
            dirtyRoots = savedDirty
            throw error
        }
    }

    // MARK: - Objects

    /// Inserts an object with its values by slot (see ``shape(of:)``).
    ///
    /// - Parameters:
    ///   - entityName: The entity (not abstract).
    ///   - values: One value per slot: attributes, then to-one relationships as `.object` or `.null`.
    ///   - primaryKey: The primary key; allocated when nil. A given key above `Z_MAX` advances it.
    /// - Returns: The new object's id.
    /// - Throws: ``StoreError``: `.invalidValue` for a wrong count, an abstract entity, a string or blob
    ///   larger than ``Database/Configuration/maxValueBytes`` (its ``StoreError/valueLimit`` set); `.constraint`
    ///   when a uniqueness constraint fails; `.diskFull`, `.locked`…
    @discardableResult
    public func insert(_ entityName: String, values: [Value], primaryKey: Int64? = nil) throws(StoreError) -> ObjectID {
        let entity = try entity(entityName)
        if entity.isAbstract {
            throw StoreError(.invalidValue, "entity '\(entityName)' is abstract: its objects belong to a sub-entity", path: database.path, entity: entityName)
        }
        let expected = entity.attributes.count + entity.toOneRelationships.count
        guard values.count == expected else {
            throw StoreError(.invalidValue, "\(values.count) values given for \(expected) slots", path: database.path, entity: entityName)
        }
        let key: Int64
        if let primaryKey {
            key = primaryKey
            if primaryKey > (maxKeys[entity.rootNumber] ?? 0) {
                maxKeys[entity.rootNumber] = primaryKey
                dirtyRoots.insert(entity.rootNumber)
            }
        } else {
            key = try allocatePrimaryKey(for: entityName)
        }
        let statement = try database.statement(insertStatementSQL(entity))
        try statement.bind(.int(key), at: 1)
        try statement.bind(.int(Int64(entity.number)), at: 2)
        var position = 3
        for (slot, attribute) in entity.attributes.enumerated() {
            try bindAttribute(values[slot], attribute, entity: entity, statement: statement, at: position)
            position += 1
        }
        for (offset, toOne) in entity.toOneRelationships.enumerated() {
            let value = values[entity.attributes.count + offset]
            switch value {
            case .null:
                try statement.bind(.null, at: position)
                if toOne.entityColumn != nil { try statement.bind(.null, at: position + 1) }
            case .object(let id):
                try statement.bind(id.primaryKey, at: position)
                if toOne.entityColumn != nil { try statement.bind(Int64(id.entity), at: position + 1) }
            default:
                throw StoreError(.invalidValue, "to-one '\(toOne.name)' needs an object id, not \(value)", path: database.path, entity: entityName)
            }
            position += toOne.entityColumn == nil ? 1 : 2
        }
        do {
            while try statement.step() {}
        } catch {
            throw error.located(entity: entityName)
        }
        return ObjectID(entity: entity.number, primaryKey: key)
    }

    /// Inserts an object with values by property name; missing properties are NULL.
    ///
    /// - Throws: ``StoreError`` (`.unknownName`) for a name the entity does not have, and as ``insert(_:values:primaryKey:)``.
    @discardableResult
    public func insert(_ entityName: String, _ values: [String: Value], primaryKey: Int64? = nil) throws(StoreError) -> ObjectID {
        let shape = try shape(of: entityName)
        var slots = [Value](repeating: .null, count: shape.names.count)
        for (name, value) in values {
            guard let slot = shape.slot(of: name) else {
                throw StoreError(.unknownName, "entity '\(entityName)' has no attribute or to-one relationship '\(name)'", path: database.path, entity: entityName)
            }
            slots[slot] = value
        }
        return try insert(entityName, values: slots, primaryKey: primaryKey)
    }

    private func insertStatementSQL(_ entity: EntityLayout) -> String {
        if let sql = insertSQL[entity.number] { return sql }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + entity.attributes.map(\.column)
        for toOne in entity.toOneRelationships { columns += [toOne.column] + (toOne.entityColumn.map { [$0] } ?? []) }
        let placeholders = ["?", "?", "1"] + Array(repeating: "?", count: columns.count - 3)
        let sql = "INSERT INTO \(SQLName.quoted(entity.table)) (\(columns.map(SQLName.quoted).joined(separator: ", "))) VALUES (\(placeholders.joined(separator: ", ")))"
        insertSQL[entity.number] = sql
        return sql
    }

    /// Binds an attribute value, checking that it fits the attribute's type.
    private func bindAttribute(_ value: Value, _ attribute: AttributeColumn, entity: EntityLayout, statement: Statement, at position: Int) throws(StoreError) {
        let fits: Bool
        switch (attribute.type, value) {
        case (_, .null): fits = true
        case (.integer16, .int), (.integer32, .int), (.integer64, .int), (.boolean, .bool), (.boolean, .int): fits = true
        case (.double, .double), (.float, .double), (.double, .int), (.float, .int): fits = true
        case (.decimal, .decimal), (.decimal, .double), (.decimal, .int): fits = true
        case (.string, .string), (.uri, .string), (.objectID, .string): fits = true
        case (.date, .date), (.uuid, .uuid): fits = true
        case (.binary, .data), (.transformable, .data), (.composite, .data), (.undefined, _): fits = true
        default: fits = false
        }
        guard fits else {
            throw StoreError(
                .invalidValue, "attribute '\(attribute.name)' (\(attribute.type.rawValue)) cannot hold \(value)", path: database.path, entity: entity.name)
        }
        let bytes: Int
        switch value {
        case .string(let text): bytes = text.utf8.count
        case .data(let data): bytes = data.count
        default: bytes = 0
        }
        let limit = database.configuration.maxValueBytes
        if bytes > limit {
            throw StoreError.valueTooLarge("attribute '\(attribute.name)'", bytes: bytes, limit: limit, path: database.path, entity: entity.name)
        }
        try statement.bind(value, at: position)
    }

    // MARK: - To-many relationships

    /// Relates a source object to destinations through a to-many relationship, as Core Data stores it:
    /// by setting the inverse's column (and its companion and `Z_FOK_` columns) on each destination, a
    /// hidden key, or by adding join rows (an ordered one records each destination's position, from 1).
    ///
    /// - Parameters:
    ///   - relationship: The to-many relationship's name on the source's entity.
    ///   - source: The source object.
    ///   - destinations: The destinations, in order for an ordered relationship.
    public func relate(_ relationship: String, _ source: ObjectID, to destinations: [ObjectID]) throws(StoreError) {
        try relate(relationship, source, to: destinations, from: 1)
    }

    /// Relates a source object to destinations through a to-many relationship, an ordered one's
    /// positions counted from `firstPosition`: the destinations that follow, in order, the first
    /// `firstPosition - 1` of the list, which keep theirs (a list appended to, or rewritten from its first
    /// change). A destination already related gets its new position.
    ///
    /// ```swift
    /// try writer.relate("chapters", novel, to: [epilogue], from: 13)    // after the 12 it has
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for a relationship the entity does not have).
    public func relate(_ relationship: String, _ source: ObjectID, to destinations: [ObjectID], from firstPosition: Int) throws(StoreError) {
        let toMany = try toManyLayout(relationship, of: source)
        switch toMany.storage {
        case .destinationColumn(let table, let column, let entityColumn, let orderColumn):
            var sets = ["\(SQLName.quoted(column)) = ?"]
            if let entityColumn { sets.append("\(SQLName.quoted(entityColumn)) = ?") }
            if let orderColumn { sets.append("\(SQLName.quoted(orderColumn)) = ?") }
            let statement = try database.statement("UPDATE \(SQLName.quoted(table)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?")
            for (offset, destination) in destinations.enumerated() {
                var arguments: [Value] = [.int(source.primaryKey)]
                if entityColumn != nil { arguments.append(.int(Int64(source.entity))) }
                if orderColumn != nil { arguments.append(.int(Int64(firstPosition + offset))) }
                arguments.append(.int(destination.primaryKey))
                try statement.execute(arguments)
            }
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
            let sql: String
            let (table, sourceColumn, destinationColumn) = (SQLName.quoted(table), SQLName.quoted(sourceColumn), SQLName.quoted(destinationColumn))
            if let orderColumn = orderColumn.map(SQLName.quoted) {
                sql = "INSERT INTO \(table) (\(sourceColumn), \(destinationColumn), \(orderColumn)) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET \(orderColumn) = excluded.\(orderColumn)"
            } else {
                sql = "INSERT OR IGNORE INTO \(table) (\(sourceColumn), \(destinationColumn)) VALUES (?, ?)"
            }
            let statement = try database.statement(sql)
            for (offset, destination) in destinations.enumerated() {
                var arguments: [Value] = [.int(source.primaryKey), .int(destination.primaryKey)]
                if orderColumn != nil { arguments.append(.int(Int64(firstPosition + offset))) }
                try statement.execute(arguments)
            }
        }
    }

    /// Removes destinations from a to-many relationship of a source object, as Core Data stores the
    /// removal: the inverse's column (with its companion and `Z_FOK_` columns) or the hidden key set
    /// to NULL on each destination that still names the source, or the join rows deleted. A
    /// destination not related to the source is left as it is.
    ///
    /// ```swift
    /// try writer.unrelate("tags", novel, from: [tag])
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.unknownName` for a relationship the entity does not have).
    public func unrelate(_ relationship: String, _ source: ObjectID, from destinations: [ObjectID]) throws(StoreError) {
        let toMany = try toManyLayout(relationship, of: source)
        let statement: Statement
        switch toMany.storage {
        case .destinationColumn(let table, let column, let entityColumn, let orderColumn):
            let sets = ([column] + [entityColumn, orderColumn].compactMap { $0 }).map { "\(SQLName.quoted($0)) = NULL" }
            statement = try database.statement(
                "UPDATE \(SQLName.quoted(table)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ? AND \(SQLName.quoted(column)) = ?")
            for destination in destinations { try statement.execute([.int(destination.primaryKey), .int(source.primaryKey)]) }
        case .joinTable(let table, let sourceColumn, let destinationColumn, _):
            statement = try database.statement(
                "DELETE FROM \(SQLName.quoted(table)) WHERE \(SQLName.quoted(sourceColumn)) = ? AND \(SQLName.quoted(destinationColumn)) = ?")
            for destination in destinations { try statement.execute([.int(source.primaryKey), .int(destination.primaryKey)]) }
        }
    }

    private func toManyLayout(_ relationship: String, of source: ObjectID) throws(StoreError) -> ToManyLayout {
        guard let entity = layout.entity(number: source.entity) else {
            throw StoreError(.unknownName, "no entity has number \(source.entity)", path: database.path)
        }
        guard let toMany = entity.toMany(named: relationship) else {
            throw StoreError(.unknownName, "entity '\(entity.name)' has no to-many relationship '\(relationship)'", path: database.path, entity: entity.name)
        }
        return toMany
    }
}

@available(*, unavailable)
extension StoreWriter: Sendable {}
