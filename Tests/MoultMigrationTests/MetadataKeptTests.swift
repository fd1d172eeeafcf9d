import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A migrated store keeps the application's own metadata keys of its source (anything not Core Data's
/// `NS…`/`_NS…` keys), and Core Data's keys are the destination's own.
@Suite struct MetadataKeptTests {
    @Test func applicationKeysSurviveAMigration() throws {
        let directory = try TemporaryDirectory("moult-keys")
        defer { directory.remove() }
        let source = try directory.copyStore(FixtureMigrationTests.wiboscoStore(2), as: "source.sqlite")
        // An app's bookkeeping, written as Core Data writes it (setMetadata), beside Core Data's keys.
        do {
            let versioned = try VersionedModel(
                contentsOf: Fixtures.url("\(FixtureMigrationTests.wibosco)/Model/CoreDataMigration_Example.xcdatamodeld"))
            let model = try #require(versioned.version(named: "CoreDataMigration_Example 2")).model
            let store = try SQLiteStore(url: source, model: model, mode: .readWrite)
            defer { store.database.close() }
            var metadata = try store.metadata()
            metadata.additionalKeys["LastSyncToken"] = .string("token-42")
            metadata.additionalKeys["MyApp.Settings"] = .dictionary(["count": .integer(3), "enabled": .bool(true)])
            metadata.additionalKeys["NSMadeUpCoreDataKey"] = .string("not the app's")
            try metadata.write(to: store.database)
        }
        let output = directory.appending("out.sqlite")
        try FixtureMigrationTests.wiboscoMigration(store: source, to: "CoreDataMigration_Example 3", mappings: ["Migration2to3"])
            .run(output: output)
        let migrated = try StoreMetadata(contentsOf: output)
        #expect(migrated.additionalKeys["LastSyncToken"] == .string("token-42"))
        #expect(migrated.additionalKeys["MyApp.Settings"] == .dictionary(["count": .integer(3), "enabled": .bool(true)]))
        #expect(migrated.additionalKeys["NSMadeUpCoreDataKey"] == nil)
        #expect(migrated.additionalKeys["_NSAutoVacuumLevel"] == .string("2"))
        #expect(migrated.applicationKeys.keys.sorted() == ["LastSyncToken", "MyApp.Settings"])
    }
}
