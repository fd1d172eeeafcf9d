public import MoultModel

/// An error parsing, compiling or evaluating an expression or a predicate.
///
/// A parse error knows where it happened: ``line``, ``column`` (both 1-based, columns count
/// characters), the text it was parsing, and what the parser expected there. Its ``description``
/// shows the offending line with a caret under the spot:
///
/// ```
/// expression: line 1, column 9: expected an expression after "=="
///   age >= AND
///          ^
/// ```
public struct ExpressionError: CategorizedError, Hashable {
    /// What kind of problem this is; an extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The text is not valid syntax.
        public static let syntax = Code(rawValue: "syntax error")
        /// The syntax is valid in Core Data but Moult does not support it yet (e.g. `SUBQUERY`).
        public static let unsupported = Code(rawValue: "not supported")
        /// A key is not a property of the entity the expression is compiled against.
        public static let unknownKey = Code(rawValue: "unknown key")
        /// A `FUNCTION` selector that nothing implements, or called with the wrong number of arguments.
        public static let unknownFunction = Code(rawValue: "unknown function")
        /// Values of kinds that the operation cannot combine (e.g. `"a" < 3`).
        public static let typeMismatch = Code(rawValue: "type mismatch")
        /// A variable, object or function host that evaluation needs was not provided.
        public static let missingBinding = Code(rawValue: "missing binding")
        /// A function or a host call failed.
        public static let evaluationFailed = Code(rawValue: "evaluation failed")
    }

    public var code: Code
    /// What went wrong, in words.
    public var message: String
    /// What the parser expected at the spot, when it is a syntax error.
    public var expected: String?
    /// The text being parsed or compiled, when known.
    public var source: String?
    /// 1-based line of the spot in ``source``.
    public var line: Int?
    /// 1-based column (in characters) of the spot in ``source``.
    public var column: Int?

    public init(
        _ code: Code, _ message: String, expected: String? = nil, source: String? = nil, line: Int? = nil,
        column: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.expected = expected
        self.source = source
        self.line = line
        self.column = column
    }

    /// Creates an error located at a UTF-8 offset of `source`, computing line and column.
    init(_ code: Code, _ message: String, expected: String? = nil, source: String, offset: Int) {
        var line = 1
        var column = 1
        var index = source.utf8.startIndex
        let end = source.utf8.index(source.utf8.startIndex, offsetBy: min(offset, source.utf8.count))
        while index < end {
            if source.utf8[index] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if source.utf8[index] & 0xC0 != 0x80 {
                column += 1
            }
            index = source.utf8.index(after: index)
        }
        self.init(code, message, expected: expected, source: source, line: line, column: column)
    }

    /// Every expression error is bad input: the text, or the data it was evaluated on, is at fault.
    public var category: FailureCategory { .badInput }

    /// The line of ``source`` the error is on, and a caret line pointing at ``column``.
    public var excerpt: String? {
        guard let source, let line, let column else { return nil }
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard line - 1 < lines.count else { return nil }
        let text = String(lines[line - 1])
        // Tabs are kept in the caret line so that the caret stays under the spot.
        let padding = text.prefix(max(0, column - 1)).map { $0 == "\t" ? "\t" : " " }.joined()
        return "  \(text)\n  \(padding)^"
    }

    public var description: String {
        var head = "expression"
        if let line, let column { head += ": line \(line), column \(column)" }
        var text = "\(head): \(message)"
        if let expected { text += " (expected \(expected))" }
        if let excerpt { text += "\n\(excerpt)" }
        return text
    }
}
