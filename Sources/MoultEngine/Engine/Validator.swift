import Foundation
package import MoultModel
package import MoultStore

/// Stage 3: checks the destination against the destination model's rules, in SQL over whole tables,
/// so that memory stays flat; rules SQLite cannot compute the same way (regular expressions) stream
/// the column and check each value in Swift. The rules on one row of every entity a table holds are
/// tried together first, in one scan of the table (in four ranges of keys on two connections when
/// there is a ``second``); only a table where a row breaks one is scanned rule by rule, to name the
/// failures.
///
/// Rules: non-optional attributes and to-one relationships are set; numbers, dates and string lengths
/// are within their bounds; strings match their regular expression; to-many relationships have
/// between their minimum and maximum count (optional or not: a to-many without a minimum count may be
/// empty); a one-to-one's object points back.
package struct Validator {
    let model: ObjectModel
    let layout: StoreLayout
    let database: Database
    /// Stop at the first failure.
    let stopAtFirst: Bool
    /// Called with each failure found.
    let report: (ValidationFailure) -> Void
    /// The rules checked: those of the properties for which it returns true (entity, property), or all
    /// when nil.
    var only: ((_ entity: String, _ property: String) -> Bool)? = nil
    /// Whether a one-to-one's object must point back (`moult verify` checks inverses on its own).
    package var checksOneToOnes = true
    /// A second connection to the same store that reads what `database` has committed, when there is
    /// one: two tables are then scanned for rules at a time, one on each connection, on two threads.
    /// The failures and their order are the same.
    package var second: Database? = nil

    package init(
        model: ObjectModel, layout: StoreLayout, database: Database, stopAtFirst: Bool, report: @escaping (ValidationFailure) -> Void,
        only: ((_ entity: String, _ property: String) -> Bool)? = nil, checksOneToOnes: Bool = true
    ) {
        self.model = model
        self.layout = layout
        self.database = database
        self.stopAtFirst = stopAtFirst
        self.report = report
        self.only = only
        self.checksOneToOnes = checksOneToOnes
    }

    private struct Stop: Error {}

    /// Checks every concrete entity; returns how many failures were found.
    @discardableResult
    package func run() throws -> Int {
        var count = 0
        let reportAndCount: (ValidationFailure) throws -> Void = { failure in
            count += 1
            report(failure)
            if stopAtFirst { throw Stop() }
        }
        let entities = layout.entities.filter { !$0.isAbstract }
        let rules = entities.map { checks($0, EngineValidationQueries(entity: $0)) }
        let tablesThatMayFail = try tablesWithRowsBreaking(entities, rules)
        do {
            for (entity, checks) in zip(entities, rules) {
                try check(entity, checks, rowsMayFail: tablesThatMayFail.contains(entity.table), reportAndCount)
            }
        } catch is Stop {}
        return count
    }

    /// The tables where a row may break a rule on one row (``Check/row(_:property:rule:)``): the
    /// rules of all the entities a table holds are tried together (a scan per 500 rules, within
    /// SQLite's limit on arguments), so that when no row breaks any of them (the usual case) no
    /// rule is scanned on its own, and a table is scanned once whatever the number of its entities.
    private func tablesWithRowsBreaking(_ entities: [EntityLayout], _ checks: [[Check]]) throws -> Set<String> {
        var tables: [String] = []
        var rules: [String: [(entity: Int32, rule: EngineValidationQueries.RowRule)]] = [:]
        for (entity, checks) in zip(entities, checks) {
            for case .row(let rule, _, _) in checks {
                if rules[entity.table] == nil { tables.append(entity.table) }
                rules[entity.table, default: []].append((entity.number, rule))
            }
        }
        // On two threads, each table is cut in four ranges of keys, so that the two stay busy whatever
        // the tables' sizes.
        var scans: [(table: String, queries: [EngineValidationQueries.Query])] = []
        for table in tables {
            let all = rules[table] ?? []
            let checked = Set(all.map(\.entity))
            let wholeTable = layout.entities.allSatisfy { $0.table != table || $0.isAbstract || checked.contains($0.number) }
            for range in try EngineValidationQueries.keyRanges(of: table, pieces: second == nil ? 1 : 4, in: database) {
                let queries = stride(from: 0, to: all.count, by: 500).map {
                    EngineValidationQueries.anyRowBreaking(in: table, all[$0..<min($0 + 500, all.count)], range: range, wholeTable: wholeTable)
                }
                scans.append((table, queries))
            }
        }
        let queries = scans.map(\.queries)
        let work: @Sendable (Int, Database) throws -> Bool = { index, database in
            for query in queries[index] where try query.hasRow(in: database) { return true }
            return false
        }
        let breaking =
            if let second, scans.count >= 2 {
                try TwoConnections(database, second).map(count: scans.count, work)
            } else {
                try scans.indices.map { try work($0, database) }
            }
        return Set(zip(scans, breaking).filter(\.1).map(\.0.table))
    }

    /// One rule of an entity, in the order its failures are reported.
    private enum Check {
        /// A rule on one row: its failures are `Z_PK`[, the value measured].
        case row(EngineValidationQueries.RowRule, property: String, rule: String)
        case pattern(String, AttributeColumn)
        /// A query whose failures are `Z_PK`[, a value].
        case query(EngineValidationQueries.Query, property: String, rule: String)
        /// A query whose failures are `Z_PK`, a count out of bounds.
        case count(EngineValidationQueries.Query, property: String, minimum: Int, maximum: Int)
    }

    /// Checks an entity: its rules on one row only when its table may break one (`rowsMayFail`).
    private func check(_ entity: EntityLayout, _ checks: [Check], rowsMayFail: Bool, _ report: (ValidationFailure) throws -> Void) throws {
        let queries = EngineValidationQueries(entity: entity)
        for check in checks {
            switch check {
            case .row(let rowRule, let property, let rule):
                guard rowsMayFail else { continue }
                try failures(queries.rowsBreaking(rowRule), entity, property, rule, report)
            case .pattern(let pattern, let column):
                try checkPattern(pattern, column, entity, queries, report)
            case .query(let query, let property, let rule):
                try failures(query, entity, property, rule, report)
            case .count(let query, let property, let minimum, let maximum):
                try query.forEachRow(in: database) { statement in
                    let n = statement.int64(at: 1)
                    let rule = n < minimum ? "has \(n) objects, fewer than the minimum \(minimum)" : "has \(n) objects, more than the maximum \(maximum)"
                    try report(ValidationFailure(entity: entity.name, primaryKey: statement.int64(at: 0), property: property, rule: rule))
                }
            }
        }
    }

    /// The rules of an entity: attribute by attribute, then its to-one and to-many relationships.
    private func checks(_ entity: EntityLayout, _ queries: EngineValidationQueries) -> [Check] {
        var checks: [Check] = []
        for column in entity.attributes {
            guard let attribute = model.attribute(named: column.name, of: entity.name), !attribute.isTransient,
                only?(entity.name, column.name) ?? true
            else { continue }
            if !attribute.isOptional {
                checks.append(.row(EngineValidationQueries.required(column.column), property: column.name, rule: "required value is nil"))
            }
            checks += bounds(attribute, column)
            if let pattern = attribute.regularExpressionString, !pattern.isEmpty,
                column.type == .string || column.type == .uri
            {
                checks.append(.pattern(pattern, column))
            }
        }
        for toOne in entity.toOneRelationships {
            guard let relationship = model.relationship(named: toOne.name, of: entity.name), only?(entity.name, toOne.name) ?? true else { continue }
            if !relationship.isOptional {
                checks.append(.row(EngineValidationQueries.required(toOne.column), property: toOne.name, rule: "required relationship is nil"))
            }
            // A one-to-one: the object it points at points back (a to-many made a one-to-one can
            // leave several objects naming one that names only one of them).
            if checksOneToOnes, let inverse = model.inverse(of: relationship), !inverse.isToMany, let target = layout.entity(named: toOne.destination),
                let inverseColumn = target.toOne(named: inverse.name)
            {
                let numbers = layout.entities.filter { model.entity($0.name, isKindOf: target.name) }.map(\.number)
                checks.append(
                    .query(
                        queries.oneToOneNotPointingBack(toOne, target: target, targetNumbers: numbers, inverse: inverseColumn),
                        property: toOne.name, rule: "its object's inverse \(inverse.name) does not point back (a one-to-one)"))
            }
        }
        for toMany in entity.toManyRelationships {
            guard let relationship = model.relationship(named: toMany.name, of: entity.name), only?(entity.name, toMany.name) ?? true else { continue }
            // A non-optional to-many may be empty: only its minimum count bounds it below, as Core Data
            // validates it (a to-many without `minCount` has none). An optional one may be empty whatever
            // its minimum ("optional relationships may have zero objects", NSRelationshipDescription).
            let minimum = relationship.minCount
            let maximum = relationship.maxCount
            guard minimum > 0 || maximum > 0 else { continue }
            checks.append(
                .count(
                    queries.countOutOfBounds(toMany, minimum: minimum, maximum: maximum, allowingEmpty: relationship.isOptional), property: toMany.name,
                    minimum: minimum, maximum: maximum))
        }
        return checks
    }

    /// An attribute's bounds, as rules on one row.
    private func bounds(_ attribute: AttributeDescription, _ column: AttributeColumn) -> [Check] {
        let type = attribute.attributeType
        var minimum: Value = .null
        var maximum: Value = .null
        var measure = EngineValidationQueries.Measure.value
        var what = "value"
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .decimal:
            minimum = attribute.minValueString.map { DefaultValues.parse($0, as: type) } ?? .null
            maximum = attribute.maxValueString.map { DefaultValues.parse($0, as: type) } ?? .null
        case .string, .uri:
            // Bounds of a string are on its length, in characters.
            minimum = attribute.minValueString.map { DefaultValues.parse($0, as: .integer64) } ?? .null
            maximum = attribute.maxValueString.map { DefaultValues.parse($0, as: .integer64) } ?? .null
            measure = .length
            what = "length"
        case .date:
            minimum = attribute.minDateTimeInterval.map(Value.double) ?? .null
            maximum = attribute.maxDateTimeInterval.map(Value.double) ?? .null
        case .binary:
            minimum = attribute.minValueString.map { DefaultValues.parse($0, as: .integer64) } ?? .null
            maximum = attribute.maxValueString.map { DefaultValues.parse($0, as: .integer64) } ?? .null
            measure = .length
            what = "length"
        default:
            return []
        }
        var checks: [Check] = []
        if !minimum.isNull {
            checks.append(
                .row(
                    EngineValidationQueries.below(minimum, column: column.column, measure: measure), property: column.name,
                    rule: "\(what) is below the minimum \(minimum)"))
        }
        if !maximum.isNull {
            checks.append(
                .row(
                    EngineValidationQueries.above(maximum, column: column.column, measure: measure), property: column.name,
                    rule: "\(what) is above the maximum \(maximum)"))
        }
        return checks
    }

    private func checkPattern(
        _ pattern: String, _ column: AttributeColumn, _ entity: EntityLayout, _ queries: EngineValidationQueries,
        _ report: (ValidationFailure) throws -> Void
    ) throws {
        let expression: NSRegularExpression
        do {
            expression = try NSRegularExpression(pattern: "^(?:\(pattern))$")
        } catch {
            throw MigrationError(
                .invalidMapping, "the regular expression \(pattern) of '\(entity.name).\(column.name)' does not compile",
                entity: entity.name)
        }
        try queries.values(of: column.column).forEachRow(in: database) { statement in
            let text = statement.string(at: 1) ?? ""
            let range = NSRange(text.startIndex..., in: text)
            if expression.firstMatch(in: text, range: range) == nil {
                try report(
                    ValidationFailure(
                        entity: entity.name, primaryKey: statement.int64(at: 0), property: column.name,
                        rule: "\"\(text)\" does not match the regular expression \(pattern)"))
            }
        }
    }

    private func failures(
        _ query: EngineValidationQueries.Query, _ entity: EntityLayout, _ property: String, _ rule: String,
        _ report: (ValidationFailure) throws -> Void
    ) throws {
        try query.forEachRow(in: database) { statement in
            var detail = rule
            if statement.columnCount > 1 { detail = "\(statement.value(at: 1)): \(rule)" }
            try report(ValidationFailure(entity: entity.name, primaryKey: statement.int64(at: 0), property: property, rule: detail))
        }
    }
}
