import Foundation


/// Seconds spent per (mapping, stage, kind of work), for ``MigrationOptions/profile``.
package final class StageProfile {
    enum Kind: String, CaseIterable {
        /// Reading the chunk's source objects (or keys) into Swift.
        case read
        /// Evaluating the chunk (see ``EvaluatedChunk``): expressions, the policy's hooks, association
        /// and state look-ups; nothing written.
        case evaluate
        /// Writing the evaluated chunk: rows, links, policy state and associations, or the bulk
        /// `INSERT … SELECT` that SQLite evaluates itself.
        case write
        /// The checkpoint row, the association table's commit and the destination's.
        case commit = "checkpoint+commits"
    }

    private var seconds: [String: Double] = [:]
    private var order: [String] = []
    /// Chunks copied in bulk, and those of them whose `SELECT` ran on the second thread (``BulkReadAhead``).
    private var bulkChunks = 0, bulkChunksAhead = 0
    /// The destination's WAL checkpointed between chunks (see `Session.keepWALSmall`).
    var walCheckpoints = 0

    func countBulkChunk(evaluatedAhead: Bool) {
        bulkChunks += 1
        if evaluatedAhead { bulkChunksAhead += 1 }
    }

    func start() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func lap(_ clock: inout UInt64?, _ mapping: String, _ stage: MigrationPlan.Stage, _ kind: Kind) {
        guard let started = clock else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let key = "\(stage == .createObjects ? "stage1" : "stage2")\t\(mapping)\t\(kind.rawValue)"
        if seconds[key] == nil { order.append(key) }
        seconds[key, default: 0] += Double(now - started) / 1e9
        clock = now
    }

    func report() {
        let total = seconds.values.reduce(0, +)
        var lines = ["moult profile: stage\tmapping\twork\tseconds\tshare"]
        for key in order {
            let value = seconds[key] ?? 0
            lines.append("moult profile: \(key)\t\(String(format: "%.3f", value))\t\(String(format: "%.1f%%", total > 0 ? value / total * 100 : 0))")
        }
        lines.append("moult profile: total\t\t\t\(String(format: "%.3f", total))")
        if bulkChunks > 0 {
            lines.append(
                "moult profile: chunks copied in bulk: \(bulkChunks), evaluated ahead on the second thread: \(bulkChunksAhead), "
                    + "WAL checkpoints between chunks: \(walCheckpoints)")
        }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
