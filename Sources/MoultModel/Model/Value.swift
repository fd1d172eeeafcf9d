public import Foundation

/// The identity of an object in a store: its entity's number (`Z_ENT`) and its primary key (`Z_PK`).
public struct ObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var entity: Int32
    public var primaryKey: Int64

    public init(entity: Int32, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey)
    }

    public var description: String { "\(entity)/\(primaryKey)" }
}

/// A value of an attribute, a relationship or an expression.
///
/// Attribute values are typed as the store reads them: integers and booleans as `Int64`/`Bool`,
/// Double and Float as `Double`, dates as `Date`, UUIDs as `UUID`, binary and transformable data as
/// bytes. Relationships are object ids; to-many ones are arrays of them.
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data([UInt8])
    case uuid(UUID)
    case object(ObjectID)
    case array([Value])

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let b): b ? "YES" : "NO"
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .decimal(let d): "\(d)"
        case .string(let s): "\"\(s)\""
        case .date(let d): "CAST(\(d.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let bytes): "<\(bytes.count) bytes>"
        case .uuid(let u): u.uuidString
        case .object(let id): "<object \(id)>"
        case .array(let values): "{" + values.map(\.description).joined(separator: ", ") + "}"
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
}
