import Foundation
public import MoultModel

/// A function callable from expressions: a built-in one, or one a policy registers.
struct FunctionImplementation: Sendable {
    /// How many arguments it takes; nil for any number.
    var arity: Int?
    /// Whether it may give a different result for the same arguments (`now`, `random`): never
    /// pushed down to SQL, never folded.
    var isVolatile = false
    var body: @Sendable ([Value]) throws(ExpressionError) -> Value
}

/// Functions a policy registers, callable as `FUNCTION(receiver, "selector", args…)` or as
/// `selector(args…)`.
///
/// ```swift
/// var functions = ExpressionFunctionRegistry()
/// functions.register("initials:") { receiver, arguments in
///     guard case .string(let name) = arguments.first else { return .null }
///     return .string(String(name.prefix(1)))
/// }
/// let compiler = ExpressionCompiler(schema: schema, functions: functions)
/// ```
public struct ExpressionFunctionRegistry: Sendable {
    /// A registered function: the evaluated receiver (`.null` in the short form) and arguments.
    public typealias Function = @Sendable (_ receiver: Value, _ arguments: [Value]) throws -> Value

    var functions: [String: Function] = [:]

    public init() {}

    /// Registers (or replaces) the function for a selector, e.g. `"initials:"`.
    public mutating func register(_ selector: String, _ function: @escaping Function) {
        functions[selector] = function
    }

    /// Whether a selector is registered.
    public func contains(_ selector: String) -> Bool { functions[selector] != nil }
}

enum BuiltinFunctions {
    /// Core Data's built-in `NSExpression` functions.
    static let table: [String: FunctionImplementation] = {
        var table: [String: FunctionImplementation] = [:]
        func aggregate(_ name: String, _ body: @escaping @Sendable ([Value]) throws(ExpressionError) -> Value) {
            table[name] = FunctionImplementation(arity: nil) { (arguments) throws(ExpressionError) -> Value in
                try body(elements(arguments))
            }
        }
        func unary(_ name: String, _ body: @escaping @Sendable (Value) throws(ExpressionError) -> Value) {
            table[name] = FunctionImplementation(arity: 1) { (arguments) throws(ExpressionError) -> Value in
                arguments[0].isNull ? .null : try body(arguments[0])
            }
        }
        func math(_ name: String, _ body: @escaping @Sendable (Double) -> Double) {
            unary(name) { (value) throws(ExpressionError) -> Value in .double(body(try number(value, name).doubleValue)) }
        }
        func binary(_ name: String, _ body: @escaping @Sendable (Value, Value) throws(ExpressionError) -> Value) {
            table[name] = FunctionImplementation(arity: 2) { (arguments) throws(ExpressionError) -> Value in
                try body(arguments[0], arguments[1])
            }
        }
        func bitwise(_ name: String, _ body: @escaping @Sendable (Int64, Int64) -> Int64) {
            binary(name) { (a, b) throws(ExpressionError) -> Value in
                if a.isNull || b.isNull { return .null }
                return .int(body(try integer(a, name), try integer(b, name)))
            }
        }

        aggregate("sum:") { (values) throws(ExpressionError) -> Value in
            var total: Value = .int(0)
            for value in values where !value.isNull { total = try Arithmetic.apply(.add, total, value) }
            return total
        }
        aggregate("count:") { values in .int(Int64(values.count)) }
        aggregate("min:") { (values) throws(ExpressionError) -> Value in try extreme(values, wantsLess: true) }
        aggregate("max:") { (values) throws(ExpressionError) -> Value in try extreme(values, wantsLess: false) }
        aggregate("average:") { (values) throws(ExpressionError) -> Value in
            let numbers = try values.filter { !$0.isNull }.map { (value) throws(ExpressionError) -> Double in try number(value, "average:").doubleValue }
            return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        }
        aggregate("median:") { (values) throws(ExpressionError) -> Value in
            let sorted = try sortedNumbers(values, "median:")
            guard !sorted.isEmpty else { return .null }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? .double(sorted[middle]) : .double((sorted[middle - 1] + sorted[middle]) / 2)
        }
        aggregate("mode:") { values in
            var counts: [Value: Int] = [:]
            var order: [Value] = []
            for value in values {
                if counts[value] == nil { order.append(value) }
                counts[value, default: 0] += 1
            }
            let top = counts.values.max() ?? 0
            return .array(order.filter { counts[$0] == top })
        }
        aggregate("stddev:") { (values) throws(ExpressionError) -> Value in
            let numbers = try sortedNumbers(values, "stddev:")
            guard !numbers.isEmpty else { return .null }
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return .double(variance.squareRoot())
        }
        aggregate("distinct:") { values in
            var seen = Set<Value>()
            return .array(values.filter { seen.insert($0).inserted })
        }
        table["random:"] = FunctionImplementation(arity: nil, isVolatile: true) { (arguments) throws(ExpressionError) -> Value in
            let values = elements(arguments)
            return values.randomElement() ?? .null
        }
        table["random"] = FunctionImplementation(arity: 0, isVolatile: true) { _ in .double(Double.random(in: 0..<1)) }
        table["now"] = FunctionImplementation(arity: 0, isVolatile: true) { _ in .date(Date()) }

        binary("add:to:") { (a, b) throws(ExpressionError) -> Value in try Arithmetic.apply(.add, a, b) }
        binary("from:subtract:") { (a, b) throws(ExpressionError) -> Value in try Arithmetic.apply(.subtract, a, b) }
        binary("multiply:by:") { (a, b) throws(ExpressionError) -> Value in try Arithmetic.apply(.multiply, a, b) }
        binary("divide:by:") { (a, b) throws(ExpressionError) -> Value in try Arithmetic.apply(.divide, a, b) }
        binary("raise:toPower:") { (a, b) throws(ExpressionError) -> Value in try Arithmetic.apply(.power, a, b) }
        binary("modulus:by:") { (a, b) throws(ExpressionError) -> Value in
            if a.isNull || b.isNull { return .null }
            let x = try number(a, "modulus:by:")
            let y = try number(b, "modulus:by:")
            if case .int(let i) = x, case .int(let j) = y, j != 0, !(i == .min && j == -1) { return .int(i % j) }
            return .double(fmod(x.doubleValue, y.doubleValue))
        }
        math("sqrt:") { $0.squareRoot() }
        math("log:") { log10($0) }
        math("ln:") { log($0) }
        math("exp:") { exp($0) }
        unary("floor:") { (value) throws(ExpressionError) -> Value in try rounding(value, .down, "floor:") }
        unary("ceiling:") { (value) throws(ExpressionError) -> Value in try rounding(value, .up, "ceiling:") }
        unary("trunc:") { (value) throws(ExpressionError) -> Value in try rounding(value, .towardZero, "trunc:") }
        unary("abs:") { (value) throws(ExpressionError) -> Value in
            switch try number(value, "abs:") {
            case .int(let i): return i == .min ? .double(-Double(i)) : .int(abs(i))
            case .double(let d): return .double(abs(d))
            case .decimal(let d): return .decimal(abs(d))
            }
        }
        unary("uppercase:") { (value) throws(ExpressionError) -> Value in .string(try string(value, "uppercase:").uppercased()) }
        unary("lowercase:") { (value) throws(ExpressionError) -> Value in .string(try string(value, "lowercase:").lowercased()) }
        unary("length:") { (value) throws(ExpressionError) -> Value in .int(Int64(try string(value, "length:").utf16.count)) }
        table["noindex:"] = FunctionImplementation(arity: 1) { arguments in arguments[0] }
        bitwise("bitwiseAnd:with:") { $0 & $1 }
        bitwise("bitwiseOr:with:") { $0 | $1 }
        bitwise("bitwiseXor:with:") { $0 ^ $1 }
        bitwise("leftshift:by:") { $0 << $1 }
        bitwise("rightshift:by:") { $0 >> $1 }
        unary("onesComplement:") { (value) throws(ExpressionError) -> Value in .int(~(try integer(value, "onesComplement:"))) }
        binary("castObject:toType:") { (value, type) throws(ExpressionError) -> Value in
            guard case .string(let name) = type else {
                throw ExpressionError(.typeMismatch, "castObject:toType: needs a type name, not \(type)")
            }
            return try Cast.apply(value, to: name)
        }
        return table
    }()

    /// The arguments of an aggregate function: one array argument's elements, or the arguments.
    static func elements(_ arguments: [Value]) -> [Value] {
        if arguments.count == 1, case .array(let values) = arguments[0] { return values }
        if arguments.count == 1, arguments[0].isNull { return [] }
        return arguments
    }

    static func number(_ value: Value, _ function: String) throws(ExpressionError) -> Number {
        guard let number = Number(value) else {
            throw ExpressionError(.typeMismatch, "\(function) needs a number, not \(kindName(value)) (\(value))")
        }
        return number
    }

    static func integer(_ value: Value, _ function: String) throws(ExpressionError) -> Int64 {
        switch try number(value, function) {
        case .int(let i): return i
        case .double(let d) where d.rounded(.towardZero) == d && abs(d) < 9.2e18: return Int64(d)
        case .decimal(let d) where Decimal(NSDecimalNumber(decimal: d).int64Value) == d:
            return NSDecimalNumber(decimal: d).int64Value
        default: throw ExpressionError(.typeMismatch, "\(function) needs an integer, not \(value)")
        }
    }

    static func string(_ value: Value, _ function: String) throws(ExpressionError) -> String {
        guard case .string(let text) = value else {
            throw ExpressionError(.typeMismatch, "\(function) needs a string, not \(kindName(value)) (\(value))")
        }
        return text
    }

    static func rounding(_ value: Value, _ rule: FloatingPointRoundingRule, _ function: String) throws(ExpressionError) -> Value {
        switch try number(value, function) {
        case .int(let i): return .double(Double(i))
        case .double(let d): return .double(d.rounded(rule))
        case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue.rounded(rule))
        }
    }

    static func sortedNumbers(_ values: [Value], _ function: String) throws(ExpressionError) -> [Double] {
        var numbers: [Double] = []
        for value in values where !value.isNull { numbers.append(try number(value, function).doubleValue) }
        return numbers.sorted()
    }

    static func extreme(_ values: [Value], wantsLess: Bool) throws(ExpressionError) -> Value {
        var best: Value = .null
        for value in values where !value.isNull {
            if best.isNull {
                best = value
            } else if let order = try Semantics.order(value, best), wantsLess ? order < 0 : order > 0 {
                best = value
            }
        }
        return best
    }
}

/// `CAST(value, "Type")`.
enum Cast {
    static let supportedTypes: Set<String> = ["NSNumber", "NSString", "NSDate", "NSDecimalNumber"]

    static func apply(_ value: Value, to type: String) throws(ExpressionError) -> Value {
        if value.isNull { return .null }
        switch type {
        case "NSNumber":
            switch value {
            case .int, .double, .decimal: return value
            case .bool(let flag): return .int(flag ? 1 : 0)
            case .date(let date): return .double(date.timeIntervalSinceReferenceDate)
            case .string(let text):
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                if let integer = Int64(trimmed) { return .int(integer) }
                if let double = Double(trimmed) { return .double(double) }
                throw ExpressionError(.typeMismatch, "cannot cast \"\(text)\" to NSNumber")
            default: break
            }
        case "NSDecimalNumber":
            if let number = Number(value) { return .decimal(number.decimalValue) }
            if case .string(let text) = value, let decimal = Decimal(string: text) { return .decimal(decimal) }
        case "NSString":
            switch value {
            case .string: return value
            case .int(let i): return .string(String(i))
            case .double(let d): return .string(String(d))
            case .decimal(let d): return .string("\(d)")
            case .bool(let flag): return .string(flag ? "1" : "0")
            case .uuid(let uuid): return .string(uuid.uuidString)
            default: break
            }
        case "NSDate":
            switch value {
            case .date: return value
            default:
                if let number = Number(value) { return .date(Date(timeIntervalSinceReferenceDate: number.doubleValue)) }
            }
        default:
            throw ExpressionError(.unsupported, "CAST to \(type) is not supported", expected: "NSNumber, NSString, NSDate or NSDecimalNumber")
        }
        throw ExpressionError(.typeMismatch, "cannot cast \(kindName(value)) (\(value)) to \(type)")
    }
}
