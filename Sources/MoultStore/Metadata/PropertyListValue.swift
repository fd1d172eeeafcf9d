public import Foundation

/// A property-list value, kept as a Sendable value so that metadata keys an application added survive a
/// read and a rewrite unchanged.
public enum PropertyListValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data([UInt8])
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// Converts a value from `PropertyListSerialization`; nil for a type a property list cannot hold.
    init?(foundation value: Any) {
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

    /// The value as `PropertyListSerialization` writes it.
    var foundationValue: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): NSNumber(value: i)
        case .real(let d): NSNumber(value: d)
        case .bool(let b): NSNumber(value: b)
        case .date(let d): d
        case .data(let bytes): Data(bytes)
        case .array(let values): values.map(\.foundationValue)
        case .dictionary(let values): values.mapValues(\.foundationValue)
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var integerValue: Int64? { if case .integer(let i) = self { i } else { nil } }
    public var dataValue: [UInt8]? { if case .data(let d) = self { d } else { nil } }
    public var arrayValue: [PropertyListValue]? { if case .array(let a) = self { a } else { nil } }
    public var dictionaryValue: [String: PropertyListValue]? { if case .dictionary(let d) = self { d } else { nil } }

    public var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .bool(let b): b ? "true" : "false"
        case .date(let d): d.description
        case .data(let bytes): "<\(bytes.count) bytes>"
        case .array(let values): "(" + values.map(\.description).joined(separator: ", ") + ")"
        case .dictionary(let values):
            "{" + values.keys.sorted().map { "\($0) = \(values[$0]!)" }.joined(separator: "; ") + "}"
        }
    }
}
