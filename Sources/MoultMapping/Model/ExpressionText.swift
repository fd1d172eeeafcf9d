/// Helpers that spell expression text the way Moult's expression language reads it.
enum ExpressionText {
    /// Words of the predicate/expression language that must be escaped with `#` in a key path.
    static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES",
        "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
        "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE",
        "UTI-CONFORMS-TO", "UTI-EQUALS", "FUNCTION", "TERNARY",
    ]

    /// One key path component, escaped with `#` when it is a reserved word or not an identifier.
    static func keyPathComponent(_ name: String) -> String {
        if reservedWords.contains(name.uppercased()) { return "#" + name }
        return name
    }

    /// A key path (`a.b.c`), each component escaped as needed.
    static func keyPath(_ path: String) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { keyPathComponent(String($0)) }
            .joined(separator: ".")
    }

    /// A string literal in double quotes, with `\` and `"` escaped.
    static func quoted(_ string: String) -> String {
        var result = "\""
        for character in string {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result.append(character)
            }
        }
        return result + "\""
    }
}
