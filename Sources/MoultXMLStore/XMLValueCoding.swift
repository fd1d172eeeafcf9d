import Foundation
import MoultModel

/// How each attribute type is written in an `<attribute name type>` element (see the article "The XML
/// store format" for which forms were seen in files Core Data wrote and which are inferred).
enum XMLValueCoding {
    /// The `type` of an attribute element.
    static func typeName(_ type: AttributeType) -> String {
        switch type {
        case .integer16: "int16"
        case .integer32: "int32"
        case .integer64: "int64"
        case .decimal: "decimal"
        case .double: "double"
        case .float: "float"
        case .string: "string"
        case .boolean: "bool"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        case .transformable: "transformable"
        case .objectID: "objectid"
        case .composite: "composite"
        case .undefined: "undefined"
        }
    }

    // MARK: - Writing

    /// The element's text for a (non-null) value of an attribute of this type.
    ///
    /// A REAL (Double, Float, Date) is written so that it reads back to the same 64 bits: a Float
    /// column holds a double in SQLite and keeps it. A Decimal is written as SQLite holds it: an
    /// integer as its digits, a REAL as a double's text; never through Foundation's `Decimal`.
    static func text(_ value: Value, type: AttributeType) -> String? {
        switch value {
        case .null: return nil
        case .bool(let bool): return bool ? "1" : "0"
        case .int(let int):
            if type == .boolean { return int != 0 ? "1" : "0" }
            return isReal(type) ? realText(Double(int), type: type) : String(int)
        case .double(let double): return realText(double, type: type)
        case .decimal(let decimal): return "\(decimal)"
        case .string(let string): return XMLText.escaped(string)
        case .date(let date): return realText(date.timeIntervalSinceReferenceDate, type: .date)
        case .data(let bytes): return base64Text(bytes)
        case .uuid(let uuid): return uuid.uuidString
        case .object(let id): return "z\(id.primaryKey)"
        case .array: return nil
        }
    }

    private static func isReal(_ type: AttributeType) -> Bool { type == .double || type == .float || type == .date }

    /// A double's text: a date as Core Data writes one (``fixed(_:)``) when that text reads back to the
    /// same double, else (and for every other type) the shortest text that does (``shortest(_:)``).
    static func realText(_ value: Double, type: AttributeType) -> String {
        if type == .date, value.isFinite {
            let text = fixed(value)
            if let back = Double(text), back.bitPattern == value.bitPattern { return text }
        }
        return shortest(value)
    }

    /// The shortest text that reads back to the same double (Swift's `description`: `5e-324`,
    /// `6.62607015e-34`, `0.1`, `-0.0`); infinities and NaN as `inf`, `-inf`, `nan`.
    static func shortest(_ value: Double) -> String { value.description }

    /// A number as Core Data writes a date: the exact decimal expansion rounded to 20 digits after the
    /// point (`273512152.85076302289962768555`). Exact for every date after 1 January 2001 00:00:00.0001
    /// (any double above 2^-14 in magnitude); ``realText(_:type:)`` checks it.
    static func fixed(_ value: Double) -> String {
        String(format: "%.20f", value)
    }

    /// Base64 as the files show it: the first 76 characters, a line break, the rest, a line break.
    static func base64Text(_ bytes: [UInt8]) -> String {
        let text = Base64.encode(bytes)
        guard text.utf8.count > 76 else { return text + "\n" }
        let split = text.index(text.startIndex, offsetBy: 76)
        return text[..<split] + "\n" + text[split...] + "\n"
    }

    // MARK: - Reading

    /// A Decimal attribute's value (an integer or a REAL, as SQLite holds it) as Foundation's `Decimal`,
    /// as the SQLite cursor reads one for a migration: through the double's shortest text, a REAL too
    /// small for a Decimal as zero; nil for one too large.
    static func foundationDecimal(_ value: Value) -> Value? {
        switch value {
        case .int(let int): return .decimal(Decimal(int))
        case .double(let double):
            guard double.isFinite else { return nil }
            if let decimal = Decimal(string: shortest(double), locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN { return .decimal(decimal) }
            return abs(double) < 1e-100 ? .decimal(0) : nil
        default: return value
        }
    }

    /// The value of an attribute element's text, checked against the attribute's type.
    ///
    /// - Throws: A message saying why the text is not a value of the type.
    static func value(_ text: String, type: AttributeType) throws(XMLValueError) -> Value {
        switch type {
        case .integer16: return .int(try integer(text, in: Int64(Int16.min)...Int64(Int16.max), type))
        case .integer32: return .int(try integer(text, in: Int64(Int32.min)...Int64(Int32.max), type))
        case .integer64: return .int(try integer(text, in: Int64.min...Int64.max, type))
        case .boolean:
            switch trimmed(text) {
            case "1", "YES", "true": return .bool(true)
            case "0", "NO", "false": return .bool(false)
            default: throw XMLValueError("'\(text.prefix(40))' is not a boolean (1 or 0)")
            }
        case .double, .float: return .double(try real(text))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try real(text)))
        case .decimal: return try decimal(text)
        case .string, .uri, .objectID: return .string(text)
        case .uuid:
            guard let uuid = UUID(uuidString: trimmed(text)) else {
                throw XMLValueError("'\(text.prefix(40))' is not a UUID")
            }
            return .uuid(uuid)
        case .binary, .transformable, .composite, .undefined:
            guard let bytes = Base64.decode(text) else { throw XMLValueError("the text is not base64") }
            return .data(bytes)
        }
    }

    /// The value of an attribute element's text given as its UTF-8 bytes (valid UTF-8, as the parser
    /// gives them): as ``value(_:type:)``, an integer's and a boolean's plain digits read without a string.
    ///
    /// - Throws: A message saying why the text is not a value of the type.
    static func value(utf8 bytes: UnsafeBufferPointer<UInt8>, type: AttributeType) throws(XMLValueError) -> Value {
        switch type {
        case .integer16, .integer32, .integer64:
            let range: ClosedRange<Int64> =
                switch type {
                case .integer16: Int64(Int16.min)...Int64(Int16.max)
                case .integer32: Int64(Int32.min)...Int64(Int32.max)
                default: Int64.min...Int64.max
                }
            if let value = plainInteger(bytes), range.contains(value) { return .int(value) }
        case .boolean:
            if bytes.count == 1, bytes[0] == UInt8(ascii: "1") || bytes[0] == UInt8(ascii: "0") { return .bool(bytes[0] == UInt8(ascii: "1")) }
        case .binary, .transformable, .composite, .undefined:
            guard let decoded = Base64.decode(bytes) else { throw XMLValueError("the text is not base64") }
            return .data(decoded)
        default:
            break
        }
        return try value(String(decoding: bytes, as: UTF8.self), type: type)
    }

    /// `-12`, `305`: an optional sign and up to 18 digits, nothing else; nil for anything else (read
    /// then as ``value(_:type:)`` reads it).
    private static func plainInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = bytes.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        let digits = bytes.dropFirst(negative || first == UInt8(ascii: "+") ? 1 : 0)
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return negative ? -value : value
    }

    /// `text` without leading and trailing white space and line ends (Foundation's
    /// `.whitespacesAndNewlines`), without Foundation when its ends are plain ASCII.
    static func trimmed(_ text: String) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        if first > 0x20, first < 0x7F, last > 0x20, last < 0x7F { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func integer(_ text: String, in range: ClosedRange<Int64>, _ type: AttributeType) throws(XMLValueError) -> Int64 {
        guard let value = Int64(trimmed(text)), range.contains(value) else {
            throw XMLValueError("'\(text.prefix(40))' is not an integer that fits \(type.rawValue)")
        }
        return value
    }

    private static func real(_ text: String) throws(XMLValueError) -> Double {
        let trimmed = trimmed(text)
        guard !trimmed.isEmpty, trimmed.utf8.count < 400, let value = Double(trimmed) else {
            throw XMLValueError("'\(text.prefix(40))' is not a number")
        }
        return value
    }

    /// A Decimal as SQLite holds it: digits that fit 64 bits as an integer, any other number as a REAL
    /// (what SQLite's numeric affinity makes of that text, correctly rounded).
    private static func decimal(_ text: String) throws(XMLValueError) -> Value {
        let trimmed = trimmed(text)
        if let integer = Int64(trimmed) { return .int(integer) }
        guard isDecimalNumber(trimmed) || ["inf", "-inf"].contains(trimmed), let value = Double(trimmed) else {
            throw XMLValueError("'\(text.prefix(40))' is not a decimal number")
        }
        return .double(value)
    }

    /// `-12.5`, `3`, `1e-3`: what a decimal number's text may be (Foundation's parser reads a prefix of anything).
    private static func isDecimalNumber(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count < 400 else { return false }
        var digits = 0
        var seenPoint = false
        var seenExponent = false
        var previous: UInt8 = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): if seenPoint || seenExponent { return false } else { seenPoint = true }
            case UInt8(ascii: "e"), UInt8(ascii: "E"): if seenExponent || digits == 0 { return false } else { seenExponent = true }
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                if !(previous == 0 || previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E")) { return false }
            default: return false
            }
            previous = byte
        }
        return digits > 0 && previous >= UInt8(ascii: "0") && previous <= UInt8(ascii: "9")
    }
}

/// Why a text is not a value of its attribute's type; the reader adds where.
struct XMLValueError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
