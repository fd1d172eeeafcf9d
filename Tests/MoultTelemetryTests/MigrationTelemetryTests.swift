import Logging
import Metrics
import MetricsTestKit
import MoultEngine
import MoultModel
import MoultTelemetry
import MoultMapping
import Synchronization
import Testing

/// Issue 27, item 7: the metrics a server gets from a run's events, through swift-metrics.
@Suite struct MigrationTelemetryTests {
    static func chunk(stage: MigrationStage, rows: Int, elapsed: Double) -> MigrationEvent {
        .chunk(MigrationEvent.Chunk(
            step: 1, steps: 1, pass: 0, passes: 2, stage: stage, mapping: "PersonToPerson", chunk: 0, chunks: 2, rows: rows, done: rows, total: 400,
            elapsed: elapsed, rate: 0, eta: nil))
    }

    @Test func eventsBecomeMetrics() throws {
        let metrics = TestMetrics()
        let telemetry = MigrationTelemetry(logger: Logger(label: "test"), dimensions: [("shard", "2")], factory: metrics)
        telemetry.record(Self.chunk(stage: .createObjects, rows: 100, elapsed: 0.5))
        telemetry.record(Self.chunk(stage: .createObjects, rows: 100, elapsed: 1.5))
        telemetry.record(Self.chunk(stage: .createRelationships, rows: 200, elapsed: 2.0))
        telemetry.record(.finished(MigrationEvent.Finished(outcome: .migrated, seconds: 2.5)))
        telemetry.record(.failed(MigrationEvent.Failure(code: "io", category: .io, message: "disk", seconds: 1)))
        telemetry.record(failure: .incompatible)
        telemetry.recordBytesWritten(4096)

        let shard = [("shard", "2")]
        // Objects are counted once, at stage 1; chunks at every stage.
        #expect(metrics.counterTotal(label: "moult_objects_migrated_total", dimensions: shard) == 200)
        #expect(metrics.counterTotal(label: "moult_chunks_total", dimensions: shard) == 3)
        #expect(metrics.counterTotal(label: "moult_bytes_written_total", dimensions: shard) == 4096)
        #expect(metrics.counterTotal(label: "moult_runs_total", dimensions: shard + [("outcome", "migrated")]) == 1)
        #expect(metrics.counterTotal(label: "moult_failures_total", dimensions: shard + [("category", "io")]) == 1)
        #expect(metrics.counterTotal(label: "moult_failures_total", dimensions: shard + [("category", "incompatible")]) == 1)
        // Two chunks after the first are timed: 1.0 s and 0.5 s.
        let durations = try metrics.expectTimer("moult_chunk_duration_seconds", shard).values
        #expect(durations == [1_000_000_000, 500_000_000])
        #expect(try metrics.expectTimer("moult_run_duration_seconds", shard).values == [2_500_000_000])
    }

    /// What a run warns of (data a step drops) is logged at `.warning`, readable (not a struct dump);
    /// the rest of a run's messages at `.debug` and below (the honest-figures issue's fresh-clone list).
    @Test func warningsAreLoggedAsWarnings() {
        let lines = RecordedLines()
        let telemetry = MigrationTelemetry(logger: Logger(label: "test") { _ in RecordingHandler(lines: lines) }, factory: TestMetrics())
        let loss = DataLoss(what: UncarriedData(kind: .attribute, entity: "Post", property: "color"), count: 1001)
        telemetry.record(.warning(MigrationEvent.Warning(step: 1, message: "step 1 drops 1001 non-nil values of Post.color", notCarried: [loss])))
        telemetry.record(.finished(MigrationEvent.Finished(outcome: .migrated, seconds: 1)))
        let recorded = lines.all
        let warning = recorded.first { $0.level == .warning }
        #expect(warning?.text.contains("Post.color (attribute, 1001 non-nil values)") == true, "\(recorded)")
        #expect(warning?.text.contains("DataLoss(") == false)
        #expect(recorded.filter { $0.level == .warning }.count == 1)
        #expect(recorded.contains { $0.level == .debug && $0.text.contains("finished") })
        #expect(loss.description == "Post.color (attribute, 1001 non-nil values)")
        #expect(DataLoss(what: UncarriedData(kind: .entity, entity: "Note"), count: 1).description == "Note (every object, 1 object)")
    }
}

/// The lines a logger was given, with their levels.
final class RecordedLines: Sendable {
    private let lines = Mutex<[(level: Logger.Level, text: String)]>([])
    func append(_ level: Logger.Level, _ text: String) { lines.withLock { $0.append((level, text)) } }
    var all: [(level: Logger.Level, text: String)] { lines.withLock { $0 } }
}

struct RecordingHandler: LogHandler {
    let lines: RecordedLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.append(event.level, "\(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
    }
}
