import Foundation
import MoultMigration
import MoultModel
import MoultStore

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
        RunNames.status(for: output)
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
            // Busy: the file is the other run's, which goes on. Refused for another run's work (other
            // arguments): the file says where that run stands, which its own arguments resume.
            if failure.category == .busy || failure.code == MigrationError.Code.checkpointMismatch.rawValue { return }
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
        guard let data = FileOperations.contents(ofOwnFile: url(for: output).path(percentEncoded: false)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let state = object["state"] as? String
        else { return nil }
        return Contents(
            text: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), state: state, pid: object["pid"] as? Int,
            object: object)
    }
}
