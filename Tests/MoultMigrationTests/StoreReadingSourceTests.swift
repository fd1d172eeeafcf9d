import Foundation
import MoultAssociations
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The engine reads its source through `StoreReading`: a source without SQL takes the per-object path
/// (filters and partitions in Swift, chunk boundaries from the reader, no bulk copy) and makes, table
/// by table, the store the SQL fast paths make.
@Suite struct StoreReadingSourceTests {
    /// An SQLite store seen only through `StoreReading`: the engine finds no `SQLFastPaths` on it.
    final class ReaderOnly: StoreReading {
        let store: SQLiteStore
        init(_ store: SQLiteStore) { self.store = store }
        var layout: StoreLayout { store.layout }
        func metadata() throws(StoreError) -> StoreMetadata { try store.metadata() }
        func count(of entityName: String, includingSubentities: Bool) throws(StoreError) -> Int {
            try store.count(of: entityName, includingSubentities: includingSubentities)
        }
        func objects(of entityName: String, includingSubentities: Bool, after: Int64, through: Int64?, batchSize: Int)
            throws(StoreError) -> ObjectCursor
        {
            try store.objects(of: entityName, includingSubentities: includingSubentities, after: after, through: through, batchSize: batchSize)
        }
        func toManyDestinations(_ relationship: String, of entityName: String, sources: [Int64]) throws(StoreError) -> [Int64: [ObjectID]] {
            try store.toManyDestinations(relationship, of: entityName, sources: sources)
        }
        func keyBoundaries(of entityName: String, chunkSize: Int) throws(StoreError) -> KeyBoundaries {
            try store.keyBoundaries(of: entityName, chunkSize: chunkSize)
        }
        func primaryKeyMaxima() throws -> [(entity: Int64, maximum: Int64)] { try store.primaryKeyMaxima() }
    }

    /// Runs `job` from `source` into a new store at `output` as the streaming driver does (plan,
    /// checkpoint, passes, validation, the end), without its work folder; returns the plan and the session's SQL capability.
    static func migrate(_ job: MigrationJob, source: any StoreReading, to output: URL) throws -> (MigrationPlan, Bool) {
        let plan = try Session(job: job, source: source, destination: nil).makePlan(fingerprint: "same")
        let store = try SQLiteStore.create(at: output, model: job.destinationModel, metadata: nil)
        defer { store.database.close() }
        try store.database.write {
            try store.database.createTables([Checkpoint.createSQL, PolicyState.createSQL])
            try Checkpoint.start(plan, in: store.database)
        }
        let session = try Session(job: job, source: source, destination: store, associations: InMemoryAssociationTable())
        var position = try Checkpoint.position(in: store.database)
        _ = try session.execute(plan, from: &position, progress: nil, isCancelled: { false })
        _ = try session.validateAndEnd(plan, position: &position, progress: nil)
        try session.finalize(plan, uuid: "00000000-0000-4000-8000-000000000000")
        return (plan, session.sqlSource != nil)
    }

    static let cases: [(step: String, from: String, to: String, partitions: [String])] = [
        ("v2-to-v3", "v2", "v3", []),
        ("v2-to-v3", "v2", "v3", [#"name BEGINSWITH "A""#, #"name BEGINSWITH "B""#]),
    ]

    @Test(arguments: cases.indices)
    func aSourceWithoutSQLMakesTheSameStore(index: Int) throws {
        let (mapping, from, to, partitions) = Self.cases[index]
        let directory = try TemporaryDirectory("store-reading")
        defer { directory.remove() }
        let sourceURL = try People.generate(from, persons: 150, in: directory)
        let source = try SQLiteStore(url: sourceURL, model: People.version(from))
        defer { source.database.close() }
        let job = StreamingMigrator(
            source: sourceURL, sourceModel: People.version(from), destinationModel: People.version(to), mappings: [try People.mapping(mapping)],
            policies: People.policies, options: MigrationOptions(chunkSize: 37, partitions: partitions)
        ).job
        let (sqlPlan, tookSQL) = try Self.migrate(job, source: source, to: directory.appending("sql.sqlite"))
        let (plan, tookReader) = try Self.migrate(job, source: ReaderOnly(source), to: directory.appending("reader.sqlite"))
        // The fast path was taken with SQLite, not without it: the SQL plan's chunks follow the filters.
        #expect(tookSQL && !tookReader)
        #expect(plan.passes.count == sqlPlan.passes.count)
        if !partitions.isEmpty { #expect(plan.estimatedRows > sqlPlan.estimatedRows) }
        let expected = try StoreDump(directory.appending("sql.sqlite"))
        #expect(try StoreDump(directory.appending("reader.sqlite")) == expected)
        #expect(expected.tables["ZPERSON"]?.count == 150)
    }

    /// The boundaries a store gives the plan are the ones its SQL steps find.
    @Test func sqliteKeyBoundariesAreTheSQLSteps() throws {
        let directory = try TemporaryDirectory("store-reading-bounds")
        defer { directory.remove() }
        let store = try SQLiteStore(url: try People.generate("v2", persons: 100, in: directory), model: People.version("v2"))
        defer { store.database.close() }
        for size in [1, 7, 50, 100, 1_000] {
            let cuts = try store.keyBoundaries(of: "Person", chunkSize: size)
            #expect(cuts.boundaries.count == 100 / size)
            #expect(cuts.remainderCount == 100 % size)
            #expect(cuts.remainderUpper == (100 % size == 0 ? nil : 100))
        }
    }
}
