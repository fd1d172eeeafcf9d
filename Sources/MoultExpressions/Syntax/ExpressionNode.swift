public import MoultModel

/// A parsed value expression: the text form of Core Data's `NSExpression`.
///
/// Parse one with ``init(parsing:)``, print it back with `description` (canonical text), and compile
/// it with ``ExpressionCompiler`` to evaluate it on many objects.
///
/// ```swift
/// let celsius = try ExpressionNode(parsing: "($source.temperature - 32.0) / 1.8")
/// print(celsius)   // ($source.temperature - 32.0) / 1.8
/// ```
public indirect enum ExpressionNode: Sendable, Hashable {
    /// A literal: number, string, boolean, `nil`, or a date from `CAST(…, "NSDate")` of a constant.
    case constant(Value)
    /// `{a, b, c}`: an array of expressions.
    case array([ExpressionNode])
    /// `$name`.
    case variable(String)
    /// `SELF`: the object the expression is evaluated on.
    case evaluatedObject
    /// A key path on a base: `age` (base `SELF`), `$source.owner.name`, `trades.@sum.amount`.
    /// Components are keys, or collection operators written with their `@`.
    case keyPath(base: ExpressionNode, components: [String])
    /// `x[0]`, `x[FIRST]`, `x[LAST]`, `x[SIZE]`.
    case subscripted(ExpressionNode, index: SubscriptIndex)
    /// Unary minus.
    case negate(ExpressionNode)
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`.
    case arithmetic(ArithmeticOperator, ExpressionNode, ExpressionNode)
    /// A function call. With a receiver: `FUNCTION(receiver, "selector", args…)`; without:
    /// the built-in form `sum:({1, 2})` / `now()`.
    case function(receiver: ExpressionNode?, selector: String, arguments: [ExpressionNode])
    /// `TERNARY(condition, a, b)`.
    case ternary(PredicateNode, ExpressionNode, ExpressionNode)
    /// `CAST(x, "NSNumber" | "NSString" | "NSDate" | …)`.
    case cast(ExpressionNode, type: String)

    /// The index of a subscript.
    public enum SubscriptIndex: Sendable, Hashable {
        case index(ExpressionNode)
        case first
        case last
        case size
    }
}

/// The arithmetic operators, in Core Data's built-in function names.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case power = "**"

    /// The `NSExpression` function this operator stands for (`add:to:` …).
    public var selector: String {
        switch self {
        case .add: "add:to:"
        case .subtract: "from:subtract:"
        case .multiply: "multiply:by:"
        case .divide: "divide:by:"
        case .power: "raise:toPower:"
        }
    }

    /// Binding strength: higher binds tighter.
    var precedence: Int {
        switch self {
        case .add, .subtract: 1
        case .multiply, .divide: 2
        case .power: 3
        }
    }
}

/// A parsed predicate: the text form of Core Data's `NSPredicate`.
///
/// ```swift
/// let filter = try PredicateNode(parsing: "street != nil OR state != nil")
/// ```
public indirect enum PredicateNode: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// A comparison of two expressions.
    case comparison(ComparisonNode)
    /// `a AND b AND …`.
    case and([PredicateNode])
    /// `a OR b OR …`.
    case or([PredicateNode])
    /// `NOT a`.
    case not(PredicateNode)
}

/// A comparison predicate: `[modifier] lhs operator[options] rhs`.
public struct ComparisonNode: Sendable, Hashable {
    public var modifier: ComparisonModifier
    public var lhs: ExpressionNode
    public var op: ComparisonOperator
    public var options: StringComparisonOptions
    public var rhs: ExpressionNode

    public init(
        _ lhs: ExpressionNode, _ op: ComparisonOperator, _ rhs: ExpressionNode,
        modifier: ComparisonModifier = .direct, options: StringComparisonOptions = []
    ) {
        self.modifier = modifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
    }
}

/// How the left side of a comparison is applied: directly, or to each element of a collection.
public enum ComparisonModifier: String, Sendable, Hashable {
    case direct = ""
    /// `ANY` (also written `SOME`): true when some element matches.
    case any = "ANY"
    /// `ALL`: true when every element matches (and for an empty collection).
    case all = "ALL"
    /// `NONE`: true when no element matches.
    case none = "NONE"
}

/// The comparison operators.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case between = "BETWEEN"
    case `in` = "IN"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case like = "LIKE"
    case matches = "MATCHES"
}

/// The `[c]`, `[d]`, `[cd]` options of a string comparison.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`.
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`.
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}
