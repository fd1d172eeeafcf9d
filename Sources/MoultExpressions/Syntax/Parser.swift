import MoultModel
import Foundation

// MARK: - Entry points

extension ExpressionNode {
    /// Parses a value expression, e.g. `$source.amount` or
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)`.
    ///
    /// - Parameter text: the expression, in Core Data's `NSExpression` format syntax.
    /// - Throws: ``ExpressionError`` (code `.syntax` or `.unsupported`) with line, column and what was expected.
    public init(parsing text: String) throws(ExpressionError) {
        var parser = try Parser(text)
        self = try parser.parseWholeExpression()
    }
}

extension PredicateNode {
    /// Parses a predicate, e.g. `age >= 18` or `street != nil OR state != nil`.
    ///
    /// - Parameter text: the predicate, in Core Data's `NSPredicate` format syntax.
    /// - Throws: ``ExpressionError`` (code `.syntax` or `.unsupported`) with line, column and what was expected.
    public init(parsing text: String) throws(ExpressionError) {
        var parser = try Parser(text)
        self = try parser.parseWholePredicate()
    }
}

// MARK: - Parser

/// A recursive-descent parser over the tokens of one text.
///
/// Predicates and expressions share one grammar (a parenthesised group may hold either), so the
/// parser never backtracks: every token is looked at a bounded number of times.
struct Parser {
    /// Keywords that cannot be keys unless escaped with `#` (Core Data's reserved words).
    static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES",
        "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
        "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    /// Reserved words that are operators, never the start of an operand.
    static let operatorWords: Set<String> = [
        "AND", "OR", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN",
    ]

    /// Deeper nesting than this is refused, so that hostile input cannot exhaust the stack.
    static let maximumDepth = 200

    private let text: String
    private let tokens: [Token]
    private var index = 0
    private var depth = 0

    init(_ text: String) throws(ExpressionError) {
        self.text = text
        self.tokens = try Lexer.tokenize(text)
    }

    /// Either kind of node: a parenthesised group or an operand may turn out to be either.
    private enum Parsed {
        case expression(ExpressionNode)
        case predicate(PredicateNode)
    }

    // MARK: Helpers

    private var current: Token { tokens[index] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func error(_ message: String, expected: String?, at token: Token? = nil) -> ExpressionError {
        ExpressionError(.syntax, message, expected: expected, source: text, offset: (token ?? current).offset)
    }

    private func unexpected(expected: String) -> ExpressionError {
        let found = current.kind == .end ? "unexpected end of text" : "unexpected \"\(current.kind)\""
        return error(found, expected: expected)
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func expect(_ symbol: String, _ what: String? = nil) throws(ExpressionError) {
        guard isSymbol(symbol) else { throw unexpected(expected: what ?? "\"\(symbol)\"") }
        advance()
    }

    /// The current token's keyword (upper-cased) when it is a plain identifier.
    private var keyword: String? {
        if case .identifier(let name) = current.kind { return name.uppercased() }
        return nil
    }

    private func keyword(at offset: Int) -> String? {
        guard index + offset < tokens.count, case .identifier(let name) = tokens[index + offset].kind else { return nil }
        return name.uppercased()
    }

    /// Counts one more level of a left-deep operator chain (`a + b + c …` nests like parentheses).
    private mutating func deepen(_ levels: inout Int) throws(ExpressionError) {
        depth += 1
        levels += 1
        guard depth <= Parser.maximumDepth else {
            throw ExpressionError(
                .syntax, "more than \(Parser.maximumDepth) operators or levels of nesting", expected: "a simpler expression",
                source: text, offset: current.offset)
        }
    }

    private mutating func nested<T>(_ body: (inout Parser) throws(ExpressionError) -> T) throws(ExpressionError) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Parser.maximumDepth else {
            throw ExpressionError(
                .syntax, "nested more than \(Parser.maximumDepth) levels deep", expected: "a simpler expression",
                source: text, offset: current.offset)
        }
        return try body(&self)
    }

    private mutating func asExpression(_ parsed: Parsed, at token: Token) throws(ExpressionError) -> ExpressionNode {
        switch parsed {
        case .expression(let node): return node
        case .predicate: throw error("a predicate cannot be used as a value here", expected: "an expression", at: token)
        }
    }

    private mutating func asPredicate(_ parsed: Parsed, at token: Token) throws(ExpressionError) -> PredicateNode {
        switch parsed {
        case .predicate(let node): return node
        case .expression:
            throw error(
                "an expression is not a predicate", expected: "a comparison operator (==, <, IN, LIKE, …)",
                at: index < tokens.count ? current : token)
        }
    }

    // MARK: Whole texts

    mutating func parseWholeExpression() throws(ExpressionError) -> ExpressionNode {
        let start = current
        let parsed = try parseOr()
        guard current.kind == .end else { throw unexpected(expected: "an operator or the end of the expression") }
        return try asExpression(parsed, at: start)
    }

    mutating func parseWholePredicate() throws(ExpressionError) -> PredicateNode {
        let start = current
        let parsed = try parseOr()
        guard current.kind == .end else { throw unexpected(expected: "AND, OR or the end of the predicate") }
        return try asPredicate(parsed, at: start)
    }

    // MARK: Predicates

    private mutating func parseOr() throws(ExpressionError) -> Parsed {
        let start = current
        let first = try parseAnd()
        guard keyword == "OR" || isSymbol("||") else { return first }
        var operands = [try asPredicate(first, at: start)]
        while keyword == "OR" || isSymbol("||") {
            advance()
            let operandStart = current
            operands.append(try asPredicate(try parseAnd(), at: operandStart))
        }
        return .predicate(.or(operands))
    }

    private mutating func parseAnd() throws(ExpressionError) -> Parsed {
        let start = current
        let first = try parseNot()
        guard keyword == "AND" || isSymbol("&&") else { return first }
        var operands = [try asPredicate(first, at: start)]
        while keyword == "AND" || isSymbol("&&") {
            advance()
            let operandStart = current
            operands.append(try asPredicate(try parseNot(), at: operandStart))
        }
        return .predicate(.and(operands))
    }

    private mutating func parseNot() throws(ExpressionError) -> Parsed {
        guard keyword == "NOT" || isSymbol("!") else { return try parseComparison() }
        advance()
        let start = current
        return try nested { (parser: inout Parser) throws(ExpressionError) -> Parsed in
            .predicate(.not(try parser.asPredicate(try parser.parseNot(), at: start)))
        }
    }

    private mutating func parseComparison() throws(ExpressionError) -> Parsed {
        var modifier = ComparisonModifier.direct
        switch keyword {
        case "ANY", "SOME": modifier = .any
        case "ALL": modifier = .all
        case "NONE": modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        let start = current
        let left = try parseAdditive()
        guard let op = try comparisonOperator() else {
            if modifier != .direct { throw unexpected(expected: "a comparison operator after \(modifier.rawValue) …") }
            return left
        }
        let lhs = try asExpression(left, at: start)
        let options = try comparisonOptions()
        let rhsStart = current
        if current.kind == .end || Parser.operatorWords.contains(keyword ?? "")
            || [")", "]", "}", ",", "*", "/", "**", "==", "=", "!=", "<", ">", "<=", ">=", "&&", "||"].contains(where: isSymbol)
        {
            throw unexpected(expected: "an expression after \"\(op.rawValue)\"")
        }
        let rhs = try asExpression(try parseAdditive(), at: rhsStart)
        if op == .between, case .array(let bounds) = rhs, bounds.count != 2 {
            throw error("BETWEEN needs exactly two bounds", expected: "{lower, upper}", at: rhsStart)
        }
        return .predicate(.comparison(ComparisonNode(lhs, op, rhs, modifier: modifier, options: options)))
    }

    private mutating func comparisonOperator() throws(ExpressionError) -> ComparisonOperator? {
        let op: ComparisonOperator?
        switch current.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier:
            switch keyword {
            case "BETWEEN": op = .between
            case "IN": op = .in
            case "CONTAINS": op = .contains
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            default: op = nil
            }
        default: op = nil
        }
        if op != nil { advance() }
        return op
    }

    private mutating func comparisonOptions() throws(ExpressionError) -> StringComparisonOptions {
        guard isSymbol("[") else { return [] }
        advance()
        guard case .identifier(let letters) = current.kind else { throw unexpected(expected: "comparison options c, d or cd") }
        var options: StringComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n", "l": break  // normalized / locale-sensitive: accepted, no effect on the comparison
            default: throw unexpected(expected: "comparison options c, d or cd")
            }
        }
        advance()
        try expect("]", "\"]\" after the comparison options")
        return options
    }

    // MARK: Expressions

    private mutating func parseAdditive() throws(ExpressionError) -> Parsed {
        let start = current
        var levels = 0
        defer { depth -= levels }
        var left = try parseMultiplicative()
        while isSymbol("+") || isSymbol("-") {
            let op: ArithmeticOperator = isSymbol("+") ? .add : .subtract
            try deepen(&levels)
            let lhs = try asExpression(left, at: start)
            advance()
            let rightStart = current
            let rhs = try asExpression(try parseMultiplicative(), at: rightStart)
            left = .expression(.arithmetic(op, lhs, rhs))
        }
        return left
    }

    private mutating func parseMultiplicative() throws(ExpressionError) -> Parsed {
        let start = current
        var levels = 0
        defer { depth -= levels }
        var left = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let op: ArithmeticOperator = isSymbol("*") ? .multiply : .divide
            try deepen(&levels)
            let lhs = try asExpression(left, at: start)
            advance()
            let rightStart = current
            let rhs = try asExpression(try parsePower(), at: rightStart)
            left = .expression(.arithmetic(op, lhs, rhs))
        }
        return left
    }

    private mutating func parsePower() throws(ExpressionError) -> Parsed {
        let start = current
        let base = try parseUnary()
        guard isSymbol("**") else { return base }
        let lhs = try asExpression(base, at: start)
        advance()
        let exponentStart = current
        return try nested { (parser: inout Parser) throws(ExpressionError) -> Parsed in
            let rhs = try parser.asExpression(try parser.parsePower(), at: exponentStart)
            return .expression(.arithmetic(.power, lhs, rhs))
        }
    }

    private mutating func parseUnary() throws(ExpressionError) -> Parsed {
        guard isSymbol("-") || isSymbol("+") else { return try parsePostfix() }
        let negative = isSymbol("-")
        advance()
        let start = current
        return try nested { (parser: inout Parser) throws(ExpressionError) -> Parsed in
            let operand = try parser.asExpression(try parser.parseUnary(), at: start)
            guard negative else { return .expression(operand) }
            switch operand {
            case .constant(.int(let value)) where value != .min: return .expression(.constant(.int(-value)))
            case .constant(.double(let value)): return .expression(.constant(.double(-value)))
            default: return .expression(.negate(operand))
            }
        }
    }

    private mutating func parsePostfix() throws(ExpressionError) -> Parsed {
        let start = current
        var parsed = try parsePrimary()
        // Each subscript, and each key path on something that is not a key path, wraps the node in one
        // more level: counted like nesting, so that `x[0][0]…` cannot build a tree too deep to walk.
        var levels = 0
        defer { depth -= levels }
        while isSymbol(".") || isSymbol("[") {
            var node = try asExpression(parsed, at: start)
            if isSymbol(".") {
                // A run of keys is gathered first and appended once: linear in the path's length.
                var components: [String] = []
                while isSymbol(".") {
                    advance()
                    components.append(try keyComponent(expected: "a key after \".\""))
                }
                if case .keyPath(let base, let existing) = node {
                    node = .keyPath(base: base, components: existing + components)
                } else {
                    try deepen(&levels)
                    node = .keyPath(base: node, components: components)
                }
            } else {
                try deepen(&levels)
                advance()
                let subscriptIndex: ExpressionNode.SubscriptIndex
                switch keyword {
                case "FIRST": subscriptIndex = .first; advance()
                case "LAST": subscriptIndex = .last; advance()
                case "SIZE": subscriptIndex = .size; advance()
                default:
                    let indexStart = current
                    subscriptIndex = .index(try nested { (parser: inout Parser) throws(ExpressionError) -> ExpressionNode in
                        try parser.asExpression(try parser.parseAdditive(), at: indexStart)
                    })
                }
                try expect("]", "\"]\" after the index")
                node = .subscripted(node, index: subscriptIndex)
            }
            parsed = .expression(node)
        }
        return parsed
    }

    /// A key of a key path: an identifier that is not reserved, `#anything`, or `@operator`.
    private mutating func keyComponent(expected: String) throws(ExpressionError) -> String {
        switch current.kind {
        case .identifier(let name):
            if Parser.reservedWords.contains(name.uppercased()) {
                throw error("\"\(name)\" is a reserved word", expected: "a key (write #\(name) to use it as a key)")
            }
            advance()
            return name
        case .escapedIdentifier(let name):
            advance()
            return name
        case .collectionOperator(let name):
            guard ExpressionNode.collectionOperators.contains(name) else {
                throw ExpressionError(
                    .unsupported, "collection operator @\(name) is not supported",
                    expected: "@count, @sum, @avg, @min, @max, or a union (@unionOfObjects, @distinctUnionOfSets …)", source: text, offset: current.offset)
            }
            advance()
            return "@" + name
        default:
            throw unexpected(expected: expected)
        }
    }

    private mutating func parsePrimary() throws(ExpressionError) -> Parsed {
        let token = current
        switch token.kind {
        case .integer(let value):
            advance()
            return .expression(.constant(.int(value)))
        case .double(let value):
            advance()
            return .expression(.constant(.double(value)))
        case .string(let value):
            advance()
            return .expression(.constant(.string(value)))
        case .variable(let name):
            advance()
            return .expression(.variable(name))
        case .escapedIdentifier, .collectionOperator:
            let component = try keyComponent(expected: "a key")
            return .expression(.keyPath(base: .evaluatedObject, components: [component]))
        case .symbol("("):
            advance()
            let inner = try nested { (parser: inout Parser) throws(ExpressionError) -> Parsed in try parser.parseOr() }
            try expect(")", "\")\" to close the \"(\" at column \(column(of: token))")
            return inner
        case .symbol("{"):
            advance()
            let elements = try nested { (parser: inout Parser) throws(ExpressionError) -> [ExpressionNode] in
                try parser.parseArguments(closing: "}")
            }
            return .expression(.array(elements))
        case .symbol("%"):
            throw ExpressionError(
                .unsupported, "format arguments (%@, %K, …) are not supported",
                expected: "the value written in the text", source: text, offset: token.offset)
        case .identifier(let name):
            return try parseIdentifier(name, token: token)
        case .end:
            throw unexpected(expected: "an expression")
        default:
            throw unexpected(expected: "an expression")
        }
    }

    private func column(of token: Token) -> Int {
        ExpressionError(.syntax, "", source: text, offset: token.offset).column ?? 0
    }

    private mutating func parseIdentifier(_ name: String, token: Token) throws(ExpressionError) -> Parsed {
        let upper = name.uppercased()
        let followedByParenthesis = index + 1 < tokens.count && tokens[index + 1].kind == .symbol("(")
        switch upper {
        case "TRUE", "YES": advance(); return .expression(.constant(.bool(true)))
        case "FALSE", "NO": advance(); return .expression(.constant(.bool(false)))
        case "NIL", "NULL": advance(); return .expression(.constant(.null))
        case "SELF": advance(); return .expression(.evaluatedObject)
        case "TRUEPREDICATE": advance(); return .predicate(.constant(true))
        case "FALSEPREDICATE": advance(); return .predicate(.constant(false))
        case "SUBQUERY", "FETCH":
            throw ExpressionError(
                .unsupported, "\(upper) is not supported yet", expected: "a key path, a FUNCTION or a comparison",
                source: text, offset: token.offset)
        case "FUNCTION" where followedByParenthesis:
            advance(); advance()
            return .expression(try nested { (parser: inout Parser) throws(ExpressionError) -> ExpressionNode in
                try parser.parseFunction(token)
            })
        case "TERNARY" where followedByParenthesis:
            advance(); advance()
            return .expression(try nested { (parser: inout Parser) throws(ExpressionError) -> ExpressionNode in
                try parser.parseTernary()
            })
        case "CAST" where followedByParenthesis:
            advance(); advance()
            return .expression(try nested { (parser: inout Parser) throws(ExpressionError) -> ExpressionNode in
                try parser.parseCast()
            })
        default:
            break
        }
        if Parser.operatorWords.contains(upper) { throw unexpected(expected: "an expression") }
        if Parser.reservedWords.contains(upper) {
            throw error("\"\(name)\" is a reserved word here", expected: "an expression (write #\(name) for a key named \(name))")
        }
        // A built-in function in its short form: `now()`, `sum:({1, 2})`, `add:to:(1, 2)`.
        if followedByParenthesis || (index + 1 < tokens.count && tokens[index + 1].kind == .symbol(":")) {
            if let call = try parseShortFunction(name) { return .expression(call) }
        }
        advance()
        return .expression(.keyPath(base: .evaluatedObject, components: [name]))
    }

    /// `name(` or `name:part:(`; nil (and nothing consumed) when the tokens are not a call.
    private mutating func parseShortFunction(_ name: String) throws(ExpressionError) -> ExpressionNode? {
        let saved = index
        var selector = name
        advance()
        while isSymbol(":") {
            selector += ":"
            advance()
            if case .identifier(let part) = current.kind, index + 1 < tokens.count,
                tokens[index + 1].kind == .symbol(":")
            {
                selector += part
                advance()
            }
        }
        guard isSymbol("(") else {
            index = saved
            return nil
        }
        advance()
        let arguments = try nested { (parser: inout Parser) throws(ExpressionError) -> [ExpressionNode] in
            try parser.parseArguments(closing: ")")
        }
        return .function(receiver: nil, selector: selector, arguments: arguments)
    }

    /// Comma-separated expressions up to `closing` (consumed).
    private mutating func parseArguments(closing: String) throws(ExpressionError) -> [ExpressionNode] {
        var elements: [ExpressionNode] = []
        if isSymbol(closing) {
            advance()
            return elements
        }
        while true {
            let start = current
            elements.append(try asExpression(try parseAdditive(), at: start))
            if isSymbol(closing) {
                advance()
                return elements
            }
            try expect(",", "\",\" or \"\(closing)\"")
        }
    }

    private mutating func parseFunction(_ token: Token) throws(ExpressionError) -> ExpressionNode {
        let receiverStart = current
        let receiver = try asExpression(try parseAdditive(), at: receiverStart)
        try expect(",", "\",\" and a selector after the receiver of FUNCTION")
        guard case .string(let selector) = current.kind else {
            throw unexpected(expected: "the selector as a quoted string, e.g. \"sqrt:\"")
        }
        guard !selector.isEmpty else { throw error("empty selector", expected: "a selector name") }
        advance()
        var arguments: [ExpressionNode] = []
        while isSymbol(",") {
            advance()
            let start = current
            arguments.append(try asExpression(try parseAdditive(), at: start))
        }
        try expect(")", "\",\" or \")\" to close FUNCTION(")
        return .function(receiver: receiver, selector: selector, arguments: arguments)
    }

    private mutating func parseTernary() throws(ExpressionError) -> ExpressionNode {
        let conditionStart = current
        let condition = try asPredicate(try parseOr(), at: conditionStart)
        try expect(",", "\",\" after the condition of TERNARY")
        let thenStart = current
        let then = try asExpression(try parseAdditive(), at: thenStart)
        try expect(",", "\",\" and the value when the condition is false")
        let elseStart = current
        let otherwise = try asExpression(try parseAdditive(), at: elseStart)
        try expect(")", "\")\" to close TERNARY(")
        return .ternary(condition, then, otherwise)
    }

    private mutating func parseCast() throws(ExpressionError) -> ExpressionNode {
        let start = current
        let value = try asExpression(try parseAdditive(), at: start)
        try expect(",", "\",\" and a type name after the value of CAST")
        guard case .string(let type) = current.kind else {
            throw unexpected(expected: "the type as a quoted string: \"NSNumber\", \"NSString\" or \"NSDate\"")
        }
        advance()
        try expect(")", "\")\" to close CAST(")
        // A date constant is written CAST(seconds since 2001, "NSDate"): keep it as a constant.
        if type == "NSDate", case .constant(let constant) = value {
            switch constant {
            case .int(let seconds): return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
            case .double(let seconds): return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            default: break
            }
        }
        return .cast(value, type: type)
    }
}

extension ExpressionNode {
    /// The collection operators Moult evaluates (without their `@`): key-value coding's.
    static let collectionOperators: Set<String> = [
        "count", "sum", "avg", "min", "max", "unionOfObjects", "distinctUnionOfObjects", "unionOfArrays", "distinctUnionOfArrays",
        "unionOfSets", "distinctUnionOfSets",
    ]
}
