import Foundation
import MoultModel

/// Moult's JSON mapping format read straight from its bytes, for the files Moult writes and any in
/// their plain shape: the reader takes a document only where Foundation's `JSONDecoder` reads it to
/// the same mapping model, and gives up on anything else, leaving the decoder to read it or to say
/// what is wrong (``MappingModel/init(json:)``). So every error, and every message, is the decoder's.
///
/// Given up on: bytes that are not JSON, or not UTF-8; `null`; a number other than a plain integer
/// that fits `Int`; a key the format does not know, an escaped one, or one given twice in an object; a
/// required key missing; a value of the wrong type; an unknown format, mapping type, or a version
/// hash that is not 64 hexadecimal digits; a string with an unpaired surrogate escape. A history of
/// hundreds of versions has one mapping file a step, of hundreds of property mappings each: the
/// decoder spends most of the time of planning it (its keyed containers, and the check for unknown
/// keys), this reader little.
struct MappingJSONReader {
    /// Why the reader gave up: the document is left to `JSONDecoder`.
    struct GivenUp: Error {}

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The mapping model `data` holds, nil when the reader leaves it to `JSONDecoder`.
    static func model(in data: Data) -> MappingModel? {
        data.withUnsafeBytes { raw in
            var reader = MappingJSONReader(raw.bindMemory(to: UInt8.self))
            return try? reader.document()
        }
    }

    // MARK: - The format's shapes

    private static let modelKeys = keys("format", "source", "destination", "inferRest", "entityMappings")
    private static let referenceKeys = keys("name", "path", "entityVersionHashes")
    private static let entityKeys = keys(
        "name", "type", "source", "destination", "sourceVersionHash", "destinationVersionHash", "filter", "policy", "builtinPolicy", "order",
        "attributes", "relationships", "userInfo")
    private static let propertyKeys = keys("name", "value", "userInfo")

    private static func keys(_ names: String...) -> [[UInt8]] { names.map { Array($0.utf8) } }

    private mutating func document() throws(GivenUp) -> MappingModel {
        var source = ModelReference(), destination = ModelReference()
        var mappings: [EntityMapping]?
        var infersRest = false
        try members(Self.modelKeys) { (reader: inout MappingJSONReader, key: Int) throws(GivenUp) in
            switch key {
            case 0: guard try reader.string() == MappingModel.jsonFormatIdentifier else { throw GivenUp() }
            case 1: source = try reader.reference()
            case 2: destination = try reader.reference()
            case 3: infersRest = try reader.bool()
            default: mappings = try reader.array { (reader: inout MappingJSONReader) throws(GivenUp) in try reader.entityMapping() }
            }
        }
        skipSpace()
        guard index == bytes.count, let mappings else { throw GivenUp() }
        return MappingModel(source: source, destination: destination, entityMappings: mappings, infersRest: infersRest)
    }

    private mutating func reference() throws(GivenUp) -> ModelReference {
        var reference = ModelReference()
        try members(Self.referenceKeys) { (reader: inout MappingJSONReader, key: Int) throws(GivenUp) in
            switch key {
            case 0: reference.name = try reader.string()
            case 1: reference.path = try reader.string()
            default:
                for (entity, text) in try reader.strings() {
                    guard let hash = VersionHash(hex: text) else { throw GivenUp() }
                    reference.entityVersionHashes[entity] = hash
                }
            }
        }
        return reference
    }

    private mutating func entityMapping() throws(GivenUp) -> EntityMapping {
        var name: String?, type: MappingType?
        var source: String?, destination: String?, filter: String?, policy: String?, builtinPolicy: String?
        var sourceHash: VersionHash?, destinationHash: VersionHash?
        var order: Int?
        var attributes: [PropertyMapping] = [], relationships: [PropertyMapping] = []
        var userInfo: [String: String] = [:]
        try members(Self.entityKeys) { (reader: inout MappingJSONReader, key: Int) throws(GivenUp) in
            switch key {
            case 0: name = try reader.string()
            case 1:
                let text = try reader.string()
                guard let known = MappingType.allCases.first(where: { $0.jsonName == text }) else { throw GivenUp() }
                type = known
            case 2: source = try reader.string()
            case 3: destination = try reader.string()
            case 4: sourceHash = try reader.versionHash()
            case 5: destinationHash = try reader.versionHash()
            case 6: filter = try reader.string()
            case 7: policy = try reader.string()
            case 8: builtinPolicy = try reader.string()
            case 9: order = try reader.integer()
            case 10: attributes = try reader.array { (reader: inout MappingJSONReader) throws(GivenUp) in try reader.propertyMapping() }
            case 11: relationships = try reader.array { (reader: inout MappingJSONReader) throws(GivenUp) in try reader.propertyMapping() }
            default: userInfo = try reader.strings()
            }
        }
        guard let name, let type else { throw GivenUp() }
        return EntityMapping(
            name: name, type: type, source: source, destination: destination, sourceVersionHash: sourceHash, destinationVersionHash: destinationHash,
            filter: filter, attributes: attributes, relationships: relationships, policy: policy, userInfo: userInfo, order: order,
            builtinPolicy: builtinPolicy)
    }

    private mutating func propertyMapping() throws(GivenUp) -> PropertyMapping {
        var name: String?, value: String?
        var userInfo: [String: String] = [:]
        try members(Self.propertyKeys) { (reader: inout MappingJSONReader, key: Int) throws(GivenUp) in
            switch key {
            case 0: name = try reader.string()
            case 1: value = try reader.string()
            default: userInfo = try reader.strings()
            }
        }
        guard let name else { throw GivenUp() }
        return PropertyMapping(name, value, userInfo: userInfo)
    }

    private mutating func versionHash() throws(GivenUp) -> VersionHash {
        guard let hash = VersionHash(hex: try string()) else { throw GivenUp() }
        return hash
    }

    // MARK: - JSON

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The next byte after white space, consumed when it is `byte`.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws(GivenUp) {
        guard take(byte) else { throw GivenUp() }
    }

    /// An object whose keys are among `known` (each at most once): `value` reads the value of each,
    /// given the key's position in `known`.
    private mutating func members(
        _ known: [[UInt8]], _ value: (inout MappingJSONReader, Int) throws(GivenUp) -> Void
    ) throws(GivenUp) {
        try expect(UInt8(ascii: "{"))
        if take(UInt8(ascii: "}")) { return }
        var seen: UInt32 = 0
        repeat {
            let key = try knownKey(known)
            guard seen & (1 << key) == 0 else { throw GivenUp() }
            seen |= 1 << key
            try expect(UInt8(ascii: ":"))
            try value(&self, key)
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// A key written plainly (no escape) that is one of `known`: its position.
    private mutating func knownKey(_ known: [[UInt8]]) throws(GivenUp) -> Int {
        try expect(Self.quote)
        let start = index
        while index < bytes.count, bytes[index] != Self.quote {
            guard bytes[index] != Self.backslash else { throw GivenUp() }
            index += 1
        }
        guard index < bytes.count else { throw GivenUp() }
        let key = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        guard let position = known.firstIndex(where: { $0.elementsEqual(key) }) else { throw GivenUp() }
        return position
    }

    private mutating func array<Element>(_ element: (inout MappingJSONReader) throws(GivenUp) -> Element) throws(GivenUp) -> [Element] {
        try expect(UInt8(ascii: "["))
        var elements: [Element] = []
        if take(UInt8(ascii: "]")) { return elements }
        repeat {
            skipSpace()
            elements.append(try element(&self))
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return elements
    }

    /// An object of strings, no key given twice (as Swift compares strings).
    private mutating func strings() throws(GivenUp) -> [String: String] {
        try expect(UInt8(ascii: "{"))
        var result: [String: String] = [:]
        if take(UInt8(ascii: "}")) { return result }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            guard result.updateValue(try string(), forKey: key) == nil else { throw GivenUp() }
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        return result
    }

    private mutating func bool() throws(GivenUp) -> Bool {
        skipSpace()
        for (word, value) in [("true", true), ("false", false)] where bytes[index...].starts(with: word.utf8) {
            index += word.utf8.count
            return value
        }
        throw GivenUp()
    }

    /// A plain integer (`-`, then digits without a leading zero) that fits `Int`.
    private mutating func integer() throws(GivenUp) -> Int {
        skipSpace()
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var value = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflow, !overflowAgain else { throw GivenUp() }
            value = sum
            index += 1
        }
        let count = index - start
        guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { throw GivenUp() }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { throw GivenUp() }
        return value
    }

    /// A string: its bytes up to the closing quote, escapes decoded, valid UTF-8.
    private mutating func string() throws(GivenUp) -> String {
        try expect(Self.quote)
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.quote {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii { return String(decoding: text, as: UTF8.self) }
                guard let valid = String(validating: text, as: UTF8.self) else { throw GivenUp() }
                return valid
            }
            if byte == Self.backslash { break }
            guard byte >= 0x20 else { throw GivenUp() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        // Escapes: the rest is read byte by byte into a buffer.
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == Self.quote {
                guard let valid = String(validating: buffer, as: UTF8.self) else { throw GivenUp() }
                return valid
            }
            guard byte >= 0x20 else { throw GivenUp() }
            guard byte == Self.backslash else {
                buffer.append(byte)
                continue
            }
            guard index < bytes.count else { throw GivenUp() }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hexQuad()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == Self.backslash, bytes[index + 1] == UInt8(ascii: "u") else { throw GivenUp() }
                    index += 2
                    let low = try hexQuad()
                    guard (0xDC00...0xDFFF).contains(low) else { throw GivenUp() }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw GivenUp()
                }
                guard let scalar = Unicode.Scalar(code) else { throw GivenUp() }
                buffer.append(contentsOf: scalar.utf8)
            default: throw GivenUp()
            }
        }
        throw GivenUp()
    }

    /// Four hexadecimal digits of a `\u` escape.
    private mutating func hexQuad() throws(GivenUp) -> UInt32 {
        guard index + 4 <= bytes.count else { throw GivenUp() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw GivenUp()
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
