import MoultArchive

/// Turns an NSKeyedArchiver archive whose root is an `NSExpression` (what Xcode stores in a mapping
/// model's `valueexpressiondata`) into Moult's expression text, as Xcode shows it.
///
/// Supported: key-path expressions (`$source.color`, `SELF.name`, and `$source` alone), variables
/// (`$manager`), constants (strings, numbers, booleans, nil, arrays of them), `SELF`, aggregates
/// (`{1, 2}`), functions on an operand (`FUNCTION($manager, "selector:", args…)`) and the built-in
/// functions (`sum:(…)`, arithmetic as infix operators). Anything else throws, naming the class.
///
/// The archive is read through ``KeyedArchive``; the walk is bounded in depth and in the number of
/// objects visited, so a hostile archive (references that loop or fan out) throws.
struct ArchivedExpression {
    private let archive: KeyedArchive
    /// The deepest nesting of expressions accepted.
    static let maximumDepth = 64
    /// The most objects one expression may visit (the longest real expression visits a few dozen).
    static let maximumVisits = 10_000

    init(archive bytes: [UInt8]) throws(ArchiveError) {
        archive = try KeyedArchive(bytes)
    }

    /// The root object's expression text.
    func text() throws(ArchiveError) -> String {
        var visits = 0
        return try expression(archive.rootUID, depth: 0, visits: &visits)
    }

    /// The root object as a dictionary of strings (an archived `userInfo`); values of any
    /// property-list type are kept as text (see ``KeyedArchive/userInfo(_:)``).
    func stringDictionary() throws(ArchiveError) -> [String: String] {
        try archive.userInfo(archive.rootUID)
    }

    // MARK: - Expressions

    private func visit(_ visits: inout Int, depth: Int, _ uid: Int) throws(ArchiveError) {
        visits += 1
        guard visits <= Self.maximumVisits else {
            throw ArchiveError(.malformedArchive, "the expression visits more than \(Self.maximumVisits) objects", location: "$objects[\(uid)]")
        }
        guard depth <= Self.maximumDepth else {
            throw ArchiveError(.malformedArchive, "expressions nest deeper than \(Self.maximumDepth) levels", location: "$objects[\(uid)]")
        }
    }

    private func expression(_ uid: Int, depth: Int, visits: inout Int) throws(ArchiveError) -> String {
        try visit(&visits, depth: depth, uid)
        let object = try archive.instance(uid)
        switch object.className {
        case "NSConstantValueExpression":
            guard let valueUID = try archive.reference(object, "NSConstantValue") else { return "nil" }
            return try constant(valueUID, depth: depth + 1, visits: &visits)
        case "NSVariableExpression":
            guard let variable = try archive.string(object, "NSVariable") else {
                throw ArchiveError(.malformedArchive, "a variable expression has no name", location: "$objects[\(uid)]")
            }
            return "$" + variable
        case "NSSelfExpression":
            return "SELF"
        case "NSKeyPathSpecifierExpression":
            return ExpressionText.keyPath(try keyPath(of: object))
        case "NSAggregateExpression":
            var collection = try archive.reference(object, "NSCollection")
            if collection == nil { collection = try archive.reference(object, "NSArguments") }
            var elements: [Int] = []
            if let collection { elements = try archive.elements(collection) }
            var parts: [String] = []
            for element in elements {
                parts.append(try expression(element, depth: depth + 1, visits: &visits))
            }
            return "{" + parts.joined(separator: ", ") + "}"
        case "NSKeyPathExpression", "NSFunctionExpression":
            return try function(object, depth: depth, visits: &visits)
        default:
            // An expression type number Moult knows but whose class name differs (a private subclass).
            if let type = object.fields["NSExpressionType"]?.integerValue {
                switch type {
                case 0: return try constant(try archive.reference(object, "NSConstantValue") ?? 0, depth: depth + 1, visits: &visits)
                case 1: return "SELF"
                case 2:
                    if let variable = try archive.string(object, "NSVariable") { return "$" + variable }
                case 3, 4: return try function(object, depth: depth, visits: &visits)
                default: break
                }
            }
            throw ArchiveError(.unsupported, "archived expressions of class \(object.className) are not supported", location: "$objects[\(uid)]")
        }
    }

    private func keyPath(of specifier: ArchivedInstance) throws(ArchiveError) -> String {
        guard let keyPath = try archive.string(specifier, "NSKeyPath") else {
            throw ArchiveError(.malformedArchive, "a key path specifier has no key path", location: "$objects[\(specifier.uid)]")
        }
        return keyPath
    }

    /// Infix operators for Core Data's built-in arithmetic functions.
    private static let infixOperators: [String: String] = [
        "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "raise:toPower:": "**",
    ]

    private func function(_ object: ArchivedInstance, depth: Int, visits: inout Int) throws(ArchiveError) -> String {
        guard let selector = try archive.string(object, "NSSelectorName") else {
            throw ArchiveError(.malformedArchive, "a function expression has no selector", location: "$objects[\(object.uid)]")
        }
        var argumentUIDs: [Int] = []
        if let arguments = try archive.reference(object, "NSArguments") { argumentUIDs = try archive.elements(arguments) }
        var operand: String?
        if let operandUID = try archive.reference(object, "NSOperand"), try !builtInOperand(operandUID) {
            operand = try expression(operandUID, depth: depth + 1, visits: &visits)
        }
        if selector == "valueForKeyPath:", argumentUIDs.count == 1,
            let variablePath = try variableKeyPath(argumentUIDs[0], operand: operand, visits: &visits, depth: depth)
        {
            return variablePath
        }
        var arguments: [String] = []
        for argument in argumentUIDs { arguments.append(try expression(argument, depth: depth + 1, visits: &visits)) }
        if selector == "valueForKeyPath:", let operand, arguments.count == 1 {
            // `SELF.name` is shown as `name`.
            return operand == "SELF" ? arguments[0] : "\(operand).\(arguments[0])"
        }
        guard let operand else {
            if let symbol = Self.infixOperators[selector], arguments.count == 2 {
                return "\(parenthesized(arguments[0])) \(symbol) \(parenthesized(arguments[1]))"
            }
            let name = selector.hasSuffix(":") ? String(selector.dropLast()) : selector
            return "\(name):(\(arguments.joined(separator: ", ")))"
        }
        return "FUNCTION(" + ([operand, ExpressionText.quoted(selector)] + arguments).joined(separator: ", ") + ")"
    }

    /// A key path that starts with a variable (`$source`, `$source.name`), as Xcode archives `$source`
    /// written alone where an expression is expected: a key-path expression whose operand is the
    /// variable (or `SELF`) and whose whole key path is `$source` again. The text is the key path,
    /// not `$source.$source`. Nil when the argument is not such a key path.
    private func variableKeyPath(_ argument: Int, operand: String?, visits: inout Int, depth: Int) throws(ArchiveError) -> String? {
        try visit(&visits, depth: depth + 1, argument)
        let specifier = try archive.instance(argument)
        guard specifier.className == "NSKeyPathSpecifierExpression" else { return nil }
        let path = try keyPath(of: specifier)
        guard path.hasPrefix("$") else { return nil }
        var components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let variable = components.removeFirst()
        guard operand == nil || operand == "SELF" || operand == variable else {
            throw ArchiveError(
                .unsupported, "a key path '\(path)' on the operand \(operand ?? "") is not supported", location: "$objects[\(argument)]")
        }
        return ([variable] + components.map(ExpressionText.keyPathComponent)).joined(separator: ".")
    }

    /// Whether an operand stands for Core Data's built-in function library (not a real operand).
    ///
    /// *Unverified* against a real archive: no fixture holds a built-in function. The operand is then
    /// a constant holding a class, or a `$null`.
    private func builtInOperand(_ uid: Int) throws(ArchiveError) -> Bool {
        guard case .dictionary = try archive.object(uid) else { return try archive.object(uid).stringValue == "$null" }
        let object = try archive.instance(uid)
        guard object.className == "NSConstantValueExpression" else { return false }
        guard let value = try archive.reference(object, "NSConstantValue") else { return false }
        guard let inner = try archive.object(value).dictionaryValue else { return false }
        return inner["$classname"] != nil || (try? archive.instance(value).className) == "NSPredicateUtilities"
    }

    private func parenthesized(_ text: String) -> String {
        text.contains(" ") && !(text.hasPrefix("FUNCTION(") || text.hasPrefix("{")) ? "(\(text))" : text
    }

    // MARK: - Constants

    private func constant(_ uid: Int, depth: Int, visits: inout Int) throws(ArchiveError) -> String {
        try visit(&visits, depth: depth, uid)
        if archive.isNull(uid) { return "nil" }
        switch try archive.object(uid) {
        case .string(let text): return ExpressionText.quoted(text)
        case .integer(let value): return String(value)
        case .real(let value):
            let text = String(value)
            return text.contains(".") || text.contains("e") || text.contains("n") ? text : text + ".0"
        case .bool(let value): return value ? "YES" : "NO"
        case .null: return "nil"
        case .dictionary:
            let object = try archive.instance(uid)
            switch object.className {
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                var parts: [String] = []
                for element in try archive.elements(uid) { parts.append(try constant(element, depth: depth + 1, visits: &visits)) }
                return "{" + parts.joined(separator: ", ") + "}"
            case "NSString", "NSMutableString":
                return ExpressionText.quoted(try archive.string(uid) ?? "")
            case "NSDate":
                guard case .real(let time)? = object.fields["NS.time"] else {
                    throw ArchiveError(.malformedArchive, "an archived date has no time", location: "$objects[\(uid)]")
                }
                return "CAST(\(time), \"NSDate\")"
            case "NSNull":
                return "nil"
            default:
                throw ArchiveError(.unsupported, "archived constants of class \(object.className) are not supported", location: "$objects[\(uid)]")
            }
        default:
            throw ArchiveError(.unsupported, "an archived constant of an unsupported kind (\(try archive.object(uid).summary))", location: "$objects[\(uid)]")
        }
    }
}
