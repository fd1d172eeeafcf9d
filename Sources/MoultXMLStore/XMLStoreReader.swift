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
    @exclusivity(unchecked) private var finished = false
    /// The byte offset of the `<object>` element ``next()`` returned last (what ``XMLStore`` indexes).
    @exclusivity(unchecked) private(set) var objectOffset: Int64 = 0
    /// Whether attribute values are decoded (else their slots stay nil): a second pass over a file
    /// whose values the first pass read and checked reads only the relationships.
    @exclusivity(unchecked) var decodesAttributes = true
    /// The line of the `<object>` element ``next()`` returned last.
    @exclusivity(unchecked) private(set) var objectLine = 0
    /// The line of each relationship of the object ``next()`` returned last: its to-ones, then its
    /// to-manys, as the entity's layout orders them (0 for one the file does not write).
    @exclusivity(unchecked) private(set) var relationshipLines: [Int] = []
    /// The `type` of the object read last, and its entity.
    @exclusivity(unchecked) private var lastType: [UInt8] = []
    @exclusivity(unchecked) private var lastEntity: XMLEntityMap?
    /// The generation (``generation``, one per object) each property of the object's entity was last met in.
    @exclusivity(unchecked) private var seen: [Int] = []
    @exclusivity(unchecked) private var generation = 0
    /// The text of the element read last; the object numbers of the relationship read last.
    @exclusivity(unchecked) private var text: [UInt8] = []
    @exclusivity(unchecked) private var numbers: [Int64] = []

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

    /// Reads a store held in memory as if from a file, `chunkSize` bytes at a time (for tests: every
    /// token meets the end of the parser's block).
    convenience init(bytes: [UInt8], path: String = "<memory>", chunkSize: Int) throws(XMLStoreError) {
        try self.init(parser: XMLPullParser(bytes: bytes, path: path, chunkSize: chunkSize), path: path)
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
            switch try parser.nextToken() {
            case .text:
                guard parser.textIsSpace else { throw parser.error("text between objects") }
            case .start:
                guard parser.nameIs("object") else { throw parser.error("<\(parser.name)> where an <object> was expected") }
                objectOffset = parser.eventOffset
                return try readObject(schema: schema)
            case .end:
                // </database>: nothing but comments may follow.
                guard try parser.nextToken() == .endOfDocument else { throw parser.error("content after </database>") }
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
            switch try parser.nextToken() {
            case .start:
                if depth == 0 {
                    guard parser.nameIs("object"), let type = parser.attributeString(named: "type") else {
                        throw parser.error("<\(parser.name)> where an <object> was expected")
                    }
                    counts[type, default: 0] += 1
                }
                depth += 1
            case .end:
                if depth == 0 {
                    guard try parser.nextToken() == .endOfDocument else { throw parser.error("content after </database>") }
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
        guard try parser.nextToken() == .start, parser.nameIs("object") else { throw parser.error("no <object> begins at byte \(offset)") }
        objectOffset = offset
        return try readObject(schema: schema)
    }

    // MARK: - Objects

    /// The entity of the `<object>` start tag just read, by its `type`: the last one found again when
    /// the bytes are the same (a file holds an entity's objects one after the other).
    private func entity(ofType index: Int, schema: XMLStoreSchema) -> XMLEntityMap? {
        let same = parser.withAttributeValue(index) { type in lastType.count == type.count && lastType.elementsEqual(type) }
        if same { return lastEntity }
        let type = parser.attributeString(index)
        lastType = Array(type.utf8)
        lastEntity = schema.entity(type: type)
        return lastEntity
    }

    /// Reads the object whose `<object>` start tag was just read, through its end tag.
    private func readObject(schema: XMLStoreSchema) throws(XMLStoreError) -> XMLStoreObject {
        guard let typeIndex = parser.attributeIndex("type"), let idIndex = parser.attributeIndex("id") else {
            throw parser.error("an <object> without its type or id")
        }
        guard let number = parser.withAttributeValue(idIndex, Self.number(utf8:)) else {
            throw parser.error("the object id '\(parser.attributeString(idIndex).prefix(40))' is not z<number>")
        }
        // The id as written, for messages (`z0102` is the object 102).
        let id = parser.withAttributeValue(idIndex) { $0[1] == UInt8(ascii: "0") } ? parser.attributeString(idIndex) : "z\(number)"
        guard let entity = entity(ofType: typeIndex, schema: schema) else {
            throw XMLStoreError(
                .unknownName, "the model has no entity whose XML type is '\(parser.attributeString(typeIndex).prefix(80))'", path: path,
                line: parser.line, objectID: parser.attributeString(idIndex))
        }
        let layout = entity.layout
        guard !layout.isAbstract else {
            throw XMLStoreError(
                .invalidValue, "an object of the abstract entity \(layout.name)", path: path, line: parser.line, entity: layout.name,
                objectID: id)
        }
        objectLine = parser.line
        relationshipLines.removeAll(keepingCapacity: true)
        relationshipLines.append(contentsOf: repeatElement(0, count: entity.toOneCount + entity.toManyCount))
        var object = XMLStoreObject(
            number: number, entity: layout.name, values: [Value](repeating: .null, count: entity.attributeCount + entity.toOneCount),
            toMany: [[Int64]](repeating: [], count: entity.toManyCount))
        generation += 1
        if seen.count < entity.properties.count { seen += [Int](repeating: 0, count: entity.properties.count - seen.count) }
        var hint = 0
        do throws(XMLStoreError) {
            while true {
                switch try parser.nextToken() {
                case .text:
                    guard parser.textIsSpace else { throw parser.error("text inside <object>") }
                case .start:
                    if parser.nameIs("attribute") {
                        try readAttribute(entity: entity, into: &object, hint: &hint)
                    } else if parser.nameIs("relationship") {
                        try readRelationship(entity: entity, into: &object, hint: &hint)
                    } else {
                        throw parser.error("<\(parser.name)> inside <object>, where only <attribute> and <relationship> are")
                    }
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
        Array(id.utf8).withUnsafeBufferPointer(number(utf8:))
    }

    /// `z102` → 102, from the id's bytes.
    static func number(utf8 id: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard id.count > 1, id.count <= 20, id[0] == UInt8(ascii: "z") else { return nil }
        var number: Int64 = 0
        for byte in id.dropFirst() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !overflowAgain else { return nil }
            number = sum
        }
        return number > 0 ? number : nil
    }

    /// The property of an `<attribute>` or `<relationship>` start tag just read, by its `name` (any
    /// case): its position in the entity's properties (nil for a name the entity does not have), and the
    /// name in lower case. A property met twice in one object is refused.
    private func property(of entity: XMLEntityMap, kind: String, hint: inout Int) throws(XMLStoreError) -> (Int?, String) {
        guard let index = parser.attributeIndex("name") else { throw parser.error("<\(kind)> without a name") }
        let found = parser.withAttributeValue(index) { name in entity.property(named: name, hint: &hint) }
        guard let found else { return (nil, parser.attributeString(index).lowercased()) }
        guard seen[found] != generation else {
            throw parser.error("the property '\(parser.attributeString(index).prefix(80))' appears twice in one object")
        }
        seen[found] = generation
        return (found, entity.properties[found].name)
    }

    /// The text of the element whose start tag was just read, up to its end tag, into `text` (unless
    /// `keep` is false: the text is then read and checked, not kept).
    private func readText(of element: String, keep: Bool = true) throws(XMLStoreError) {
        text.removeAll(keepingCapacity: true)
        while true {
            switch try parser.nextToken() {
            case .text: if keep { parser.withText { text.append(contentsOf: $0) } }
            case .end: return
            case .start: throw parser.error("<\(element)> holds an element <\(parser.name)> where text was expected")
            case .endOfDocument: throw parser.error("the file ends inside <\(element)>")
            }
        }
    }

    private func readAttribute(entity: XMLEntityMap, into object: inout XMLStoreObject, hint: inout Int) throws(XMLStoreError) {
        let (found, name) = try property(of: entity, kind: "attribute", hint: &hint)
        guard let found, entity.properties[found].kind == .attribute else {
            throw XMLStoreError(.unknownName, "the model's entity \(entity.layout.name) has no attribute '\(name.prefix(80))'", path: path, line: parser.line)
        }
        let slot = entity.properties[found].index
        let expected = entity.attributeTypeBytes[slot]
        let typeIndex = parser.attributeIndex("type")
        guard let typeIndex, parser.withAttributeValue(typeIndex, { $0.elementsEqual(expected) }) else {
            throw XMLStoreError(
                .invalidValue,
                "attribute '\(name)' has the type '\(typeIndex.map { parser.attributeString($0) }?.prefix(40) ?? "")' in the file, where the model's \(entity.attributeTypes[slot]) is expected",
                path: path, line: parser.line)
        }
        let line = parser.line
        try readText(of: "attribute", keep: decodesAttributes)
        guard decodesAttributes else { return }
        do {
            object.values[slot] = try text.withUnsafeBufferPointer { bytes throws(XMLValueError) in
                try XMLValueCoding.value(utf8: bytes, type: entity.attributeKinds[slot])
            }
        } catch {
            throw XMLStoreError(.invalidValue, "attribute '\(name)' (\(entity.attributeTypes[slot])): \(error.message)", path: path, line: line)
        }
    }

    private func readRelationship(entity: XMLEntityMap, into object: inout XMLStoreObject, hint: inout Int) throws(XMLStoreError) {
        let (found, name) = try property(of: entity, kind: "relationship", hint: &hint)
        let line = parser.line
        guard let found, entity.properties[found].kind != .attribute else {
            throw XMLStoreError(.unknownName, "the model's entity \(entity.layout.name) has no relationship '\(name.prefix(80))'", path: path, line: line)
        }
        let property = entity.properties[found]
        let toOneCount = entity.toOneCount
        numbers.removeAll(keepingCapacity: true)
        if let index = parser.attributeIndex("idrefs") {
            let bad: String? = parser.withAttributeValue(index) { idrefs in
                var start = 0
                while start < idrefs.count {
                    guard idrefs[start] != 0x20 else {
                        start += 1
                        continue
                    }
                    var end = start
                    while end < idrefs.count, idrefs[end] != 0x20 { end += 1 }
                    let id = UnsafeBufferPointer(rebasing: idrefs[start..<end])
                    guard let number = Self.number(utf8: id) else { return String(decoding: id, as: UTF8.self) }
                    numbers.append(number)
                    start = end
                }
                return nil
            }
            if let bad {
                throw XMLStoreError(.malformed, "relationship '\(name)' refers to '\(bad.prefix(40))', not z<number>", path: path, line: line)
            }
        }
        let typeIndex = parser.attributeIndex("type")
        let written = { typeIndex.map { self.parser.attributeString($0) }?.prefix(20) ?? "" }
        let destination: String
        if property.kind == .toOne {
            guard let typeIndex, parser.withAttributeValue(typeIndex, { $0.elementsEqual("1/1".utf8) }) else {
                throw XMLStoreError(.invalidValue, "relationship '\(name)' has the type '\(written())' where the model's to-one is 1/1", path: path, line: line)
            }
            guard numbers.count <= 1 else {
                throw XMLStoreError(.invalidValue, "the to-one relationship '\(name)' refers to \(numbers.count) objects", path: path, line: line)
            }
            relationshipLines[property.index] = line
            object.values[entity.attributeCount + property.index] =
                numbers.first.map { .object(ObjectID(entity: entity.toOneDestinations[property.index], primaryKey: $0)) } ?? .null
            destination = entity.layout.toOneRelationships[property.index].destination
        } else {
            guard let typeIndex, parser.withAttributeValue(typeIndex, { $0.elementsEqual("0/0".utf8) }) else {
                throw XMLStoreError(.invalidValue, "relationship '\(name)' has the type '\(written())' where the model's to-many is 0/0", path: path, line: line)
            }
            object.toMany[property.index] = numbers
            relationshipLines[toOneCount + property.index] = line
            destination = entity.layout.toManyRelationships[property.index].destination
        }
        if let index = parser.attributeIndex("destination") {
            let expected = entity.destinationBytes[(property.kind == .toOne ? 0 : toOneCount) + property.index]
            let same = parser.withAttributeValue(index) { written in
                written.count == expected.count && zip(written, expected).allSatisfy { a, b in a == b || (a >= 0x61 && a <= 0x7A && a - 0x20 == b) }
            }
            if !same {
                let written = parser.attributeString(index)
                if written.uppercased() != destination.uppercased() {
                    throw XMLStoreError(
                        .invalidValue, "relationship '\(name)' leads to \(written.prefix(80)) in the file, to \(destination) in the model", path: path, line: line)
                }
            }
        }
        try readText(of: "relationship")
        guard text.allSatisfy(XMLPullParser.isSpace) else {
            throw XMLStoreError(.malformed, "relationship '\(name)' holds text", path: path, line: line)
        }
    }
}

@available(*, unavailable)
extension XMLStoreReader: Sendable {}
