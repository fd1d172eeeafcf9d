import Foundation
import MoultModel

// MARK: - Numbers

/// A number as arithmetic sees it: booleans count as the integers 0 and 1, as NSNumber does.
enum Number {
    case int(Int64)
    case double(Double)
    case decimal(Decimal)

    init?(_ value: Value) {
        switch value {
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .bool(let flag): self = .int(flag ? 1 : 0)
        case .decimal(let number): self = .decimal(number)
        default: return nil
        }
    }

    var doubleValue: Double {
        switch self {
        case .int(let number): Double(number)
        case .double(let number): number
        case .decimal(let number): NSDecimalNumber(decimal: number).doubleValue
        }
    }

    var decimalValue: Decimal {
        switch self {
        case .int(let number): Decimal(number)
        case .double(let number): number.isFinite ? Decimal(number) : .nan
        case .decimal(let number): number
        }
    }

    var value: Value {
        switch self {
        case .int(let number): .int(number)
        case .double(let number): .double(number)
        case .decimal(let number): .decimal(number)
        }
    }
}

/// Compares an integer with a double exactly (no rounding of the integer to a double), as SQLite
/// does. Nil when the double is NaN.
@inline(__always)
func compareExactly(_ integer: Int64, _ double: Double) -> Int? {
    if double.isNaN { return nil }
    if double >= 9_223_372_036_854_775_808.0 { return -1 }
    if double < -9_223_372_036_854_775_808.0 { return 1 }
    let whole = double.rounded(.down)
    let truncated = Int64(whole)
    if integer < truncated { return -1 }
    if integer > truncated { return 1 }
    return double > whole ? -1 : 0
}

@inline(__always)
func compareOrdered<T: Comparable>(_ lhs: T, _ rhs: T) -> Int {
    lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
}

func compareNumbers(_ lhs: Number, _ rhs: Number) -> Int? {
    switch (lhs, rhs) {
    case (.int(let a), .int(let b)): return compareOrdered(a, b)
    case (.int(let a), .double(let b)): return compareExactly(a, b)
    case (.double(let a), .int(let b)): return compareExactly(b, a).map { -$0 }
    case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : compareOrdered(a, b)
    case (.decimal, _), (_, .decimal):
        if case .double(let d) = lhs, d.isNaN { return nil }
        if case .double(let d) = rhs, d.isNaN { return nil }
        return compareOrdered(lhs.decimalValue, rhs.decimalValue)
    }
}

// MARK: - Strings

/// Compares strings literally, by their UTF-8 bytes (that is, by Unicode scalar values), as
/// NSString's literal comparison and SQLite's BINARY collation do.
@inline(__always)
func compareLiterally(_ lhs: String, _ rhs: String) -> Int {
    var left = lhs
    var right = rhs
    return left.withUTF8 { a in
        right.withUTF8 { b in
            let common = min(a.count, b.count)
            if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
                let result = memcmp(pa, pb, common)
                if result != 0 { return result < 0 ? -1 : 1 }
            }
            return compareOrdered(a.count, b.count)
        }
    }
}

/// The string with `[c]` / `[d]` applied: case folded and/or diacritics removed.
func fold(_ string: String, _ options: StringComparisonOptions) -> String {
    if options.isEmpty { return string }
    if string.utf8.allSatisfy({ $0 < 0x80 }) {
        guard options.contains(.caseInsensitive) else { return string }
        return String(decoding: string.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
    var foundation: String.CompareOptions = []
    if options.contains(.caseInsensitive) { foundation.insert(.caseInsensitive) }
    if options.contains(.diacriticInsensitive) { foundation.insert(.diacriticInsensitive) }
    return string.folding(options: foundation, locale: nil).precomposedStringWithCanonicalMapping
}

func kindName(_ value: Value) -> String {
    switch value {
    case .null: "nil"
    case .bool: "a Boolean"
    case .int: "an integer"
    case .double: "a double"
    case .decimal: "a decimal"
    case .string: "a string"
    case .date: "a date"
    case .data: "binary data"
    case .uuid: "a UUID"
    case .object: "an object"
    case .array: "a collection"
    }
}

// MARK: - Equality and order

enum Semantics {
    /// Core Data's `==`: nil equals only nil; numbers compare by value across integer, double,
    /// decimal and Boolean; strings literally (after `[c]`/`[d]` folding); other kinds by identity.
    static func equal(_ lhs: Value, _ rhs: Value, options: StringComparisonOptions = []) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let a), .string(let b)):
            if options.isEmpty { return compareLiterally(a, b) == 0 }
            return compareLiterally(fold(a, options), fold(b, options)) == 0
        case (.date(let a), .date(let b)): return a.timeIntervalSinceReferenceDate == b.timeIntervalSinceReferenceDate
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options: options) }
        default:
            if let a = Number(lhs), let b = Number(rhs) { return compareNumbers(a, b) == 0 }
            return lhs == rhs
        }
    }

    /// Orders two values for `<`, `<=`, `>`, `>=`, BETWEEN: nil when either is nil or NaN (the
    /// comparison is then false).
    ///
    /// - Throws: `.typeMismatch` for kinds that have no common order (a string and a number …).
    static func order(_ lhs: Value, _ rhs: Value, options: StringComparisonOptions = []) throws(ExpressionError) -> Int? {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)):
            if options.isEmpty { return compareLiterally(a, b) }
            return compareLiterally(fold(a, options), fold(b, options))
        case (.date(let a), .date(let b)):
            let x = a.timeIntervalSinceReferenceDate
            let y = b.timeIntervalSinceReferenceDate
            return x.isNaN || y.isNaN ? nil : compareOrdered(x, y)
        default:
            if let a = Number(lhs), let b = Number(rhs) { return compareNumbers(a, b) }
            throw ExpressionError(.typeMismatch, "cannot order \(kindName(lhs)) (\(lhs)) and \(kindName(rhs)) (\(rhs))")
        }
    }
}

// MARK: - Arithmetic

enum Arithmetic {
    /// `a op b`: nil if either is nil; integers stay integers for `+ - *` (a result that overflows
    /// Int64 becomes a double, as in SQLite); `/` and `**` give doubles; a decimal operand makes the
    /// result decimal.
    static func apply(_ op: ArithmeticOperator, _ lhs: Value, _ rhs: Value) throws(ExpressionError) -> Value {
        if lhs.isNull || rhs.isNull { return .null }
        guard let a = Number(lhs), let b = Number(rhs) else {
            throw ExpressionError(
                .typeMismatch, "cannot compute \(lhs) \(op.rawValue) \(rhs): \(kindName(Number(lhs) == nil ? lhs : rhs)) is not a number")
        }
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch op {
            case .add:
                let (result, overflow) = x.addingReportingOverflow(y)
                return overflow ? .double(Double(x) + Double(y)) : .int(result)
            case .subtract:
                let (result, overflow) = x.subtractingReportingOverflow(y)
                return overflow ? .double(Double(x) - Double(y)) : .int(result)
            case .multiply:
                let (result, overflow) = x.multipliedReportingOverflow(by: y)
                return overflow ? .double(Double(x) * Double(y)) : .int(result)
            case .divide: return .double(Double(x) / Double(y))
            case .power: return .double(pow(Double(x), Double(y)))
            }
        case (.decimal, _), (_, .decimal):
            let x = a.decimalValue
            let y = b.decimalValue
            switch op {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide: return .decimal(x / y)
            case .power: return .double(pow(a.doubleValue, b.doubleValue))
            }
        default:
            return .double(doubles(op, a.doubleValue, b.doubleValue))
        }
    }

    @inline(__always)
    static func doubles(_ op: ArithmeticOperator, _ x: Double, _ y: Double) -> Double {
        switch op {
        case .add: x + y
        case .subtract: x - y
        case .multiply: x * y
        case .divide: x / y
        case .power: pow(x, y)
        }
    }

    static func negate(_ value: Value) throws(ExpressionError) -> Value {
        switch Number(value) {
        case .int(let x): return x == .min ? .double(-Double(x)) : .int(-x)
        case .double(let x): return .double(-x)
        case .decimal(let x): return .decimal(-x)
        case nil:
            if value.isNull { return .null }
            throw ExpressionError(.typeMismatch, "cannot negate \(kindName(value)) (\(value))")
        }
    }
}
