/// The type of an attribute, as Xcode writes it in a model's `attributeType`.
///
/// Each type has the numeric code Core Data gives it; the code enters the attribute's version hash.
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    case undefined = "Undefined"
    case integer16 = "Integer 16"
    case integer32 = "Integer 32"
    case integer64 = "Integer 64"
    case decimal = "Decimal"
    case double = "Double"
    case float = "Float"
    case string = "String"
    case boolean = "Boolean"
    case date = "Date"
    case binary = "Binary"
    case uuid = "UUID"
    case uri = "URI"
    case transformable = "Transformable"
    case objectID = "ObjectID"
    /// Composite attributes (the code 2100 is unverified against a real store).
    case composite = "Composite"

    /// Core Data's `NSAttributeType` raw value.
    public var code: Int32 {
        switch self {
        case .undefined: 0
        case .integer16: 100
        case .integer32: 200
        case .integer64: 300
        case .decimal: 400
        case .double: 500
        case .float: 600
        case .string: 700
        case .boolean: 800
        case .date: 900
        case .binary: 1000
        case .uuid: 1100
        case .uri: 1200
        case .transformable: 1800
        case .objectID: 2000
        case .composite: 2100
        }
    }

    /// The type with Core Data's numeric code, or nil for an unknown code.
    public init?(code: Int32) {
        guard let type = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = type
    }

    /// Whether values of this type are integers (Integer 16/32/64).
    public var isInteger: Bool {
        self == .integer16 || self == .integer32 || self == .integer64
    }

    /// Whether values of this type are numbers (integers, Decimal, Double, Float, Boolean excluded).
    public var isNumeric: Bool {
        isInteger || self == .decimal || self == .double || self == .float
    }
}
