import Foundation
import MoultMigration

/// A live progress line on standard error: step, stage, mapping, objects, rate, ETA.
final class ProgressDisplay: @unchecked Sendable {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let start = ContinuousClock.now
    private var last = ContinuousClock.now - .seconds(10)
    private var lastMapping: String?
    private var wroteLine = false

    init(enabled: Bool) { self.enabled = enabled }

    /// Renders an event: a chunk as the progress line (at most every 200 ms on a terminal, 5 s
    /// otherwise, and at each new mapping); a pause and its end as a line of their own.
    func show(_ event: MigrationEvent) {
        guard enabled else { return }
        switch event {
        case .chunk(let chunk): show(chunk)
        case .staged(let staged):
            write(
                "[stage \(staged.stage)/\(staged.stages)] \(staged.activity)" + (staged.objects > 0 ? "  \(staged.objects) objects" : ""),
                startsAPart: staged.activity != lastMapping)
            lastMapping = staged.activity
        case .paused(let paused):
            finish()
            FileHandleWriter.standardError("moult: \(paused.paused ? "paused" : "resumed"): \(paused.reason)\n")
        default: break
        }
    }

    /// Renders a progress report of a run that has no event stream (in place).
    func show(_ progress: MigrationProgress) {
        guard enabled, progress.isChunk || progress.done > 0 else { return }
        let elapsed = max((ContinuousClock.now - start) / .seconds(1), 0.001)
        let rate = Double(progress.done) / elapsed
        show(
            MigrationEvent.Chunk(
                step: progress.step, steps: progress.steps, pass: progress.pass, passes: progress.passes, stage: progress.stage,
                mapping: progress.mapping ?? "", chunk: progress.chunk, chunks: progress.chunks, rows: progress.rows, done: progress.done,
                total: progress.total, elapsed: elapsed, rate: rate, eta: rate > 0 ? Double(max(progress.total - progress.done, 0)) / rate : nil))
    }

    private func show(_ chunk: MigrationEvent.Chunk) {
        let progress = chunk.progress
        let line = String(
            format: "[step %d/%d] %@ %@  %d/%d objects (%.0f%%)  %.0f/s  ETA %.0fs", progress.step, progress.steps,
            progress.stage.rawValue, progress.mapping ?? "", progress.done, progress.total, progress.fraction * 100, chunk.rate, chunk.eta ?? 0)
        write(line, startsAPart: progress.mapping != lastMapping)
        lastMapping = progress.mapping
    }

    /// Writes the progress line: at most every 200 ms on a terminal (in place), every 5 s otherwise,
    /// and whenever a new part of the run (a mapping, a stage's activity) starts.
    private func write(_ line: String, startsAPart: Bool) {
        let now = ContinuousClock.now
        guard startsAPart || now - last > (isTerminal ? .milliseconds(200) : .seconds(5)) else { return }
        last = now
        if isTerminal {
            FileHandleWriter.standardError("\r\u{1B}[K" + line)
            wroteLine = true
        } else {
            FileHandleWriter.standardError(line + "\n")
        }
    }

    func finish() {
        if enabled, isTerminal, wroteLine {
            FileHandleWriter.standardError("\n")
            wroteLine = false
        }
    }
}
