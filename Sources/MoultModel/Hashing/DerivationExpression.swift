/// A derived attribute's derivation expression, in the forms Core Data's SQLite store accepts.
///
/// Core Data hashes a derived attribute as `SHA256(expression as Foundation prints it back)` and nothing
/// else (CORE-DATA-FORMATS.md §4). Foundation prints a key path as itself and a function expression as
/// `selector(arguments)`, the selector with its colon: `count:(pages)`, `now()`.
///
/// What each form rests on (the <doc:VersionHashing> article has the table):
/// - confirmed by real stores: a key path through a to-one (`additionalAttributes.cameraCaptureDevice`,
///   Photos) and `toMany.@count`, stored as the function `count:` (`count:(pages)`, CoreDataPlus'
///   `Book.pagesCount`);
/// - by Foundation's printing rule only (no real store in the fixtures has them): a key path to an own
///   attribute (`name`), `canonical:(name)`, `lowercase:(name)`, `uppercase:(name)` (of an own attribute
///   or through a to-one), `now()`, and the to-many aggregates `@sum`, `@min` and `@max`
///   (`items.@sum.price` is stored as `sum:(items.price)`, as `@count` is as `count:`).
///
/// Everything else is refused: `@avg` and other functions, constants, operators, more than one argument.
/// Which forms a store can hold (a key path of at most two steps, to-one then attribute; an aggregate over
/// a to-many) is checked when the store is laid out (MoultStore's `StoreLayout`), as Core Data checks it
/// when it adds a store.
///
/// ```swift
/// let expression = try DerivationExpression("pages.@count")
/// expression.printed        // "count:(pages)"
/// expression.form           // .count(keyPath: ["pages"])
/// try DerivationExpression("items.@sum.price").printed    // "sum:(items.price)"
/// ```
public struct DerivationExpression: Sendable, Hashable {
    /// A function of one string value: Core Data's `canonical:`, `lowercase:` and `uppercase:`.
    public enum StringFunction: String, Sendable, Hashable, CaseIterable {
        case canonical, lowercase, uppercase
    }

    /// An aggregate over a to-many's destinations: `@sum`, `@min` and `@max` of one of their attributes.
    public enum Aggregate: String, Sendable, Hashable, CaseIterable {
        case sum, min, max
    }

    public enum Form: Sendable, Hashable {
        /// A key path: an own attribute (`name`) or a to-one and an attribute of its destination
        /// (`author.name`).
        case keyPath([String])
        /// The number of objects at the end of a to-many (`pages.@count`).
        case count(keyPath: [String])
        /// An aggregate of a to-many's destinations' attribute (`items.@sum.price`: `["items", "price"]`).
        case aggregate(Aggregate, keyPath: [String])
        /// A string function of a key path (`canonical:(name)`, `lowercase:(author.name)`).
        case function(StringFunction, keyPath: [String])
        /// The time of the last save (`now()`).
        case now
    }

    /// The text as written in the model (`derivationExpression`).
    public var text: String
    public var form: Form

    /// Reads a derivation expression, in Xcode's spelling (`pages.@count`, `items.@sum.price`) or
    /// Foundation's (`count:(pages)`, `sum:(items.price)`).
    ///
    /// - Throws: ``ModelError`` `.notComputable` for a form Core Data's store does not accept, or whose
    ///   printed text (and so whose version hash) is not known.
    public init(_ text: String) throws(ModelError) {
        self.text = text
        guard let form = Self.parse(text.trimmingWhitespace()) else {
            throw ModelError(
                .notComputable,
                "the derivation expression '\(text)' is not one Core Data's store accepts (a key path of one or two steps, 'toMany.@count', 'toMany.@sum|@min|@max.attribute', 'canonical:|lowercase:|uppercase:(keyPath)' or 'now()')")
        }
        self.form = form
    }

    /// The expression as Foundation's `NSExpression` prints it: what the hash is made of.
    public var printed: String {
        switch form {
        case .keyPath(let path): path.joined(separator: ".")
        case .count(let path): "count:(\(path.joined(separator: ".")))"
        case .aggregate(let aggregate, let path): "\(aggregate.rawValue):(\(path.joined(separator: ".")))"
        case .function(let function, let path): "\(function.rawValue):(\(path.joined(separator: ".")))"
        case .now: "now()"
        }
    }

    /// The key path the value is derived from (empty for `now()`).
    public var keyPath: [String] {
        switch form {
        case .keyPath(let path), .count(let path), .aggregate(_, let path), .function(_, let path): path
        case .now: []
        }
    }

    private static func parse(_ text: String) -> Form? {
        if text == "now()" { return .now }
        // Foundation's spelling: `selector:(argument)`.
        if let colon = text.firstIndex(of: ":"), text.hasSuffix(")") {
            let selector = String(text[..<colon])
            var rest = Substring(text[text.index(after: colon)...]).drop { $0 == " " }
            guard rest.first == "(" else { return nil }
            rest = rest.dropFirst().dropLast()
            guard let path = keyPath(String(rest).trimmingWhitespace()) else { return nil }
            if selector == "count" { return .count(keyPath: path) }
            if let aggregate = Aggregate(rawValue: selector), path.count == 2 { return .aggregate(aggregate, keyPath: path) }
            if let function = StringFunction(rawValue: selector) { return .function(function, keyPath: path) }
            return nil
        }
        // Xcode's spelling: a key path, `toMany.@count` or `toMany.@sum.attribute`.
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let index = parts.firstIndex(where: { $0.hasPrefix("@") }) {
            let operation = String(parts[index].dropFirst())
            let before = Array(parts[..<index])
            let after = Array(parts[(index + 1)...])
            guard !before.isEmpty, before.allSatisfy(isIdentifier), after.allSatisfy(isIdentifier) else { return nil }
            if operation == "count", after.isEmpty { return .count(keyPath: before) }
            if let aggregate = Aggregate(rawValue: operation), before.count == 1, after.count == 1 {
                return .aggregate(aggregate, keyPath: before + after)
            }
            return nil
        }
        return keyPath(text).map(Form.keyPath)
    }

    private static func keyPath(_ text: String) -> [String]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return !parts.isEmpty && parts.allSatisfy(isIdentifier) ? parts : nil
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
