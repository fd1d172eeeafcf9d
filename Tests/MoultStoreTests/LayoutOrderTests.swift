import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The two orders of Core Data's layout (CORE-DATA-FORMATS.md §3): entity numbers in
/// `caseInsensitiveCompare` order, and an entity's property order, the bucket order of two
/// CoreFoundation hash tables, which decides the owner of a join table and its `1` suffixes.
///
/// The expected hashes and orders were computed by `Tests/Fixtures/layout-order/compute.py`, written
/// apart from the Swift code from the formulas of the format notes alone.
@Suite struct LayoutOrderTests {
    // MARK: - Entity numbers

    static func numbers(_ entities: [EntityDescription]) throws -> [String] {
        try StoreLayout(model: ObjectModel(entities: entities)).entities.map { "\($0.number) \($0.name)" }
    }

    /// Roots in case-insensitive order, each followed by its sub-entities depth first (the format
    /// notes' Car example); `_` before letters, `Item10` before `Item2`, lower and upper case mixed.
    @Test func entitiesAreNumberedInCaseInsensitiveOrder() throws {
        #expect(
            try Self.numbers([
                EntityDescription(name: "Person"), EntityDescription(name: "Car"), EntityDescription(name: "SportCar", parent: "Car"),
                EntityDescription(name: "ExpensiveSportCar", parent: "SportCar"),
            ]) == ["1 Car", "2 SportCar", "3 ExpensiveSportCar", "4 Person"])
        #expect(
            try Self.numbers(["Item2", "Item10", "ITEM1", "Item_a", "ItemB", "Itema"].map { EntityDescription(name: $0) })
                == ["1 ITEM1", "2 Item10", "3 Item2", "4 Item_a", "5 Itema", "6 ItemB"])
    }

    /// Siblings follow the same order: byte order would put `SubB` ('B' 0x42) before `Sub_a` ('_' 0x5F).
    @Test func siblingsAreNumberedInCaseInsensitiveOrder() throws {
        #expect(
            try Self.numbers([
                EntityDescription(name: "Item"), EntityDescription(name: "SubB", parent: "Item"), EntityDescription(name: "Sub_a", parent: "Item"),
                EntityDescription(name: "Sub_a_child", parent: "Sub_a"),
            ]) == ["1 Item", "2 Sub_a", "3 Sub_a_child", "4 SubB"])
    }

    // MARK: - Hashes and tables

    @Test(arguments: [
        ("", 0 as UInt32, 3_686_067_727 as UInt32),
        ("a", 1062, 408_203_952),
        ("_pk", 515_045_925, 2_566_762_981),
        ("albums", 1_872_452_362, 22_729_133),
        ("suggestionsBeingRepresentativeAssets", 4_236_531_930, 2_598_570_583),  // hash A samples 8 + 16 units
        (String(repeating: "x", count: 97) + "yz", 138_172_886, 559_698_693),  // hash B samples 3 × 32 units
    ])
    func hashes(key: String, a: UInt32, b: UInt32) {
        #expect(PropertyOrder.hashA(key) == a)
        #expect(PropertyOrder.hashB(key) == b)
    }

    /// Table B grows twice here (capacity 3 → 6 → 12 → 24), and table A has 23 buckets.
    @Test(arguments: [
        (
            ["_ent", "_pk", "_opt", "name", "tags"],
            ["_ent", "name", "_pk", "_opt", "tags"],
            ["_opt", "_ent", "name", "tags", "_pk"]
        ),
        (
            ["_ent", "_pk", "_opt", "title", "_ZOWNER", "owner", "albums", "assets", "keywords", "people", "albumLists", "moments", "rating", "z"],
            ["_pk", "_opt", "_ZOWNER", "albumLists", "rating", "people", "albums", "z", "_ent", "owner", "assets", "moments", "title", "keywords"],
            ["albumLists", "_pk", "people", "_ent", "_opt", "albums", "title", "z", "moments", "rating", "owner", "_ZOWNER", "assets", "keywords"]
        ),
        (
            ["_ent", "_pk", "_opt", "suggestionsBeingRepresentativeAssets", "memoriesBeingRepresentativeAssets", String(repeating: "a", count: 97),
             String(repeating: "b", count: 100) + "ccc"],
            ["_ent", "_pk", "_opt", "suggestionsBeingRepresentativeAssets", String(repeating: "b", count: 100) + "ccc",
             String(repeating: "a", count: 97), "memoriesBeingRepresentativeAssets"],
            ["_opt", String(repeating: "a", count: 97), "memoriesBeingRepresentativeAssets", "_ent", "suggestionsBeingRepresentativeAssets",
             String(repeating: "b", count: 100) + "ccc", "_pk"]
        ),
        (
            ["_ent", "_pk", "_opt", "label", "followers", "following"],
            ["_ent", "label", "followers", "_pk", "_opt", "following"],
            ["_opt", "_ent", "followers", "following", "label", "_pk"]
        ),
    ])
    func tableOrders(declared: [String], tableB: [String], tableA: [String]) {
        #expect(PropertyOrder.tableB(declared) == tableB)
        #expect(PropertyOrder.tableA(tableB) == tableA)
        #expect(PropertyOrder.order(declared) == tableA)
    }

    /// The keys of an entity: `_ent`, `_pk`, `_opt`, inherited properties first, a to-one's foreign key
    /// and (destination with sub-entities) entity key before its name; transient ones left out.
    @Test func propertyKeysOfAnEntity() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Album", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "albums")]),
            EntityDescription(
                name: "SmartAlbum", parent: "Album",
                attributes: [AttributeDescription(name: "query", type: .string), AttributeDescription(name: "cached", type: .string, isTransient: true)],
                relationships: [RelationshipDescription(name: "cover", destination: "Album", inverse: nil)]),
            EntityDescription(
                name: "Person", relationships: [RelationshipDescription(name: "albums", destination: "Album", inverse: "owner", isToMany: true)]),
        ])
        var builder = LayoutBuilder(model: model)
        try builder.build()
        #expect(
            builder.propertyKeys(of: "SmartAlbum") == [
                "_ent", "_pk", "_opt", "title", "_ZOWNER", "owner", "query", "_ZCOVER", "_Z1_COVER", "cover",
            ])
    }

    // MARK: - Decisions the order makes

    /// Asset meets `moments` before `memories` (its keys `_ent _pk _opt title memories moments` come out
    /// `… moments … memories …`, by compute.py), so Asset ↔ Moment's table takes `Z_1ASSETS` and
    /// Asset ↔ Memory's gets `Z_1ASSETS1`; name order would give the opposite.
    @Test func propertyOrderDecidesTheSuffix() throws {
        #expect(
            PropertyOrder.order(["_ent", "_pk", "_opt", "title", "memories", "moments"]).filter { ["memories", "moments"].contains($0) } == [
                "moments", "memories",
            ])
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Asset", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(name: "memories", destination: "Memory", inverse: "assets", isToMany: true),
                    RelationshipDescription(name: "moments", destination: "Moment", inverse: "assets", isToMany: true, isOrdered: true),
                ]),
            EntityDescription(
                name: "Memory", relationships: [RelationshipDescription(name: "assets", destination: "Asset", inverse: "memories", isToMany: true)]),
            EntityDescription(
                name: "Moment",
                relationships: [RelationshipDescription(name: "assets", destination: "Asset", inverse: "moments", isToMany: true, isOrdered: true)]),
        ])
        let layout = try StoreLayout(model: model)
        #expect(
            layout.joinTables.map { "\($0.name) (\(($0.columns + $0.orderColumns).joined(separator: ", ")))" } == [
                // Both sides ordered: the first column's twin, then the second's (their order is unverified).
                "Z_1MOMENTS (Z_1ASSETS, Z_3MOMENTS, Z_FOK_1ASSETS, Z_FOK_3MOMENTS)",
                "Z_1MEMORIES (Z_1ASSETS1, Z_2MEMORIES)",
            ])
        // Each side reads through its own columns.
        guard case .joinTable("Z_1MEMORIES", "Z_1ASSETS1", "Z_2MEMORIES", nil) = try #require(layout.entity(named: "Asset")?.toMany(named: "memories")).storage,
            case .joinTable("Z_1MOMENTS", "Z_3MOMENTS", "Z_1ASSETS", "Z_FOK_1ASSETS") = try #require(layout.entity(named: "Moment")?.toMany(named: "assets")).storage
        else {
            Issue.record("unexpected join-table storage")
            return
        }
    }

    /// Two relationships of one entity that are each other's inverse: the one met first in the
    /// property order owns the table (`blocking`, though `blockedBy` sorts first by name).
    @Test func propertyOrderDecidesTheOwner() throws {
        #expect(
            PropertyOrder.order(["_ent", "_pk", "_opt", "title", "blockedBy", "blocking"]) == ["_opt", "blocking", "_ent", "blockedBy", "_pk", "title"])
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "TodoItem", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(name: "blockedBy", destination: "TodoItem", inverse: "blocking", isToMany: true),
                    RelationshipDescription(name: "blocking", destination: "TodoItem", inverse: "blockedBy", isToMany: true, isOrdered: true),
                ])
        ])
        let table = try #require(try StoreLayout(model: model).joinTables.first)
        #expect(table.name == "Z_1BLOCKING")
        #expect(table.columns == ["Z_1BLOCKEDBY", "Z_1BLOCKING"])
        #expect(table.orderColumns == ["Z_FOK_1BLOCKING"])  // the twin of the column named after the ordered side
        #expect(table.indexes.map(\.createSQL) == ["CREATE INDEX Z_1BLOCKING_Z_1BLOCKING_INDEX ON Z_1BLOCKING (Z_1BLOCKING, Z_1BLOCKEDBY)"])
    }

    /// A relationship declared on a parent is met at a sub-entity that sorts earlier: `GenericAlbum.albumLists`
    /// owns the table because `Album` comes before `AlbumList` (Photos' `Z_25ALBUMLISTS`), and its names
    /// carry the declaring entity's number, GenericAlbum's 2, not Album's 3.
    @Test func aSubEntityMeetsItsInheritedRelationship() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "GenericAlbum",
                relationships: [RelationshipDescription(name: "albumLists", destination: "AlbumList", inverse: "albums", isToMany: true)]),
            EntityDescription(name: "Album", parent: "GenericAlbum"),
            EntityDescription(
                name: "AlbumList", relationships: [RelationshipDescription(name: "albums", destination: "GenericAlbum", inverse: "albumLists", isToMany: true)]),
        ])
        let layout = try StoreLayout(model: model)
        #expect(layout.entities.map(\.name) == ["AlbumList", "GenericAlbum", "Album"])
        #expect(layout.joinTables.map { [$0.name] + $0.columns } == [["Z_2ALBUMLISTS", "Z_2ALBUMS", "Z_1ALBUMLISTS"]])
    }
}
