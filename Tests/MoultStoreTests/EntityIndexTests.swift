import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The `Z_ENT` index of a hierarchy's table, and the one user-info key with which Core Data leaves it out.
@Suite struct EntityIndexTests {
    static func model(userInfo: [String: String]) throws -> ObjectModel {
        var root = EntityDescription(name: "Asset", isAbstract: true, attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)])
        root.userInfo = userInfo
        let photo = EntityDescription(name: "Photo", parent: "Asset", attributes: [AttributeDescription(name: "width", type: .integer32, isOptional: true)])
        return try ObjectModel(entities: [root, photo])
    }

    static func indexes(_ userInfo: [String: String]) throws -> [String] {
        try StoreLayout(model: model(userInfo: userInfo)).schemaSQL.filter { $0.hasPrefix("CREATE INDEX") }
    }

    @Test func aHierarchyHasItsIndex() throws {
        #expect(try Self.indexes([:]) == ["CREATE INDEX ZASSET_Z_ENT_INDEX ON ZASSET (Z_ENT)"])
        #expect(try Self.indexes(["_NSEntityOmitSubentityColumnIndex": "NO"]) == ["CREATE INDEX ZASSET_Z_ENT_INDEX ON ZASSET (Z_ENT)"])
        #expect(try Self.indexes(["omitSubentityColumnIndex": "YES"]) == ["CREATE INDEX ZASSET_Z_ENT_INDEX ON ZASSET (Z_ENT)"])
    }

    @Test(arguments: ["YES", "yes", "1", "Yes"])
    func theOmitKeyLeavesItOut(_ value: String) throws {
        #expect(try Self.indexes(["_NSEntityOmitSubentityColumnIndex": value]) == [])
        // The store is still written and takes rows of both entities.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.model(userInfo: ["_NSEntityOmitSubentityColumnIndex": value]))
        defer { store.database.close() }
        #expect(try store.database.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ZASSET_Z_ENT_INDEX'") == .int(0))
    }
}
