/// The `WHERE` condition of a partial fetch index, from its predicate text.
///
/// Core Data turns a partial index's predicate into SQL over the entity's columns. One form is seen in
/// a real store (Photos' `byMonthHighlightBeingFirstAsset`): `key != nil` becomes
/// `ZKEY IS NOT NULL`. The forms accepted here are comparisons of a property with `nil`, a number or
/// a Boolean, joined by `AND`; `key == nil` gives `ZKEY IS NULL`, a comparison with a number
/// `ZKEY = 3`, `ZKEY >= 1.5` (the text Core Data writes for these is unverified, their meaning is not).
/// Anything else is refused rather than guessed.
///
/// ```swift
/// try PartialIndexPredicate.sql("timestamp != nil") { $0 == "timestamp" ? "ZTIMESTAMP" : nil }
/// // "ZTIMESTAMP IS NOT NULL"
/// ```
enum PartialIndexPredicate {
    struct Failure: Error {
        var message: String
    }

    private enum Token: Equatable {
        case word(String)
        case number(String)
        case op(String)
    }

    /// The SQL condition, with each property replaced by its column (`column` gives nil for a key that
    /// has none).
    static func sql(_ predicate: String, column: (String) -> String?) throws(Failure) -> String {
        let tokens = try tokenize(predicate)
        var parts: [String] = []
        var position = 0
        while true {
            guard position + 3 <= tokens.count else {
                throw Failure(message: "expected a comparison 'property operator value' at its end")
            }
            var (left, op, right) = (tokens[position], tokens[position + 1], tokens[position + 2])
            position += 3
            // `nil != key` reads as `key != nil`.
            if case .word(let word) = left, isNil(word), case .word = right {
                swap(&left, &right)
                op = .op(mirrored(op))
            }
            guard case .word(let key) = left, !isNil(key), !isBoolean(key) else {
                throw Failure(message: "a comparison must start with a property name")
            }
            guard let name = column(key) else { throw Failure(message: "'\(key)' has no column") }
            let columnSQL = SQLName.quoted(name)
            guard case .op(let symbol) = op, let sqlOperator = sqlOperators[symbol] else {
                throw Failure(message: "the operator after '\(key)' is not one of ==, !=, <, <=, >, >=")
            }
            switch right {
            case .word(let word) where isNil(word):
                guard sqlOperator == "=" || sqlOperator == "!=" else { throw Failure(message: "nil can only be compared with == or !=") }
                parts.append("\(columnSQL) IS \(sqlOperator == "=" ? "" : "NOT ")NULL")
            case .word(let word) where isBoolean(word):
                parts.append("\(columnSQL) \(sqlOperator) \(["YES", "TRUE"].contains(word.uppercased()) ? 1 : 0)")
            case .number(let number):
                parts.append("\(columnSQL) \(sqlOperator) \(number)")
            default:
                throw Failure(message: "'\(key)' can only be compared with nil, a number or a Boolean")
            }
            if position == tokens.count { break }
            guard case .word(let joiner) = tokens[position], joiner.uppercased() == "AND" || joiner == "&&" else {
                throw Failure(message: "comparisons can only be joined by AND")
            }
            position += 1
        }
        return parts.joined(separator: " AND ")
    }

    private static let sqlOperators = ["==": "=", "=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", "=<": "<=", ">": ">", ">=": ">=", "=>": ">="]

    private static func mirrored(_ token: Token) -> String {
        guard case .op(let symbol) = token else { return "" }
        return ["<": ">", ">": "<", "<=": ">=", ">=": "<=", "=<": "=>", "=>": "=<"][symbol] ?? symbol
    }

    private static func isNil(_ word: String) -> Bool { ["NIL", "NULL"].contains(word.uppercased()) }
    private static func isBoolean(_ word: String) -> Bool { ["YES", "NO", "TRUE", "FALSE"].contains(word.uppercased()) }

    private static func tokenize(_ text: String) throws(Failure) -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace {
                index += 1
            } else if scalar == "&" {
                guard index + 1 < scalars.count, scalars[index + 1] == "&" else { throw Failure(message: "a lone '&'") }
                tokens.append(.word("&&"))
                index += 2
            } else if "<>=!".unicodeScalars.contains(scalar) {
                var symbol = String(scalar)
                if index + 1 < scalars.count, "<>=".unicodeScalars.contains(scalars[index + 1]) {
                    symbol.unicodeScalars.append(scalars[index + 1])
                    index += 1
                }
                index += 1
                tokens.append(.op(symbol))
            } else if ("0"..."9").contains(scalar) || scalar == "-" {
                var number = String(scalar)
                index += 1
                var sawDot = false
                while index < scalars.count, ("0"..."9").contains(scalars[index]) || (scalars[index] == "." && !sawDot) {
                    if scalars[index] == "." { sawDot = true }
                    number.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard number != "-", number.last != "." else { throw Failure(message: "'\(number)' is not a number") }
                tokens.append(.number(number))
            } else if isWordScalar(scalar) {
                var word = ""
                while index < scalars.count, isWordScalar(scalars[index]) {
                    word.unicodeScalars.append(scalars[index])
                    index += 1
                }
                tokens.append(.word(word))
            } else {
                throw Failure(message: "'\(Character(scalar))' is not understood here (only comparisons joined by AND are)")
            }
        }
        guard !tokens.isEmpty else { throw Failure(message: "it is empty") }
        return tokens
    }
}
