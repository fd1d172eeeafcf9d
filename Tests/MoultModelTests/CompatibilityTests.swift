import Crypto
import Foundation
import MoultModel
import MoultTestSupport
import Testing

@Suite struct CompatibilityTests {
    static let sampleModel = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld")

    private func storeHashes(_ storeSuffix: String) -> [String: VersionHash] {
        Dictionary(
            uniqueKeysWithValues: StoredHash.all.filter { $0.store.hasSuffix(storeSuffix) }
                .map { ($0.entity, VersionHash(hex: $0.versionHash)!) })
    }

    @Test func findsTheVersionOfEachRealStore() throws {
        let model = try VersionedModel(contentsOf: Self.sampleModel)
        let stores = Set(StoredHash.all.filter { $0.model.contains("/SampleModel.xcdatamodeld/") }.map(\.store))
        #expect(!stores.isEmpty)
        for store in stores {
            let expected = StoredHash.all.first { $0.store == store }!.model
            let version = try #require(model.version(matchingEntityHashes: storeHashes(store)), "\(store)")
            #expect(expected.contains("/\(version.name).xcdatamodel/"), "\(store) matched \(version.name)")
        }
    }

    @Test func reportsWhatDiffers() throws {
        let model = try VersionedModel(contentsOf: Self.sampleModel)
        let v1Store = storeHashes("SampleModel_V1.sqlite")
        #expect(v1Store.count == 4)
        let v2 = try #require(model.version(named: "SampleModel2")).model
        #expect(!v2.isCompatible(withEntityHashes: v1Store))
        let differences = v2.hashDifferences(from: v1Store)
        #expect(differences.contains(.missingInStore(entity: "LuxuryCar")))
        #expect(differences.contains(.missingInModel(entity: "ExpensiveSportCar")))
        #expect(differences.contains { if case .hashDiffers(entity: "Car", _, _) = $0 { true } else { false } })
        #expect(model.version(matchingEntityHashes: [:]) == nil)
    }

    @Test func configurationsLimitTheComparison() throws {
        let model = try ObjectModel {
            Entity("A") { Attribute("x", .string) }
            Entity("B") { Attribute("y", .string) }
            Configuration("OnlyA", entities: "A")
        }
        let all = model.entityVersionHashes()
        let onlyA = all.filter { $0.key == "A" }
        #expect(model.isCompatible(withEntityHashes: all))
        #expect(!model.isCompatible(withEntityHashes: onlyA))
        #expect(model.isCompatible(withEntityHashes: onlyA, configuration: "OnlyA"))
        #expect(model.isCompatible(withEntityHashes: all, configuration: "Default"))
        #expect(!model.isCompatible(withEntityHashes: all, configuration: "OnlyA"))
        #expect(model.hashDifferences(from: all, configuration: "OnlyA") == [.missingInModel(entity: "B")])
    }

    @Test func digestAndChecksumLayout() throws {
        let a = try #require(VersionHash(bytes: Array(repeating: 1, count: 32)))
        let b = try #require(VersionHash(bytes: Array(repeating: 2, count: 32)))
        let hashes = ["b": b, "B": a]  // byte order: "B" (0x42) before "b" (0x62)
        var sha512 = SHA512()
        sha512.update(data: Array("B".utf8) + a.bytes + Array("b".utf8) + b.bytes)
        #expect(VersionHashes.digest(hashes) == Data(sha512.finalize()).base64EncodedString())
        var sha256 = SHA256()
        sha256.update(data: a.bytes + b.bytes)
        #expect(VersionHashes.checksum(hashes) == Data(sha256.finalize()).base64EncodedString())
        #expect(VersionHashes.digest(hashes).count == 88)
        #expect(VersionHashes.checksum(hashes).count == 44)
    }

    @Test func versionHashValues() throws {
        let hex = "B9F1D1B43446F1AD118CA4A03E226E05F98C899C98B524C13F02F6514DED5E80"
        let hash = try #require(VersionHash(hex: hex))
        #expect(hash.hex == hex.lowercased() && hash.description == hash.hex)
        #expect(hash.bytes.first == 0xB9 && hash.bytes.count == 32)
        #expect(VersionHash(hex: String(hex.dropLast())) == nil)
        #expect(VersionHash(hex: String(hex.dropLast()) + "g") == nil)
        #expect(VersionHash(bytes: [1, 2, 3]) == nil)
        let low = try #require(VersionHash(bytes: Array(repeating: 0, count: 32)))
        #expect(low < hash && !(hash < low))
    }
}

/// One entry of `Tests/Fixtures/store-metadata.json`, which `extract-store-metadata.py` decodes from the
/// fixture stores' `Z_METADATA` (what Core Data itself wrote).
struct StoreMetadataEntry: Decodable, Sendable, CustomTestStringConvertible {
    var store: String
    var versionHashes: [String: String]
    var digest: String?
    var checksum: String?

    var testDescription: String { store }

    var hashes: [String: VersionHash] { versionHashes.mapValues { VersionHash(hex: $0)! } }

    static let all: [StoreMetadataEntry] = {
        let data = try! Data(contentsOf: Fixtures.url("store-metadata.json"))
        return try! JSONDecoder().decode([StoreMetadataEntry].self, from: data)
    }()
}

@Suite struct StoreDigestTests {
    @Test func realStoresHaveDigestsAndChecksums() {
        #expect(StoreMetadataEntry.all.filter { $0.digest != nil }.count == 19)
        #expect(StoreMetadataEntry.all.filter { $0.checksum != nil }.count == 7)
    }

    @Test("The digest and checksum Core Data wrote are reproduced from the store's hashes",
        arguments: StoreMetadataEntry.all.filter { $0.digest != nil || $0.checksum != nil })
    func reproducesDigestAndChecksum(_ entry: StoreMetadataEntry) {
        if let digest = entry.digest { #expect(VersionHashes.digest(entry.hashes) == digest) }
        if let checksum = entry.checksum { #expect(VersionHashes.checksum(entry.hashes) == checksum) }
    }
}
