import Crypto
import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// The layout of CORE-DATA-FORMATS.md §4, written out independently of the implementation, to check the
/// inputs no real store confirms yet.
private enum Layout {
    static func sha(_ parts: [[UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }
    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func i32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    static func text(_ s: String?) -> [UInt8] { s.map { Array($0.utf8) } ?? [] }

    static func property(_ name: String, optional: Bool, transient: Bool = false, readOnly: Bool = false, modifier: String? = nil) -> [UInt8] {
        sha([text(name), u16((optional ? 1 : 0) | (transient ? 2 : 0) | (readOnly ? 4 : 0)), text(modifier)])
    }
    static func attribute(_ p: [UInt8], code: Int32, external: Bool = false, preserve: Bool = false) -> [UInt8] {
        sha([p, i32(code), external ? [1] : [], preserve ? [1] : []])
    }
    static func relationship(_ p: [UInt8], destination: String, inverse: String?, max: Int32, min: Int32, ordered: Bool = false) -> [UInt8] {
        sha([p, text(destination), text(inverse), i32(max), i32(min), ordered ? u16(1) : []])
    }
    static func entity(_ name: String, abstract: Bool = false, parent: [UInt8]? = nil, properties: [[UInt8]], modifier: String? = nil, constraints: [String] = []) -> [UInt8] {
        sha([text(name), [abstract ? 1 : 0], parent ?? []] + properties + [text(modifier)] + constraints.map { text($0) })
    }
}

@Suite struct VersionHashInputTests {
    // MARK: - Inputs real stores confirm

    /// The Photos fixture's hashes come from a real store: these inputs are confirmed byte for byte by
    /// `VersionHashFixtureTests`. This checks the fixture really exercises each of them.
    @Test func realStoresCoverOrderedModifiersExternalStorageAndPreserve() throws {
        let model = try ObjectModel(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel"))
        let stored = Set(StoredHash.all.filter { $0.model.hasPrefix("osxphotos") }.map(\.entity))
        func covered(_ matches: (String) -> Bool) -> Bool { stored.contains(where: matches) }
        #expect(covered { model.relationships(of: $0).contains(where: \.isOrdered) })
        #expect(covered { model.entity(named: $0)?.versionHashModifier != nil })
        #expect(covered { model.attributes(of: $0).contains { $0.versionHashModifier != nil } })
        #expect(covered { model.relationships(of: $0).contains { $0.versionHashModifier != nil } })
        #expect(covered { model.attributes(of: $0).contains(where: \.allowsExternalBinaryDataStorage) })
        #expect(covered { model.attributes(of: $0).contains(where: \.preserveAfterDeletion) })
        #expect(covered { name in model.relationships(of: name).contains { $0.inverseName == $0.name && $0.destinationEntity == name } })
    }

    @Test func eachFlagChangesTheHash() throws {
        let plain = try ObjectModel { Entity("E") { Attribute("data", .binary) } }
        let external = try ObjectModel { Entity("E") { Attribute("data", .binary).externalStorage() } }
        let preserved = try ObjectModel { Entity("E") { Attribute("data", .binary).preserveAfterDeletion() } }
        let both = try ObjectModel { Entity("E") { Attribute("data", .binary).externalStorage().preserveAfterDeletion() } }
        let hashes = try [plain, external, preserved, both].map { try $0.versionHash(ofEntity: "E") }
        // Each flag appends one 0x01 byte, so either one alone gives the same hash (as Core Data's does).
        #expect(hashes[1] == hashes[2])
        #expect(Set(hashes).count == 3)
        // What does not enter the hash.
        let decorated = try ObjectModel {
            Entity("E") { Attribute("data", .binary).indexed().renamed(from: "blob").userInfo("k", "v").defaultValue("x") }
                .representedClassName("EClass").renamed(from: "Old")
        }
        #expect(try decorated.versionHash(ofEntity: "E") == hashes[0])
    }

    // MARK: - Inputs not confirmed by a real store

    @Test("Decimal type code 400 (not confirmed by a real store)")
    func decimalCode() throws {
        let model = try ObjectModel { Entity("E") { Attribute("price", .decimal).required() } }
        let expected = Layout.entity("E", properties: [Layout.attribute(Layout.property("price", optional: false), code: 400)])
        #expect(try model.versionHash(ofEntity: "E").bytes == expected)
    }

    @Test("To-many with no inverse and a bounded maximum (not confirmed by a real store)")
    func toManyWithoutInverseBounded() throws {
        let model = try ObjectModel {
            Entity("A") { Relationship("bs", toMany: "B").count(min: 1, max: 5) }
            Entity("B")
        }
        let relationship = Layout.relationship(Layout.property("bs", optional: true), destination: "B", inverse: nil, max: 5, min: 1)
        #expect(try model.versionHash(ofEntity: "A").bytes == Layout.entity("A", properties: [relationship]))
    }

    @Test("Int.max maximum count hashes as -1, as a model built in code archives it (not confirmed by a real store)")
    func unboundedInCode() throws {
        let relationship = RelationshipDescription(name: "bs", destination: "B", isToMany: true, maxCount: Int.max)
        let expected = Layout.relationship(Layout.property("bs", optional: true), destination: "B", inverse: nil, max: -1, min: 0)
        #expect(relationship.versionHash(declaredBy: "A").bytes == expected)
    }

    @Test("Read-only flag 4 (not confirmed by a real store)")
    func readOnlyFlag() throws {
        let attribute = AttributeDescription(name: "x", type: .string, isOptional: true, isReadOnly: true)
        #expect(attribute.versionHash.bytes == Layout.attribute(Layout.property("x", optional: true, readOnly: true), code: 700))
    }

    @Test("Ordered to-many with property and entity version hash modifiers, in code")
    func orderedAndModifiers() throws {
        let model = try ObjectModel {
            Entity("Book") {
                Attribute("title", .string).versionHashModifier("t1")
                Relationship("pages", toMany: "Page", inverse: "book").ordered().versionHashModifier("p1")
            }
            .versionHashModifier("b1")
            Entity("Page") { Relationship("book", to: "Book", inverse: "pages") }
        }
        let title = Layout.attribute(Layout.property("title", optional: true, modifier: "t1"), code: 700)
        #expect(model.versionHash(ofProperty: "title", inEntity: "Book")?.bytes == title)
        #expect(model.versionHash(ofProperty: "nothing", inEntity: "Book") == nil)
        let pages = Layout.relationship(
            Layout.property("pages", optional: true, modifier: "p1"), destination: "Page", inverse: "book", max: 0, min: 0,
            ordered: true)
        #expect(try model.versionHash(ofEntity: "Book").bytes == Layout.entity("Book", properties: [pages, title], modifier: "b1"))
    }

    @Test("Properties sorted by UTF-8 bytes, several uniqueness constraints sorted (not confirmed by a real store)")
    func byteOrderAndConstraints() throws {
        let model = try ObjectModel {
            Entity("É") {
                Attribute("é", .string)
                Attribute("az", .string)
                Attribute("aZ", .string)
                Unique("az", "aZ")
                Unique("aZ")
            }
        }
        let names = ["aZ", "az", "é"]  // 0x5A < 0x7A, 0x61 < 0xC3
        let properties = names.map { Layout.attribute(Layout.property($0, optional: true), code: 700) }
        let expected = Layout.entity("É", properties: properties, constraints: ["aZ", "az.aZ"])
        #expect(try model.versionHash(ofEntity: "É").bytes == expected)
    }

    @Test func inheritanceAndAbstract() throws {
        let model = try ObjectModel {
            Entity("Person") { Attribute("name", .string) }.abstract()
            Entity("Adult", parent: "Person") { Attribute("company", .string) }
        }
        let name = Layout.attribute(Layout.property("name", optional: true), code: 700)
        let company = Layout.attribute(Layout.property("company", optional: true), code: 700)
        let person = Layout.entity("Person", abstract: true, properties: [name])
        #expect(try model.versionHash(ofEntity: "Person").bytes == person)
        #expect(try model.versionHash(ofEntity: "Adult").bytes == Layout.entity("Adult", parent: person, properties: [company, name]))
    }

    @Test func transientPropertiesAreLeftOut() throws {
        let model = try ObjectModel { Entity("E") { Attribute("cache", .string).transient(); Attribute("x", .string) } }
        let x = Layout.attribute(Layout.property("x", optional: true), code: 700)
        #expect(try model.versionHash(ofEntity: "E").bytes == Layout.entity("E", properties: [x]))
    }

    /// A derivation Core Data's store does not take (here `random()`) gives no hash (the accepted forms
    /// do: see DerivationExpressionHashTests).
    @Test func derivedAttributeIsNotComputable() throws {
        let model = try ObjectModel {
            Entity("Base") { Attribute("n", .date).derived("random()") }
            Entity("Sub", parent: "Base")
            Entity("Other") { Attribute("x", .string) }
        }
        #expect(model.entitiesWithUncomputableHash == ["Base", "Sub"])
        #expect(Set(model.entityVersionHashes().keys) == ["Other"])
        #expect(throws: ModelError.self) { try model.versionHash(ofEntity: "Sub") }
        do {
            _ = try model.versionHash(ofEntity: "Sub")
        } catch {
            #expect(error.code == .notComputable && error.message.contains("derived attribute 'n'"))
        }
        // Compatibility matches such an entity by presence only, never by a made-up hash.
        var store = model.entityVersionHashes()
        store["Base"] = VersionHash(bytes: Array(repeating: 7, count: 32))
        store["Sub"] = VersionHash(bytes: Array(repeating: 8, count: 32))
        #expect(model.isCompatible(withEntityHashes: store))
        store["Sub"] = nil
        #expect(model.hashDifferences(from: store) == [.missingInStore(entity: "Sub")])
    }
}
