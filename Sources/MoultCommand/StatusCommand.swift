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
            let checkpoints = MigrationCheckpointStatus.read(output: output) + InPlaceMigration.checkpoints(of: output)
            let exists = FileManager.default.fileExists(atPath: output.path)
            // The run that holds DEST's lock, if one does (whatever its status file says).
            let holder = RunLock.holder(of: output)
            guard live != nil || !checkpoints.isEmpty || exists || holder != nil else {
                throw CommandFailure(.badInput, "no migration into \(destination) found (no \(destination).moult-status.json, no work folder, no store)")
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

/// DEST.moult-status.json: the last state of a `moult migrate` run, rewritten (atomically) at each
/// event, removed when the run ends unless it can be resumed.
final class StatusFile: @unchecked Sendable {
    let url: URL
    private var fields: [String: String] = [:]
    private var last: MigrationEvent.Chunk?
    private var lastStage: MigrationEvent.Stage?
    /// Whether a step has started (written its plan): before that there is no run to report, and a
    /// refusal leaves no file.
    private var started = false
    /// When the file was last written, and whether for a chunk: a chunk's event following another's
    /// rewrites it at most twice a second (each write is a new file renamed over the old, with its
    /// sync); any other event, and the first chunk after one, at once.
    private var written: ContinuousClock.Instant?
    private var writtenForChunk = false
    static let chunkInterval: Duration = .milliseconds(500)

    init(output: URL) {
        url = Self.url(for: output)
    }

    static func url(for output: URL) -> URL {
        output.deletingLastPathComponent().appending(path: output.lastPathComponent + ".moult-status.json")
    }

    func record(_ event: MigrationEvent) {
        var state = "running"
        var message: String?
        switch event {
        case .chunk(let chunk): last = chunk
        case .stage(let stage): lastStage = stage
        case .paused(let paused):
            // (In place, a pause may come before any step: the run has started all the same.)
            started = true
            state = paused.paused ? "paused" : "running"
            message = paused.reason
        case .finished:
            remove()
            return
        case .failed(let failure):
            // Busy: the file is the other run's, which goes on.
            if failure.category == .busy { return }
            guard failure.category == .interrupted || failure.category == .io else {
                remove()
                return
            }
            state = "interrupted"
            message = failure.message
        case .plan:
            started = true
            return
        case .inPlaceStep(let step):
            // In place: where the chain stands (an SQL step has no chunk).
            started = true
            if step.phase == .started { last = nil }
            message = "step \(step.step)/\(step.steps) (\(step.from) -> \(step.to)) \(step.method == .sql ? "by SQL" : "streamed, then swapped in"): \(step.phase == .started ? "running" : "done")"
        case .staged(let staged):
            // A staged migration: the stage and what it is doing (a handler's objects, or a step).
            started = true
            last = nil
            message = "stage \(staged.stage)/\(staged.stages): \(staged.activity)" + (staged.objects > 0 ? ", \(staged.objects) objects read" : "")
        case .warning: return
        }
        guard started else { return }
        let now = ContinuousClock.now
        var isChunk = false
        if case .chunk = event { isChunk = true }
        if isChunk, writtenForChunk, let written, now - written < Self.chunkInterval { return }
        written = now
        writtenForChunk = isChunk
        var object = EventJSON()
        object.add("v", MigrationEvent.schemaVersion)
        object.add("state", state)
        object.add("pid", Int(getpid()))
        object.add("updated", Date().timeIntervalSince1970)
        object.add("message", message)
        last?.add(to: &object, stage: lastStage?.stage)
        // Through a temporary name of Moult's own beside it, which the next write (or the end) replaces or
        // removes: a kill never leaves a file of another name behind.
        try? FileOperations.writeAtomically(Data((object.text + "\n").utf8), to: url, durable: false)
    }

    /// Removes the file and its temporary (left by a run killed while writing).
    func remove() {
        FileOperations.remove(FileOperations.temporaryPath(for: url.path(percentEncoded: false)))
        FileOperations.remove(url.path(percentEncoded: false))
    }

    /// What a status file says.
    struct Contents {
        var text: String
        var state: String
        var pid: Int?
        var object: [String: Any]

        var processIsAlive: Bool {
            guard let pid else { return false }
            return kill(pid_t(pid), 0) == 0 || errno == EPERM
        }

        var summary: String? {
            guard let step = object["step"] as? Int, let done = object["done"] as? Int, let total = object["total"] as? Int else {
                return object["message"] as? String
            }
            var text = "step \(step)/\(object["steps"] as? Int ?? 1), \(object["stage"] as? String ?? "") \(object["mapping"] as? String ?? "")"
            if let pass = object["pass"] as? Int, let chunk = object["chunk"] as? Int {
                text += ", pass \(pass + 1)/\(object["passes"] as? Int ?? 0), chunk \(chunk + 1)/\(object["chunks"] as? Int ?? 0)"
            }
            text += ", \(done)/\(total) objects"
            if let message = object["message"] as? String { text += " (\(message))" }
            return text
        }
    }

    static func read(output: URL) -> Contents? {
        guard let data = try? Data(contentsOf: url(for: output)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let state = object["state"] as? String
        else { return nil }
        return Contents(
            text: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), state: state, pid: object["pid"] as? Int,
            object: object)
    }
}
