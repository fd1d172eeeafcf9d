import Foundation
public import MoultMapping
public import MoultModel

/// A policy of Moult's own, configured by text instead of compiled: what people write a custom
/// `NSEntityMigrationPolicy` for most often.
///
/// - `unique(key: companyName)`: one destination object per distinct value of the source attribute
///   `key` (one `Company` per company name). The first source object with a value makes the object from
///   the mapping's attribute mappings; every source object with that value is associated with it, so
///   stage 2 relates each of them to it. Source objects whose value is nil make nothing.
/// - `split(key: tags, separator: ",")`: one destination object per piece of a string attribute, cut
///   at `separator` (default `","`), each piece trimmed of white space, empty pieces dropped.
/// - `split(keys: [homePhone, workPhone])`: one destination object per attribute of the list whose
///   value is neither nil nor an empty string.
///
/// While a `split` evaluates the mapping's attribute mappings, `$value` is the piece, `$index` its
/// position (from 0) and `$key` the attribute it came from; `into: number` also stores the piece in the
/// destination attribute `number` (so a mapping written for a compiled policy works unchanged).
///
/// A JSON mapping names one with `"builtinPolicy": "unique(key: companyName)"`; on the command line,
/// `--policy MyApp.CompanyPolicy=builtin:unique(key: companyName)` binds a class name to one.
/// Arguments are `label: value`, a value being a name (`companyName`), a quoted string (`", "`, with
/// `\"` and `\\` escapes) or a list (`[a, b]`).
public enum BuiltinPolicy: Sendable, Hashable, CustomStringConvertible {
    case unique(key: String)
    case split(Split)

    /// How a `split` cuts a source object.
    public struct Split: Sendable, Hashable {
        /// The source attributes read: one when ``separator`` is set.
        public var keys: [String]
        /// With one key: the text it is cut at.
        public var separator: String?
        /// The destination attribute that receives each piece, if any.
        public var into: String?

        public init(keys: [String], separator: String? = nil, into: String? = nil) {
            self.keys = keys
            self.separator = separator
            self.into = into
        }
    }

    /// The built-in policies' names and arguments, for help texts.
    public static let usage = """
        unique(key: <attribute>)
        split(key: <attribute>[, separator: "<text>"][, into: <attribute>])
        split(keys: [<attribute>, …][, into: <attribute>])
        """

    /// Reads a policy as written (`unique(key: companyName)`; a leading `builtin:` is allowed).
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping`, saying what is wrong and where in the text.
    public init(parsing text: String) throws {
        let body = text.hasPrefix("builtin:") ? String(text.dropFirst("builtin:".count)) : text
        let call: Call
        do {
            var parser = CallParser(text: body)
            call = try parser.parse()
        } catch let error as CallParser.Failure {
            throw Self.error(text, error.message)
        }
        func string(_ label: String) throws -> String? {
            switch call.arguments.first(where: { $0.label == label })?.value {
            case nil: return nil
            case .text(let value)?: return value
            case .list?: throw Self.error(text, "\(label): takes one value, not a list")
            }
        }
        func list(_ label: String) throws -> [String]? {
            switch call.arguments.first(where: { $0.label == label })?.value {
            case nil: return nil
            case .text(let value)?: return [value]
            case .list(let values)?: return values
            }
        }
        func expect(_ labels: [String]) throws {
            var seen: Set<String> = []
            for argument in call.arguments {
                guard labels.contains(argument.label) else {
                    throw Self.error(text, "\(call.name) has no argument '\(argument.label)' (it takes \(labels.joined(separator: ", ")))")
                }
                guard seen.insert(argument.label).inserted else { throw Self.error(text, "'\(argument.label)' is given twice") }
            }
        }
        switch call.name {
        case "unique":
            try expect(["key"])
            guard let key = try string("key"), !key.isEmpty else { throw Self.error(text, "unique needs key: <source attribute>") }
            self = .unique(key: key)
        case "split":
            try expect(["key", "keys", "separator", "into"])
            let into = try string("into")
            switch (try string("key"), try list("keys")) {
            case (let key?, nil):
                let separator = try string("separator") ?? ","
                guard !separator.isEmpty else { throw Self.error(text, "separator: must not be empty") }
                self = .split(Split(keys: [key], separator: separator, into: into))
            case (nil, let keys?):
                guard !keys.isEmpty else { throw Self.error(text, "keys: lists no attribute") }
                guard try string("separator") == nil else {
                    throw Self.error(text, "separator: goes with key: (one attribute cut in pieces), not keys:")
                }
                self = .split(Split(keys: keys, separator: nil, into: into))
            case (.some, .some):
                throw Self.error(text, "split takes key: or keys:, not both")
            case (nil, nil):
                throw Self.error(text, "split needs key: <attribute> (with separator:) or keys: [<attribute>, …]")
            }
        default:
            throw Self.error(text, "no built-in policy is named '\(call.name)' (there are: unique, split)")
        }
    }

    /// The policy written back in the form ``init(parsing:)`` reads.
    public var description: String {
        switch self {
        case .unique(let key):
            return "unique(key: \(Self.quotedIfNeeded(key)))"
        case .split(let split):
            var arguments: [String] = []
            if let separator = split.separator {
                arguments.append("key: \(Self.quotedIfNeeded(split.keys[0]))")
                arguments.append("separator: \(Self.quoted(separator))")
            } else {
                arguments.append("keys: [\(split.keys.map(Self.quotedIfNeeded).joined(separator: ", "))]")
            }
            if let into = split.into { arguments.append("into: \(Self.quotedIfNeeded(into))") }
            return "split(\(arguments.joined(separator: ", ")))"
        }
    }

    /// A new policy object for one mapping.
    public func makePolicy() -> any EntityMigrationPolicy {
        switch self {
        case .unique(let key): UniquingByKeyPolicy(key: key)
        case .split(let split): SplittingPolicy(split: split)
        }
    }

    /// Checks the policy against the mapping it runs for and the step's models: the attributes it
    /// names exist, with a type it can use.
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` naming the mapping, the attribute and the entity.
    public func check(mapping: EntityMapping, source: ObjectModel, destination: ObjectModel) throws {
        func fail(_ message: String) -> MigrationError {
            MigrationError(.invalidMapping, "the built-in policy \(self): \(message)", mapping: mapping.name)
        }
        guard let sourceEntity = mapping.sourceEntityName, source.entity(named: sourceEntity) != nil else {
            throw fail("the mapping has no source entity to read")
        }
        guard let destinationEntity = mapping.destinationEntityName, let entity = destination.entity(named: destinationEntity),
            !entity.isAbstract
        else {
            throw fail("the mapping has no concrete destination entity to make objects of")
        }
        func sourceAttribute(_ name: String) throws -> AttributeDescription {
            guard let attribute = source.attribute(named: name, of: sourceEntity) else {
                let names = source.attributes(of: sourceEntity).map(\.name).sorted().joined(separator: ", ")
                throw fail("the source entity \(sourceEntity) has no attribute '\(name)' (it has: \(names))")
            }
            return attribute
        }
        switch self {
        case .unique(let key):
            _ = try sourceAttribute(key)
        case .split(let split):
            for key in split.keys {
                let attribute = try sourceAttribute(key)
                if split.separator != nil, attribute.attributeType != .string {
                    throw fail("'\(key)' of \(sourceEntity) is \(attribute.attributeType.rawValue), and only a String can be cut at a separator")
                }
            }
            if let into = split.into, destination.attribute(named: into, of: destinationEntity) == nil {
                let names = destination.attributes(of: destinationEntity).map(\.name).sorted().joined(separator: ", ")
                throw fail("the destination entity \(destinationEntity) has no attribute '\(into)' (it has: \(names))")
            }
        }
    }

    // MARK: - Text

    static func error(_ text: String, _ message: String) -> MigrationError {
        MigrationError(.invalidMapping, "the built-in policy '\(text)': \(message); the forms are:\n\(usage)")
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func quotedIfNeeded(_ text: String) -> String {
        CallParser.isName(text) ? text : quoted(text)
    }
}

/// `name(label: value, …)` as written.
package struct Call {
    enum ArgumentValue: Equatable {
        case text(String)
        case list([String])
    }

    var name: String
    var arguments: [(label: String, value: ArgumentValue)]
}

/// Reads ``Call``s: names are letters, digits, `_` and `.` (not first); strings are double-quoted.
package struct CallParser {
    struct Failure: Error {
        var message: String
    }

    private let characters: [Character]
    private var position = 0

    init(text: String) {
        characters = Array(text)
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
    }

    mutating func parse() throws -> Call {
        skipSpaces()
        let name = try self.name("a policy name")
        var arguments: [(label: String, value: Call.ArgumentValue)] = []
        skipSpaces()
        if peek == "(" {
            position += 1
            skipSpaces()
            if peek == ")" {
                position += 1
            } else {
                while true {
                    skipSpaces()
                    let label = try self.name("an argument label")
                    skipSpaces()
                    try expect(":")
                    skipSpaces()
                    let value: Call.ArgumentValue
                    if peek == "[" {
                        position += 1
                        var values: [String] = []
                        skipSpaces()
                        if peek == "]" {
                            position += 1
                        } else {
                            while true {
                                skipSpaces()
                                values.append(try scalar())
                                skipSpaces()
                                if peek == "]" {
                                    position += 1
                                    break
                                }
                                try expect(",")
                            }
                        }
                        value = .list(values)
                    } else {
                        value = .text(try scalar())
                    }
                    arguments.append((label, value))
                    skipSpaces()
                    if peek == ")" {
                        position += 1
                        break
                    }
                    try expect(",")
                }
            }
        }
        skipSpaces()
        guard position == characters.count else { throw Failure(message: "unexpected '\(String(characters[position...]))' at the end") }
        return Call(name: name, arguments: arguments)
    }

    private var peek: Character? { position < characters.count ? characters[position] : nil }

    private mutating func skipSpaces() {
        while let character = peek, character.isWhitespace { position += 1 }
    }

    private mutating func expect(_ character: Character) throws {
        guard peek == character else {
            throw Failure(message: "expected '\(character)' at character \(position + 1)" + (peek.map { ", found '\($0)'" } ?? ", found the end"))
        }
        position += 1
    }

    private mutating func name(_ what: String) throws -> String {
        let start = position
        while let character = peek, character.isLetter || character == "_" || (position > start && (character.isNumber || character == ".")) {
            position += 1
        }
        guard position > start else {
            throw Failure(message: "expected \(what) at character \(position + 1)" + (peek.map { ", found '\($0)'" } ?? ", found the end"))
        }
        return String(characters[start..<position])
    }

    private mutating func scalar() throws -> String {
        guard peek == "\"" else { return try name("a value (a name or a \"quoted string\")") }
        let start = position
        position += 1
        var text = ""
        while let character = peek {
            position += 1
            switch character {
            case "\"":
                return text
            case "\\":
                guard let escaped = peek else { break }
                position += 1
                switch escaped {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "\"", "\\": text.append(escaped)
                default: throw Failure(message: "unknown escape '\\\(escaped)' at character \(position - 1)")
                }
            default:
                text.append(character)
            }
        }
        throw Failure(message: "the string opened at character \(start + 1) is not closed")
    }
}

// MARK: - The policies

/// ``BuiltinPolicy/unique(key:)``: one destination object per distinct value of a source attribute.
///
/// What was made is remembered in the manager's state by value (typed: the string `"1"` and the
/// integer `1` are two values; strings compared by their bytes), so it holds across chunks and
/// survives a resume. When the run decided so (see ``ExecutionDecisions/keyMaps``), the values live in
/// the mapping's key table instead, which stage 1 in SQL fills by set operations.
public struct UniquingByKeyPolicy: EntityMigrationPolicy {
    /// The source attribute whose values are made unique.
    public let key: String

    public init(key: String) {
        self.key = key
    }

    public func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let value = source.value(forKey: key)
        guard let stateKey = Self.stateKey(value) else { return }
        let compiled = try manager.compiled(mapping)
        if compiled.keysInMap {
            if let existing = try manager.keyMapped(value, mapping: compiled) {
                try manager.associate(source: source.objectID, destination: existing, mapping: mapping)
            } else if let created = try manager.createDestinationInstance(for: source, mapping: mapping) {
                manager.recordKey(value, made: created, first: source.objectID, mapping: compiled)
            }
            return
        }
        let made = manager.state("unique:\(mapping.name)")
        if let existing = try made.objectID(forKey: stateKey) {
            try manager.associate(source: source.objectID, destination: existing, mapping: mapping)
        } else if let created = try manager.createDestinationInstance(for: source, mapping: mapping) {
            try made.set(created, forKey: stateKey)
        }
    }

    /// A value as a key of the policy's state, its type first; nil for nil.
    static func stateKey(_ value: Value) -> String? {
        switch value {
        case .null: nil
        case .bool(let flag): "i\(flag ? 1 : 0)"
        case .int(let number): "i\(number)"
        case .double(let number): "d\(number == 0 ? 0 : number)"
        case .decimal(let number): "n\(number)"
        case .string(let text): "s" + text
        case .date(let date): "t\(date.timeIntervalSinceReferenceDate)"
        case .data(let bytes): "b" + bytes.map { String($0, radix: 16) }.joined(separator: ".")
        case .uuid(let uuid): "u" + uuid.uuidString
        case .object(let id): "o\(id)"
        case .array(let values): "a[" + values.map { stateKey($0) ?? "-" }.joined(separator: ",") + "]"
        }
    }
}

/// ``BuiltinPolicy/split(_:)``: several destination objects from one source object.
public struct SplittingPolicy: EntityMigrationPolicy {
    public let split: BuiltinPolicy.Split

    public init(split: BuiltinPolicy.Split) {
        self.split = split
    }

    /// The pieces of a source object, in order: (attribute, value).
    func pieces(of source: MigrationObject) -> [(key: String, value: Value)] {
        var pieces: [(key: String, value: Value)] = []
        for key in split.keys {
            let value = source.value(forKey: key)
            switch value {
            case .null:
                continue
            case .string(let text):
                if let separator = split.separator {
                    for piece in text.components(separatedBy: separator) {
                        let trimmed = piece.trimmingCharacters(in: .whitespacesAndNewlines)
                        if !trimmed.isEmpty { pieces.append((key, .string(trimmed))) }
                    }
                } else if !text.isEmpty {
                    pieces.append((key, value))
                }
            default:
                pieces.append((key, value))
            }
        }
        return pieces
    }

    public func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        for (index, piece) in pieces(of: source).enumerated() {
            let variables: [String: Value] = ["value": piece.value, "index": .int(Int64(index)), "key": .string(piece.key)]
            guard let created = try manager.createDestinationInstance(for: source, mapping: mapping, variables: variables) else { return }
            if let into = split.into { try manager.setValue(piece.value, forKey: into, of: created) }
        }
    }
}
