import Foundation

/// Turns what the engine reports after each chunk into ``MigrationEvent``s: a stage event when the
/// stage changes, a chunk event (with elapsed time, rate and ETA) for each committed chunk. The
/// `progress` callback of the library is fed from the same point.
package final class EventEmitter {
    private let events: ((MigrationEvent) -> Void)?
    private let progress: ((MigrationProgress) -> Void)?
    private let start = ContinuousClock.now
    private var doneAtStart: Int?
    private var stage: MigrationStage?

    package init(events: ((MigrationEvent) -> Void)?, progress: ((MigrationProgress) -> Void)?) {
        self.events = events
        self.progress = progress
    }

    package var isEmpty: Bool { events == nil && progress == nil }

    package func emit(_ event: MigrationEvent) { events?(event) }

    /// What the engine reports: after each chunk, and at each stage change.
    package func report(_ value: MigrationProgress) {
        progress?(value)
        guard let events else { return }
        if value.stage != stage {
            stage = value.stage
            events(.stage(MigrationEvent.Stage(step: value.step, steps: value.steps, stage: value.stage, mapping: value.mapping)))
        }
        guard value.isChunk else { return }
        let elapsed = max((ContinuousClock.now - start) / .seconds(1), 0)
        let base = doneAtStart ?? (value.done - value.rows)
        doneAtStart = base
        let done = max(value.done - base, 0)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let eta = rate > 0 ? Double(max(value.total - value.done, 0)) / rate : nil
        events(
            .chunk(
                MigrationEvent.Chunk(
                    step: value.step, steps: value.steps, pass: value.pass, passes: value.passes, stage: value.stage,
                    mapping: value.mapping ?? "", chunk: value.chunk, chunks: value.chunks, rows: value.rows, done: value.done,
                    total: value.total, elapsed: elapsed, rate: rate, eta: eta)))
    }

    /// A stage change with no chunk (finishing, done).
    package func enter(_ stage: MigrationStage, total: Int) {
        report(MigrationProgress(stage: stage, done: total, total: total))
    }
}
