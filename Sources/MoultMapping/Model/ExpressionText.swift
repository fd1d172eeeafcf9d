import MoultExpressions

/// Helpers that spell expression text the way Moult's expression language reads it.
enum ExpressionText {
    /// One key path component, escaped with `#` when it is a reserved word of the expression language.
    static func keyPathComponent(_ name: String) -> String {
        ExpressionNode.keyText(name)
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
