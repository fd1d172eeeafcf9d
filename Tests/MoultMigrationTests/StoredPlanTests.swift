import Foundation
@testable import MoultEngine
import MoultMigration
import MoultStore
import MoultTestSupport
import Testing

/// The checkpoint keeps a plan's chunks packed (issue 25: the JSON tree of tens of thousands of chunks
/// was a long run's heap high-water mark); a plan comes back whole, and a checkpoint of the older format
/// (the whole plan as JSON) is still read.
@Suite struct StoredPlanTests {
    static func plan(in directory: TemporaryDirectory, chunkSize: Int) throws -> MigrationPlan {
        let source = try People.generate("v2", persons: 300, in: directory)
        let migrator = StreamingMigrator(
            source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"),
            mappings: [try People.mapping("v2-to-v3")], policies: People.policies, options: MigrationOptions(chunkSize: chunkSize))
        return try migrator.plan()
    }

    @Test(arguments: [1, 7, 10_000])
    func aPlanComesBackWhole(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var plan = try Self.plan(in: directory, chunkSize: chunkSize)
        // Keys and counts beyond 32 bits, and negative ones, pack as they are.
        plan.passes[0].chunks.append(MigrationPlan.Chunk(lowerBound: -5, upperBound: Int64.max, estimatedRows: 1 << 40))
        let data = try Checkpoint.StoredPlan.encode(plan)
        #expect(try Checkpoint.StoredPlan.decode(data) == plan)
        // Smaller than the plan as JSON once there are many chunks (and one string a pass, not a tree).
        if chunkSize == 1 { #expect(data.count < (try JSONEncoder().encode(plan)).count) }
    }

    @Test func anOlderCheckpointsPlanIsStillRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let plan = try Self.plan(in: directory, chunkSize: 50)
        #expect(try Checkpoint.StoredPlan.decode(try JSONEncoder().encode(plan)) == plan)
    }

    @Test func damagedPackedChunksAreRefused() throws {
        #expect(throws: (any Error).self) { try Checkpoint.StoredPlan.unpack("AAAA") }
        #expect(throws: (any Error).self) { try Checkpoint.StoredPlan.unpack("not base64!") }
    }
}
