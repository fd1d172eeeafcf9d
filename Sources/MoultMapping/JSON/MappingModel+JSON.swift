public import Foundation
import MoultModel

// MARK: - Reading

extension MappingModel {
    /// The format identifier written at the top of every mapping file.
    public static let jsonFormatIdentifier = "moult-mapping/1"

    /// Reads a mapping model from Moult's JSON format (see the "Mapping Format" article).
    ///
    /// A document in the plain shape Moult writes is read straight from its bytes; any other, and every
    /// malformed one, by Foundation's `JSONDecoder`, whose findings the errors give. Both read a
    /// document to the same mapping model.
    ///
    /// ```swift
    /// let mapping = try MappingModel(json: Data(contentsOf: url))
    /// ```
    ///
    /// - Throws: ``MappingError`` with code ``MappingError/Code/malformedJSON`` naming the JSON path
    ///   (`$.entityMappings[1].type`) and what was expected there.
    public init(json data: Data) throws(MappingError) {
        if let model = MappingJSONReader.model(in: data) {
            self = model
            return
        }
        self = try Self.decoded(json: data)
    }

    /// The mapping model `data` holds, read by Foundation's `JSONDecoder`: what ``init(json:)`` does
    /// with a document ``MappingJSONReader`` leaves, and what that reader is checked against.
    static func decoded(json data: Data) throws(MappingError) -> MappingModel {
        do {
            return try JSONDecoder().decode(MappingModelJSON.self, from: data).model
        } catch let error as MappingError {
            throw error
        } catch let error as DecodingError {
            throw MappingError(decoding: error)
        } catch {
            throw MappingError(.malformedJSON, "\(error)")
        }
    }

    /// Reads a mapping model from a JSON file.
    ///
    /// - Throws: ``MappingError`` when the file cannot be read or is malformed; the error names the file.
    public init(jsonFile url: URL) throws(MappingError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw MappingError(exists ? .unreadable : .notFound, exists ? "cannot read the file: \(error.localizedDescription)" : "no such file", file: url.path)
        }
        do {
            try self.init(json: data)
        } catch {
            throw error.located(file: url.path)
        }
    }
}

extension MappingError {
    init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = "$"
            for key in codingPath {
                if let index = key.intValue { text += "[\(index)]" } else { text += ".\(key.stringValue)" }
            }
            return text
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(.malformedJSON, "expected \(Self.jsonTypeName(type)); \(context.debugDescription)", path: path(context.codingPath))
        case .valueNotFound(let type, let context):
            self.init(.malformedJSON, "expected \(Self.jsonTypeName(type)), found null", path: path(context.codingPath))
        case .keyNotFound(let key, let context):
            self.init(.malformedJSON, "the required key '\(key.stringValue)' is missing", path: path(context.codingPath))
        case .dataCorrupted(let context):
            var message = context.debugDescription
            if let underlying = context.underlyingError as NSError?,
                let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
            {
                message += " (\(detail))"
            }
            self.init(.malformedJSON, message, path: path(context.codingPath))
        @unknown default:
            self.init(.malformedJSON, "\(error)")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "an integer"
        case is Bool.Type: "true or false"
        case is [String: String].Type: "an object of strings"
        default:
            if "\(type)".hasPrefix("Array") { "an array" } else { "an object" }
        }
    }
}

/// Keys of one JSON object, any string; used to reject keys the format does not know.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Rejects any key of this object that is not in `known`, naming it and the keys allowed.
    func rejectUnknownKeys(_ known: [String]) throws {
        let container = try container(keyedBy: AnyKey.self)
        for key in container.allKeys where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription: "unknown key '\(key.stringValue)'; the keys allowed here are \(known.map { "'\($0)'" }.joined(separator: ", "))"))
        }
    }
}

extension KeyedDecodingContainer {
    func versionHash(_ key: Key) throws -> VersionHash? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let hash = VersionHash(hex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "expected a version hash (64 hexadecimal digits), found '\(text)'")
        }
        return hash
    }
}

// MARK: - The JSON shapes

private struct MappingModelJSON: Decodable {
    var model: MappingModel

    enum Key: String, CodingKey, CaseIterable { case format, source, destination, inferRest, entityMappings }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Key.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: Key.self)
        if let format = try container.decodeIfPresent(String.self, forKey: .format), format != MappingModel.jsonFormatIdentifier {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container,
                debugDescription: "unknown format '\(format)'; this version of Moult reads '\(MappingModel.jsonFormatIdentifier)'")
        }
        let source = try container.decodeIfPresent(ModelReferenceJSON.self, forKey: .source)?.reference ?? .init()
        let destination = try container.decodeIfPresent(ModelReferenceJSON.self, forKey: .destination)?.reference ?? .init()
        let mappings = try container.decode([EntityMappingJSON].self, forKey: .entityMappings).map(\.mapping)
        let infersRest = try container.decodeIfPresent(Bool.self, forKey: .inferRest) ?? false
        model = MappingModel(source: source, destination: destination, entityMappings: mappings, infersRest: infersRest)
    }
}

private struct ModelReferenceJSON: Decodable {
    var reference: ModelReference

    enum Key: String, CodingKey, CaseIterable { case name, path, entityVersionHashes }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Key.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: Key.self)
        var hashes: [String: VersionHash] = [:]
        if container.contains(.entityVersionHashes) {
            let nested = try container.nestedContainer(keyedBy: AnyKey.self, forKey: .entityVersionHashes)
            for key in nested.allKeys {
                hashes[key.stringValue] = try nested.versionHash(key)
            }
        }
        reference = ModelReference(
            name: try container.decodeIfPresent(String.self, forKey: .name),
            path: try container.decodeIfPresent(String.self, forKey: .path),
            entityVersionHashes: hashes)
    }
}

private struct EntityMappingJSON: Decodable {
    var mapping: EntityMapping

    enum Key: String, CodingKey, CaseIterable {
        case name, type, source, destination, sourceVersionHash, destinationVersionHash, filter, policy, builtinPolicy, order
        case attributes, relationships, userInfo
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Key.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: Key.self)
        let typeName = try container.decode(String.self, forKey: .type)
        guard let type = MappingType.allCases.first(where: { $0.jsonName == typeName }) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown mapping type '\(typeName)'; expected one of \(MappingType.allCases.map { "'\($0.jsonName)'" }.joined(separator: ", "))")
        }
        mapping = EntityMapping(
            name: try container.decode(String.self, forKey: .name),
            type: type,
            source: try container.decodeIfPresent(String.self, forKey: .source),
            destination: try container.decodeIfPresent(String.self, forKey: .destination),
            sourceVersionHash: try container.versionHash(.sourceVersionHash),
            destinationVersionHash: try container.versionHash(.destinationVersionHash),
            filter: try container.decodeIfPresent(String.self, forKey: .filter),
            attributes: try container.decodeIfPresent([PropertyMappingJSON].self, forKey: .attributes)?.map(\.mapping) ?? [],
            relationships: try container.decodeIfPresent([PropertyMappingJSON].self, forKey: .relationships)?.map(\.mapping) ?? [],
            policy: try container.decodeIfPresent(String.self, forKey: .policy),
            userInfo: try container.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:],
            order: try container.decodeIfPresent(Int.self, forKey: .order),
            builtinPolicy: try container.decodeIfPresent(String.self, forKey: .builtinPolicy))
    }
}

private struct PropertyMappingJSON: Decodable {
    var mapping: PropertyMapping

    enum Key: String, CodingKey, CaseIterable { case name, value, userInfo }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Key.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: Key.self)
        mapping = PropertyMapping(
            try container.decode(String.self, forKey: .name),
            try container.decodeIfPresent(String.self, forKey: .value),
            userInfo: try container.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:])
    }
}

extension MappingType {
    /// The name the JSON format uses: the lower-case type (`"transform"`).
    public var jsonName: String { rawValue.lowercased() }
}

// MARK: - Writing

extension MappingModel {
    /// The mapping model in Moult's JSON format: two-space indented, keys in a fixed order, empty
    /// fields left out. Reading the text back gives an equal mapping model, but for
    /// ``inferredEntityMappingNames``: a completed partial mapping is written whole, as a mapping given
    /// whole, and a partial one not completed yet with `"inferRest": true`.
    public func jsonText() -> String {
        var object: [(String, JSONText)] = [("format", .string(Self.jsonFormatIdentifier))]
        if let source = sourceModel.json { object.append(("source", source)) }
        if let destination = destinationModel.json { object.append(("destination", destination)) }
        if infersRest { object.append(("inferRest", .bool(true))) }
        object.append(("entityMappings", .array(entityMappings.map(\.json))))
        return JSONText.object(object).rendered(indent: "") + "\n"
    }

    /// ``jsonText()`` as UTF-8 data.
    public func jsonData() -> Data { Data(jsonText().utf8) }
}

extension ModelReference {
    fileprivate var json: JSONText? {
        var object: [(String, JSONText)] = []
        if let name { object.append(("name", .string(name))) }
        if let path { object.append(("path", .string(path))) }
        if !entityVersionHashes.isEmpty {
            object.append(
                ("entityVersionHashes", .object(entityVersionHashes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.hex)) })))
        }
        return object.isEmpty ? nil : .object(object)
    }
}

extension EntityMapping {
    fileprivate var json: JSONText {
        var object: [(String, JSONText)] = [("name", .string(name)), ("type", .string(mappingType.jsonName))]
        if let sourceEntityName { object.append(("source", .string(sourceEntityName))) }
        if let destinationEntityName { object.append(("destination", .string(destinationEntityName))) }
        if let sourceEntityVersionHash { object.append(("sourceVersionHash", .string(sourceEntityVersionHash.hex))) }
        if let destinationEntityVersionHash {
            object.append(("destinationVersionHash", .string(destinationEntityVersionHash.hex)))
        }
        if let order { object.append(("order", .integer(order))) }
        if let filterPredicate { object.append(("filter", .string(filterPredicate))) }
        if let entityMigrationPolicyClassName { object.append(("policy", .string(entityMigrationPolicyClassName))) }
        if let builtinPolicy { object.append(("builtinPolicy", .string(builtinPolicy))) }
        if !attributeMappings.isEmpty { object.append(("attributes", .array(attributeMappings.map(\.json)))) }
        if !relationshipMappings.isEmpty { object.append(("relationships", .array(relationshipMappings.map(\.json)))) }
        if !userInfo.isEmpty { object.append(("userInfo", .strings(userInfo))) }
        return .object(object)
    }
}

extension PropertyMapping {
    fileprivate var json: JSONText {
        var object: [(String, JSONText)] = [("name", .string(name))]
        if let valueExpression { object.append(("value", .string(valueExpression))) }
        if !userInfo.isEmpty { object.append(("userInfo", .strings(userInfo))) }
        return .object(object)
    }
}

/// A JSON value with its keys in a chosen order, rendered as indented text.
private indirect enum JSONText {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case array([JSONText])
    case object([(String, JSONText)])

    static func strings(_ dictionary: [String: String]) -> JSONText {
        .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }

    /// Whether the value fits on one line (a property mapping does).
    private var isFlat: Bool {
        switch self {
        case .string, .integer, .bool: true
        case .array(let items): items.isEmpty
        case .object(let members): members.allSatisfy { if case .object = $0.1 { false } else { $0.1.isFlat } }
        }
    }

    func rendered(indent: String) -> String {
        switch self {
        case .string(let text): return Self.quote(text)
        case .integer(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .array(let items):
            if items.isEmpty { return "[]" }
            let inner = indent + "  "
            return "[\n" + items.map { inner + $0.rendered(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            if isFlat && members.count <= 3 {
                return "{ " + members.map { "\(Self.quote($0.0)): \($0.1.rendered(indent: indent))" }.joined(separator: ", ") + " }"
            }
            let inner = indent + "  "
            return "{\n" + members.map { "\(inner)\(Self.quote($0.0)): \($0.1.rendered(indent: inner))" }.joined(separator: ",\n")
                + "\n\(indent)}"
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
