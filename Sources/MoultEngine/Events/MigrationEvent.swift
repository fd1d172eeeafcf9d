import Foundation
public import MoultModel

/// What a migration reports while it runs: one stream of values, produced by the engine. The
/// terminal progress line, `--events` JSON lines, `moult status` and the library's `progress`
/// callback are renderings of it.
///
/// Steps are 1-based. A single-step migration reports step 1 of 1.
public enum MigrationEvent: Sendable, Hashable {
    /// A step's plan, before its first chunk (a resumed step reports its plan again).
    case plan(Plan)
    /// A chunk committed: its rows are in the destination and its checkpoint saved.
    case chunk(Chunk)
    /// The migration entered a stage (create objects, relationships, validate, finishing, done).
    case stage(Stage)
    /// Something the caller should know: data a step does not carry, a policy skipped.
    case warning(Warning)
    /// The run paused at a chunk boundary (`true`) or went on (`false`).
    case paused(Paused)
    /// The last event of a run that ended: migrated, already current, or interrupted/failed (see
    /// ``failed(_:)``).
    case finished(Finished)
    /// The last event of a run that failed.
    case failed(Failure)
    /// A step of an in-place migration began, or ended (its SQL transaction committed, or its
    /// streamed result swapped in). A streamed step's own events come between the two.
    case inPlaceStep(InPlaceStep)
    /// A staged migration's progress: a stage's step starting, or a handler's chunk committed.
    case staged(Staged)

    /// The version of the JSON rendering (``jsonLine``); bumped when a field changes meaning or
    /// goes away (new fields do not bump it).
    public static let schemaVersion = 1

    public struct Plan: Sendable, Hashable {
        public var step: Int
        public var steps: Int
        /// The versions the step goes between, when known.
        public var from: String?
        public var to: String?
        public var plan: MigrationPlan
        /// Whether the step continues an interrupted run.
        public var resumed: Bool

        public init(step: Int = 1, steps: Int = 1, from: String? = nil, to: String? = nil, plan: MigrationPlan, resumed: Bool) {
            self.step = step
            self.steps = steps
            self.from = from
            self.to = to
            self.plan = plan
            self.resumed = resumed
        }
    }

    public struct Chunk: Sendable, Hashable {
        public var step: Int
        public var steps: Int
        /// The pass (0-based) in the step's plan, and how many the plan has.
        public var pass: Int
        public var passes: Int
        public var stage: MigrationStage
        public var mapping: String
        /// The chunk (0-based) in its pass, and how many the pass has.
        public var chunk: Int
        public var chunks: Int
        /// Source objects the chunk covered (its estimate: exact unless a filter runs in Swift).
        public var rows: Int
        /// Objects done and to do over the step's plan.
        public var done: Int
        public var total: Int
        /// Seconds since this run of the step started.
        public var elapsed: Double
        /// Objects per second over this run (resumed work not counted).
        public var rate: Double
        /// Seconds left at that rate, nil before there is a rate.
        public var eta: Double?

        public init(
            step: Int, steps: Int, pass: Int, passes: Int, stage: MigrationStage, mapping: String, chunk: Int, chunks: Int, rows: Int, done: Int,
            total: Int, elapsed: Double, rate: Double, eta: Double?
        ) {
            self.step = step
            self.steps = steps
            self.pass = pass
            self.passes = passes
            self.stage = stage
            self.mapping = mapping
            self.chunk = chunk
            self.chunks = chunks
            self.rows = rows
            self.done = done
            self.total = total
            self.elapsed = elapsed
            self.rate = rate
            self.eta = eta
        }

        /// The progress this chunk leaves the step at, as the `progress` callback reports it.
        public var progress: MigrationProgress {
            var progress = MigrationProgress(
                stage: stage, mapping: mapping, done: done, total: total, mappingDone: 0, mappingTotal: 0, step: step, steps: steps)
            progress.pass = pass
            progress.passes = passes
            progress.chunk = chunk
            progress.chunks = chunks
            progress.rows = rows
            return progress
        }
    }

    public struct Stage: Sendable, Hashable {
        public var step: Int
        public var steps: Int
        public var stage: MigrationStage
        /// The entity mapping the stage starts with, if any.
        public var mapping: String?

        public init(step: Int = 1, steps: Int = 1, stage: MigrationStage, mapping: String? = nil) {
            self.step = step
            self.steps = steps
            self.stage = stage
            self.mapping = mapping
        }
    }

    public struct Warning: Sendable, Hashable {
        public var step: Int?
        public var message: String
        /// What the step does not carry, when the warning is about that.
        public var notCarried: [DataLoss]

        public init(step: Int? = nil, message: String, notCarried: [DataLoss] = []) {
            self.step = step
            self.message = message
            self.notCarried = notCarried
        }
    }

    public struct InPlaceStep: Sendable, Hashable {
        public enum Phase: String, Sendable, Hashable {
            case started
            /// The SQL step's transaction committed, or the streamed step's result was swapped in:
            /// the store is at the step's version.
            case done
        }

        public enum Method: String, Sendable, Hashable {
            case sql
            case streaming
        }

        public var step: Int
        public var steps: Int
        public var from: String
        public var to: String
        public var phase: Phase
        public var method: Method
        /// The SQL step's changes (0 for a streamed step), and whether none touches rows.
        public var changes: Int
        public var schemaOnly: Bool
        /// Why the step streams, for a streamed one.
        public var reasons: [String]
        /// What an SQL step reads object by object, and why (its changes that rewrite rows, the rules
        /// it checks); empty when its cost does not grow with the number of objects.
        public var rowsRead: [String] = []
        /// Seconds the step took (0 when it starts).
        public var seconds: Double

        public init(
            step: Int, steps: Int, from: String, to: String, phase: Phase, method: Method, changes: Int = 0, schemaOnly: Bool = false,
            reasons: [String] = [], seconds: Double = 0
        ) {
            self.step = step
            self.steps = steps
            self.from = from
            self.to = to
            self.phase = phase
            self.method = method
            self.changes = changes
            self.schemaOnly = schemaOnly
            self.reasons = reasons
            self.seconds = seconds
        }
    }

    public struct Staged: Sendable, Hashable {
        /// The stage, from 1, and how many there are.
        public var stage: Int
        public var stages: Int
        /// `willMigrate`, `didMigrate`, or `step FROM → TO`.
        public var activity: String
        /// Objects the current handler has read so far (0 for a step).
        public var objects: Int

        public init(stage: Int, stages: Int, activity: String, objects: Int) {
            self.stage = stage
            self.stages = stages
            self.activity = activity
            self.objects = objects
        }
    }

    public struct Paused: Sendable, Hashable {
        public var paused: Bool
        /// Why: the pause file's path, for example.
        public var reason: String

        public init(paused: Bool, reason: String) {
            self.paused = paused
            self.reason = reason
        }
    }

    public struct Finished: Sendable, Hashable {
        public enum Outcome: String, Sendable, Hashable {
            case migrated
            /// The store was already at the target version: nothing written.
            case alreadyCurrent = "already-current"
            /// A plan only (`moult plan`), or a check (`moult verify`) that passed.
            case planned
            case verified
        }

        public var outcome: Outcome
        /// Objects per destination entity.
        public var objects: [String: Int]
        public var resumed: Bool
        public var seconds: Double

        public init(outcome: Outcome, objects: [String: Int] = [:], resumed: Bool = false, seconds: Double = 0) {
            self.outcome = outcome
            self.objects = objects
            self.resumed = resumed
            self.seconds = seconds
        }

        public var exitCode: Int32 { 0 }
    }

    public struct Failure: Sendable, Hashable {
        /// The error's code (``MigrationError/Code`` text, or the category's name for other errors).
        public var code: String
        public var category: FailureCategory
        public var message: String
        /// The file and position the error is about, when there is one.
        public var file: String?
        public var position: String?
        public var step: Int?
        public var seconds: Double

        public init(code: String, category: FailureCategory, message: String, file: String? = nil, position: String? = nil, step: Int? = nil, seconds: Double = 0) {
            self.code = code
            self.category = category
            self.message = message
            self.file = file
            self.position = position
            self.step = step
            self.seconds = seconds
        }

        /// The failure an error describes.
        public init(_ error: any Error, step: Int? = nil, seconds: Double = 0) {
            let category = (error as? any CategorizedError)?.category ?? .internalError
            self.init(code: "\(category)", category: category, message: "\(error)", step: step, seconds: seconds)
            if let error = error as? MigrationError {
                code = error.code.rawValue
                message = error.message
                if let entity = error.entity, let key = error.primaryKey {
                    position = "\(entity) Z_PK \(key)"
                } else if let mapping = error.mapping {
                    position = "mapping \(mapping)"
                }
            }
        }

        public var exitCode: Int32 { category.exitCode }
    }

    /// The event with its step set (for the steps of a progressive migration), and the versions the
    /// step goes between (for its plan).
    public func inStep(_ step: Int, of steps: Int, from: String? = nil, to: String? = nil) -> MigrationEvent {
        switch self {
        case .plan(var value):
            value.step = step
            value.steps = steps
            value.from = value.from ?? from
            value.to = value.to ?? to
            return .plan(value)
        case .chunk(var value):
            value.step = step
            value.steps = steps
            return .chunk(value)
        case .stage(var value):
            value.step = step
            value.steps = steps
            return .stage(value)
        case .warning(var value):
            value.step = value.step ?? step
            return .warning(value)
        case .failed(var value):
            value.step = value.step ?? step
            return .failed(value)
        case .paused, .finished, .inPlaceStep, .staged:
            return self
        }
    }

    /// Whether the event ends a run's stream.
    public var isLast: Bool {
        switch self {
        case .finished, .failed: true
        default: false
        }
    }
}
