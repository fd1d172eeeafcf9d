import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// One entry of `Tests/Fixtures/version-hashes.json`: a hash Core Data wrote into a real store.
struct StoredHash: Decodable, Sendable, CustomTestStringConvertible {
    var model: String
    var store: String
    var entity: String
    var versionHash: String

    var testDescription: String { "\(entity) in \(model)" }

    static let all: [StoredHash] = {
        let data = try! Data(contentsOf: Fixtures.url("version-hashes.json"))
        return try! JSONDecoder().decode([StoredHash].self, from: data)
    }()
}

@Suite struct VersionHashFixtureTests {
    @Test func fixtureListsEveryHash() {
        #expect(StoredHash.all.count == 267)
    }

    @Test("Every entity hash a real store holds is reproduced from its model", arguments: StoredHash.all)
    func reproducesStoredHash(_ stored: StoredHash) throws {
        let model = try ObjectModel(contentsOf: Fixtures.url(stored.model))
        let hash = try model.versionHash(ofEntity: stored.entity)
        #expect(hash.hex == stored.versionHash)
    }

    /// Xcode's compiled model (`.momd`) records each version's entity hashes and its checksum in
    /// `VersionInfo.plist`: those of CartKit's, compiled from its one version, are the ones computed
    /// from that version's XML.
    @Test func compiledModelsVersionInfoIsReproduced() throws {
        let folder = "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources"
        let data = try Data(contentsOf: Fixtures.url("\(folder)/CartStorage.momd/VersionInfo.plist"))
        let info = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let hashes = try #require((info["NSManagedObjectModel_VersionHashes"] as? [String: Any])?["CartStorage"] as? [String: Data])
        let checksum = (info["NSManagedObjectModel_VersionChecksums"] as? [String: String])?["CartStorage"]
        let model = try ObjectModel(contentsOf: Fixtures.url("\(folder)/CartStorage.xcdatamodeld/CartStorage.xcdatamodel/contents"))
        #expect(hashes.count == 3)
        #expect(model.entityVersionHashes().mapValues(\.hex) == hashes.mapValues { $0.map { String(format: "%02x", $0) }.joined() })
        #expect(VersionHashes.checksum(model.entityVersionHashes()) == checksum)
    }

    @Test func everyStoreIsCompatibleWithItsModel() throws {
        let byStore = Dictionary(grouping: StoredHash.all, by: \.store)
        for (_, hashes) in byStore {
            let model = try ObjectModel(contentsOf: Fixtures.url(hashes[0].model))
            let storeHashes = Dictionary(uniqueKeysWithValues: hashes.map { ($0.entity, VersionHash(hex: $0.versionHash)!) })
            #expect(model.isCompatible(withEntityHashes: storeHashes), "\(hashes[0].store)")
            #expect(model.hashDifferences(from: storeHashes).isEmpty)
        }
    }
}
