import Foundation
package import MoultModel

/// Default values of attributes, and values brought to the type of the attribute they are stored in.
package enum DefaultValues {
    /// The attribute's default value as its type reads it, or `.null` when it has none.
    package static func value(of attribute: AttributeDescription) -> Value {
        if attribute.attributeType == .date {
            return attribute.defaultDateTimeInterval.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        }
        guard let text = attribute.defaultValueString else { return .null }
        return parse(text, as: attribute.attributeType)
    }

    /// A value written as text in a model (`defaultValueString`, validation bounds), read as `type`.
    static func parse(_ text: String, as type: AttributeType) -> Value {
        switch type {
        case .integer16, .integer32, .integer64:
            if let i = Int64(text) { return .int(i) }
            if let d = Double(text) { return .int(Int64(d)) }
            return .null
        case .double, .float:
            return Double(text).map(Value.double) ?? .null
        case .decimal:
            return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(Value.decimal) ?? .null
        case .boolean:
            switch text.uppercased() {
            case "YES", "TRUE", "1": return .bool(true)
            case "NO", "FALSE", "0": return .bool(false)
            default: return .null
            }
        case .string, .uri:
            return .string(text)
        case .uuid:
            return UUID(uuidString: text).map(Value.uuid) ?? .null
        case .date:
            return Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .binary, .transformable, .objectID, .composite, .undefined:
            return .null
        }
    }

    /// A value brought to the attribute type it is stored in, as Core Data's `NSNumber` conversions
    /// would: numbers between integer, floating and boolean types; anything else unchanged.
    @inline(__always)
    package static func coerce(_ value: Value, to type: AttributeType) -> Value {
        switch (type, value) {
        case (.integer16, .double(let d)), (.integer32, .double(let d)), (.integer64, .double(let d)):
            return d.isFinite && abs(d) < 9.2e18 ? .int(Int64(d)) : value
        case (.integer16, .bool(let b)), (.integer32, .bool(let b)), (.integer64, .bool(let b)):
            return .int(b ? 1 : 0)
        case (.integer16, .decimal(let d)), (.integer32, .decimal(let d)), (.integer64, .decimal(let d)):
            return .int(Int64(truncating: NSDecimalNumber(decimal: d)))
        case (.double, .int(let i)), (.float, .int(let i)):
            return .double(Double(i))
        case (.double, .bool(let b)), (.float, .bool(let b)):
            return .double(b ? 1 : 0)
        case (.double, .decimal(let d)), (.float, .decimal(let d)):
            return .double(NSDecimalNumber(decimal: d).doubleValue)
        case (.decimal, .int(let i)):
            return .decimal(Decimal(i))
        case (.decimal, .double(let d)):
            return .decimal(Decimal(d))
        case (.boolean, .int(let i)):
            return .bool(i != 0)
        case (.boolean, .double(let d)):
            return .bool(d != 0)
        case (_, .array(let values)) where values.count == 1:
            return coerce(values[0], to: type)
        default:
            return value
        }
    }
}
