package import MoultModel

/// The queries of the migration engine's validation, over one entity's rows (`Z_ENT`) of the
/// destination, each over the whole table so that memory stays flat: rules on one row (a required
/// value, a bound), a one-to-one's object that does not point back, a to-many's count out of bounds,
/// and a column's values for a check SQLite cannot compute.
///
/// ```swift
/// let queries = EngineValidationQueries(entity: person)
/// let rules = [EngineValidationQueries.required("ZNAME"), EngineValidationQueries.below(.int(0), column: "ZAGE", measure: .value)]
/// let tried = rules.map { (entity: person.number, rule: $0) }
/// if try EngineValidationQueries.anyRowBreaking(in: person.table, tried[...]).hasRow(in: destination) {
///     try queries.rowsBreaking(rules[0]).forEachRow(in: destination) { print($0.int64(at: 0)) }
/// }
/// ```
package struct EngineValidationQueries {
    /// A query to run once, and its arguments.
    package struct Query: Sendable {
        package let sql: String
        package let arguments: [Value]

        /// Whether the query gives a row.
        package func hasRow(in database: Database) throws(StoreError) -> Bool {
            let statement = try database.makeStatement(sql)
            try statement.bind(arguments)
            return try statement.step()
        }

        /// Calls `body` for each row; the statement is positioned on the row during the call.
        package func forEachRow(in database: Database, _ body: (Statement) throws -> Void) throws {
            let statement = try database.makeStatement(sql)
            try statement.bind(arguments)
            while try statement.step() { try body(statement) }
        }
    }

    /// A rule on one row: a condition true on a row that breaks it, and what it measures, when the
    /// failure reports the value measured.
    package struct RowRule: Sendable {
        let condition: String
        let arguments: [Value]
        let measured: String?
    }

    /// What a bound is compared with.
    package enum Measure {
        /// The value itself (numbers, dates).
        case value
        /// Its length (characters of a string, bytes of binary data).
        case length
    }

    private let entity: EntityLayout
    private let scope: String

    /// The queries over the rows of `entity` (its sub-entities' not included).
    package init(entity: EntityLayout) {
        self.entity = entity
        scope = "FROM \(SQLName.quoted(entity.table)) WHERE Z_ENT = \(entity.number)"
    }

    // MARK: - Rules on one row

    /// A row whose `column` is NULL.
    package static func required(_ column: String) -> RowRule {
        RowRule(condition: "\(SQLName.quoted(column)) IS NULL", arguments: [], measured: nil)
    }

    /// A row whose `column` is not NULL and measures less than `minimum`.
    package static func below(_ minimum: Value, column: String, measure: Measure) -> RowRule {
        bound(column, measure, "<", minimum)
    }

    /// A row whose `column` is not NULL and measures more than `maximum`.
    package static func above(_ maximum: Value, column: String, measure: Measure) -> RowRule {
        bound(column, measure, ">", maximum)
    }

    private static func bound(_ column: String, _ measure: Measure, _ comparison: String, _ value: Value) -> RowRule {
        let quoted = SQLName.quoted(column)
        let measured = measure == .length ? "length(\(quoted))" : quoted
        return RowRule(condition: "\(quoted) IS NOT NULL AND \(measured) \(comparison) ?", arguments: [value], measured: measured)
    }

    /// A range of primary keys: those above `above` (all when nil) and up to `through` (all when nil).
    package struct KeyRange: Sendable, Hashable {
        package let above: Int64?
        package let through: Int64?
    }

    /// `pieces` ranges of `table`'s primary keys, together all of them, each about as wide, cut by its
    /// largest key (one look-up); one range when the table is empty.
    package static func keyRanges(of table: String, pieces: Int, in database: Database) throws(StoreError) -> [KeyRange] {
        guard pieces > 1, case .int(let largest)? = try database.scalar("SELECT MAX(Z_PK) FROM \(SQLName.quoted(table))"), largest > pieces
        else { return [KeyRange(above: nil, through: nil)] }
        let cuts = (1..<pieces).map { largest / Int64(pieces) * Int64($0) }
        return (0..<pieces).map { KeyRange(above: $0 == 0 ? nil : cuts[$0 - 1], through: $0 == pieces - 1 ? nil : cuts[$0]) }
    }

    /// One row of `table` that breaks any of `rules`, each a rule of the entity numbered beside it,
    /// if there is one, among the keys of `range`: one scan for all the entities a table holds
    /// (`SELECT 1 … LIMIT 1`). When the rules are of every entity the table holds (`wholeTable`), the
    /// table is read in key order rather than through its `Z_ENT` index: every row is read either way,
    /// and a scan reads each page once (an index on `Z_ENT` would gather the keys of several entities
    /// first, then read the rows one by one).
    package static func anyRowBreaking(
        in table: String, _ rules: ArraySlice<(entity: Int32, rule: RowRule)>, range: KeyRange = KeyRange(above: nil, through: nil),
        wholeTable: Bool = false
    ) -> Query {
        var terms: [String] = []
        var arguments: [Value] = []
        var rest = rules
        while let entity = rest.first?.entity {
            let same = rest.prefix { $0.entity == entity }
            terms.append("Z_ENT = \(entity) AND \(SQLTerms.joined(same.map(\.rule.condition), by: "OR"))")
            arguments += same.flatMap(\.rule.arguments)
            rest = rest.dropFirst(same.count)
        }
        var sql = "SELECT 1 FROM \(SQLName.quoted(table))\(wholeTable ? " NOT INDEXED" : "") WHERE \(SQLTerms.joined(terms, by: "OR"))"
        if let above = range.above {
            sql += " AND Z_PK > ?"
            arguments.append(.int(above))
        }
        if let through = range.through {
            sql += " AND Z_PK <= ?"
            arguments.append(.int(through))
        }
        return Query(sql: sql + " LIMIT 1", arguments: arguments)
    }

    /// The rows that break `rule`: `Z_PK`, then the value measured when the rule measures one.
    package func rowsBreaking(_ rule: RowRule) -> Query {
        Query(sql: "SELECT Z_PK\(rule.measured.map { ", \($0)" } ?? "") \(scope) AND \(rule.condition)", arguments: rule.arguments)
    }

    // MARK: - Relationships

    /// The objects whose to-one `toOne` points at an object of `target` (of one of the entities
    /// `targetNumbers`) whose inverse one-to-one `inverse` does not point back: `Z_PK`, then the
    /// inverse's key.
    package func oneToOneNotPointingBack(_ toOne: ToOneColumn, target: EntityLayout, targetNumbers: [Int32], inverse: ToOneColumn) -> Query {
        let inverseColumn = SQLName.quoted(inverse.column)
        let numbers = targetNumbers.map { String($0) }.joined(separator: ", ")
        return Query(
            sql: "SELECT o.Z_PK, d.\(inverseColumn) FROM \(SQLName.quoted(entity.table)) o "
                + "JOIN \(SQLName.quoted(target.table)) d ON d.Z_PK = o.\(SQLName.quoted(toOne.column)) AND d.Z_ENT IN (\(numbers)) "
                + "WHERE o.Z_ENT = \(entity.number) AND d.\(inverseColumn) IS NOT o.Z_PK",
            arguments: [])
    }

    /// The objects whose to-many `toMany` holds fewer than `minimum` or more than `maximum` objects (a
    /// bound of 0 is none; with `allowingEmpty`, an optional relationship's, none at all is not fewer):
    /// `Z_PK`, then the count.
    package func countOutOfBounds(_ toMany: ToManyLayout, minimum: Int, maximum: Int, allowingEmpty: Bool = false) -> Query {
        let counted: String
        switch toMany.storage {
        case .destinationColumn(let table, let column, _, _):
            counted = "(SELECT COUNT(*) FROM \(SQLName.quoted(table)) d WHERE d.\(SQLName.quoted(column)) = o.Z_PK)"
        case .joinTable(let table, let sourceColumn, _, _):
            counted = "(SELECT COUNT(*) FROM \(SQLName.quoted(table)) j WHERE j.\(SQLName.quoted(sourceColumn)) = o.Z_PK)"
        }
        var conditions: [String] = []
        if minimum > 0 { conditions.append(allowingEmpty ? "(n > 0 AND n < \(minimum))" : "n < \(minimum)") }
        if maximum > 0 { conditions.append("n > \(maximum)") }
        return Query(
            sql: "SELECT Z_PK, n FROM (SELECT o.Z_PK AS Z_PK, \(counted) AS n FROM \(SQLName.quoted(entity.table)) o WHERE o.Z_ENT = \(entity.number)) WHERE \(conditions.joined(separator: " OR "))",
            arguments: [])
    }

    // MARK: - Uniqueness

    /// The objects of `table` that already hold `values` in `columns` (as a unique index compares them:
    /// a NULL never matches), up to `limit`: `Z_PK`, then `Z_ENT`. What a failed insert collided with.
    ///
    /// ```swift
    /// let holders = EngineValidationQueries.holders(of: [.string("dup")], in: ["ZLABEL"], table: "ZROOM")
    /// try holders.forEachRow(in: destination) { print($0.int64(at: 0)) }
    /// ```
    package static func holders(of values: [Value], in columns: [String], table: String, limit: Int = 5) -> Query {
        let conditions = columns.map { "\(SQLName.quoted($0)) = ?" }.joined(separator: " AND ")
        return Query(sql: "SELECT Z_PK, Z_ENT FROM \(SQLName.quoted(table)) WHERE \(conditions) ORDER BY Z_PK LIMIT \(limit)", arguments: values)
    }

    // MARK: - Values checked in Swift

    /// The rows whose `column` is not NULL: `Z_PK`, then the value.
    package func values(of column: String) -> Query {
        let quoted = SQLName.quoted(column)
        return Query(sql: "SELECT Z_PK, \(quoted) \(scope) AND \(quoted) IS NOT NULL", arguments: [])
    }
}
