import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// `--events FILE`: the run's events as JSON lines (`-` for standard output).
struct EventOptions: ParsableArguments {
    @Option(
        name: .customLong("events"),
        help: ArgumentHelp("Write the run's events to FILE, one JSON object per line (appended, its folder made when missing; '-' for standard output, where with --json the report is one more JSON line; a FIFO or device is written to). The MoultCommand documentation's \"Events, pacing and status\" has the schema.", valueName: "file"))
    var path: String?

    @Option(
        name: .customLong("metrics"),
        help: ArgumentHelp("Write the run's metrics to FILE in Prometheus's text format when it ends (for node_exporter's textfile collector), under a temporary name then renamed, its folder made when missing; a FIFO or device is written to, never replaced.", valueName: "file"))
    var metricsPath: String?

    /// The files these options write, for ``OutputPathCheck``.
    var outputs: [OutputPathCheck.Named] { [.file("--events", path), .file("--metrics", metricsPath)] }

    /// The log the options ask for; nil without `--events`.
    private func open() throws -> EventLog? {
        guard let path else { return nil }
        return try EventLog(path: path)
    }

    /// Runs `body` with the log open (nil without `--events`); a failure ends the stream with `failed`
    /// (once: a run whose own events ended it is not written twice) and is reported with its exit code.
    func withLog(_ body: (EventLog?) throws -> Void) async throws {
        try await reportingFailures {
            let metrics = try MetricsFile.start(metricsPath)
            defer { metrics?.write() }
            let log = try open()
            do {
                try body(log)
            } catch {
                log?.fail(error)
                metrics?.recordFailure(error)
                throw error
            }
        }
    }
}

/// Writes events as JSON lines, each with a single `write` so that a process killed at any moment
/// leaves only whole lines; remembers whether the stream has ended.
final class EventLog: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let owned: Bool
    private(set) var ended = false
    private let start = ContinuousClock.now

    init(path: String) throws {
        self.path = path
        if path == "-" {
            descriptor = STDOUT_FILENO
            owned = false
        } else {
            do throws(StoreError) {
                // Its folder made when missing, as the metrics file's is.
                try FileOperations.prepareFolder(forOutput: path)
                descriptor = try FileOperations.openForAppending(path)
            } catch {
                throw CommandFailure(.io, "cannot open the events file \(path): \(error.message)")
            }
            owned = true
        }
    }

    deinit { if owned { close(descriptor) } }

    var toStandardOutput: Bool { descriptor == STDOUT_FILENO }

    var seconds: Double { (ContinuousClock.now - start) / .seconds(1) }

    func write(_ event: MigrationEvent) {
        guard !ended else { return }
        if event.isLast { ended = true }
        // A line that cannot be written is dropped: the run goes on (its report and exit code stand).
        let line = Array((event.jsonLine + "\n").utf8)
        _ = line.withUnsafeBytes { FileOperations.writeAll($0, to: descriptor) }
    }

    /// The failure event of an error thrown outside the migration (reading the model, say), unless the
    /// stream already ended.
    func fail(_ error: any Error) {
        write(.failed(MigrationEvent.Failure(error, seconds: seconds)))
    }
}
