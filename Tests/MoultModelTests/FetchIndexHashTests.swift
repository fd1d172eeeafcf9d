import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// Fetch indexes do not enter entity version hashes: Photos' model, given back the fetch indexes its
/// store has (every kind: single, compound, descending, partial, R-tree), still hashes to the hashes
/// Core Data wrote into that store, and so does the same model written as XML and read again.
@Suite struct FetchIndexHashTests {
    static func photosWithIndexes() throws -> ObjectModel {
        let photos = try ObjectModel(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel"))
        var entities = photos.entities
        for position in entities.indices {
            switch entities[position].name {
            case "GenericAsset":
                entities[position].fetchIndexes = [
                    FetchIndexDescription(name: "byKindIndex", elements: [.init(property: "kind")]),
                    FetchIndexDescription(name: "compoundIndex4", elements: [.init(property: "hidden"), .init(property: "visibilityState")]),
                    FetchIndexDescription(
                        name: "byMonthHighlightBeingFirstAsset",
                        elements: [.init(property: "dateCreated"), .init(property: "monthHighlightBeingFirstAsset")],
                        partialIndexPredicate: "monthHighlightBeingFirstAsset != nil"),
                    FetchIndexDescription(
                        name: "boundedByRect", elements: [.init(property: "latitude", type: "RTree"), .init(property: "longitude", type: "RTree")]),
                ]
            case "Memory":
                entities[position].fetchIndexes = [
                    FetchIndexDescription(
                        name: "compoundIndex",
                        elements: [.init(property: "creationDate", ascending: false), .init(property: "rejected", ascending: false)])
                ]
            default:
                break
            }
        }
        return try ObjectModel(entities: entities, versionIdentifier: photos.versionIdentifier)
    }

    @Test func fetchIndexesLeaveTheRealHashes() throws {
        let model = try Self.photosWithIndexes()
        let reread = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8))
        #expect(reread.entity(named: "GenericAsset")?.fetchIndexes.count == 4)
        let stored = StoredHash.all.filter { $0.model.hasPrefix("osxphotos") && ["GenericAsset", "Asset", "Memory"].contains($0.entity) }
        #expect(stored.count == 3)
        for hash in stored {
            #expect(try model.versionHash(ofEntity: hash.entity).hex == hash.versionHash, "\(hash.entity)")
            #expect(try reread.versionHash(ofEntity: hash.entity).hex == hash.versionHash, "\(hash.entity) read back")
        }
    }
}
