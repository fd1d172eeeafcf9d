package import MoultModel

/// The queries by which the migration engine cuts a mapping's source objects into chunks of primary
/// keys and reads a chunk: an entity's own rows (`Z_ENT`), with the part of the mapping's filter
/// SQLite computes, along `Z_PK`.
///
/// ```swift
/// let boundaries = EngineChunkQueries.Boundaries(entity: person, filter: nil, chunkSize: 5_000)
/// let upper = try boundaries.boundary(after: 0, in: source)           // the 5,000th key, or nil
/// let rest = try boundaries.remainder(after: 0, in: source)           // (last key, count), or nil
/// let first = try boundaries.firstChunk(in: source)                  // (5,000th key or last, count), or nil
/// ```
package enum EngineChunkQueries {}

// MARK: - Chunk boundaries

extension EngineChunkQueries {
    /// The boundaries of chunks along `Z_PK`, found with `ORDER BY Z_PK LIMIT 1 OFFSET n-1` steps,
    /// never by loading the keys.
    package struct Boundaries: Sendable {
        private let boundarySQL: String
        private let remainderSQL: String
        private let firstSQL: String
        private let arguments: [Value]

        /// The boundaries of the objects of `entity` (its sub-entities' not included) that pass `filter`,
        /// in chunks of `chunkSize`.
        package init(entity: EntityLayout, filter: SQLCondition?, chunkSize: Int) {
            var condition = "Z_ENT = \(entity.number)"
            if let filter { condition += " AND (\(filter.sql))" }
            self.init(table: entity.table, condition: condition, arguments: filter?.arguments ?? [], chunkSize: chunkSize)
        }

        /// The boundaries of the rows of `table` (unquoted) for which `condition` (SQL, its arguments
        /// `arguments`) holds, in chunks of `chunkSize`.
        package init(table: String, condition: String, arguments: [Value], chunkSize: Int) {
            let table = SQLName.quoted(table)
            let chunkSize = max(1, chunkSize)
            boundarySQL = "SELECT Z_PK FROM \(table) WHERE \(condition) AND Z_PK > ? ORDER BY Z_PK LIMIT 1 OFFSET \(chunkSize - 1)"
            remainderSQL = "SELECT MAX(Z_PK), COUNT(*) FROM \(table) WHERE \(condition) AND Z_PK > ?"
            firstSQL = "SELECT MAX(Z_PK), COUNT(*) FROM (SELECT Z_PK FROM \(table) WHERE \(condition) ORDER BY Z_PK LIMIT \(chunkSize))"
            self.arguments = arguments
        }

        /// The key of the `chunkSize`-th object after `lower`, or nil when fewer are left.
        package func boundary(after lower: Int64, in database: Database) throws(StoreError) -> Int64? {
            let boundary = try database.statement(boundarySQL)
            try boundary.bind(arguments + [.int(lower)])
            defer { boundary.reset() }
            return try boundary.step() ? boundary.int64(at: 0) : nil
        }

        /// The last key and the number of the first `chunkSize` objects (fewer when there are fewer),
        /// or nil when there is none: one scan, up to the chunk's end or the table's.
        package func firstChunk(in database: Database) throws(StoreError) -> (upper: Int64, count: Int)? {
            let first = try database.statement(firstSQL)
            try first.bind(arguments)
            defer { first.reset() }
            guard try first.step(), !first.isNull(at: 0) else { return nil }
            return (first.int64(at: 0), Int(first.int64(at: 1)))
        }

        /// The last key and the number of the objects after `lower`, or nil when there is none.
        package func remainder(after lower: Int64, in database: Database) throws(StoreError) -> (upper: Int64, count: Int)? {
            let last = try database.statement(remainderSQL)
            try last.bind(arguments + [.int(lower)])
            defer { last.reset() }
            guard try last.step(), !last.isNull(at: 0) else { return nil }
            return (last.int64(at: 0), Int(last.int64(at: 1)))
        }
    }
}

// MARK: - Reading keys

extension EngineChunkQueries {
    /// Stage 2's read of a chunk when only keys are needed: each object's `Z_PK` and `Z_ENT`, and the
    /// to-ones whose objects are looked up, not the attributes.
    ///
    /// ```swift
    /// let read = EngineChunkQueries.KeysRead(source: person, toOnes: [person.toOne(named: "address")!], filter: nil)
    /// try read.forEachRow(after: 0, through: 5_000, filterArguments: [], in: source) { row in
    ///     print(row.primaryKey, row.toOne(0) as Any)
    /// }
    /// ```
    package struct KeysRead {
        /// `SELECT Z_PK, Z_ENT, <to-one columns> FROM <table> WHERE Z_ENT = … AND Z_PK > ? AND Z_PK <= ? … ORDER BY Z_PK`.
        package let sql: String
        /// For each to-one read: its key column's place in a row, its companion's, and the destination's
        /// `Z_ENT` when there is no companion.
        private let toOnes: [(column: Int, entityColumn: Int?, destinationNumber: Int32)]

        /// The read of the objects of `source` that pass `filter`, with the keys of `toOnes`.
        package init(source: EntityLayout, toOnes: [ToOneColumn], filter: SQLCondition?) {
            var columns = ["Z_PK", "Z_ENT"]
            var places: [(column: Int, entityColumn: Int?, destinationNumber: Int32)] = []
            for toOne in toOnes {
                let column = columns.count
                columns.append(toOne.column)
                var entityColumn: Int?
                if let companion = toOne.entityColumn {
                    entityColumn = columns.count
                    columns.append(companion)
                }
                places.append((column, entityColumn, toOne.destinationNumber))
            }
            var sql = "SELECT \(columns.map(SQLName.quoted).joined(separator: ", ")) FROM \(SQLName.quoted(source.table))"
            sql += " WHERE Z_ENT = \(source.number) AND Z_PK > ? AND Z_PK <= ?"
            if let filter { sql += " AND (\(filter.sql))" }
            sql += " ORDER BY Z_PK"
            self.sql = sql
            self.toOnes = places
        }

        /// One object of the read.
        package struct Row {
            fileprivate let statement: Statement
            fileprivate let read: KeysRead

            /// The object's `Z_PK`.
            package var primaryKey: Int64 { statement.int64(at: 0) }
            /// The object's `Z_ENT`.
            package var entity: Int32 { Int32(truncatingIfNeeded: statement.int64(at: 1)) }

            /// The object of the `index`-th to-one the read was made with, or nil when it has none.
            package func toOne(_ index: Int) -> ObjectID? {
                let toOne = read.toOnes[index]
                guard !statement.isNull(at: toOne.column) else { return nil }
                let entity = toOne.entityColumn.map { Int32(truncatingIfNeeded: statement.int64(at: $0)) } ?? toOne.destinationNumber
                return ObjectID(entity: entity, primaryKey: statement.int64(at: toOne.column))
            }
        }

        /// Calls `body` for each object with `lower < Z_PK <= upper`, in key order.
        package func forEachRow(
            after lower: Int64, through upper: Int64, filterArguments: [Value], in database: Database, _ body: (Row) throws -> Void
        ) throws {
            let statement = try database.statement(sql)
            try statement.bind([.int(lower), .int(upper)] + filterArguments)
            defer { statement.reset() }
            while try statement.step() { try body(Row(statement: statement, read: self)) }
        }
    }
}

// MARK: - Whether SQLite takes a filter

extension EngineChunkQueries {
    /// A statement at least as deep as any the engine embeds a pushed-down filter of the rows of
    /// `source` in, to prepare once and see whether SQLite takes the filter (it refuses an expression
    /// tree deeper than 1,000).
    ///
    /// ```swift
    /// let accepted = (try? source.makeStatement(EngineChunkQueries.filterProbe("ZAGE >= ?", source: person))) != nil
    /// ```
    package static func filterProbe(_ filter: String, source: EntityLayout) -> String {
        let margin = 8
        let wrapped = String(repeating: "+(", count: margin) + filter + String(repeating: ")", count: margin)
        return "SELECT Z_PK FROM \(SQLName.quoted(source.table)) WHERE Z_ENT = \(source.number) AND Z_PK > ? AND Z_PK <= ? AND (\(wrapped)) ORDER BY Z_PK"
    }
}
