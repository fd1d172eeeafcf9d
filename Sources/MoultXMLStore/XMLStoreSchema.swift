public import MoultModel
import MoultStore

/// One object of an XML store, as the reader gives it and the writer takes it.
///
/// Values are by slot, in the order of the entity's ``/MoultStore/ObjectShape``: attributes, then to-one
/// relationships (`.object` whose primary key is the destination's object number, or `.null`).
/// To-many relationships are by position in ``/MoultStore/EntityLayout/toManyRelationships``: the object
/// numbers of the destinations, in the file's order (an ordered relationship's order).
///
/// ```swift
/// // <object type="PERSON" id="z102"> … </object>
/// let person = XMLStoreObject(number: 102, entity: "Person", values: ["Ada", .null], toMany: [[]])
/// ```
public struct XMLStoreObject: Sendable, Hashable {
    /// The object's number: its `id` is `z<number>`.
    public var number: Int64
    /// The entity's name in the model.
    public var entity: String
    /// Attribute values, then to-one destinations, by slot.
    public var values: [Value]
    /// To-many destinations' numbers, by relationship.
    public var toMany: [[Int64]]

    public init(number: Int64, entity: String, values: [Value], toMany: [[Int64]]) {
        self.number = number
        self.entity = entity
        self.values = values
        self.toMany = toMany
    }

    /// The `id` the file gives the object.
    public var id: String { "z\(number)" }
}

/// How one entity of a model appears in an XML store: its `type` (the name in capitals) and its
/// properties' names in lower case, which is how Core Data writes them.
final class XMLEntityMap: Sendable {
    let layout: EntityLayout
    /// The object element's `type`.
    let type: String
    /// Lower-case attribute name → slot.
    let attributes: [String: Int]
    /// Lower-case to-one name → index among the to-ones.
    let toOnes: [String: Int]
    /// Lower-case to-many name → index among the to-manys.
    let toManys: [String: Int]
    /// Each attribute's `type` in the file.
    let attributeTypes: [String]
    /// Lower-case names, in slot order, for writing.
    let attributeNames: [String]
    /// Every property as the reader looks it up by the bytes of its name: attributes, to-ones, to-manys.
    let properties: [XMLPropertyKey]
    /// Each attribute's `type` in the file, as bytes.
    let attributeTypeBytes: [[UInt8]]
    /// Each to-one's, then each to-many's destination in capitals, as bytes.
    let destinationBytes: [[UInt8]]
    /// Each attribute's type, by slot; each to-one's destination entity number.
    let attributeKinds: [AttributeType]
    let toOneDestinations: [Int32]
    let attributeCount: Int
    let toOneCount: Int
    let toManyCount: Int

    init(layout: EntityLayout, attributes: [String: Int], toOnes: [String: Int], toManys: [String: Int], attributeNames: [String]) {
        self.layout = layout
        type = layout.name.uppercased()
        self.attributes = attributes
        self.toOnes = toOnes
        self.toManys = toManys
        attributeTypes = layout.attributes.map { XMLValueCoding.typeName($0.type) }
        self.attributeNames = attributeNames
        var properties: [XMLPropertyKey] = []
        for (name, slot) in attributes { properties.append(XMLPropertyKey(name: name, kind: .attribute, index: slot)) }
        for (name, index) in toOnes { properties.append(XMLPropertyKey(name: name, kind: .toOne, index: index)) }
        for (name, index) in toManys { properties.append(XMLPropertyKey(name: name, kind: .toMany, index: index)) }
        properties.sort { ($0.kind.rawValue, $0.index) < ($1.kind.rawValue, $1.index) }
        self.properties = properties
        attributeTypeBytes = attributeTypes.map { Array($0.utf8) }
        attributeKinds = layout.attributes.map(\.type)
        toOneDestinations = layout.toOneRelationships.map(\.destinationNumber)
        attributeCount = layout.attributes.count
        toOneCount = layout.toOneRelationships.count
        toManyCount = layout.toManyRelationships.count
        destinationBytes = (layout.toOneRelationships.map(\.destination) + layout.toManyRelationships.map(\.destination)).map { Array($0.uppercased().utf8) }
    }

    /// The position in ``properties`` of the property whose name, in lower case, is `name`'s; `hint`
    /// (the position after the one found last, as a file writes an entity's properties in one order) is
    /// tried first.
    func property(named name: UnsafeBufferPointer<UInt8>, hint: inout Int) -> Int? {
        guard name.allSatisfy({ $0 < 0x80 }) else {
            // Lower case beyond ASCII (the Kelvin sign's is a Latin k): as Swift's.
            let lower = Array(String(decoding: name, as: UTF8.self).lowercased().utf8)
            return lower.withUnsafeBufferPointer { lower in properties.firstIndex { $0.matches(lower) } }
        }
        if hint < properties.count, properties[hint].matches(name) {
            hint += 1
            return hint - 1
        }
        guard let found = properties.firstIndex(where: { $0.matches(name) }) else { return nil }
        hint = found + 1
        return found
    }
}

/// A property of an ``XMLEntityMap`` with its name's bytes, in lower case.
struct XMLPropertyKey: Sendable {
    enum Kind: Int, Sendable {
        case attribute, toOne, toMany
    }

    let name: String
    let bytes: [UInt8]
    let kind: Kind
    /// The attribute's slot, or the relationship's index among the to-ones or to-manys.
    let index: Int

    init(name: String, kind: Kind, index: Int) {
        self.name = name
        bytes = Array(name.utf8)
        self.kind = kind
        self.index = index
    }

    /// Whether ASCII `name` (any case) is this property's name.
    func matches(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == bytes.count else { return false }
        for index in 0..<name.count {
            var byte = name[index]
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != bytes[index] { return false }
        }
        return true
    }
}

/// The map from a model's layout to the names an XML store uses (a class: the reader holds it for
/// every object without copying it).
final class XMLStoreSchema: Sendable {
    let layout: StoreLayout
    let entities: [XMLEntityMap]
    private let byType: [String: Int]
    private let byName: [String: Int]

    /// The schema of a model's layout.
    ///
    /// - Throws: ``XMLStoreError`` (`.unknownName`) when two entities, or two properties of one entity,
    ///   differ only in case: the file could not say which is which.
    init(layout: StoreLayout) throws(XMLStoreError) {
        self.layout = layout
        var entities: [XMLEntityMap] = []
        var byType: [String: Int] = [:]
        for entity in layout.entities {
            let type = entity.name.uppercased()
            guard byType[type] == nil else {
                throw XMLStoreError(.unknownName, "two entities are both named '\(type)' in an XML store, which writes entity names in capitals", entity: entity.name)
            }
            byType[type] = entities.count
            entities.append(try Self.map(entity))
        }
        self.entities = entities
        self.byType = byType
        self.byName = Dictionary(entities.enumerated().map { ($1.layout.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    private static func map(_ entity: EntityLayout) throws(XMLStoreError) -> XMLEntityMap {
        var seen: Set<String> = []
        func lower(_ name: String) throws(XMLStoreError) -> String {
            let lower = name.lowercased()
            guard seen.insert(lower).inserted else {
                throw XMLStoreError(.unknownName, "two properties are both named '\(lower)' in an XML store, which writes property names in lower case", entity: entity.name)
            }
            return lower
        }
        var attributes: [String: Int] = [:]
        var names: [String] = []
        for (slot, attribute) in entity.attributes.enumerated() {
            let name = try lower(attribute.name)
            attributes[name] = slot
            names.append(name)
        }
        var toOnes: [String: Int] = [:]
        for (index, toOne) in entity.toOneRelationships.enumerated() { toOnes[try lower(toOne.name)] = index }
        var toManys: [String: Int] = [:]
        for (index, toMany) in entity.toManyRelationships.enumerated() { toManys[try lower(toMany.name)] = index }
        return XMLEntityMap(layout: entity, attributes: attributes, toOnes: toOnes, toManys: toManys, attributeNames: names)
    }

    /// The entity whose objects have this `type`.
    func entity(type: String) -> XMLEntityMap? { byType[type.uppercased()].map { entities[$0] } }

    /// The number of properties of the entity that has the most.
    var largestPropertyCount: Int { entities.map(\.properties.count).max() ?? 0 }

    /// The entity of this name in the model.
    func entity(named name: String) -> XMLEntityMap? { byName[name].map { entities[$0] } }
}
