import Foundation

/// What a command prints with `--json`: a value encoded by `JSONEncoder` on one line (unless
/// ``isPrettyPrinted``), its keys sorted, slashes as they are.
///
/// ```swift
/// struct Report: JSONReport { var store: String; var passed: Bool }
/// try Report(store: "a.sqlite", passed: true).printJSON()  // {"passed":true,"store":"a.sqlite"}
/// ```
protocol JSONReport: Encodable {
    /// Whether the report is printed on several lines, indented (one line by default).
    static var isPrettyPrinted: Bool { get }
}

extension JSONReport {
    static var isPrettyPrinted: Bool { false }

    /// The report as JSON text.
    func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if Self.isPrettyPrinted { encoder.outputFormatting.insert(.prettyPrinted) }
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// Prints the report as a line of JSON on standard output.
    func printJSON() throws {
        print(try jsonText())
    }
}

/// An optional a report always has: `null` when there is no value, where a plain optional's key
/// would be left out.
@propertyWrapper
struct ExplicitNull<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

/// Any JSON value, read and written back as it is (the status file in `status --json`).
enum JSONValue: Codable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension Double {
    /// A time in seconds as reports give it: to the millisecond.
    var roundedToMilliseconds: Double { (self * 1000).rounded() / 1000 }
}
