import CoreData
import Foundation
import MoultEngine
import MoultGenerate
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// jdspoone's `NoteToNotePolicy` and `ImageToImagePolicy` (the repository has no stores): a generated
/// v1.1 store, migrated by the repository's two chained mapping models, each policy switching on the
/// `sourceVersion` its entity mapping's user info gives.
@Suite struct NotePolicyTests {
    static let folder = "jdspoone__CoreDataMigrationExample/CoreDataMigration"

    static func migrate(_ store: URL, to target: String, mappings: [String], chunkSize: Int, output: URL) throws {
        let model = try VersionedModel(contentsOf: Fixtures.url("\(folder)/CoreDataMigration.xcdatamodeld"))
        let migration = try ProgressiveMigration(
            store: store, model: model, to: target, mappings: try mappings.map { try MappingModel(contentsOf: Fixtures.url("\(folder)/\($0)")) },
            policies: PublicPolicyTests.policies, options: MigrationOptions(chunkSize: chunkSize))
        try migration.run(output: output)
    }

    /// v1.1 → v1.2: a note's image data moves into an `Image` of its own (`image` and `noteUsedIn`);
    /// → v1.3: each image gets `index` 0 and the note's `images` holds it.
    @Test(arguments: [7, 10_000]) func imageDataBecomesAnImage(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try VersionedModel(contentsOf: Fixtures.url("\(Self.folder)/CoreDataMigration.xcdatamodeld"))
        let source = directory.appending("v1.1.sqlite")
        try StoreGenerator(model: try #require(model.version(named: "CoreDataMigration-v1.1")?.model), objects: 60, seed: 41).generate(at: source)
        let notes = try StoreRows.query(source, "SELECT ZTITLE, ZBODY, IFNULL(hex(ZIMAGEDATA), ''), ZIMAGEDATA IS NOT NULL FROM ZNOTE")
        let withImages = notes.filter { $0[3] == "1" }.count
        #expect(withImages > 0 && withImages < notes.count, "the generated store has notes with and without image data")

        let v12 = directory.appending("v1.2-\(chunkSize).sqlite")
        try Self.migrate(source, to: "CoreDataMigration-v1.2", mappings: ["v1.1-to-v1.2.xcmappingmodel"], chunkSize: chunkSize, output: v12)
        let expected12 = notes.map { [$0[0], $0[1], $0[3] == "1" ? $0[2] : "", $0[3] == "1" ? "1" : "0"] }.sorted { $0.lexicographicallyPrecedes($1) }
        let found12 = try StoreRows.query(
            v12,
            """
            SELECT ZNOTE.ZTITLE, ZNOTE.ZBODY, IFNULL(hex(ZIMAGE.ZIMAGEDATA), ''), ZIMAGE.Z_PK IS NOT NULL FROM ZNOTE
            LEFT JOIN ZIMAGE ON ZIMAGE.Z_PK = ZNOTE.ZIMAGE AND ZIMAGE.ZNOTEUSEDIN = ZNOTE.Z_PK
            """
        ).sorted { $0.lexicographicallyPrecedes($1) }
        #expect(found12 == expected12)
        #expect(try StoreRows.query(v12, "SELECT COUNT(*) FROM ZIMAGE") == [["\(withImages)"]])

        let v13 = directory.appending("v1.3-\(chunkSize).sqlite")
        try Self.migrate(
            source, to: "CoreDataMigration-v1.3", mappings: ["v1.1-to-v1.2.xcmappingmodel", "v1.2-to-v1.3.xcmappingmodel"], chunkSize: chunkSize,
            output: v13)
        let expected13 = notes.map { [$0[0], $0[1], $0[3] == "1" ? $0[2] : "", $0[3] == "1" ? "0" : ""] }.sorted { $0.lexicographicallyPrecedes($1) }
        let found13 = try StoreRows.query(
            v13,
            "SELECT ZNOTE.ZTITLE, ZNOTE.ZBODY, IFNULL(hex(ZIMAGE.ZIMAGEDATA), ''), IFNULL(ZIMAGE.ZINDEX, '') FROM ZNOTE LEFT JOIN ZIMAGE ON ZIMAGE.ZNOTEUSEDIN = ZNOTE.Z_PK"
        ).sorted { $0.lexicographicallyPrecedes($1) }
        #expect(found13 == expected13)
        #expect(try StoreRows.query(v13, "SELECT COUNT(*) FROM ZIMAGE") == [["\(withImages)"]])
    }
}
