import Foundation
@testable import MoultMigration
import MoultMapping
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// The drivers read an XML source directly (`SourceStore`, through `XMLStore`): a chain from an XML
/// store makes the store the same chain makes from its SQLite form, and what a step does not carry is
/// counted in the XML store as in SQLite.
@Suite struct XMLSourceMigrationTests {
    /// A People store at `version`, and the same objects as an XML store.
    static func stores(_ version: String, persons: Int, in directory: TemporaryDirectory) throws -> (sqlite: URL, xml: URL) {
        let sqlite = try People.generate(version, persons: persons, in: directory)
        let xml = directory.appending("people-\(version).xml")
        try XMLStoreConversion.xml(from: sqlite, model: People.version(version), to: xml)
        return (sqlite, xml)
    }

    @Test func aChainFromAnXMLStoreMakesWhatItsSQLiteFormMakes() throws {
        let directory = try TemporaryDirectory("xml-source-chain")
        defer { directory.remove() }
        let (sqlite, xml) = try Self.stores("v1", persons: 90, in: directory)
        #expect(SourceStore.isXML(xml) && !SourceStore.isXML(sqlite))
        let mappings = [try People.mapping("v2-to-v3")]
        let options = MigrationOptions(chunkSize: 20)
        for (store, name) in [(sqlite, "from-sqlite.sqlite"), (xml, "from-xml.sqlite")] {
            let migration = try ProgressiveMigration(store: store, model: People.model, to: "v3", mappings: mappings, policies: People.policies, options: options)
            #expect(migration.steps.count == 2)
            try migration.run(output: directory.appending(name))
        }
        let expected = try StoreDump(directory.appending("from-sqlite.sqlite"), ignoringStoreUUID: true)
        #expect(try StoreDump(directory.appending("from-xml.sqlite"), ignoringStoreUUID: true) == expected)
    }

    /// From an XML source, two threads (the next chunk's objects parsed on the second, by a reader that
    /// shares the first's index) make the file one thread makes, at chunks of 1, 37 and 10,000.
    @Test(arguments: [1, 37, 10_000])
    func twoThreadsMakeTheSameFileFromAnXMLStore(chunkSize: Int) throws {
        let directory = try TemporaryDirectory("xml-source-threads")
        defer { directory.remove() }
        let (_, xml) = try Self.stores("v2", persons: chunkSize == 1 ? 60 : 150, in: directory)
        var files: [Data] = []
        for threads in [1, 2] {
            var options = MigrationOptions(chunkSize: chunkSize)
            options.threads = threads
            let output = directory.appending("threads-\(threads).sqlite")
            try StreamingMigrator(
                source: xml, sourceModel: People.version("v2"), destinationModel: People.version("v3"), mappings: [try People.mapping("v2-to-v3")],
                policies: People.policies, options: options
            ).run(output: output)
            files.append(try Data(contentsOf: output))
        }
        #expect(files[0] == files[1], "chunks of \(chunkSize): threads 1 vs 2")
    }

    /// The built-in uniquing policy from an XML source runs object by object (no SQL to run it as set
    /// operations) and makes what its SQLite form makes in SQL.
    @Test func uniquingFromAnXMLStoreMakesWhatItsSQLiteFormMakes() throws {
        let directory = try TemporaryDirectory("xml-source-unique")
        defer { directory.remove() }
        let (sqlite, xml) = try Self.stores("v4", persons: 120, in: directory)
        for (store, name) in [(sqlite, "from-sqlite.sqlite"), (xml, "from-xml.sqlite")] {
            try StreamingMigrator(
                source: store, sourceModel: People.version("v4"), destinationModel: People.version("v5"),
                mappings: [try People.mapping("v4-to-v5-builtin")], options: MigrationOptions(chunkSize: 25)
            ).run(output: directory.appending(name))
        }
        let expected = try StoreDump(directory.appending("from-sqlite.sqlite"), ignoringStoreUUID: true)
        #expect(try StoreDump(directory.appending("from-xml.sqlite"), ignoringStoreUUID: true) == expected)
    }

    /// A run from an XML source stopped after a few chunks resumes from its checkpoint (the index gives
    /// the same plan and fingerprint again) and ends with the store an uninterrupted run makes.
    @Test func aRunFromAnXMLStoreResumesToTheUninterruptedStore() throws {
        let directory = try TemporaryDirectory("xml-source-resume")
        defer { directory.remove() }
        let (_, xml) = try Self.stores("v2", persons: 80, in: directory)
        func migrator() throws -> StreamingMigrator {
            StreamingMigrator(
                source: xml, sourceModel: People.version("v2"), destinationModel: People.version("v3"), mappings: [try People.mapping("v2-to-v3")],
                policies: People.policies, options: MigrationOptions(chunkSize: 10))
        }
        try migrator().run(output: directory.appending("whole.sqlite"))
        let stopped = directory.appending("stopped.sqlite")
        var chunks = 0
        let error = try #require(throws: MigrationError.self) {
            try migrator().run(output: stopped, progress: { _ in chunks += 1 }, isCancelled: { chunks >= 3 })
        }
        #expect(error.code == .interrupted && !FileManager.default.fileExists(atPath: stopped.path))
        let report = try migrator().run(output: stopped)
        #expect(report.resumed && report.chunksRun < report.plan.passes.reduce(0) { $0 + max($1.chunks.count, 1) })
        #expect(try StoreDump(stopped) == StoreDump(directory.appending("whole.sqlite")))
    }

    @Test func whatAStepDoesNotCarryIsCountedInAnXMLStore() throws {
        let directory = try TemporaryDirectory("xml-source-losses")
        defer { directory.remove() }
        let (sqlite, xml) = try Self.stores("v2", persons: 70, in: directory)
        let model = People.version("v2")
        let sql = try SQLiteStore(url: sqlite, model: model)
        defer { sql.database.close() }
        let reader = try XMLStore(url: xml, layout: StoreLayout(model: model))
        var counted = 0
        for entity in sql.layout.entities {
            var what = [UncarriedData(kind: .entity, entity: entity.name)]
            what += (entity.attributes.map(\.name)).map { UncarriedData(kind: .attribute, entity: entity.name, property: $0) }
            what += (entity.toOneRelationships.map(\.name) + entity.toManyRelationships.map(\.name)).map {
                UncarriedData(kind: .relationship, entity: entity.name, property: $0)
            }
            for item in what {
                let expected = try ProgressiveMigration.count(item, in: sql)
                #expect(try ProgressiveMigration.count(item, reading: reader) == expected, "\(item.name)")
                counted += expected ?? 0
            }
        }
        #expect(counted > 70)
    }
}
