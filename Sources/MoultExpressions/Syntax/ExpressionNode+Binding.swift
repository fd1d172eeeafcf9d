public import MoultModel

// MARK: - Variables bound to constants

extension PredicateNode {
    /// The predicate with each variable `values` binds written in as a constant (an array value as an
    /// array of constants), for a compiler that takes constants only (``SQLPushdown``); variables it
    /// does not bind are left.
    ///
    /// ```swift
    /// let bound = try PredicateNode(parsing: "name == $wanted").binding(["wanted": .string("Ada")])
    /// print(bound)   // name == "Ada"
    /// ```
    public func binding(_ values: [String: Value]) -> PredicateNode {
        switch self {
        case .constant: self
        case .comparison(let comparison):
            .comparison(
                ComparisonNode(
                    comparison.lhs.binding(values), comparison.op, comparison.rhs.binding(values), modifier: comparison.modifier,
                    options: comparison.options))
        case .and(let operands): .and(operands.map { $0.binding(values) })
        case .or(let operands): .or(operands.map { $0.binding(values) })
        case .not(let operand): .not(operand.binding(values))
        }
    }
}

extension ExpressionNode {
    /// The expression with each variable `values` binds written in as a constant (see
    /// ``PredicateNode/binding(_:)``).
    public func binding(_ values: [String: Value]) -> ExpressionNode {
        switch self {
        case .variable(let name):
            guard let value = values[name] else { return self }
            if case .array(let elements) = value { return .array(elements.map { .constant($0) }) }
            return .constant(value)
        case .constant, .evaluatedObject: return self
        case .array(let elements): return .array(elements.map { $0.binding(values) })
        case .keyPath(let base, let components): return .keyPath(base: base.binding(values), components: components)
        case .subscripted(let base, let index):
            let bound: SubscriptIndex = if case .index(let node) = index { .index(node.binding(values)) } else { index }
            return .subscripted(base.binding(values), index: bound)
        case .negate(let operand): return .negate(operand.binding(values))
        case .arithmetic(let op, let lhs, let rhs): return .arithmetic(op, lhs.binding(values), rhs.binding(values))
        case .function(let receiver, let selector, let arguments):
            return .function(receiver: receiver?.binding(values), selector: selector, arguments: arguments.map { $0.binding(values) })
        case .ternary(let condition, let then, let otherwise):
            return .ternary(condition.binding(values), then.binding(values), otherwise.binding(values))
        case .cast(let operand, let type): return .cast(operand.binding(values), type: type)
        }
    }
}
