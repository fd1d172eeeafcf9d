import Foundation
import MoultGenerate
import MoultModel
import MoultStore
import MoultTestSupport
import MoultTesting
import Testing

/// Store snapshots compare stores by content, primary keys aside, and name the first object that differs.
@Suite struct StoreSnapshotTests {
    static func model() throws -> ObjectModel {
        try #require(try VersionedModel(contentsOf: Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld")).version(named: "v1")).model
    }

    @Test func equalStoresAgreeAndOneChangedValueIsNamed() throws {
        let folder = try TemporaryDirectory("snapshot")
        defer { folder.remove() }
        let model = try Self.model()
        let (a, b) = (folder.appending("a.sqlite"), folder.appending("b.sqlite"))
        try StoreGenerator(model: model, objects: 120, seed: 8).generate(at: a)
        try StoreGenerator(model: model, objects: 120, seed: 8).generate(at: b)
        #expect(try StoreSnapshot(url: a, model: model).firstDifference(from: StoreSnapshot(url: b, model: model)) == nil)
        // One tag's label changed: the tag differs, and so does every object naming it.
        let store = try SQLiteStore(url: b, model: model, mode: .readWrite)
        try store.database.execute("UPDATE ZTAG SET ZLABEL = 'changed' WHERE Z_PK = 3")
        store.database.close()
        let difference = try #require(try StoreSnapshot(url: a, model: model).firstDifference(from: StoreSnapshot(url: b, model: model)))
        #expect(difference.description.contains("has no equal in the other"))
    }

    @Test func primaryKeysAsideStoresAgree() throws {
        let folder = try TemporaryDirectory("snapshot")
        defer { folder.remove() }
        let model = try Self.model()
        let a = folder.appending("a.sqlite")
        try StoreGenerator(model: model, objects: 60, seed: 2).generate(at: a)
        let before = try StoreSnapshot(url: a, model: model)
        // Every tag renumbered (keys + 1000), the hidden to-many key following it: same content.
        let store = try SQLiteStore(url: a, model: model, mode: .readWrite)
        try store.database.execute("UPDATE ZTAG SET Z_PK = Z_PK + 1000")
        store.database.close()
        let after = try StoreSnapshot(url: a, model: model)
        #expect(after.objects["Tag"]?.first?.primaryKey ?? 0 > 1000)
        #expect(before.objects["Tag"]?.map(\.fingerprint) == after.objects["Tag"]?.map(\.fingerprint))
        #expect(before.firstDifference(from: after) == nil)
    }
}
