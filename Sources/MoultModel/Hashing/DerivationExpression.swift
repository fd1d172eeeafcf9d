/// A derived attribute's derivation expression, in the forms whose version hash is known.
///
/// Core Data hashes a derived attribute as `SHA256(expression as Foundation prints it back)` and nothing
/// else (CORE-DATA-FORMATS.md §4). Two forms are confirmed by real stores: a key path prints as itself
/// (`additionalAttributes.cameraCaptureDevice`, Photos), and a key path ending in `.@count` is stored as
/// the function `count:` and prints as `count:(pages)` (CoreDataPlus' `Book.pagesCount`). Any other form
/// (`now()`, `canonical:(name)`, `@sum`, constants, operators) is refused: how Foundation prints it is
/// not confirmed, and a guessed hash would make a store Core Data refuses.
///
/// ```swift
/// let expression = try DerivationExpression("pages.@count")
/// expression.printed        // "count:(pages)"
/// expression.form           // .count(keyPath: ["pages"])
/// ```
public struct DerivationExpression: Sendable, Hashable {
    public enum Form: Sendable, Hashable {
        /// A key path, through to-one relationships to an attribute (`author.name`) or an attribute.
        case keyPath([String])
        /// The number of objects at the end of a key path whose last step is a to-many (`pages.@count`).
        case count(keyPath: [String])
    }

    /// The text as written in the model (`derivationExpression`).
    public var text: String
    public var form: Form

    /// Reads a derivation expression.
    ///
    /// - Throws: ``ModelError`` `.notComputable` for a form whose printed text (and so whose version
    ///   hash) is not confirmed.
    public init(_ text: String) throws(ModelError) {
        self.text = text
        let trimmed = text.trimmingWhitespace()
        var parts = trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var isCount = false
        if parts.last == "@count" {
            isCount = true
            parts.removeLast()
        }
        guard !parts.isEmpty, parts.allSatisfy(Self.isIdentifier) else {
            throw ModelError(
                .notComputable,
                "the derivation expression '\(text)' is not a key path or a key path ending in .@count, the only forms whose version hash is confirmed (how Foundation prints other forms is not)")
        }
        form = isCount ? .count(keyPath: parts) : .keyPath(parts)
    }

    /// The expression as Foundation's `NSExpression.predicateFormat` prints it: what the hash is made of.
    public var printed: String {
        switch form {
        case .keyPath(let path): path.joined(separator: ".")
        case .count(let path): "count:(\(path.joined(separator: ".")))"
        }
    }

    private static func isIdentifier(_ part: String) -> Bool {
        guard let first = part.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return part.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
