import MoultExpressions

/// A light scanner over expression and predicate text: enough to find the source keys and mapping
/// names a mapping refers to; syntax is checked by MoultExpressions' parser.
enum ExpressionScanner {
    /// Tokens outside string literals: identifiers (with `$`, `#`), strings, and single characters.
    enum Token: Equatable {
        case word(String)
        case string(String)
        case symbol(Character)
    }

    static func tokens(_ text: String) -> (tokens: [Token], problem: String?) {
        var result: [Token] = []
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" || character == "'" {
                var literal = ""
                var cursor = text.index(after: index)
                var closed = false
                while cursor < text.endIndex {
                    let c = text[cursor]
                    if c == "\\" {
                        cursor = text.index(after: cursor)
                        if cursor < text.endIndex { literal.append(text[cursor]) }
                    } else if c == character {
                        closed = true
                        break
                    } else {
                        literal.append(c)
                    }
                    if cursor < text.endIndex { cursor = text.index(after: cursor) }
                }
                guard closed else { return (result, "a string literal is not closed") }
                result.append(.string(literal))
                index = text.index(after: cursor)
            } else if character.isLetter || character == "_" || character == "$" || character == "#" || character == "@" {
                var word = String(character)
                var cursor = text.index(after: index)
                while cursor < text.endIndex, text[cursor].isLetter || text[cursor].isNumber || text[cursor] == "_" {
                    word.append(text[cursor])
                    cursor = text.index(after: cursor)
                }
                result.append(.word(word))
                index = cursor
            } else {
                if !character.isWhitespace { result.append(.symbol(character)) }
                index = text.index(after: index)
            }
        }
        return (result, nil)
    }

    /// What is wrong with a value expression's syntax (line, column, a caret under the spot, what was
    /// expected), or nil when MoultExpressions parses it.
    static func syntaxProblem(in text: String) -> String? {
        // A plain copy, `$source.name` with a name that is no reserved word, is what Moult writes and
        // parses (nearly every property mapping of a long history): not parsed again.
        if let key = plainSourceKey(text), ExpressionNode.keyText(key) == key { return nil }
        do {
            _ = try ExpressionNode(parsing: text)
            return nil
        } catch {
            return error.description
        }
    }

    /// The same for a predicate (a filter).
    static func predicateSyntaxProblem(in text: String) -> String? {
        do {
            _ = try PredicateNode(parsing: text)
            return nil
        } catch {
            return error.description
        }
    }


    static func sourceKeys(in text: String, implicit: Bool) -> [String] {
        // The plain copy, `$source.name` (nearly every property mapping of a long history): its key,
        // without scanning.
        if let key = plainSourceKey(text) { return [key] }
        let tokens = tokens(text).tokens
        var keys: [String] = []
        for (index, token) in tokens.enumerated() {
            guard case .word(let word) = token else { continue }
            let previousIsDot = index > 0 && tokens[index - 1] == .symbol(".")
            if word == "$source", index + 2 < tokens.count, tokens[index + 1] == .symbol("."), case .word(let key) = tokens[index + 2] {
                keys.append(key.hasPrefix("#") ? String(key.dropFirst()) : key)
            } else if word == "$source", index + 4 < tokens.count, tokens[index + 1] == .symbol(","),
                tokens[index + 2] == .string("valueForKey:") || tokens[index + 2] == .string("valueForKeyPath:"),
                tokens[index + 3] == .symbol(","), case .string(let path) = tokens[index + 4],
                let key = path.split(separator: ".").first
            {
                // `FUNCTION($source, "valueForKey:", "name")`: the form of a copy Core Data evaluates as `$source.name`.
                keys.append(String(key))
            } else if implicit, !previousIsDot, !word.hasPrefix("$"), !word.hasPrefix("@"),
                ExpressionNode.keyText(word) == word || word.hasPrefix("#"),
                !(index + 1 < tokens.count && tokens[index + 1] == .symbol("("))
            {
                keys.append(word.hasPrefix("#") ? String(word.dropFirst()) : word)
            }
        }
        return keys
    }

    /// `name` when `text` is `$source.name` with an ASCII name (letters, digits, `_`, not starting with a
    /// digit), nil otherwise.
    static func plainSourceKey(_ text: String) -> String? {
        let utf8 = text.utf8
        let prefix = "$source.".utf8
        guard utf8.count > prefix.count, utf8.starts(with: prefix) else { return nil }
        let key = utf8.dropFirst(prefix.count)
        func isLetter(_ byte: UInt8) -> Bool { (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95 }
        guard let first = key.first, isLetter(first), key.allSatisfy({ isLetter($0) || ($0 >= 48 && $0 <= 57) }) else { return nil }
        return String(decoding: key, as: UTF8.self)
    }

    static func entityMappingNames(in text: String) -> [String] {
        let tokens = tokens(text).tokens
        var names: [String] = []
        for (index, token) in tokens.enumerated() {
            guard token == .string("destinationInstancesForEntityMappingNamed:sourceInstances:"), index + 2 < tokens.count,
                tokens[index + 1] == .symbol(","), case .string(let name) = tokens[index + 2]
            else { continue }
            names.append(name)
        }
        return names
    }
}
