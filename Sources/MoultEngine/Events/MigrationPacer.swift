public import Foundation

/// Pacing and pausing at chunk boundaries, as operators of online schema changes have them: a
/// ceiling on objects per second, and a pause file (while it exists, the run waits before its next
/// chunk). Call ``chunkCommitted(_:)`` with each chunk event (it sleeps as needed, on the
/// migration's thread, between chunks).
public final class MigrationPacer: @unchecked Sendable {
    /// The most objects per second, over the run; nil for no ceiling.
    public let maxRate: Double?
    /// While a file exists at this path the run waits at the next chunk boundary.
    public let pauseFile: URL?
    /// How often the pause file is looked at while paused.
    public let pollInterval: Duration
    private let isCancelled: @Sendable () -> Bool
    private let emit: (MigrationEvent) -> Void
    private let sleep: (Duration) -> Void
    private let start = ContinuousClock.now
    private var doneAtStart: Int?
    /// `done` counts over one step's plan: the objects of the steps before the current one, and the
    /// step and `done` of the last chunk seen, so that the ceiling holds over the whole chain.
    private var doneInEarlierSteps = 0
    private var lastChunk: (step: Int, done: Int)?
    private var pausedTime: Duration = .zero

    public init(
        maxRate: Double?, pauseFile: URL?, pollInterval: Duration = .milliseconds(100), isCancelled: @escaping @Sendable () -> Bool = { false },
        emit: @escaping (MigrationEvent) -> Void, sleep: @escaping (Duration) -> Void = { Thread.sleep(forTimeInterval: Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }
    ) {
        self.maxRate = maxRate
        self.pauseFile = pauseFile
        self.pollInterval = pollInterval
        self.isCancelled = isCancelled
        self.emit = emit
        self.sleep = sleep
    }

    /// Whether it does anything.
    public var isActive: Bool { maxRate != nil || pauseFile != nil }

    /// How long to wait so that `done` objects over `elapsed` seconds stay at or under `maxRate`.
    public static func delay(done: Int, elapsed: Duration, maxRate: Double) -> Duration {
        guard maxRate > 0, done > 0 else { return .zero }
        let due = Double(done) / maxRate
        let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return due > now ? .milliseconds(Int64(((due - now) * 1000).rounded(.up))) : .zero
    }

    /// Called at a chunk boundary, after `event` committed: waits while the pause file exists (the
    /// run says so with `paused`/`resumed` events), then as long as the rate ceiling asks. Returns
    /// early when the run is cancelled (the engine then stops before the next chunk).
    public func chunkCommitted(_ event: MigrationEvent.Chunk) {
        if let last = lastChunk, last.step != event.step { doneInEarlierSteps += last.done }
        lastChunk = (event.step, event.done)
        let done = doneInEarlierSteps + event.done
        let base = doneAtStart ?? (done - event.rows)
        doneAtStart = base
        waitWhilePaused()
        if let maxRate, !isCancelled() {
            let wait = Self.delay(done: done - base, elapsed: ContinuousClock.now - start - pausedTime, maxRate: maxRate)
            var left = wait
            // In slices, so that a stop request is honoured within a poll interval.
            while left > .zero, !isCancelled() {
                let slice = min(left, pollInterval)
                sleep(slice)
                left -= slice
            }
        }
    }

    /// Waits while the pause file exists.
    public func waitWhilePaused() {
        guard let pauseFile, FileManager.default.fileExists(atPath: pauseFile.path), !isCancelled() else { return }
        let began = ContinuousClock.now
        emit(.paused(MigrationEvent.Paused(paused: true, reason: "pause file \(pauseFile.path) exists")))
        while FileManager.default.fileExists(atPath: pauseFile.path), !isCancelled() {
            sleep(pollInterval)
        }
        pausedTime += ContinuousClock.now - began
        emit(.paused(MigrationEvent.Paused(paused: false, reason: isCancelled() ? "stop requested" : "pause file \(pauseFile.path) removed")))
    }
}
