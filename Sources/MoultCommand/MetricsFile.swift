import Foundation
import Metrics
import MoultMigration
import MoultModel
import MoultStore
import MoultTelemetry
import Prometheus
import Synchronization

/// `--metrics FILE`: the run's metrics (``/MoultTelemetry/MigrationTelemetry``) in Prometheus's text
/// format, written when the run ends (succeeded or not) to FILE by a temporary file renamed over it,
/// as node_exporter's textfile collector reads it (the way batch jobs on Kubernetes are scraped).
final class MetricsFile: Sendable {
    let path: String
    let telemetry: MigrationTelemetry
    private let registry: PrometheusCollectorRegistry
    private let failureRecorded = Atomic<Bool>(false)

    /// The file of the run under way: events recorded anywhere in the command reach it.
    nonisolated(unsafe) static var current: MetricsFile?

    /// Bootstraps swift-metrics with a Prometheus registry (once per process) for a run writing `path`.
    private init(path: String, dimensions: [(String, String)]) {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        self.path = path
        self.registry = registry
        telemetry = MigrationTelemetry(dimensions: dimensions)
    }

    /// The metrics file `path` asks for (nil: none), made current. Its folder is made when missing (as
    /// `mkdir -p` would: a new volume needs no step first), and a folder this process cannot create files
    /// in is refused before the run starts, rather than said when it ends.
    ///
    /// - Throws: ``CommandFailure`` `.io` (74) naming the file and why it cannot be written.
    static func start(_ path: String?, dimensions: [(String, String)] = []) throws -> MetricsFile? {
        guard let path else { return nil }
        do throws(StoreError) {
            try FileOperations.prepareFolder(forOutput: path)
        } catch {
            let place = error.path.map { $0 == path ? "" : "\($0): " } ?? ""
            throw CommandFailure(.io, "cannot write the metrics file \(path): \(place)\(error.message); nothing was done")
        }
        let file = MetricsFile(path: path, dimensions: dimensions)
        current = file
        return file
    }

    /// One event of the run.
    func record(_ event: MigrationEvent) {
        if case .failed = event { failureRecorded.store(true, ordering: .relaxed) }
        telemetry.record(event)
    }

    /// A new run (a fleet's next store): its failure is not yet counted.
    func beginRun() { failureRecorded.store(false, ordering: .relaxed) }

    /// A run that failed: counted unless its own events said so already.
    func recordFailure(_ error: any Error) {
        guard !failureRecorded.load(ordering: .relaxed) else { return }
        telemetry.record(failure: (error as? any CategorizedError)?.category ?? .internalError)
    }

    /// Writes the metrics as they stand; a file that cannot be written is said, not fatal (the run's
    /// own outcome stands).
    func write() {
        do {
            try FileOperations.writeOutput(Data(registry.emitToString().utf8), to: URL(filePath: path), durable: false)
        } catch {
            printError("moult: warning: cannot write the metrics file \(path): \(error)")
        }
    }

    /// The size of a finished store (its file and `-wal`), counted as bytes written.
    func recordBytes(of store: URL) {
        let size = [store.path, store.path + "-wal"].reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)
        }
        telemetry.recordBytesWritten(size)
    }
}
