import Foundation
public import MoultModel

/// A column of an entity's table, as the pushdown compiler needs it.
public struct SQLColumn: Sendable, Hashable {
    /// The column's name, e.g. `ZAGE`.
    public var name: String
    /// The attribute's type: it says how the column stores values (INTEGER, REAL, VARCHAR, TIMESTAMP …).
    public var type: AttributeType
    /// For a to-one relationship (``toOne(name:entity:)``): where its object's `Z_ENT` is.
    public var objectEntity: ObjectEntity?

    /// Where the `Z_ENT` of a to-one's object is: a companion column (a destination with
    /// sub-entities), or the one entity its objects can be of.
    public enum ObjectEntity: Sendable, Hashable {
        case column(String)
        case fixed(Int32)
    }

    public init(name: String, type: AttributeType) {
        self.name = name
        self.type = type
    }

    /// The column of a to-one relationship, holding its object's `Z_PK`: it compares with an object
    /// (`owner == %@`, an object id constant) or with nil, and with nothing else.
    ///
    /// ```swift
    /// SQLColumn.toOne(name: "ZOWNER", entity: .fixed(3))
    /// ```
    public static func toOne(name: String, entity: ObjectEntity) -> SQLColumn {
        var column = SQLColumn(name: name, type: .objectID)
        column.objectEntity = entity
        return column
    }
}

/// A parameterised piece of SQLite: `sql` with one `?` per element of `arguments`, in order.
///
/// Arguments are plain values to bind: integers (Booleans as 0/1), doubles (dates as seconds since
/// 2001-01-01, as Core Data stores them) and strings.
public struct SQLFragment: Sendable, Hashable, CustomStringConvertible {
    public var sql: String
    public var arguments: [Value]

    public init(sql: String, arguments: [Value] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    public var description: String { arguments.isEmpty ? sql : "\(sql) -- \(arguments)" }
}

/// A value expression pushed down to SQL.
public struct SQLValueFragment: Sendable, Hashable {
    /// The value, computed by SQLite exactly as the Swift evaluator would, for the rows where
    /// ``fallbackCondition`` does not hold. Values come back as SQLite stores them (Booleans as 0/1,
    /// dates as seconds since 2001): convert them with the destination attribute's type.
    public var value: SQLFragment
    /// Rows where this holds must be evaluated in Swift instead (e.g. `uppercase:` of a string with
    /// non-ASCII characters, which SQLite's `upper()` leaves alone); nil when SQL is exact for every row.
    public var fallbackCondition: SQLFragment?
}

/// Compiles predicates and value expressions into SQLite over an entity's columns, or declines.
///
/// It accepts only what SQLite computes exactly as ``ExpressionCompiler``'s evaluator does, with
/// Core Data's nil rules (`x == nil` → `IS NULL`, `x != 5` true for nil …) and otherwise returns nil:
/// the caller then evaluates in Swift. See the Syntax article for the table of what pushes down.
///
/// ```swift
/// let pushdown = SQLPushdown { key in key == "age" ? SQLColumn(name: "ZAGE", type: .integer16) : nil }
/// if let filter = pushdown.predicate(try PredicateNode(parsing: "age >= 18")) {
///     // filter.sql == "\"ZAGE\" >= ?", filter.arguments == [18]
/// }
/// ```
public struct SQLPushdown: Sendable {
    /// Gives the column of a key of the evaluated object, or nil when it has none (e.g. a to-many
    /// relationship, a transient attribute).
    public var columns: @Sendable (String) -> SQLColumn?

    public init(columns: @escaping @Sendable (String) -> SQLColumn?) {
        self.columns = columns
    }

    /// A compiler over a fixed map of keys to columns.
    public init(columns: [String: SQLColumn]) {
        self.columns = { columns[$0] }
    }

    // MARK: - Entry points

    /// The predicate as a SQLite condition for a `WHERE` clause (true exactly for the rows where the
    /// predicate holds; for the others the condition is 0 or NULL), or nil when it cannot be pushed down
    /// exactly.
    public func predicate(_ node: PredicateNode) -> SQLFragment? {
        guard let condition = try? condition(node) else { return nil }
        return SQLFragment(sql: condition.sql, arguments: condition.arguments)
    }

    /// The value expression as a SQLite expression, or nil when it cannot be pushed down exactly.
    public func expression(_ node: ExpressionNode) -> SQLValueFragment? {
        if case .function(nil, let selector, let arguments) = node, selector == "uppercase:" || selector == "lowercase:",
            arguments.count == 1, let text = try? value(arguments[0]), text.kind == .text
        {
            // SQLite's upper()/lower() map ASCII letters only: exact for ASCII strings.
            let function = selector == "uppercase:" ? "upper" : "lower"
            return SQLValueFragment(
                value: SQLFragment(sql: "\(function)(\(text.sql))", arguments: text.arguments),
                fallbackCondition: SQLFragment(
                    sql: "(\(text.sql)) GLOB '*[^' || char(1) || '-' || char(127) || ']*'", arguments: text.arguments))
        }
        guard let typed = try? value(node), typed.kind != .null || node == .constant(.null) else { return nil }
        return SQLValueFragment(value: SQLFragment(sql: typed.sql, arguments: typed.arguments), fallbackCondition: nil)
    }

    /// The value expression as a SQLite expression whose value is always a string or NULL (for a String
    /// attribute: stored as the Swift evaluator's result would be), or nil when it cannot be pushed down
    /// exactly or may give a value of another kind.
    public func textExpression(_ node: ExpressionNode) -> SQLFragment? {
        guard let typed = try? value(node), typed.kind == .text else { return nil }
        return SQLFragment(sql: typed.sql, arguments: typed.arguments)
    }

    // MARK: - Typed SQL

    /// What kind of value a SQL expression has; only kinds SQLite and Swift order the same way.
    enum Kind: Equatable {
        case number
        case text
        case date
        case null
    }

    struct Typed {
        var sql: String
        var arguments: [Value]
        var kind: Kind
        /// The constant, when the expression is one.
        var constant: Value?
        /// Whether it may be NULL (a column, or arithmetic on one).
        var nullable: Bool
    }

    /// A condition; `nullable` says it may be NULL where the predicate is false.
    struct Condition {
        var sql: String
        var arguments: [Value]
        var nullable: Bool
    }

    struct Decline: Error {}

    // MARK: - Predicates

    func condition(_ node: PredicateNode) throws(Decline) -> Condition {
        switch node {
        case .constant(let flag):
            return Condition(sql: flag ? "1" : "0", arguments: [], nullable: false)
        case .not(let operand):
            let inner = try condition(operand)
            let sql = inner.nullable ? "NOT coalesce(\(inner.sql), 0)" : "NOT (\(inner.sql))"
            return Condition(sql: sql, arguments: inner.arguments, nullable: false)
        case .and(let operands), .or(let operands):
            let joiner = if case .and = node { " AND " } else { " OR " }
            var parts: [String] = []
            var arguments: [Value] = []
            var nullable = false
            for operand in operands {
                let part = try condition(operand)
                parts.append("(\(part.sql))")
                arguments += part.arguments
                nullable = nullable || part.nullable
            }
            // NULL AND/OR x is true exactly when false AND/OR x is: NULL stands for false throughout.
            return Condition(sql: parts.joined(separator: joiner), arguments: arguments, nullable: nullable)
        case .comparison(let comparison):
            return try self.comparison(comparison)
        }
    }

    private func comparison(_ node: ComparisonNode) throws(Decline) -> Condition {
        guard node.modifier == .direct, node.options.isEmpty else { throw Decline() }
        switch node.op {
        case .equal, .notEqual:
            if let objects = try objectComparison(node) { return objects }
            let lhs = try value(node.lhs)
            let rhs = try value(node.rhs)
            let negated = node.op == .notEqual
            if lhs.kind == .null || rhs.kind == .null {
                let other = lhs.kind == .null ? rhs : lhs
                if other.kind == .null { return Condition(sql: negated ? "0" : "1", arguments: [], nullable: false) }
                return Condition(sql: "(\(other.sql)) \(negated ? "IS NOT NULL" : "IS NULL")", arguments: other.arguments, nullable: false)
            }
            guard lhs.kind == rhs.kind else { throw Decline() }
            // IS / IS NOT: nil equals nil, and never NULL, as Swift's ==.
            return Condition(
                sql: "\(lhs.sql) \(negated ? "IS NOT" : "IS") \(rhs.sql)", arguments: lhs.arguments + rhs.arguments,
                nullable: false)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let lhs = try value(node.lhs)
            let rhs = try value(node.rhs)
            if lhs.kind == .null || rhs.kind == .null { return Condition(sql: "0", arguments: [], nullable: false) }
            guard lhs.kind == rhs.kind else { throw Decline() }
            return Condition(
                sql: "\(lhs.sql) \(node.op.rawValue) \(rhs.sql)", arguments: lhs.arguments + rhs.arguments,
                nullable: lhs.nullable || rhs.nullable)
        case .between:
            let lhs = try value(node.lhs)
            guard case .array(let bounds) = node.rhs, bounds.count == 2 else { throw Decline() }
            let low = try value(bounds[0])
            let high = try value(bounds[1])
            if lhs.kind == .null || low.kind == .null || high.kind == .null {
                return Condition(sql: "0", arguments: [], nullable: false)
            }
            guard lhs.kind == low.kind, lhs.kind == high.kind else { throw Decline() }
            return Condition(
                sql: "\(lhs.sql) BETWEEN \(low.sql) AND \(high.sql)",
                arguments: lhs.arguments + low.arguments + high.arguments,
                nullable: lhs.nullable || low.nullable || high.nullable)
        case .in:
            return try membership(node.lhs, in: node.rhs)
        case .contains:
            if case .array = node.lhs { return try membership(node.rhs, in: node.lhs) }
            return try substring(node)
        case .beginsWith, .endsWith:
            return try substring(node)
        case .like:
            let lhs = try value(node.lhs)
            guard case .constant(.string(let pattern)) = node.rhs, !pattern.unicodeScalars.contains("\0") else { throw Decline() }
            if lhs.kind == .null { return Condition(sql: "0", arguments: [], nullable: false) }
            guard lhs.kind == .text else { throw Decline() }
            return Condition(
                sql: "\(lhs.sql) GLOB ?", arguments: lhs.arguments + [.string(SQLPushdown.glob(fromLike: pattern))],
                nullable: lhs.nullable)
        case .matches:
            throw Decline()
        }
    }

    /// A to-one compared with an object or nil (`owner == %@`), as the evaluator compares object ids:
    /// the key and the entity both; nil when neither side is a to-one. A to-one compared with anything
    /// else declines.
    private func objectComparison(_ node: ComparisonNode) throws(Decline) -> Condition? {
        func toOne(_ side: ExpressionNode) -> SQLColumn? {
            guard case .keyPath(let base, let components) = side, base == .evaluatedObject || base == .variable("source"),
                components.count == 1, let column = columns(components[0]), column.objectEntity != nil
            else { return nil }
            return column
        }
        let (column, other): (SQLColumn, ExpressionNode)
        if let found = toOne(node.lhs) {
            (column, other) = (found, node.rhs)
        } else if let found = toOne(node.rhs) {
            (column, other) = (found, node.lhs)
        } else {
            return nil
        }
        let negated = node.op == .notEqual
        let quoted = Self.quoted(column.name)
        switch (other, column.objectEntity) {
        case (.constant(.null), _):
            return Condition(sql: "\(quoted) \(negated ? "IS NOT NULL" : "IS NULL")", arguments: [], nullable: false)
        case (.constant(.object(let id)), .fixed(let entity)?):
            guard id.entity == entity else { return Condition(sql: negated ? "1" : "0", arguments: [], nullable: false) }
            return Condition(sql: "\(quoted) \(negated ? "IS NOT" : "IS") ?", arguments: [.int(id.primaryKey)], nullable: false)
        case (.constant(.object(let id)), .column(let entityColumn)?):
            let both = "(\(quoted) IS ? AND \(Self.quoted(entityColumn)) IS ?)"
            return Condition(sql: negated ? "NOT \(both)" : both, arguments: [.int(id.primaryKey), .int(Int64(id.entity))], nullable: false)
        default:
            throw Decline()
        }
    }

    private static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// `x IN {constants}`: `x IN (?, ?)`.
    private func membership(_ element: ExpressionNode, in collection: ExpressionNode) throws(Decline) -> Condition {
        guard case .array(let members) = collection else { throw Decline() }
        let lhs = try value(element)
        guard lhs.kind != .null else { throw Decline() }
        guard !members.isEmpty else { return Condition(sql: "0", arguments: [], nullable: false) }
        var placeholders: [String] = []
        var arguments = lhs.arguments
        for member in members {
            let typed = try value(member)
            guard typed.constant != nil, typed.kind == lhs.kind else { throw Decline() }
            placeholders.append(typed.sql)
            arguments += typed.arguments
        }
        return Condition(sql: "\(lhs.sql) IN (\(placeholders.joined(separator: ", ")))", arguments: arguments, nullable: lhs.nullable)
    }

    /// CONTAINS, BEGINSWITH, ENDSWITH with a constant needle.
    private func substring(_ node: ComparisonNode) throws(Decline) -> Condition {
        let lhs = try value(node.lhs)
        guard case .constant(let constant) = node.rhs else { throw Decline() }
        if lhs.kind == .null || constant.isNull { return Condition(sql: "0", arguments: [], nullable: false) }
        guard lhs.kind == .text, case .string(let needle) = constant, !needle.unicodeScalars.contains("\0") else { throw Decline() }
        // An empty needle matches nothing in Swift (as in NSString); SQLite would say it matches.
        if needle.isEmpty { return Condition(sql: "0", arguments: [], nullable: false) }
        let count = needle.unicodeScalars.count
        let sql = switch node.op {
        case .beginsWith: "substr(\(lhs.sql), 1, \(count)) = ?"
        case .endsWith: "substr(\(lhs.sql), -\(count)) = ?"
        default: "instr(\(lhs.sql), ?) > 0"
        }
        return Condition(sql: sql, arguments: lhs.arguments + [.string(needle)], nullable: lhs.nullable)
    }

    /// A LIKE pattern (`*`, `?`, `\` escapes) as a GLOB pattern (`[` classes quote the specials).
    static func glob(fromLike pattern: String) -> String {
        var result = ""
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                switch scalar {
                case "*", "?", "[": result += "[\(scalar)]"
                default: result.unicodeScalars.append(scalar)
                }
                escaped = false
                continue
            }
            switch scalar {
            case "\\": escaped = true
            case "[": result += "[[]"
            default: result.unicodeScalars.append(scalar)
            }
        }
        if escaped { result += "\\" }
        return result
    }

    // MARK: - Values

    func value(_ node: ExpressionNode) throws(Decline) -> Typed {
        switch node {
        case .constant(let constant):
            switch constant {
            case .null: return Typed(sql: "NULL", arguments: [], kind: .null, constant: constant, nullable: true)
            case .bool(let flag): return Typed(sql: "?", arguments: [.int(flag ? 1 : 0)], kind: .number, constant: constant, nullable: false)
            case .int: return Typed(sql: "?", arguments: [constant], kind: .number, constant: constant, nullable: false)
            case .double(let number):
                guard number.isFinite else { throw Decline() }
                return Typed(sql: "?", arguments: [constant], kind: .number, constant: constant, nullable: false)
            case .string(let text):
                guard !text.unicodeScalars.contains("\0") else { throw Decline() }
                return Typed(sql: "?", arguments: [constant], kind: .text, constant: constant, nullable: false)
            case .date(let date):
                let seconds = date.timeIntervalSinceReferenceDate
                guard seconds.isFinite else { throw Decline() }
                return Typed(sql: "?", arguments: [.double(seconds)], kind: .date, constant: constant, nullable: false)
            default: throw Decline()
            }
        case .keyPath(let base, let components):
            guard base == .evaluatedObject || base == .variable("source"), components.count == 1,
                let column = columns(components[0])
            else { throw Decline() }
            let kind: Kind
            switch column.type {
            case .integer16, .integer32, .integer64, .boolean, .double, .float: kind = .number
            case .string: kind = .text
            case .date: kind = .date
            default: throw Decline()
            }
            let quoted = "\"" + column.name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return Typed(sql: quoted, arguments: [], kind: kind, constant: nil, nullable: true)
        case .negate(let operand):
            let inner = try value(operand)
            guard inner.kind == .number else { throw Decline() }
            return Typed(sql: "(- \(inner.sql))", arguments: inner.arguments, kind: .number, constant: nil, nullable: inner.nullable)
        case .arithmetic(let op, let lhs, let rhs):
            return try arithmetic(op, lhs, rhs)
        case .function(nil, let selector, let arguments), .function(.constant(.null), let selector, let arguments):
            let operators: [String: ArithmeticOperator] = [
                "add:to:": .add, "from:subtract:": .subtract, "multiply:by:": .multiply, "divide:by:": .divide,
            ]
            if let op = operators[selector], arguments.count == 2 { return try arithmetic(op, arguments[0], arguments[1]) }
            if selector == "noindex:", arguments.count == 1 { return try value(arguments[0]) }
            throw Decline()
        case .ternary(let condition, let then, let otherwise):
            let test = try self.condition(condition)
            let a = try value(then)
            let b = try value(otherwise)
            guard a.kind == b.kind || a.kind == .null || b.kind == .null else { throw Decline() }
            // CASE takes ELSE when the condition is NULL: the same as Swift's false.
            return Typed(
                sql: "(CASE WHEN \(test.sql) THEN \(a.sql) ELSE \(b.sql) END)", arguments: test.arguments + a.arguments + b.arguments,
                kind: a.kind == .null ? b.kind : a.kind, constant: nil, nullable: true)
        default:
            throw Decline()
        }
    }

    /// Arithmetic with one finite constant operand (so that no NaN can arise: SQLite turns NaN into
    /// NULL), `/` only by a non-zero constant and always as real division, as in Swift.
    private func arithmetic(_ op: ArithmeticOperator, _ lhs: ExpressionNode, _ rhs: ExpressionNode) throws(Decline) -> Typed {
        let left = try value(lhs)
        let right = try value(rhs)
        if left.kind == .null || right.kind == .null {
            return Typed(sql: "NULL", arguments: [], kind: .null, constant: .null, nullable: true)
        }
        guard left.kind == .number, right.kind == .number else { throw Decline() }
        let constant: Value? = right.constant ?? left.constant
        guard let constant, let number = Number(constant) else { throw Decline() }
        let isZero = number.doubleValue == 0
        let sql: String
        switch op {
        case .add, .subtract:
            sql = "(\(left.sql) \(op.rawValue) \(right.sql))"
        case .multiply:
            guard !isZero else { throw Decline() }
            sql = "(\(left.sql) * \(right.sql))"
        case .divide:
            guard right.constant != nil, !isZero, left.constant == nil || right.constant != nil else { throw Decline() }
            sql = "(CAST(\(left.sql) AS REAL) / \(right.sql))"
        case .power:
            throw Decline()
        }
        return Typed(
            sql: sql, arguments: left.arguments + right.arguments, kind: .number, constant: nil,
            nullable: left.nullable || right.nullable)
    }
}
