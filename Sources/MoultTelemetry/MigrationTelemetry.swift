public import Logging
public import MoultEngine
public import MoultModel
public import Metrics

/// A run's events as a server expects a library to report them: messages through swift-log (warnings,
/// of data a step drops among them, at `.warning`; the rest at debug and trace: a library does not
/// decide what a service prints) and metrics through swift-metrics, to
/// whichever backend the process bootstrapped (Prometheus, StatsD, …; none: they cost nothing).
///
/// Give ``record(_:)`` as the `events` handler of a run, or call it from a handler of your own:
///
/// ```swift
/// let telemetry = MigrationTelemetry(logger: Logger(label: "myservice.migration"), dimensions: [("shard", "3")])
/// try migration.run(output: destination, events: telemetry.record)
/// ```
///
/// The metrics:
///
/// | name | kind | what |
/// |---|---|---|
/// | `moult_objects_migrated_total` | counter | source objects whose destination objects were created (stage 1) |
/// | `moult_chunks_total` | counter | chunks committed (each stage's) |
/// | `moult_chunk_duration_seconds` | timer | the time between two chunks' commits |
/// | `moult_bytes_written_total` | counter | bytes of finished destinations (``recordBytesWritten(_:)``) |
/// | `moult_failures_total` | counter, `category` | failed runs, by exit-code category |
/// | `moult_runs_total` | counter, `outcome` | finished runs: `migrated`, `already-current`, … |
/// | `moult_run_duration_seconds` | timer | finished runs' durations |
public final class MigrationTelemetry: Sendable {
    public let logger: Logger
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory
    private let objects: Counter
    private let chunks: Counter
    private let chunkDuration: Metrics.Timer
    private let bytes: Counter
    private let runDuration: Metrics.Timer
    private let lastElapsed = LockedValue<Double?>(nil)

    /// - Parameters:
    ///   - logger: where the run's messages go: what a run warns of (data a step drops, a file it could
    ///     not read) at `.warning`, the rest at `.debug` and `.trace`.
    ///   - dimensions: labels added to every metric (a shard, a job), never one per store.
    ///   - factory: the metrics backend (by default the one the process bootstrapped).
    public init(logger: Logger = Logger(label: "moult"), dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        self.logger = logger
        self.dimensions = dimensions
        self.factory = factory
        objects = Counter(label: "moult_objects_migrated_total", dimensions: dimensions, factory: factory)
        chunks = Counter(label: "moult_chunks_total", dimensions: dimensions, factory: factory)
        chunkDuration = Metrics.Timer(label: "moult_chunk_duration_seconds", dimensions: dimensions, factory: factory)
        bytes = Counter(label: "moult_bytes_written_total", dimensions: dimensions, factory: factory)
        runDuration = Metrics.Timer(label: "moult_run_duration_seconds", dimensions: dimensions, factory: factory)
    }

    /// One event of a run.
    public func record(_ event: MigrationEvent) {
        switch event {
        case .plan(let plan):
            // A step starts: its first chunk is timed from here.
            lastElapsed.set(0)
            logger.debug(
                "plan", metadata: ["step": "\(plan.step)/\(plan.steps)", "passes": "\(plan.plan.passes.count)", "resumed": "\(plan.resumed)"])
        case .chunk(let chunk):
            chunks.increment()
            if chunk.stage == .createObjects { objects.increment(by: chunk.rows) }
            let previous = lastElapsed.exchange(chunk.elapsed)
            if let previous, chunk.elapsed >= previous { chunkDuration.recordSeconds(chunk.elapsed - previous) }
            logger.trace(
                "chunk", metadata: ["stage": "\(chunk.stage.rawValue)", "mapping": "\(chunk.mapping)", "chunk": "\(chunk.chunk + 1)/\(chunk.chunks)"])
        case .stage(let stage):
            logger.debug("stage", metadata: ["step": "\(stage.step)/\(stage.steps)", "stage": "\(stage.stage.rawValue)"])
        case .warning(let warning):
            // What a run warns of is data a step drops, or a file it could not read: a service must see it.
            var metadata: Logger.Metadata = ["message": "\(warning.message)"]
            if !warning.notCarried.isEmpty { metadata["notCarried"] = .array(warning.notCarried.map { .string($0.description) }) }
            logger.warning("warning", metadata: metadata)
        case .finished(let finished):
            Counter(label: "moult_runs_total", dimensions: dimensions + [("outcome", finished.outcome.rawValue)], factory: factory).increment()
            runDuration.recordSeconds(finished.seconds)
            logger.debug("finished", metadata: ["outcome": "\(finished.outcome.rawValue)", "seconds": "\(finished.seconds)"])
        case .failed(let failure):
            record(failure: failure.category)
            logger.debug("failed", metadata: ["category": "\(failure.category)", "message": "\(failure.message)"])
        case .inPlaceStep(let step):
            logger.debug("in place step", metadata: ["step": "\(step.step)", "phase": "\(step.phase)"])
        case .paused, .staged:
            logger.trace("\(event)")
        }
    }

    /// A failed run that had no event stream (a fleet's store that failed before its run began).
    public func record(failure category: FailureCategory) {
        Counter(label: "moult_failures_total", dimensions: dimensions + [("category", category.label)], factory: factory).increment()
    }

    /// Bytes a finished run wrote (its destination's size).
    public func recordBytesWritten(_ count: Int) {
        bytes.increment(by: count)
    }
}

extension FailureCategory {
    /// The category as a metric label: `bad_input`, `interrupted`, …
    var label: String {
        switch self {
        case .internalError: "internal"
        case .usage: "usage"
        case .badInput: "bad_input"
        case .incompatible: "incompatible"
        case .validationFailed: "validation_failed"
        case .interrupted: "interrupted"
        case .io: "io"
        case .busy: "busy"
        }
    }
}
