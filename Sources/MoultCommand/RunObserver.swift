import Foundation
import MoultMigration
import MoultModel
import MoultStore
import Synchronization

/// The one observer of a `moult migrate` run (with `--output`, in place or staged): every event of
/// the run goes through ``handle(_:)``, which fans it out to the status file, the `--events` log and
/// the progress line, paces the run (`--max-rate`) and says the warnings a person should read.
///
/// Built once per run, when the run starts (it installs the Ctrl-C handler), from the command's
/// options:
///
/// ```swift
/// let observer = RunObserver(status: StatusFile(output: output), log: log, showsProgress: !quiet, control: control)
/// let reports = try migration.run(output: output, isCancelled: { observer.isCancelled }, events: observer.handle)
/// let seconds = observer.finish()
/// ```
final class RunObserver: @unchecked Sendable {
    private let log: EventLog?
    private let status: StatusFile
    private let display: ProgressDisplay
    /// `--max-rate` and `--pause-file`.
    private let pacer: MigrationPacer
    private let start = ContinuousClock.now
    /// What each step does not carry, as the migration reported it, by step number (from 1).
    private(set) var losses: [Int: [DataLoss]] = [:]

    /// - Parameters:
    ///   - status: the status file `moult status` reads (DEST's, or in place the store's own).
    ///   - log: the `--events` log, if any.
    ///   - showsProgress: whether to draw the progress line (not with `--quiet` or `--json`).
    ///   - control: `--max-rate` and `--pause-file`.
    init(status: StatusFile, log: EventLog?, showsProgress: Bool, control: ControlOptions) {
        Interruption.install()
        let display = ProgressDisplay(enabled: showsProgress)
        self.status = status
        self.log = log
        self.display = display
        // The pacer's own events (paused, resumed) are recorded as the run's are.
        pacer = MigrationPacer(
            maxRate: control.maxRate, pauseFile: control.pauseFile.map { URL(filePath: $0) }, isCancelled: { Interruption.requested },
            emit: { event in Self.record(event, status: status, log: log, display: display) })
    }

    /// Whether Ctrl-C or SIGTERM asked the run to stop (at its next chunk boundary).
    var isCancelled: Bool { Interruption.requested }

    /// One event of the run: recorded (status file, log, progress line), then a committed chunk paces
    /// the run, and a warning about what a step carries is said (its losses are said by
    /// ``stepLosses(_:_:of:)``).
    func handle(_ event: MigrationEvent) {
        record(event)
        switch event {
        case .chunk(let chunk) where pacer.isActive: pacer.chunkCommitted(chunk)
        // Before a step's first chunk: a pause file already there holds the run from its start.
        case .plan: pacer.waitWhilePaused()
        case .warning(let warning) where warning.notCarried.isEmpty: warn("moult: warning: \(warning.message)")
        default: break
        }
    }

    /// Waits while the pause file exists (before a step, between a handler's chunks).
    func waitWhilePaused() { pacer.waitWhilePaused() }

    /// What step `index` (from 1) of `steps` does not carry: kept for the report, and a warning for each
    /// entity whose objects it drops.
    func stepLosses(_ index: Int, _ found: [DataLoss], of steps: [ProgressiveMigration.Step]) {
        losses[index] = found
        for warning in StepReport.warnings(index - 1, steps[index - 1], losses: found) { warn(warning) }
    }

    /// What a run in place will drop, said before it starts: a warning line for each loss and a
    /// warning event (status file, `--events` log) for each step that has one.
    func warn(about losses: DataLossGuard) {
        for (index, found) in losses.losses.enumerated() {
            let dropping = found.filter { ($0.count ?? 1) > 0 }
            for loss in dropping { warn("moult: warning: " + DataLossGuard.line(index, losses.steps[index], loss)) }
            for warning in losses.filterWarnings(step: index) { warn(warning) }
            if let event = losses.event(step: index, dropping) { record(event) }
        }
    }

    /// Ends the progress line and says how long the run took, in seconds.
    func finish() -> Double {
        display.finish()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    private func record(_ event: MigrationEvent) {
        Self.record(event, status: status, log: log, display: display)
    }

    /// The status file first: a reader that saw the event's line finds the status it set.
    private static func record(_ event: MigrationEvent, status: StatusFile, log: EventLog?, display: ProgressDisplay) {
        MetricsFile.current?.record(event)
        status.record(event)
        log?.write(event)
        display.show(event)
    }

    /// A line on standard error, below the progress line.
    func warn(_ line: String) {
        display.finish()
        printError(line)
    }
}

/// Ctrl-C and SIGTERM ask the migration to stop at the next chunk boundary (exit code 75, resumable).
///
/// Installed when any command starts (``MoultCommand/runCommandLine(_:policies:arguments:)``). A run
/// blocked in I/O (opening a FIFO, a stalled disk or network file system) never reaches its next
/// boundary, so a thread watching the flag (a handler only sets it) ends the process with 75 when it is
/// still there ``grace`` after the signal: as a kill would leave it, which a rerun resumes.
enum Interruption {
    private static let flag = Atomic<Bool>(false)
    private static let watching = Atomic<Bool>(false)

    /// How long a stop may take before the process ends anyway: within 2 s of the signal in all.
    static let grace = 1.5

    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            Interruption.flag.store(true, ordering: .relaxed)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        guard !watching.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread {
            while !requested { Thread.sleep(forTimeInterval: 0.05) }
            Thread.sleep(forTimeInterval: grace)
            let line = Array("moult: stopped by a signal while blocked; run the same command again to resume\n".utf8)
            _ = line.withUnsafeBytes { FileOperations.writeAll($0, to: STDERR_FILENO) }
            _exit(Int32(FailureCategory.interrupted.exitCode))
        }
        thread.start()
    }
}
