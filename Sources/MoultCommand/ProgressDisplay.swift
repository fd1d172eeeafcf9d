import Foundation
import MoultMigration

/// A live progress line on standard error: step, stage, mapping, source objects, rate, ETA.
///
/// The objects it counts are the source objects of the pass under way (an entity mapping's stage 1
/// creates an object for each, its stage 2 sets their relationships), so a million persons read as a
/// million in each pass that reads them, and the percentage is the step's over all its passes. Validation and finishing show as stages of their
/// own, and the line ends at 100 % when the step is done; ``finish()`` leaves the line before anything
/// else is printed (an error, Ctrl-C's message).
final class ProgressDisplay: @unchecked Sendable {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let start = ContinuousClock.now
    private var last = ContinuousClock.now - .seconds(10)
    private var lastMapping: String?
    private var wroteLine = false
    /// The source objects each pass of the step under way reads (from its plan), and how many of the
    /// pass under way are done.
    private var passObjects: [Int] = []
    private var pass: (index: Int, done: Int) = (-1, 0)
    private var lastChunk: MigrationEvent.Chunk?

    /// The display drawing now, if any: ``printError(_:)`` ends its line first.
    nonisolated(unsafe) static var active: ProgressDisplay?

    init(enabled: Bool) {
        self.enabled = enabled
        if enabled { Self.active = self }
    }

    /// Renders an event: a chunk as the progress line (at most every 200 ms on a terminal, 5 s
    /// otherwise, and at each new mapping or stage); a pause and its end as a line of their own.
    func show(_ event: MigrationEvent) {
        guard enabled else { return }
        switch event {
        case .plan(let plan):
            passObjects = plan.plan.passes.map(\.estimatedRows)
            pass = (-1, 0)
        case .chunk(let chunk): show(chunk)
        case .stage(let stage) where stage.stage == .validate || stage.stage == .finishing:
            write("[step \(stage.step)/\(stage.steps)] \(stage.stage == .validate ? "validating" : "finishing")", startsAPart: true)
            lastMapping = nil
        case .finished:
            if let chunk = lastChunk {
                write(String(format: "[step %d/%d] done  100%%  %.0f/s", chunk.steps, chunk.steps, chunk.rate), startsAPart: true)
            }
            finish()
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
        lastChunk = chunk
        pass = chunk.pass == pass.index ? (pass.index, pass.done + chunk.rows) : (chunk.pass, chunk.rows)
        let objects = max(chunk.pass < passObjects.count ? passObjects[chunk.pass] : 0, pass.done)
        let fraction = chunk.total > 0 ? min(Double(chunk.done) / Double(chunk.total), 1) : 1
        let eta = chunk.done >= chunk.total ? "" : String(format: "  ETA %.0fs", chunk.eta ?? 0)
        let text = String(
            format: "[step %d/%d] %@ %@ (pass %d/%d)  %d/%d objects  %.0f%%  %.0f/s%@", chunk.step, chunk.steps, chunk.stage.rawValue,
            chunk.mapping, chunk.pass + 1, chunk.passes, pass.done, objects, fraction * 100, chunk.rate, eta)
        // The last chunk of the step is always drawn: the line never stays below 100 % at the end.
        write(text, startsAPart: chunk.mapping != lastMapping || chunk.done >= chunk.total)
        lastMapping = chunk.mapping
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

    /// Ends the progress line (a newline after it on a terminal), so what is printed next starts a line.
    func finish() {
        if enabled, isTerminal, wroteLine {
            FileHandleWriter.standardError("\n")
            wroteLine = false
        }
    }
}
