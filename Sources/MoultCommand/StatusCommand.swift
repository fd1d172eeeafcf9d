import ArgumentParser
import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// `moult status DEST`: where a running or interrupted migration into DEST stands.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say where a running or interrupted migration into DEST stands: step, pass, chunk, objects done.",
        discussion: """
            Reads DEST.moult-status.json (written by `moult migrate` as it runs: its process, whether it is \
            paused, its last chunk) and the checkpoints in DEST's work folders (DEST.moult, DEST.moult-steps). \
            For a migration in place, DEST is the store itself (STORE.moult-status.json, the streamed steps' \
            checkpoints in .STORE.moult-inplace/). \
            Exit 0 when something was found (or DEST is a finished store), 65 when there is no migration into DEST.
            """
    )

    @Argument(help: "The destination the migration writes (its --output).")
    var destination: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let output = URL(filePath: destination)
            let live = StatusFile.read(output: output)
            // In place (DEST is the store itself): the streamed steps' checkpoints in its work folder too.
            let checkpoints = MigrationCheckpointStatus.read(output: output) + RunFolder.inPlace(output).checkpoints()
            let exists = FileManager.default.fileExists(atPath: output.path)
            // The run that holds DEST's lock, if one does (whatever its status file says).
            let holder = RunLock.holder(of: output)
            guard live != nil || !checkpoints.isEmpty || exists || holder != nil else {
                throw CommandFailure(.badInput, "no migration into \(destination) found (no \(RunNames.status(for: URL(filePath: destination)).lastPathComponent), no work folder, no store)")
            }
            // Nothing left beside DEST: no run under way or interrupted. A finished run leaves nothing,
            // but neither does a store never migrated or a refused run: "idle" claims no more.
            var state = live?.state ?? (checkpoints.isEmpty ? "idle" : "interrupted")
            if let live, state == "running" || state == "paused", !live.processIsAlive {
                state = "interrupted"
            }
            if holder != nil, state != "paused" { state = "running" }
            if json {
                let last = try live.map { try JSONDecoder().decode(JSONValue.self, from: Data($0.text.utf8)) }
                try Report(
                    v: MigrationEvent.schemaVersion, destination: destination, state: state, pid: live?.pid ?? holder.map { Int($0.pid) },
                    lockHeldBy: holder.map { Int($0.pid) }, last: last, checkpoints: checkpoints.map(Report.Checkpoint.init)
                ).printJSON()
                return
            }
            var line = "\(destination): \(state)"
            if let live, let pid = live.pid { line += " (process \(pid)\(live.processIsAlive ? "" : ", gone"))" }
            print(line)
            if let holder {
                print("  locked by process \(holder.pid)\(holder.purpose.isEmpty ? "" : " (\(holder.purpose))"): another run on \(destination) gets exit 73 (busy) until it ends")
            }
            if let live, let last = live.summary { print("  last: \(last)") }
            for checkpoint in checkpoints {
                let passes = checkpoint.plan.passes.count
                let where_ = checkpoint.validated
                    ? "validated, finishing"
                    : checkpoint.pass < passes
                        ? "next: pass \(checkpoint.pass + 1)/\(passes), chunk \(checkpoint.chunk + 1)/\(max(checkpoint.plan.passes[checkpoint.pass].chunks.count, 1))"
                        : "passes done"
                let total = checkpoint.plan.estimatedRows
                let percent = total > 0 ? Double(checkpoint.done) * 100 / Double(total) : 100
                print(
                    "  checkpoint \(checkpoint.step.map { "of step \($0)" } ?? "of the last step") in \(checkpoint.workDirectory.path): \(where_), "
                        + "\(checkpoint.done)/\(total) objects (\(String(format: "%.0f", percent))%)")
            }
            if checkpoints.isEmpty, exists, live == nil {
                print("  \(destination) is there, with no status file or work folder: no migration is running or interrupted (a finished one leaves nothing behind)")
            }
        }
    }
}

extension StatusCommand {
    /// `status --json`.
    struct Report: JSONReport {
        /// Where a checkpoint stands.
        struct Checkpoint: Encodable {
            /// `null`: the last step's (or the only one's).
            @ExplicitNull var step: Int?
            var workDirectory: String
            var pass: Int
            var passes: Int
            var chunk: Int
            var chunks: Int
            var done: Int
            var total: Int
            var validated: Bool

            init(_ checkpoint: MigrationCheckpointStatus) {
                let passes = checkpoint.plan.passes
                step = checkpoint.step
                workDirectory = checkpoint.workDirectory.path
                pass = checkpoint.pass
                self.passes = passes.count
                chunk = checkpoint.chunk
                chunks = checkpoint.pass < passes.count ? passes[checkpoint.pass].chunks.count : 0
                done = checkpoint.done
                total = checkpoint.plan.estimatedRows
                validated = checkpoint.validated
            }
        }

        /// The schema version, as in the events (`MigrationEvent.schemaVersion`).
        var v: Int
        var destination: String
        /// `running`, `paused`, `interrupted` or `idle`.
        var state: String
        @ExplicitNull var pid: Int?
        @ExplicitNull var lockHeldBy: Int?
        /// The status file, as it is.
        @ExplicitNull var last: JSONValue?
        var checkpoints: [Checkpoint]
    }
}
