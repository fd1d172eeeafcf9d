import Logging
import Metrics
import MetricsTestKit
import MoultEngine
import MoultModel
import MoultTelemetry
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
}
