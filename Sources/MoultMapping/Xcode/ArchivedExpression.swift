/// Turns an NSKeyedArchiver archive whose root is an `NSExpression` (what Xcode stores in a mapping
/// model's `valueexpressiondata`) into Moult's expression text, as Xcode shows it.
///
/// Supported: key-path expressions (`$source.color`, `SELF.name`), variables (`$manager`), constants
/// (strings, numbers, booleans, nil, arrays of them), `SELF`, aggregates (`{1, 2}`), functions on an
/// operand (`FUNCTION($manager, "selector:", args…)`) and the built-in functions (`sum:(…)`,
/// arithmetic as infix operators). Anything else throws, naming the class.
struct ArchivedExpression {
    private let objects: [PropertyListValue]
    private let root: Int
    /// The deepest nesting of expressions accepted.
    static let maximumDepth = 256

    init(archive bytes: [UInt8]) throws(PropertyListError) {
        guard case .dictionary(let top) = try BinaryPropertyListReader(bytes).read() else {
            throw PropertyListError("the archive's top object is not a dictionary")
        }
        guard top["$archiver"]?.string == "NSKeyedArchiver" else {
            throw PropertyListError("not an NSKeyedArchiver archive ($archiver is \(top["$archiver"]?.string ?? "missing"))")
        }
        guard let objects = top["$objects"]?.array else { throw PropertyListError("the archive has no $objects") }
        guard let root = top["$top"]?.dictionary?["root"]?.uid else { throw PropertyListError("the archive has no root object") }
        self.objects = objects
        self.root = root
    }

    /// The root object's expression text.
    func text() throws(PropertyListError) -> String {
        try expression(root, depth: 0)
    }

    /// The root object as a dictionary of strings (an archived `userInfo`).
    func stringDictionary() throws(PropertyListError) -> [String: String] {
        let object = try resolve(root)
        guard let keys = object.dictionary?["NS.keys"]?.array, let values = object.dictionary?["NS.objects"]?.array,
            keys.count == values.count
        else { throw PropertyListError("the archived user info is not a dictionary") }
        var result: [String: String] = [:]
        for (key, value) in zip(keys, values) {
            guard let keyUID = key.uid, let keyText = try resolve(keyUID).string else {
                throw PropertyListError("a user info key is not a string")
            }
            guard let valueUID = value.uid else { throw PropertyListError("a user info value is not an object reference") }
            switch try resolve(valueUID) {
            case .string(let text): result[keyText] = text
            case .integer(let value): result[keyText] = String(value)
            case .real(let value): result[keyText] = String(value)
            case .bool(let value): result[keyText] = value ? "YES" : "NO"
            default:
                let object = try resolve(valueUID).dictionary ?? [:]
                guard let text = try member(object, "NS.string")?.string else {
                    throw PropertyListError("the user info value of '\(keyText)' is not a string or a number")
                }
                result[keyText] = text
            }
        }
        return result
    }

    // MARK: - Objects

    private func resolve(_ uid: Int) throws(PropertyListError) -> PropertyListValue {
        guard uid >= 0, uid < objects.count else { throw PropertyListError("object reference \(uid) is out of range") }
        return objects[uid]
    }

    private func className(of object: [String: PropertyListValue]) throws(PropertyListError) -> String {
        guard let classUID = object["$class"]?.uid, let name = try resolve(classUID).dictionary?["$classname"]?.string else {
            throw PropertyListError("an archived object has no class name")
        }
        return name
    }

    private func member(_ object: [String: PropertyListValue], _ key: String) throws(PropertyListError) -> PropertyListValue? {
        guard let value = object[key] else { return nil }
        if let uid = value.uid {
            let resolved = try resolve(uid)
            return resolved.string == "$null" && uid == 0 ? nil : resolved
        }
        return value
    }

    private func arrayElements(_ object: PropertyListValue?) throws(PropertyListError) -> [Int] {
        guard let object else { return [] }
        guard let elements = object.dictionary?["NS.objects"]?.array else {
            throw PropertyListError("expected an archived array")
        }
        var result: [Int] = []
        for element in elements {
            guard let uid = element.uid else { throw PropertyListError("an array element is not an object reference") }
            result.append(uid)
        }
        return result
    }

    // MARK: - Expressions

    private func expression(_ uid: Int, depth: Int) throws(PropertyListError) -> String {
        guard depth <= Self.maximumDepth else { throw PropertyListError("expressions nest deeper than \(Self.maximumDepth) levels") }
        guard let object = try resolve(uid).dictionary else { throw PropertyListError("an expression is not an archived object") }
        let name = try className(of: object)
        switch name {
        case "NSConstantValueExpression":
            guard let value = object["NSConstantValue"], let valueUID = value.uid else { return "nil" }
            return try constant(valueUID, depth: depth + 1)
        case "NSVariableExpression":
            guard let variable = try member(object, "NSVariable")?.string else { throw PropertyListError("a variable expression has no name") }
            return "$" + variable
        case "NSSelfExpression":
            return "SELF"
        case "NSKeyPathSpecifierExpression":
            guard let keyPath = try member(object, "NSKeyPath")?.string else { throw PropertyListError("a key path specifier has no key path") }
            return ExpressionText.keyPath(keyPath)
        case "NSAggregateExpression":
            var collection = try member(object, "NSCollection")
            if collection == nil { collection = try member(object, "NSArguments") }
            let elements = try arrayElements(collection)
            var parts: [String] = []
            for element in elements { parts.append(try expression(element, depth: depth + 1)) }
            return "{" + parts.joined(separator: ", ") + "}"
        case "NSKeyPathExpression", "NSFunctionExpression":
            return try function(object, depth: depth)
        default:
            // An expression type number Moult knows but whose class name differs (a private subclass).
            if let type = object["NSExpressionType"]?.integer {
                switch type {
                case 0: return try constant(object["NSConstantValue"]?.uid ?? 0, depth: depth + 1)
                case 1: return "SELF"
                case 2:
                    if let variable = try member(object, "NSVariable")?.string { return "$" + variable }
                case 3, 4: return try function(object, depth: depth)
                default: break
                }
            }
            throw PropertyListError("archived expressions of class \(name) are not supported")
        }
    }

    /// Infix operators for Core Data's built-in arithmetic functions.
    private static let infixOperators: [String: String] = [
        "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "raise:toPower:": "**",
    ]

    private func function(_ object: [String: PropertyListValue], depth: Int) throws(PropertyListError) -> String {
        guard let selector = try member(object, "NSSelectorName")?.string else {
            throw PropertyListError("a function expression has no selector")
        }
        var arguments: [String] = []
        for argument in try arrayElements(try member(object, "NSArguments")) {
            arguments.append(try expression(argument, depth: depth + 1))
        }
        let operandUID = object["NSOperand"]?.uid
        var operand: String?
        if let operandUID, operandUID != 0, try !builtInOperand(operandUID) {
            operand = try expression(operandUID, depth: depth + 1)
        }
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

    /// Whether an operand stands for Core Data's built-in function library (not a real operand).
    ///
    /// *Unverified* against a real archive: no fixture holds a built-in function. The operand is then
    /// a constant holding a class, or a `$null`.
    private func builtInOperand(_ uid: Int) throws(PropertyListError) -> Bool {
        guard let object = try resolve(uid).dictionary else { return try resolve(uid).string == "$null" }
        guard try className(of: object) == "NSConstantValueExpression" else { return false }
        guard let value = object["NSConstantValue"]?.uid, value != 0 else { return false }
        guard let inner = try resolve(value).dictionary else { return false }
        return inner["$classname"] != nil || (try? className(of: inner)) == "NSPredicateUtilities"
    }

    private func parenthesized(_ text: String) -> String {
        text.contains(" ") && !(text.hasPrefix("FUNCTION(") || text.hasPrefix("{")) ? "(\(text))" : text
    }

    // MARK: - Constants

    private func constant(_ uid: Int, depth: Int) throws(PropertyListError) -> String {
        guard depth <= Self.maximumDepth else { throw PropertyListError("constants nest deeper than \(Self.maximumDepth) levels") }
        if uid == 0 { return "nil" }
        switch try resolve(uid) {
        case .string(let text): return ExpressionText.quoted(text)
        case .integer(let value): return String(value)
        case .real(let value):
            let text = String(value)
            return text.contains(".") || text.contains("e") || text.contains("n") ? text : text + ".0"
        case .bool(let value): return value ? "YES" : "NO"
        case .null: return "nil"
        case .dictionary(let object):
            let name = try className(of: object)
            switch name {
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                var parts: [String] = []
                for element in try arrayElements(.dictionary(object)) { parts.append(try constant(element, depth: depth + 1)) }
                return "{" + parts.joined(separator: ", ") + "}"
            case "NSString", "NSMutableString":
                guard let text = try member(object, "NS.string")?.string else { throw PropertyListError("an archived string has no text") }
                return ExpressionText.quoted(text)
            case "NSDate":
                guard case .real(let time)? = object["NS.time"] else { throw PropertyListError("an archived date has no time") }
                return "CAST(\(time), \"NSDate\")"
            case "NSNull":
                return "nil"
            default:
                throw PropertyListError("archived constants of class \(name) are not supported")
            }
        default:
            throw PropertyListError("an archived constant of an unsupported kind")
        }
    }
}
