public import MoultModel

/// The properties an entity's rows carry, by slot: attributes first, then to-one relationships, in the
/// order of ``EntityLayout/attributes`` and ``EntityLayout/toOneRelationships``. Shared by every row.
public struct ObjectShape: Sendable, Hashable {
    /// Property names by slot.
    public let names: [String]
    private let slots: [String: Int]

    init(entity: EntityLayout) {
        names = entity.attributes.map(\.name) + entity.toOneRelationships.map(\.name)
        slots = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The slot of a property, nil when the entity has no such attribute or to-one relationship.
    public func slot(of name: String) -> Int? { slots[name] }
}

/// One object read from a store: its id and its values by slot (see ``ObjectShape``).
public struct ObjectRow: Sendable, Hashable {
    public let id: ObjectID
    /// `Z_OPT`, Core Data's optimistic-locking version.
    public let version: Int64
    /// Values by slot: typed attribute values, and `.object(ObjectID)` or `.null` for to-one relationships.
    public var values: [Value]
    public let shape: ObjectShape

    /// The value in a slot.
    public subscript(slot: Int) -> Value { values[slot] }

    /// The value of a property by name; nil when the entity has no such property.
    public subscript(name: String) -> Value? { shape.slot(of: name).map { values[$0] } }
}

/// A single-pass cursor over an entity's objects, in primary-key order, by key ranges.
///
/// Each batch is one query `WHERE Z_PK > ? [AND …] ORDER BY Z_PK LIMIT n` on a cached statement, so no
/// read transaction stays open between batches and memory does not grow with the number of rows.
///
/// ```swift
/// let cursor = try store.objects(of: "Car", condition: SQLCondition("ZMAKER = ?", ["Lamborghini"]))
/// while let car = try cursor.next() { … }
/// ```
public final class ObjectCursor {
    /// The shape of the rows.
    public let shape: ObjectShape
    /// The entity read.
    public let entity: EntityLayout
    /// The last primary key returned (the resume point).
    public private(set) var lastPrimaryKey: Int64

    private let database: Database
    private let sql: String
    private let conditionArguments: [Value]
    private let batchSize: Int
    private let attributeTypes: [AttributeType]
    private let toOnes: [ToOneColumn]
    /// The `Z_ENT` values a row may have; nil when the query's condition already selects them.
    private let expectedEntities: Set<Int64>?
    private var statement: Statement?
    private var rowsInBatch = 0
    private var finished = false

    init(
        database: Database, layout: StoreLayout, entity: EntityLayout, includingSubentities: Bool, after: Int64, through: Int64?,
        condition: SQLCondition?, batchSize: Int
    ) {
        self.database = database
        self.entity = entity
        self.shape = ObjectShape(entity: entity)
        self.lastPrimaryKey = after
        self.batchSize = max(batchSize, 1)
        self.attributeTypes = entity.attributes.map(\.type)
        self.toOnes = entity.toOneRelationships
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + entity.attributes.map(\.column)
        for toOne in entity.toOneRelationships { columns += [toOne.column, toOne.entityColumn ?? "NULL"] }
        var clauses = ["Z_PK > ?"]
        var arguments: [Value] = []
        if let through {
            clauses.append("Z_PK <= ?")
            arguments.append(.int(through))
        }
        if let entityCondition = entity.entityCondition(
            includingSubentities: includingSubentities, tableEntityCount: layout.table(named: entity.table)?.entityNumbers.count ?? 1)
        {
            clauses.append(entityCondition)
            expectedEntities = nil
        } else {
            // Every row of the table is read: each must be one of its entities.
            expectedEntities = Set((includingSubentities ? entity.hierarchyNumbers : [entity.number]).map(Int64.init))
        }
        if let condition {
            clauses.append("(\(condition.sql))")
            arguments += condition.arguments
        }
        self.conditionArguments = arguments
        self.sql = "SELECT \(columns.joined(separator: ", ")) FROM \(entity.table) WHERE \(clauses.joined(separator: " AND ")) ORDER BY Z_PK LIMIT \(self.batchSize)"
    }

    // A cursor left before its end resets its cached statement, which would otherwise keep a read open
    // on the connection (and refuse a DETACH there).
    deinit {
        statement?.reset()
    }

    /// The next object, or nil at the end.
    ///
    /// - Throws: ``StoreError`` with the SQL and entity: locked, corrupt, or a value of the wrong type.
    public func next() throws(StoreError) -> ObjectRow? {
        while !finished {
            if statement == nil {
                let statement = try database.statement(sql)
                try statement.bind([.int(lastPrimaryKey)] + conditionArguments)
                self.statement = statement
                rowsInBatch = 0
            }
            let statement = self.statement!
            guard try statement.step() else {
                statement.reset()
                self.statement = nil
                // A short batch is the last one.
                if rowsInBatch < batchSize { finished = true }
                continue
            }
            rowsInBatch += 1
            return try decodeRow(statement)
        }
        return nil
    }

    private func decodeRow(_ statement: Statement) throws(StoreError) -> ObjectRow {
        // Each row's key is an integer above the last one: the next batch starts after it, so reading
        // always moves forward and ends, whatever a damaged file holds.
        guard case .int(let primaryKey) = statement.value(at: 0), primaryKey > lastPrimaryKey else {
            let found = statement.value(at: 0)
            statement.reset()
            self.statement = nil
            throw StoreError(
                .corrupt, "table \(entity.table) gives a row the key \(found) after \(lastPrimaryKey): its Z_PK column is damaged",
                path: database.path, sql: sql, entity: entity.name)
        }
        lastPrimaryKey = primaryKey
        var values: [Value] = []
        values.reserveCapacity(attributeTypes.count + toOnes.count)
        do throws(StoreError) {
            guard case .int(let entityNumber) = statement.value(at: 1),
                expectedEntities.map({ $0.contains(entityNumber) }) ?? true
            else {
                throw StoreError(
                    .invalidValue,
                    "column Z_ENT of table \(entity.table) holds \(statement.value(at: 1)), which is not the number of \(entity.name) or of one of its sub-entities",
                    path: database.path, sql: sql)
            }
            for (offset, type) in attributeTypes.enumerated() {
                values.append(try statement.value(at: 3 + offset, as: type))
            }
        } catch {
            statement.reset()
            self.statement = nil
            throw error.located(entity: entity.name, primaryKey: primaryKey)
        }
        var column = 3 + attributeTypes.count
        for toOne in toOnes {
            if statement.isNull(at: column) {
                values.append(.null)
            } else {
                let number = toOne.entityColumn == nil || statement.isNull(at: column + 1)
                    ? toOne.destinationNumber : Int32(truncatingIfNeeded: statement.int64(at: column + 1))
                values.append(.object(ObjectID(entity: number, primaryKey: statement.int64(at: column))))
            }
            column += 2
        }
        return ObjectRow(
            id: ObjectID(entity: Int32(truncatingIfNeeded: statement.int64(at: 1)), primaryKey: primaryKey),
            version: statement.int64(at: 2), values: values, shape: shape)
    }
}

@available(*, unavailable)
extension ObjectCursor: Sendable {}
