import Foundation
import MoultAssociations
@testable import MoultEngine
@testable import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The decisions a run takes about how it executes its mappings (`ExecutionDecisions`) travel in its
/// plan into the checkpoint, and a resume reads them back instead of deciding again.
@Suite struct ExecutionDecisionsTests {
    /// The v2 → v3 step of People, with options that decide each of the three things one way or the other.
    static func job(source: URL, decide: Bool) throws -> MigrationJob {
        var options = MigrationOptions(chunkSize: 37)
        options.reorderCreatePasses = decide
        options.toOnesAtInsert = decide
        options.skipRepeatedLinks = decide
        return StreamingMigrator(
            source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"),
            mappings: [try People.mapping("v2-to-v3")], policies: People.policies, options: options
        ).job
    }

    /// A destination holding a checkpoint whose plan records `decisions`, as a run's start writes it.
    static func destination(
        at url: URL, plan: MigrationPlan, decisions: ExecutionDecisions?
    ) throws -> SQLiteStore {
        let store = try SQLiteStore.create(at: url, model: People.version("v3"), metadata: nil)
        var recorded = plan
        recorded.decisions = decisions
        try store.database.write {
            try store.database.createTables([Checkpoint.createSQL, PolicyState.createSQL])
            try Checkpoint.start(recorded, in: store.database)
        }
        return store
    }

    @Test func planCarriesTheDecisionsAndAResumeReadsThemBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try People.generate("v2", persons: 60, in: directory)
        let source = try SQLiteStore(url: sourceURL, model: People.version("v2"))
        defer { source.database.close() }
        // What each set of options decides for a new run.
        let decided = try #require(try Session(job: Self.job(source: sourceURL, decide: true), source: source, destination: nil).makePlan().decisions)
        let plan = try Session(job: Self.job(source: sourceURL, decide: false), source: source, destination: nil).makePlan()
        let undecided = try #require(plan.decisions)
        #expect(decided.toOnesAtInsert == ["PersonToPerson": ["address"]])
        #expect(undecided.toOnesAtInsert.isEmpty && undecided.omittedRelationships.isEmpty)
        #expect(decided.createOrder != undecided.createOrder)

        // A run begun without the decisions, resumed with options that would take them: it reads the
        // recorded value, and its mappings are compiled by it (no to-one written at insert).
        let store = try Self.destination(at: directory.appending("partial.sqlite"), plan: plan, decisions: undecided)
        defer { store.database.close() }
        let resumed = try Session(
            job: Self.job(source: sourceURL, decide: true), source: source, destination: store, associations: InMemoryAssociationTable())
        #expect(resumed.decisions == undecided)
        #expect(resumed.createOrder == undecided.createOrder)
        #expect(resumed.mappings.allSatisfy { $0.insertedToOnes.isEmpty && $0.omittedRelationships.isEmpty })
        #expect(try Checkpoint.plan(in: store.database).decisions == undecided)
    }

    @Test func aCheckpointWithoutDecisionsOrWithForeignOnesIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try People.generate("v2", persons: 10, in: directory)
        let source = try SQLiteStore(url: sourceURL, model: People.version("v2"))
        defer { source.database.close() }
        let job = try Self.job(source: sourceURL, decide: true)
        let plan = try Session(job: job, source: source, destination: nil).makePlan()
        let foreign = ExecutionDecisions(createOrder: [1, 0], toOnesAtInsert: ["CarToCar": ["owner"]])
        let cases: [(String, ExecutionDecisions?, String)] = [
            ("earlier.sqlite", nil, "earlier version of Moult"), ("foreign.sqlite", foreign, "'CarToCar'"),
            ("order.sqlite", ExecutionDecisions(createOrder: [0, 0]), "order of create passes"),
        ]
        for (name, decisions, message) in cases {
            let store = try Self.destination(at: directory.appending(name), plan: plan, decisions: decisions)
            defer { store.database.close() }
            let error = try #require(throws: MigrationError.self) {
                _ = try Session(job: job, source: source, destination: store, associations: InMemoryAssociationTable())
            }
            #expect(error.code == .checkpointMismatch)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    /// A chunk is evaluated without a write to the destination or the association table, and the
    /// chunk writer then writes exactly what was evaluated, with the checkpoint.
    @Test func evaluationWritesNothingAndTheChunkWriterWritesIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try People.generate("v2", persons: 40, in: directory)
        let source = try SQLiteStore(url: sourceURL, model: People.version("v2"))
        defer { source.database.close() }
        var job = try Self.job(source: sourceURL, decide: false)
        job.options.bulkSQL = false
        let plan = try Session(job: job, source: source, destination: nil).makePlan()
        let store = try Self.destination(at: directory.appending("partial.sqlite"), plan: plan, decisions: plan.decisions)
        defer { store.database.close() }
        let associations = InMemoryAssociationTable()
        let session = try Session(job: job, source: source, destination: store, associations: associations)
        let (manager, writer) = (try #require(session.manager), try #require(session.chunkWriter))
        let pass = plan.passes[0]
        let compiled = session.mappings[pass.mapping]
        #expect(pass.stage == .createObjects && compiled.name == "PersonToPerson")
        let start = Checkpoint.Position(pass: 0, chunk: 0, done: 0, stage: .passes)
        let step = session.chunkStep(pass, compiled, at: start, chunkCount: pass.chunks.count)
        let bounds = try #require(step.chunk)
        manager.enter(compiled, stage: .createObjects)
        let objects = try manager.sourceObjects(compiled, after: bounds.lowerBound, through: bounds.upperBound)
        #expect(objects.count == 37)

        let evaluated = try session.evaluate(step, objects, manager: manager)
        // (It crosses threads: `EvaluatedChunk` is `Sendable`, which the compiler checks here.)
        let _: any Sendable = evaluated
        #expect(try store.count(of: "Person") == 0)
        #expect(try associations.count() == 0)
        #expect(evaluated.associations.count == 37)
        var keys: [Int64] = []
        for case .insert(let entity, let key, _) in evaluated.writes where entity == "Person" { keys.append(key) }
        #expect(keys == Array(1...37))

        let next = step.next(after: start)
        try writer.commit(next, durable: false) { try writer.apply(evaluated) }
        #expect(try store.count(of: "Person") == 37)
        #expect(try associations.count() == 37)
        #expect(try Checkpoint.position(in: store.database) == next)
    }
}
