public import Foundation
import MoultModel
public import MoultStore

/// A single-pass cursor over a Core Data XML store: its header, then its objects one at a time.
///
/// The file is read in blocks, so memory does not grow with the number of objects. Names are matched
/// as Core Data writes them (entity names in capitals, property names in lower case). Every value is
/// checked against the model: an unknown entity or property, a value that is not of its attribute's
/// type, a relationship that says to-many where the model says to-one, is an error naming the line,
/// entity and object, never a value dropped.
///
/// ```swift
/// let reader = try XMLStoreReader(url: storeURL)                        // reads the header only
/// let version = model.version(matchingEntityHashes: try reader.info.storeMetadata().entityHashes)
/// try reader.bind(to: StoreLayout(model: version!.model))
/// while let object = try reader.next() { print(object.id, object.entity, object.values) }
/// ```
public final class XMLStoreReader {
    /// The store's header.
    public let info: XMLStoreInfo
    /// The file.
    public let path: String

    private let parser: XMLPullParser
    private var schema: XMLStoreSchema?
    private var finished = false
    /// The byte offset of the `<object>` element ``next()`` returned last (what ``XMLStore`` indexes).
    private(set) var objectOffset: Int64 = 0
    /// Whether attribute values are decoded (else their slots stay nil): a second pass over a file
    /// whose values the first pass read and checked reads only the relationships.
    var decodesAttributes = true
    /// The line of the `<object>` element ``next()`` returned last.
    private(set) var objectLine = 0
    /// The line of each relationship of the object ``next()`` returned last: its to-ones, then its
    /// to-manys, as the entity's layout orders them (0 for one the file does not write).
    private(set) var relationshipLines: [Int] = []

    /// Opens a store and reads its header.
    ///
    /// - Throws: ``XMLStoreError``: `.ioFailure` when the file cannot be read, `.malformed` when it is
    ///   not an XML store (the message says what was found).
    public convenience init(url: URL) throws(XMLStoreError) {
        try self.init(parser: try XMLPullParser(url: url), path: url.path(percentEncoded: false))
    }

    /// Reads a store held in memory (the fuzz harness's entrance).
    public convenience init(bytes: [UInt8], path: String = "<memory>") throws(XMLStoreError) {
        try self.init(parser: XMLPullParser(bytes: bytes, path: path), path: path)
    }

    private init(parser: XMLPullParser, path: String) throws(XMLStoreError) {
        self.parser = parser
        self.path = path
        var info: XMLStoreInfo?
        loop: while true {
            switch try parser.next() {
            case .start("database", _) where info == nil:
                continue
            case .start("databaseInfo", _):
                info = try XMLStoreInfo.read(from: parser)
                break loop
            case .start(let name, _):
                throw parser.error("<\(name)> where a Core Data XML store has <database><databaseInfo>: this is not an XML store")
            case .text(let text) where text.isXMLSpace:
                continue
            default:
                throw parser.error("the file does not begin with <database><databaseInfo>: this is not an XML store")
            }
        }
        self.info = info!
    }

    /// Reads the objects with a model's layout from now on.
    ///
    /// - Throws: ``XMLStoreError`` (`.unknownName`) when the model has names an XML store cannot tell apart.
    public func bind(to layout: StoreLayout) throws(XMLStoreError) {
        schema = try XMLStoreSchema(layout: layout)
    }

    /// The line the reader is at.
    public var line: Int { parser.line }

    /// The next object, or nil after the last one.
    ///
    /// - Throws: ``XMLStoreError`` naming the line (and the entity and object): malformed XML, an
    ///   unknown entity or property, a value that does not fit its type.
    public func next() throws(XMLStoreError) -> XMLStoreObject? {
        guard let schema else { throw XMLStoreError(.malformed, "the reader has no model: call bind(to:) first", path: path) }
        while !finished {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text between objects") }
            case .start("object", let attributes):
                objectOffset = parser.eventOffset
                return try readObject(attributes, schema: schema)
            case .start(let name, _):
                throw parser.error("<\(name)> where an <object> was expected")
            case .end:
                // </database>: nothing but comments may follow.
                guard try parser.next() == .endOfDocument else { throw parser.error("content after </database>") }
                finished = true
            case .endOfDocument:
                throw parser.error("the file ends before </database>: it is truncated")
            }
        }
        return nil
    }

    /// Counts the remaining objects by their `type` (the entity's name in capitals), without a model:
    /// values are skipped, not read.
    ///
    /// - Throws: ``XMLStoreError`` (`.malformed`) for a file that is not well-formed.
    public func objectCountsByType() throws(XMLStoreError) -> [String: Int] {
        var counts: [String: Int] = [:]
        var depth = 0
        while !finished {
            switch try parser.next() {
            case .start(let name, let attributes):
                if depth == 0 {
                    guard name == "object", let type = attributes["type"] else { throw parser.error("<\(name)> where an <object> was expected") }
                    counts[type, default: 0] += 1
                }
                depth += 1
            case .end:
                if depth == 0 {
                    guard try parser.next() == .endOfDocument else { throw parser.error("content after </database>") }
                    finished = true
                }
                depth -= 1
            case .text:
                continue
            case .endOfDocument:
                throw parser.error("the file ends before </database>: it is truncated")
            }
        }
        return counts
    }

    /// The object whose `<object>` element begins at `offset` (an ``objectOffset`` read earlier), read
    /// again out of order; the reader's place in its single pass is lost (``next()`` then goes on after it).
    ///
    /// - Throws: ``XMLStoreError`` when no object begins there, or as ``next()``.
    func object(at offset: Int64) throws(XMLStoreError) -> XMLStoreObject {
        guard let schema else { throw XMLStoreError(.malformed, "the reader has no model: call bind(to:) first", path: path) }
        try parser.seek(toElementAt: offset, inside: ["database"])
        finished = false
        guard case .start("object", let attributes) = try parser.next() else { throw parser.error("no <object> begins at byte \(offset)") }
        objectOffset = offset
        return try readObject(attributes, schema: schema)
    }

    // MARK: - Objects

    private func readObject(_ attributes: [String: String], schema: XMLStoreSchema) throws(XMLStoreError) -> XMLStoreObject {
        guard let type = attributes["type"], let id = attributes["id"] else {
            throw parser.error("an <object> without its type or id")
        }
        guard let number = Self.number(of: id) else { throw parser.error("the object id '\(id.prefix(40))' is not z<number>") }
        guard let entity = schema.entity(type: type) else {
            throw XMLStoreError(.unknownName, "the model has no entity whose XML type is '\(type.prefix(80))'", path: path, line: parser.line, objectID: id)
        }
        guard !entity.layout.isAbstract else {
            throw XMLStoreError(.invalidValue, "an object of the abstract entity \(entity.layout.name)", path: path, line: parser.line, entity: entity.layout.name, objectID: id)
        }
        let layout = entity.layout
        objectLine = parser.line
        relationshipLines = [Int](repeating: 0, count: layout.toOneRelationships.count + layout.toManyRelationships.count)
        var object = XMLStoreObject(
            number: number, entity: layout.name,
            values: [Value](repeating: .null, count: layout.attributes.count + layout.toOneRelationships.count),
            toMany: [[Int64]](repeating: [], count: layout.toManyRelationships.count))
        var seen: Set<String> = []
        do throws(XMLStoreError) {
            while true {
                switch try parser.next() {
                case .text(let text):
                    guard text.isXMLSpace else { throw parser.error("text inside <object>") }
                case .start("attribute", let element):
                    try readAttribute(element, entity: entity, into: &object, seen: &seen)
                case .start("relationship", let element):
                    try readRelationship(element, entity: entity, into: &object, seen: &seen)
                case .start(let name, _):
                    throw parser.error("<\(name)> inside <object>, where only <attribute> and <relationship> are")
                case .end:
                    return object
                case .endOfDocument:
                    throw parser.error("the file ends inside an object")
                }
            }
        } catch {
            throw error.located(entity: layout.name, objectID: id)
        }
    }

    /// `z102` → 102.
    static func number(of id: String) -> Int64? {
        guard id.utf8.first == UInt8(ascii: "z"), id.utf8.count > 1, id.utf8.count <= 20 else { return nil }
        let digits = id.dropFirst()
        guard digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let number = Int64(digits), number > 0 else { return nil }
        return number
    }

    private func property(_ element: [String: String], kind: String, seen: inout Set<String>) throws(XMLStoreError) -> String {
        guard let name = element["name"] else { throw parser.error("<\(kind)> without a name") }
        let lower = name.lowercased()
        guard seen.insert(lower).inserted else { throw parser.error("the property '\(name.prefix(80))' appears twice in one object") }
        return lower
    }

    private func readAttribute(
        _ element: [String: String], entity: XMLEntityMap, into object: inout XMLStoreObject, seen: inout Set<String>
    ) throws(XMLStoreError) {
        let name = try property(element, kind: "attribute", seen: &seen)
        guard let slot = entity.attributes[name] else {
            throw XMLStoreError(.unknownName, "the model's entity \(entity.layout.name) has no attribute '\(name.prefix(80))'", path: path, line: parser.line)
        }
        let expected = entity.attributeTypes[slot]
        guard let type = element["type"], type == expected else {
            throw XMLStoreError(
                .invalidValue, "attribute '\(name)' has the type '\(element["type"]?.prefix(40) ?? "")' in the file, where the model's \(expected) is expected",
                path: path, line: parser.line)
        }
        let line = parser.line
        let text = try PropertyListXML.text(of: "attribute", from: parser)
        guard decodesAttributes else { return }
        do {
            object.values[slot] = try XMLValueCoding.value(text, type: entity.layout.attributes[slot].type)
        } catch {
            throw XMLStoreError(.invalidValue, "attribute '\(name)' (\(type)): \(error.message)", path: path, line: line)
        }
    }

    private func readRelationship(
        _ element: [String: String], entity: XMLEntityMap, into object: inout XMLStoreObject, seen: inout Set<String>
    ) throws(XMLStoreError) {
        let name = try property(element, kind: "relationship", seen: &seen)
        let line = parser.line
        guard try PropertyListXML.text(of: "relationship", from: parser).isXMLSpace else {
            throw XMLStoreError(.malformed, "relationship '\(name)' holds text", path: path, line: line)
        }
        var numbers: [Int64] = []
        for id in (element["idrefs"] ?? "").split(separator: " ") {
            guard let number = Self.number(of: String(id)) else {
                throw XMLStoreError(.malformed, "relationship '\(name)' refers to '\(id.prefix(40))', not z<number>", path: path, line: line)
            }
            numbers.append(number)
        }
        let destination: String
        if let index = entity.toOnes[name] {
            let toOne = entity.layout.toOneRelationships[index]
            guard element["type"] == "1/1" else {
                throw XMLStoreError(.invalidValue, "relationship '\(name)' has the type '\(element["type"]?.prefix(20) ?? "")' where the model's to-one is 1/1", path: path, line: line)
            }
            guard numbers.count <= 1 else {
                throw XMLStoreError(.invalidValue, "the to-one relationship '\(name)' refers to \(numbers.count) objects", path: path, line: line)
            }
            relationshipLines[index] = line
            object.values[entity.layout.attributes.count + index] = numbers.first.map { .object(ObjectID(entity: toOne.destinationNumber, primaryKey: $0)) } ?? .null
            destination = toOne.destination
        } else if let index = entity.toManys[name] {
            guard element["type"] == "0/0" else {
                throw XMLStoreError(.invalidValue, "relationship '\(name)' has the type '\(element["type"]?.prefix(20) ?? "")' where the model's to-many is 0/0", path: path, line: line)
            }
            object.toMany[index] = numbers
            relationshipLines[entity.layout.toOneRelationships.count + index] = line
            destination = entity.layout.toManyRelationships[index].destination
        } else {
            throw XMLStoreError(.unknownName, "the model's entity \(entity.layout.name) has no relationship '\(name.prefix(80))'", path: path, line: line)
        }
        if let written = element["destination"], written.uppercased() != destination.uppercased() {
            throw XMLStoreError(.invalidValue, "relationship '\(name)' leads to \(written.prefix(80)) in the file, to \(destination) in the model", path: path, line: line)
        }
    }
}

@available(*, unavailable)
extension XMLStoreReader: Sendable {}
