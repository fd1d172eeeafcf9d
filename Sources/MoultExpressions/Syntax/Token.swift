/// A token of the expression language, with the UTF-8 offset where it starts.
struct Token: Equatable {
    enum Kind: Equatable {
        case integer(Int64)
        case double(Double)
        case string(String)
        /// An identifier or a keyword (keywords are recognised by the parser, case-insensitively).
        case identifier(String)
        /// `#word`: an identifier escaped so that a reserved word can be a key.
        case escapedIdentifier(String)
        /// `$name`.
        case variable(String)
        /// `@name`: a collection operator such as `@count`.
        case collectionOperator(String)
        /// Punctuation and operators: `( ) { } [ ] , . + - * / ** == != < <= > >= && || ! ? :` etc.
        case symbol(String)
        case end
    }

    var kind: Kind
    var offset: Int
    /// The UTF-8 offset just past the token.
    var endOffset: Int
}

extension Token.Kind: CustomStringConvertible {
    var description: String {
        switch self {
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .identifier(let name): name
        case .escapedIdentifier(let name): "#\(name)"
        case .variable(let name): "$\(name)"
        case .collectionOperator(let name): "@\(name)"
        case .symbol(let symbol): symbol
        case .end: "end of text"
        }
    }
}
