import Foundation
import MoultModel

// MARK: - Moult's values as Core Data hands them to a policy, and back

/// Converts between Moult's ``/MoultModel/Value`` and the Foundation values Core Data gives a policy:
/// numbers and booleans as `NSNumber` (so `as? Int`, `as? Int16`, `as? Double` and `as? Bool` all
/// cast, as they do on Apple platforms), strings as `String`, binary data as `Data` (`as? NSData`
/// casts), dates, UUIDs and decimals as themselves.
enum ValueBridge {
    /// The Foundation value of an attribute value; nil for `.null`. Objects are resolved by the caller.
    static func foundationValue(_ value: Value) -> Any? {
        switch value {
        case .null: nil
        case .bool(let flag): NSNumber(value: flag)
        case .int(let number): NSNumber(value: number)
        case .double(let number): NSNumber(value: number)
        case .decimal(let number): NSDecimalNumber(decimal: number)
        case .string(let text): text
        case .date(let date): date
        case .data(let bytes): Data(bytes)
        case .uuid(let uuid): uuid
        case .object, .array: nil
        }
    }

    /// The value of a Foundation value for an attribute of `type`, or nil when it cannot be one.
    static func value(_ any: Any?, for type: AttributeType) -> Value? {
        guard let any, !(any is NSNull) else { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if let number = integer(any) { return .int(number) }
            return nil
        case .double, .float:
            if let number = any as? Double { return .double(number) }
            if let number = any as? Float { return .double(Double(number)) }
            if let number = any as? NSNumber { return .double(number.doubleValue) }
            return integer(any).map { .double(Double($0)) }
        case .decimal:
            if let number = any as? Decimal { return .decimal(number) }
            if let number = any as? NSDecimalNumber { return .decimal(number.decimalValue) }
            if let number = any as? NSNumber { return .decimal(Decimal(number.doubleValue)) }
            return nil
        case .boolean:
            if let flag = any as? Bool { return .bool(flag) }
            if let number = integer(any) { return .bool(number != 0) }
            return nil
        case .string:
            if let text = any as? String { return .string(text) }
            if let text = any as? NSString { return .string(String(describing: text)) }
            return nil
        case .date:
            return (any as? Date).map(Value.date)
        case .binary, .transformable:
            if let data = any as? Data { return .data([UInt8](data)) }
            if let data = any as? NSData { return .data([UInt8](Data(referencing: data))) }
            if let bytes = any as? [UInt8] { return .data(bytes) }
            return nil
        case .uuid:
            if let uuid = any as? UUID { return .uuid(uuid) }
            return nil
        case .uri:
            if let url = any as? URL { return .string(url.absoluteString) }
            return (any as? String).map(Value.string)
        default:
            return untyped(any)
        }
    }

    /// A Foundation value with no attribute to say its type: a value expression's result, a
    /// `userInfo` entry, a predicate's argument. Objects and collections are the caller's.
    static func untyped(_ any: Any) -> Value? {
        if any is NSNull { return .null }
        if type(of: any) is NSNumber.Type, let number = any as? NSNumber {
            let type = String(cString: number.objCType)
            if type == "c" || type == "B" { return .bool(number.boolValue) }
            if type == "d" || type == "f" { return .double(number.doubleValue) }
            return .int(number.int64Value)
        }
        switch any {
        case let flag as Bool where type(of: any) == Bool.self: return .bool(flag)
        case let number as Double where type(of: any) == Double.self: return .double(number)
        case let number as Float where type(of: any) == Float.self: return .double(Double(number))
        case let text as String: return .string(text)
        case let date as Date: return .date(date)
        case let data as Data: return .data([UInt8](data))
        case let uuid as UUID: return .uuid(uuid)
        case let number as Decimal where type(of: any) == Decimal.self: return .decimal(number)
        default: return integer(any).map(Value.int)
        }
    }

    private static func integer(_ any: Any) -> Int64? {
        switch any {
        case let number as Int: Int64(number)
        case let number as Int16: Int64(number)
        case let number as Int32: Int64(number)
        case let number as Int64: number
        case let number as Int8: Int64(number)
        case let number as UInt8: Int64(number)
        case let number as UInt16: Int64(number)
        case let number as UInt32: Int64(number)
        case let number as NSNumber: number.int64Value
        default: nil
        }
    }
}
