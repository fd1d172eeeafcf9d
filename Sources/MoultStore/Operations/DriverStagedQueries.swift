package import MoultModel

/// The rows of an entity a stage handler's operation works on: those of its table that are the entity
/// or one of its sub-entities (`entityCondition`), narrowed by a predicate SQLite runs (`condition`).
///
/// ```swift
/// let rows = StagedRows(table: "ZTAG", entityCondition: nil, condition: SQLCondition("ZNAME IS NULL"))
/// let count = try database.count(rows)
/// ```
package struct StagedRows: Sendable {
    /// The entity's table, unquoted.
    package var table: String
    /// Which of the table's rows are the entity's (``EntityLayout/entityCondition(includingSubentities:tableEntityCount:)``).
    package var entityCondition: String?
    /// The predicate pushed down to SQLite.
    package var condition: SQLCondition?

    package init(table: String, entityCondition: String?, condition: SQLCondition? = nil) {
        self.table = table
        self.entityCondition = entityCondition
        self.condition = condition
    }

    /// What follows `WHERE 1` or `WHERE Z_PK > ?`: ` AND <entity> AND (<predicate>)`.
    var scope: String {
        var scope = entityCondition.map { " AND \($0)" } ?? ""
        if let condition { scope += " AND (\(condition.sql))" }
        return scope
    }

    /// The predicate's arguments.
    var arguments: [Value] { condition?.arguments ?? [] }
}

/// A value a handler gives a column of one row.
package enum StagedAssignment: Sendable {
    /// The column takes the value, bound as an argument.
    case value(column: String, Value)
    /// The column becomes NULL (a to-one relationship cleared).
    case null(column: String)
}

extension Database {
    /// The number of rows.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func count(_ rows: StagedRows) throws(StoreError) -> Int {
        guard case .int(let count)? = try scalar("SELECT COUNT(*) FROM \(SQLName.quoted(rows.table)) WHERE 1\(rows.scope)", rows.arguments)
        else { return 0 }
        return Int(count)
    }

    /// Sets columns of one row, and counts the change in its `Z_OPT` as Core Data does.
    ///
    /// ```swift
    /// try database.update("ZTAG", primaryKey: 7, [.value(column: "ZNAME", .string("swift")), .null(column: "ZOWNER")])
    /// ```
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func update(_ table: String, primaryKey: Int64, _ assignments: [StagedAssignment]) throws(StoreError) {
        var sets: [String] = []
        var arguments: [Value] = []
        for assignment in assignments {
            switch assignment {
            case .value(let column, let value):
                sets.append("\(SQLName.quoted(column)) = ?")
                arguments.append(value)
            case .null(let column):
                sets.append("\(SQLName.quoted(column)) = NULL")
            }
        }
        sets.append("Z_OPT = Z_OPT + 1")
        arguments.append(.int(primaryKey))
        try execute("UPDATE \(SQLName.quoted(table)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?", arguments)
    }

    /// The destination of a to-one relationship of one row: none, or one object (its entity from the
    /// relationship's entity column, or the destination's when there is none).
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func destination(of toOne: ToOneColumn, in table: String, primaryKey: Int64) throws -> [ObjectID] {
        try query(
            "SELECT \(SQLName.quoted(toOne.column)), \(toOne.entityColumn.map(SQLName.quoted) ?? "NULL") FROM \(SQLName.quoted(table)) WHERE Z_PK = ?",
            [.int(primaryKey)]
        ) { row -> ObjectID? in
            guard !row.isNull(at: 0) else { return nil }
            let number = row.isNull(at: 1) ? toOne.destinationNumber : Int32(truncatingIfNeeded: row.int64(at: 1))
            return ObjectID(entity: number, primaryKey: row.int64(at: 0))
        }.compactMap { $0 }
    }
}

// MARK: - Chunked updates

/// An update whose values are the same for every row, run chunk by chunk in primary-key order: each
/// chunk's last key is found inside SQLite (``EngineChunkQueries/Boundaries``: `LIMIT 1 OFFSET chunk - 1`,
/// or the last key and the count of the rows left), then the chunk is one
/// `UPDATE … WHERE Z_PK > ? AND Z_PK <= ? AND (predicate)`.
///
/// ```swift
/// let update = StagedUpdate(rows, columns: ["ZDATECREATED"], values: [.date(now)], chunkSize: 1000)
/// if let chunk = try update.nextChunk(after: 0, in: database) { try update.run(after: 0, through: chunk.last, in: database) }
/// ```
package struct StagedUpdate: Sendable {
    private let rows: StagedRows
    private let values: [Value]
    private let chunkSize: Int
    private let boundaries: EngineChunkQueries.Boundaries
    private let update: String

    /// - Parameters:
    ///   - columns: the columns set, unquoted, each to the value at its position in `values`.
    package init(_ rows: StagedRows, columns: [String], values: [Value], chunkSize: Int) {
        self.rows = rows
        self.values = values
        self.chunkSize = max(1, chunkSize)
        boundaries = EngineChunkQueries.Boundaries(table: rows.table, condition: "1\(rows.scope)", arguments: rows.arguments, chunkSize: chunkSize)
        let sets = columns.map { "\(SQLName.quoted($0)) = ?" }
        update = "UPDATE \(SQLName.quoted(rows.table)) SET \(sets.joined(separator: ", ")), Z_OPT = Z_OPT + 1 WHERE Z_PK > ? AND Z_PK <= ?\(rows.scope)"
    }

    /// The last primary key of the next chunk and its number of rows (`chunkSize` but for the last
    /// chunk), or nil when no row is left after `after`.
    package func nextChunk(after: Int64, in database: Database) throws(StoreError) -> (last: Int64, count: Int)? {
        if let last = try boundaries.boundary(after: after, in: database) { return (last, chunkSize) }
        return try boundaries.remainder(after: after, in: database).map { ($0.upper, $0.count) }
    }

    /// Updates the rows after `after` through `last`.
    package func run(after: Int64, through last: Int64, in database: Database) throws(StoreError) {
        try database.execute(update, values + [.int(after), .int(last)] + rows.arguments)
    }
}

// MARK: - Duplicates

/// The rows that repeat an earlier row's values of some columns (nil equal to nil): the first of each
/// group (lowest primary key) is collected once in a temporary table of the connection, and the others
/// are read chunk by chunk. The first of each group never changes while the others are deleted, so a
/// resumed run collects the same set.
///
/// ```swift
/// let duplicates = StagedDuplicates(rows, columns: ["ZNAME"], operation: 2, chunkSize: 1000)
/// try duplicates.collectFirsts(in: database)
/// defer { try? duplicates.dropFirsts(in: database) }
/// let chunk = try duplicates.objects(after: 0, in: database)
/// ```
package struct StagedDuplicates: Sendable {
    private let keep: String
    private let table: String
    private let scope: String
    private let columns: [String]
    private let select: String

    /// - Parameters:
    ///   - rows: the entity's rows (their predicate is not used).
    ///   - columns: the columns whose values make a group, unquoted.
    ///   - operation: the handler's operation, which names the temporary table.
    package init(_ rows: StagedRows, columns: [String], operation: Int, chunkSize: Int) {
        keep = SQLName.quoted("moult_staged_keep_\(operation)")
        table = SQLName.quoted(rows.table)
        scope = StagedRows(table: rows.table, entityCondition: rows.entityCondition).scope
        self.columns = columns.map(SQLName.quoted)
        select = "SELECT Z_PK, Z_ENT FROM \(table) WHERE Z_PK > ?\(scope) AND Z_PK NOT IN (SELECT pk FROM temp.\(keep)) ORDER BY Z_PK LIMIT \(chunkSize)"
    }

    /// Collects the first row of each group into the connection's temporary table.
    package func collectFirsts(in database: Database) throws(StoreError) {
        try database.executeScript(
            "DROP TABLE IF EXISTS temp.\(keep); CREATE TEMP TABLE \(keep) (pk INTEGER PRIMARY KEY); "
                + "INSERT INTO temp.\(keep) SELECT MIN(Z_PK) FROM \(table) WHERE 1\(scope) GROUP BY \(columns.joined(separator: ", "))")
    }

    /// Drops the temporary table.
    package func dropFirsts(in database: Database) throws(StoreError) {
        try database.executeScript("DROP TABLE IF EXISTS temp.\(keep)")
    }

    /// The next chunk of rows that are not the first of their group.
    package func objects(after: Int64, in database: Database) throws -> [ObjectID] {
        try database.query(select, [.int(after)]) { row in
            ObjectID(entity: Int32(truncatingIfNeeded: row.int64(at: 1)), primaryKey: row.int64(at: 0))
        }
    }
}

// MARK: - Deleting

/// The statements deleting an object of an entity as Core Data does, each taking the object's primary
/// key: every reference to it cleared (to-one columns and their entity columns, to-many key, entity and
/// order columns, join rows on either side), then its row deleted. Its delete rules (deny, cascade) are
/// the caller's, before.
///
/// ```swift
/// let deletion = StagedDeletion(of: tag, in: layout)
/// try deletion.delete(primaryKey: 7, in: database)
/// ```
package struct StagedDeletion: Sendable {
    package private(set) var statements: [String] = []

    package init(of entity: EntityLayout, in layout: StoreLayout) {
        for other in layout.entities {
            for toOne in other.toOneRelationships where layout.entity(named: toOne.destination)?.rootNumber == entity.rootNumber {
                var sets = ["\(SQLName.quoted(toOne.column)) = NULL"]
                if let column = toOne.entityColumn { sets.append("\(SQLName.quoted(column)) = NULL") }
                add("UPDATE \(SQLName.quoted(other.table)) SET \(sets.joined(separator: ", ")) WHERE \(SQLName.quoted(toOne.column)) = ?")
            }
            for toMany in other.toManyRelationships {
                switch toMany.storage {
                case .destinationColumn(let table, let column, let entityColumn, let orderColumn) where other.rootNumber == entity.rootNumber:
                    let sets = [column, entityColumn, orderColumn].compactMap { $0 }.map { "\(SQLName.quoted($0)) = NULL" }
                    add("UPDATE \(SQLName.quoted(table)) SET \(sets.joined(separator: ", ")) WHERE \(SQLName.quoted(column)) = ?")
                case .joinTable(let table, let sourceColumn, let destinationColumn, _):
                    if other.rootNumber == entity.rootNumber { add("DELETE FROM \(SQLName.quoted(table)) WHERE \(SQLName.quoted(sourceColumn)) = ?") }
                    if layout.entity(named: toMany.destination)?.rootNumber == entity.rootNumber {
                        add("DELETE FROM \(SQLName.quoted(table)) WHERE \(SQLName.quoted(destinationColumn)) = ?")
                    }
                default:
                    break
                }
            }
        }
        add("DELETE FROM \(SQLName.quoted(entity.table)) WHERE Z_PK = ?")
    }

    private mutating func add(_ sql: String) { if !statements.contains(sql) { statements.append(sql) } }

    /// Clears every reference to the object and deletes its row.
    package func delete(primaryKey: Int64, in database: Database) throws(StoreError) {
        for sql in statements { try database.execute(sql, [.int(primaryKey)]) }
    }
}
