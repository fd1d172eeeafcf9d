public import Foundation

/// A property-list value, as a Sendable value: what a binary property list (`bplist00`) holds,
/// NSKeyedArchiver's object references (``uid(_:)``) included.
///
/// Store metadata keeps every key as one of these, so that keys an application added survive a read
/// and a rewrite unchanged; keyed archives (mapping models' expressions and embedded models, the
/// store's model cache) are read as one of these, then navigated with ``KeyedArchive``.
///
/// ```swift
/// let value = try PropertyListValue(binaryPropertyList: bytes)
/// let hashes = value.dictionaryValue?["NSStoreModelVersionHashes"]?.dictionaryValue
/// let bytes = PropertyListValue.dictionary(["n": .integer(7)]).binaryPropertyList()
/// ```
public enum PropertyListValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data([UInt8])
    /// An NSKeyedArchiver object reference: an index into the archive's `$objects`.
    case uid(Int)
    /// The `null` object of the binary format (marker `0x00`); Apple's writers do not produce it.
    case null
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var integerValue: Int64? { if case .integer(let i) = self { i } else { nil } }
    public var realValue: Double? { if case .real(let d) = self { d } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var dataValue: [UInt8]? { if case .data(let d) = self { d } else { nil } }
    public var uidValue: Int? { if case .uid(let u) = self { u } else { nil } }
    public var arrayValue: [PropertyListValue]? { if case .array(let a) = self { a } else { nil } }
    public var dictionaryValue: [String: PropertyListValue]? { if case .dictionary(let d) = self { d } else { nil } }

    /// A short description of the value's kind, for error messages (never the whole value: a shared
    /// value can be exponentially long when written out).
    public var summary: String {
        switch self {
        case .string(let s): s.count <= 40 ? "the string \"\(s)\"" : "a string of \(s.count) characters"
        case .integer(let i): "the integer \(i)"
        case .real(let d): "the real \(d)"
        case .bool(let b): b ? "true" : "false"
        case .date: "a date"
        case .data(let bytes): "\(bytes.count) bytes of data"
        case .uid(let u): "the object reference \(u)"
        case .null: "null"
        case .array(let values): "an array of \(values.count)"
        case .dictionary(let values): "a dictionary of \(values.count) keys"
        }
    }

    public var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .bool(let b): b ? "true" : "false"
        case .date(let d): d.description
        case .data(let bytes): "<\(bytes.count) bytes>"
        case .uid(let u): "UID(\(u))"
        case .null: "null"
        case .array(let values): "(" + values.map(\.description).joined(separator: ", ") + ")"
        case .dictionary(let values):
            "{" + values.keys.sorted().map { "\($0) = \(values[$0]!)" }.joined(separator: "; ") + "}"
        }
    }
}

// MARK: - Foundation

extension PropertyListValue {
    /// Converts a value from `PropertyListSerialization` (an XML or OpenStep property list); nil for a
    /// type a property list cannot hold.
    public init?(foundation value: Any) {
        switch value {
        case let string as String: self = .string(string)
        case let data as Data: self = .data(Array(data))
        case let date as Date: self = .date(date)
        case let array as [Any]:
            var values: [PropertyListValue] = []
            for element in array {
                guard let converted = PropertyListValue(foundation: element) else { return nil }
                values.append(converted)
            }
            self = .array(values)
        case let dictionary as [String: Any]:
            var values: [String: PropertyListValue] = [:]
            for (key, element) in dictionary {
                guard let converted = PropertyListValue(foundation: element) else { return nil }
                values[key] = converted
            }
            self = .dictionary(values)
        case let bool as Bool where type(of: value) == Bool.self: self = .bool(bool)
        case let number as NSNumber:
            let kind = String(cString: number.objCType)
            if kind == "c" || kind == "B" {
                self = .bool(number.boolValue)
            } else if kind == "f" || kind == "d" {
                self = .real(number.doubleValue)
            } else {
                self = .integer(number.int64Value)
            }
        case let int as Int: self = .integer(Int64(int))
        case let int as Int64: self = .integer(int)
        case let double as Double: self = .real(double)
        default: return nil
        }
    }
}
