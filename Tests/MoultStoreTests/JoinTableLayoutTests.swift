import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Join tables and hierarchy indexes as Core Data lays them out (CORE-DATA-FORMATS.md §3), on models of
/// our own that have each quirk seen in Apple's Photos libraries.
@Suite struct JoinTableLayoutTests {
    /// Asset (1) ↔ Memory (2) and Asset ↔ Suggestion (3), both named `representativeAssets` on the far
    /// side: Asset's two columns collide. Asset declares the Suggestion side first, but its property
    /// order (`_opt memoriesBeingRepresentativeAssets _ent suggestionsBeingRepresentativeAssets _pk`, by
    /// Tests/Fixtures/layout-order/compute.py) meets the Memory side first, which makes its table first
    /// and keeps the plain name: Photos' answer.
    static func representativeModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Asset",
                relationships: [
                    RelationshipDescription(
                        name: "suggestionsBeingRepresentativeAssets", destination: "Suggestion", inverse: "representativeAssets",
                        isToMany: true),
                    RelationshipDescription(
                        name: "memoriesBeingRepresentativeAssets", destination: "Memory", inverse: "representativeAssets",
                        isToMany: true),
                ]),
            EntityDescription(
                name: "Memory",
                relationships: [
                    RelationshipDescription(
                        name: "representativeAssets", destination: "Asset", inverse: "memoriesBeingRepresentativeAssets", isToMany: true)
                ]),
            EntityDescription(
                name: "Suggestion",
                relationships: [
                    RelationshipDescription(
                        name: "representativeAssets", destination: "Asset", inverse: "suggestionsBeingRepresentativeAssets",
                        isToMany: true),
                    RelationshipDescription(name: "mergeCandidates", destination: "Suggestion", inverse: "mergeCandidates", isToMany: true),
                ]),
        ])
    }

    @Test func collidingJoinColumnsFollowThePropertyOrder() throws {
        let layout = try StoreLayout(model: Self.representativeModel())
        let tables = Dictionary(uniqueKeysWithValues: layout.joinTables.map { ($0.name, $0) })
        let memory = try #require(tables["Z_1MEMORIESBEINGREPRESENTATIVEASSETS"])
        #expect(memory.columns == ["Z_1REPRESENTATIVEASSETS", "Z_2MEMORIESBEINGREPRESENTATIVEASSETS"])
        let suggestion = try #require(tables["Z_1SUGGESTIONSBEINGREPRESENTATIVEASSETS"])
        #expect(suggestion.columns == ["Z_1REPRESENTATIVEASSETS1", "Z_3SUGGESTIONSBEINGREPRESENTATIVEASSETS"])
        // Both columns indexed, the second first.
        #expect(
            suggestion.indexes.map(\.createSQL) == [
                "CREATE INDEX Z_1SUGGESTIONSBEINGREPRESENTATIVEASSETS_Z_3SUGGESTIONSBEINGREPRESENTATIVEASSETS_INDEX ON Z_1SUGGESTIONSBEINGREPRESENTATIVEASSETS (Z_3SUGGESTIONSBEINGREPRESENTATIVEASSETS, Z_1REPRESENTATIVEASSETS1)"
            ])
        let reflexive = try #require(tables["Z_3MERGECANDIDATES"])
        #expect(reflexive.columns == ["Z_3MERGECANDIDATES", "REFLEXIVE"])
        #expect(
            reflexive.indexes.map(\.createSQL) == [
                "CREATE INDEX Z_3MERGECANDIDATES_REFLEXIVE_INDEX ON Z_3MERGECANDIDATES (REFLEXIVE, Z_3MERGECANDIDATES)"
            ])
        // Each side reads and writes through its own column.
        let asset = try #require(layout.entity(named: "Asset"))
        guard case .joinTable(_, let source, let destination, _) = try #require(asset.toMany(named: "suggestionsBeingRepresentativeAssets")).storage
        else {
            Issue.record("a join table is expected")
            return
        }
        #expect((source, destination) == ("Z_1REPRESENTATIVEASSETS1", "Z_3SUGGESTIONSBEINGREPRESENTATIVEASSETS"))
        // The store is created and a pair goes in.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: Self.representativeModel())
        defer { store.database.close() }
        try store.database.execute("INSERT INTO Z_1SUGGESTIONSBEINGREPRESENTATIVEASSETS VALUES (1, 2)")
    }

    /// `Z_ENT` is indexed for every hierarchy, an abstract root with one sub-entity included (as
    /// CoreDataPlus' SampleModel2_V2.sqlite has ZWRITER_Z_ENT_INDEX for abstract Writer and its Author).
    @Test(arguments: [
        (true, 1, true),  // abstract root, one sub-entity (Writer, Author)
        (true, 2, true),  // abstract root, two sub-entities (GenericAlbum)
        (false, 1, true),  // concrete root, one sub-entity (Book, GraphicNovel)
        (false, 0, false),  // no hierarchy
    ])
    func zEntIndexForEveryHierarchy(abstract: Bool, subentities: Int, indexed: Bool) throws {
        var entities = [EntityDescription(name: "Root", isAbstract: abstract, attributes: [AttributeDescription(name: "a", type: .string)])]
        for number in 0..<subentities { entities.append(EntityDescription(name: "Sub\(number)", parent: "Root")) }
        let layout = try StoreLayout(model: ObjectModel(entities: entities))
        let names = try #require(layout.table(named: "ZROOT")).indexes.map(\.name)
        #expect(names.contains("ZROOT_Z_ENT_INDEX") == indexed)
    }

    /// A sub-entity listing its parent's attribute again (as a model cache does) stores it once; a
    /// different attribute under the inherited name is refused, naming both.
    @Test func inheritedAttributeListedAgain() throws {
        let name = AttributeDescription(name: "name", type: .string, isOptional: true)
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Root", attributes: [name]), EntityDescription(name: "Sub", parent: "Root", attributes: [name]),
        ])
        let table = try #require(try StoreLayout(model: model).table(named: "ZROOT"))
        #expect(table.columns.map(\.name) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        #expect(try model.versionHash(ofEntity: "Sub") == (try ObjectModel(entities: [
            EntityDescription(name: "Root", attributes: [name]), EntityDescription(name: "Sub", parent: "Root"),
        ]).versionHash(ofEntity: "Sub")))

        let different = AttributeDescription(name: "name", type: .integer32, isOptional: true)
        do {
            _ = try ObjectModel(entities: [
                EntityDescription(name: "Root", attributes: [name]), EntityDescription(name: "Sub", parent: "Root", attributes: [different]),
            ])
            Issue.record("a different re-declaration must be refused")
        } catch {
            #expect(error.code == .conflictingProperty)
            #expect(error.category == .badInput)
            #expect(error.message.contains("'Sub.name'") && error.message.contains("'Root.name'"))
        }
    }
}
