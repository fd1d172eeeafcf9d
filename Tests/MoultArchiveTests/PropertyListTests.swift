import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@Suite struct PropertyListTests {
    /// A dictionary shaped like store metadata, with every kind of value the metadata can hold.
    static let metadataLike: PropertyListValue = {
        let hash = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        return .dictionary([
            "NSStoreType": .string("SQLite"),
            "NSPersistenceFrameworkVersion": .integer(1344),
            "NSStoreModelVersionHashes": .dictionary(["Person": .data(hash), "Ädresse": .data(hash.reversed())]),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array([.string("")]),
            "NSStoreModelVersionHashesDigest": .string("fACvwxty0QWritKFX3/LTtXZvI64UnFcRtP6qcjW1Yl0owr+rH+SpCvzy/uDYRpknMXbgacd3srn9wmE2KkL8Q=="),
            "_NSAutoVacuumLevel": .string("2"),
            "MyAppKey": .dictionary([
                "n": .integer(-7), "big": .integer(70000), "flag": .bool(true),
                "when": .date(Date(timeIntervalSinceReferenceDate: 1234.5)), "pi": .real(3.25),
                "list": .array((0..<20).map { .integer(Int64($0)) }),
            ]),
        ])
    }()

    /// The bytes MoultStore's own writer gave for metadataLike before the writer moved here: store
    /// metadata written by Moult stays byte for byte the same.
    static let goldenHex = "62706c6973743030d8000100020003000400050006000700080009002a002b00300031003200340035584d794170704b65795f101d4e5350657273697374656e63654672616d65776f726b56657273696f6e5f10194e5353746f72654d6f64656c56657273696f6e4861736865735f101f4e5353746f72654d6f64656c56657273696f6e4861736865734469676573745f10204e5353746f72654d6f64656c56657273696f6e48617368657356657273696f6e5f101e4e5353746f72654d6f64656c56657273696f6e4964656e746966696572735b4e5353746f7265547970655f10125f4e534175746f56616375756d4c6576656cd6000a000b000c000d000e000f0010001100120027002800295362696754666c6167546c697374516e527069547768656e120001117009af10140013001400150016001700180019001a001b001c001d001e001f00200021002200230024002500261000100110021003100410051006100710081009100a100b100c100d100e100f101010111012101313fffffffffffffff923400a0000000000003340934a0000000000110540d2002c002d002e002f56506572736f6e6700c40064007200650073007300654f102000070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d94f1020d9d2cbc4bdb6afa8a19a938c857e777069625b544d463f38312a231c150e07005f105866414376777874793051577269744b4658332f4c5474585a76493634556e46635274503671636a5731596c306f77722b72482b537043767a792f75445952706b6e4d5862676163643373726e39776d45324b6b4c38513d3d1003a10033505653514c69746551320008002900320052006e009000b300d400e000f5010e01120117011c011e01210126012b012c01570159015b015d015f01610163016501670169016b016d016f01710173017501770179017b017d017f01880191019a019d01a601ad01bc01df0202025d025f02620263026a000000000000020200000000000000360000000000000000000000000000026c"

    @Test func writerKeepsTheBytesStoreMetadataHadBefore() {
        let hex = Self.metadataLike.binaryPropertyList().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == Self.goldenHex)
    }

    @Test func everyKindOfValueReadsBackEqual() throws {
        let value = PropertyListValue.array([
            Self.metadataLike, .uid(0), .uid(255), .uid(256), .uid(70_000), .null, .bool(false), .real(-0.5),
            .string("ünïcödé 😀"), .string(String(repeating: "x", count: 300)), .data(Array(repeating: 7, count: 40)),
            .integer(.min), .integer(.max), .integer(0xFFFF_FFFF), .dictionary([:]), .array([]),
        ])
        #expect(try PropertyListValue(binaryPropertyList: value.binaryPropertyList()) == value)
    }

    @Test func foundationReadsWhatMoultWrites() throws {
        let bytes = Self.metadataLike.binaryPropertyList()
        let object = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
        #expect(PropertyListValue(foundation: object) == Self.metadataLike)
    }

    @Test func moultReadsWhatFoundationWrites() throws {
        let object: [String: Any] = ["a": [1, 2, 3], "b": "text", "c": Data([1, 2]), "d": ["e": true]]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let value = try PropertyListValue(binaryPropertyList: Array(data))
        #expect(value == PropertyListValue(foundation: object))
    }

    @Test(arguments: PropertyListFuzzTests.storeMetadataCorpus.indices)
    func fixtureStoreMetadataReads(_ index: Int) throws {
        let bytes = PropertyListFuzzTests.storeMetadataCorpus[index]
        let value = try PropertyListValue(binaryPropertyList: bytes)
        let expected = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
        #expect(value == PropertyListValue(foundation: expected))
        #expect(value.dictionaryValue?["NSStoreModelVersionHashes"]?.dictionaryValue?.isEmpty == false)
    }

    // MARK: - Hostile bytes

    /// A property list built by hand: objects (each already encoded), 2-byte offsets and 1-byte references.
    static func handmade(_ objects: [[UInt8]], top: Int = 0, objectCount: Int? = nil, tableOffset: Int? = nil) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        bytes += offsets.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        func u64(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bitPattern: Int64(value)) >> (8 * UInt64($0))) } }
        bytes += [0, 0, 0, 0, 0, 0, 2, 1] + u64(objectCount ?? objects.count) + u64(top) + u64(tableOffset ?? table)
        return bytes
    }

    static func expectMalformed(_ bytes: [UInt8], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try PropertyListValue(binaryPropertyList: bytes)
        } throws: { error in
            guard let error = error as? ArchiveError else { return false }
            return error.code == .malformedPropertyList && error.category == .badInput && error.category.exitCode == 65
                && error.description.contains(fragment)
        }
    }

    @Test func anArrayThatContainsItselfIsRefused() {
        // Object 0: an array of one element, object 0.
        Self.expectMalformed(Self.handmade([[0xA1, 0x00]]), "contains itself")
        // Objects 0 → 1 → 0.
        Self.expectMalformed(Self.handmade([[0xA1, 0x01], [0xA1, 0x00]]), "contains itself")
    }

    @Test func referencesOutOfRangeAreRefused() {
        Self.expectMalformed(Self.handmade([[0xA1, 0x09]]), "out of range")
    }

    @Test func countsLargerThanTheDataAreRefused() {
        // An array claiming 2^62 elements (0xAF, then an 8-byte integer).
        Self.expectMalformed(Self.handmade([[0xAF, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]]), "runs past the object area")
        // A string claiming 4 GB.
        Self.expectMalformed(Self.handmade([[0x5F, 0x12, 0xFF, 0xFF, 0xFF, 0xFF]]), "runs past the object area")
        // A trailer claiming more objects than bytes.
        Self.expectMalformed(Self.handmade([[0x08]], objectCount: 1_000_000), "trailer is inconsistent")
        // An offset table outside the file.
        Self.expectMalformed(Self.handmade([[0x08]], tableOffset: 1 << 40), "trailer is inconsistent")
    }

    @Test func deepNestingIsRefused() {
        var value = PropertyListValue.integer(1)
        for _ in 0...BinaryPropertyListReader.maximumDepth { value = .array([value]) }
        Self.expectMalformed(value.binaryPropertyList(), "nest deeper")
    }

    /// Each array holds the previous one twice: `levels` objects standing for a tree of 2^levels leaves.
    static func doublingArrays(levels: Int) -> [UInt8] {
        var objects: [[UInt8]] = [[0x10, 0x01]]
        for index in 1...levels { objects.append([0xA2, UInt8(index - 1), UInt8(index - 1)]) }
        return handmade(objects, top: levels)
    }

    @Test func sharedObjectsAreDecodedOnce() throws {
        let value = try PropertyListValue(binaryPropertyList: Self.doublingArrays(levels: 8))
        var depth = 0
        var current = value
        while case .array(let elements) = current {
            #expect(elements.count == 2)
            current = elements[0]
            depth += 1
        }
        #expect(depth == 8)
        #expect(current == .integer(1))
        // Written out as a tree, the value is 2^8 leaves: it reads back equal.
        #expect(try PropertyListValue(binaryPropertyList: value.binaryPropertyList()) == value)
    }

    @Test func sharingThatStandsForAnExponentialTreeIsRefused() {
        // 2^90 leaves from 91 objects: refused at once, never walked.
        Self.expectMalformed(Self.doublingArrays(levels: 90), "share collections")
    }

    @Test func garbageIsRefused() {
        Self.expectMalformed(Array("not a property list at all, long enough to have a trailer".utf8), "not a binary property list")
        Self.expectMalformed(Self.handmade([[0x7A]]), "unknown marker")
        Self.expectMalformed(Self.handmade([[0xD1, 0x01, 0x01], [0x10, 0x05]]), "key that is not a string")
        Self.expectMalformed(Self.handmade([[0x51, 0xC3]]), "non-ASCII")
    }
}
