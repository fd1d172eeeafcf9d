import MoultModel

extension ExpressionCompiler {
    func predicateEvaluator(_ node: PredicateNode) throws(ExpressionError) -> PredicateEvaluator {
        switch node {
        case .constant(let flag):
            return { _ in flag }
        case .not(let operand):
            let inner = try predicateEvaluator(operand)
            return { context in !(try inner(context)) }
        case .and(let operands):
            let parts = try operands.map { (operand) throws(ExpressionError) -> PredicateEvaluator in try predicateEvaluator(operand) }
            if parts.count == 2 {
                let (a, b) = (parts[0], parts[1])
                return { context in try a(context) && b(context) }
            }
            return { context in
                for part in parts where !(try part(context)) { return false }
                return true
            }
        case .or(let operands):
            let parts = try operands.map { (operand) throws(ExpressionError) -> PredicateEvaluator in try predicateEvaluator(operand) }
            if parts.count == 2 {
                let (a, b) = (parts[0], parts[1])
                return { context in try a(context) || b(context) }
            }
            return { context in
                for part in parts where try part(context) { return true }
                return false
            }
        case .comparison(let comparison):
            return try comparisonEvaluator(comparison)
        }
    }

    private func comparisonEvaluator(_ comparison: ComparisonNode) throws(ExpressionError) -> PredicateEvaluator {
        let lhs = try evaluator(comparison.lhs)
        let op = comparison.op
        let options = comparison.options
        // Patterns written as constants are compiled once.
        var like: LikePattern?
        var regex: RegexPattern?
        if case .constant(.string(let pattern)) = comparison.rhs {
            if op == .like { like = LikePattern(pattern, options: options) }
            if op == .matches { regex = try RegexPattern(pattern, options: options) }
        }
        let matcher = Matcher(like: like, regex: regex)
        // The hot case of filters: a key path against a number, e.g. `age >= 18`.
        if comparison.modifier == .direct, options.isEmpty, case .constant(let constant) = comparison.rhs,
            let number = Number(constant), op.isNumericComparable
        {
            if let slot = try directSlot(comparison.lhs) {
                return { context in
                    guard let value = context.object?.value(atSlot: slot) else { throw ExpressionCompiler.noObject }
                    if let a = Number(value) { return op.holds(for: compareNumbers(a, number)) }
                    return try Comparison.test(op, value, constant, options: options, matcher: matcher)
                }
            }
            return { context in
                let value = try lhs(context)
                if let a = Number(value) { return op.holds(for: compareNumbers(a, number)) }
                return try Comparison.test(op, value, constant, options: options, matcher: matcher)
            }
        }
        // Constant needles of BEGINSWITH / ENDSWITH / CONTAINS: compared on the UTF-8 bytes in place.
        if comparison.modifier == .direct, options.isEmpty, case .constant(.string(let needle)) = comparison.rhs,
            op == .beginsWith || op == .endsWith || op == .contains
        {
            let bytes = Array(needle.utf8)
            return { context in
                let value = try lhs(context)
                guard case .string(var haystack) = value else {
                    return try Comparison.test(op, value, .string(needle), options: options, matcher: matcher)
                }
                return haystack.withUTF8 { StringOperations.test(op, $0, bytes) }
            }
        }
        let rhs = try evaluator(comparison.rhs)
        switch comparison.modifier {
        case .direct:
            return { context in
                try Comparison.test(op, try lhs(context), try rhs(context), options: options, matcher: matcher)
            }
        case .any, .all, .none:
            let modifier = comparison.modifier
            return { context in
                let elements = Comparison.elements(try lhs(context))
                let right = try rhs(context)
                switch modifier {
                case .any: return try elements.contains { try Comparison.test(op, $0, right, options: options, matcher: matcher) }
                case .all: return try elements.allSatisfy { try Comparison.test(op, $0, right, options: options, matcher: matcher) }
                default: return try !elements.contains { try Comparison.test(op, $0, right, options: options, matcher: matcher) }
                }
            }
        }
    }
}

extension ComparisonOperator {
    var isNumericComparable: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: true
        default: false
        }
    }

    /// Whether the operator holds for an ordering result (nil: a nil operand or NaN).
    @inline(__always)
    func holds(for order: Int?) -> Bool {
        guard let order else { return self == .notEqual }
        switch self {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        default: return false
        }
    }
}

/// Patterns prepared at compile time for LIKE and MATCHES.
struct Matcher: Sendable {
    var like: LikePattern?
    var regex: RegexPattern?
}

enum Comparison {
    static func elements(_ value: Value) -> [Value] {
        switch value {
        case .null: []
        case .array(let values): values
        default: [value]
        }
    }

    /// One comparison with Core Data's semantics (see the Syntax article).
    static func test(
        _ op: ComparisonOperator, _ lhs: Value, _ rhs: Value, options: StringComparisonOptions, matcher: Matcher
    ) throws(ExpressionError) -> Bool {
        switch op {
        case .equal: return Semantics.equal(lhs, rhs, options: options)
        case .notEqual: return !Semantics.equal(lhs, rhs, options: options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return op.holds(for: try Semantics.order(lhs, rhs, options: options)) && !lhs.isNull && !rhs.isNull
        case .between:
            if lhs.isNull || rhs.isNull { return false }
            guard case .array(let bounds) = rhs, bounds.count == 2 else {
                throw ExpressionError(.typeMismatch, "BETWEEN needs {lower, upper}, not \(rhs)")
            }
            guard let low = try Semantics.order(lhs, bounds[0], options: options),
                let high = try Semantics.order(lhs, bounds[1], options: options)
            else { return false }
            return low >= 0 && high <= 0
        case .in:
            switch rhs {
            case .null: return false
            case .array(let values): return values.contains { Semantics.equal(lhs, $0, options: options) }
            case .string(let haystack):
                if lhs.isNull { return false }
                guard case .string(let needle) = lhs else { throw mismatch(op, lhs, rhs) }
                return StringOperations.test(.contains, haystack, needle, options: options)
            default:
                return Semantics.equal(lhs, rhs, options: options)
            }
        case .contains:
            switch lhs {
            case .null: return false
            case .array(let values): return values.contains { Semantics.equal($0, rhs, options: options) }
            case .string(let haystack):
                if rhs.isNull { return false }
                guard case .string(let needle) = rhs else { throw mismatch(op, lhs, rhs) }
                return StringOperations.test(.contains, haystack, needle, options: options)
            default: throw mismatch(op, lhs, rhs)
            }
        case .beginsWith, .endsWith:
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let haystack) = lhs, case .string(let needle) = rhs else { throw mismatch(op, lhs, rhs) }
            return StringOperations.test(op, haystack, needle, options: options)
        case .like:
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else { throw mismatch(op, lhs, rhs) }
            return (matcher.like ?? LikePattern(pattern, options: options)).matches(text)
        case .matches:
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else { throw mismatch(op, lhs, rhs) }
            if let regex = matcher.regex { return regex.matches(text) }
            return try RegexPattern(pattern, options: options).matches(text)
        }
    }

    private static func mismatch(_ op: ComparisonOperator, _ lhs: Value, _ rhs: Value) -> ExpressionError {
        ExpressionError(.typeMismatch, "\(op.rawValue) cannot compare \(kindName(lhs)) (\(lhs)) with \(kindName(rhs)) (\(rhs))")
    }
}
