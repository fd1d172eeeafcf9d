import Foundation
import ArgumentParser
import MoultMapping
import MoultMigration
import MoultModel

enum FileHandleWriter {
    static func standardError(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}

/// How `plan` and `migrate` describe the steps of a chain and what each does not carry.
enum StepReport {
    /// The step's line: `step 1: v1 -> v3 (inferred mapping)` or with the mapping files.
    static func line(_ index: Int, _ step: ProgressiveMigration.Step) -> String {
        var line = "step \(index + 1): \(step.from.name) -> \(step.to.name)"
        if step.inferred {
            line += " (inferred mapping)"
        } else {
            line += " (\(step.mappingLabels.joined(separator: ", ")))"
        }
        return line
    }

    /// The lines under a step: why it is one of several inferred steps, inference warnings, and what
    /// it does not carry.
    static func details(_ step: ProgressiveMigration.Step, losses: [DataLoss]) -> [String] {
        var lines: [String] = []
        if let note = step.chainedInference { lines.append("  note: \(note)") }
        for warning in step.warnings { lines.append("  warning: \(warning.message)") }
        if !losses.isEmpty {
            lines.append("  not carried: " + losses.map(describe).joined(separator: ", "))
        }
        return lines
    }

    static func describe(_ loss: DataLoss) -> String {
        let count: String
        switch (loss.what.kind, loss.count) {
        case (.entity, let n?): count = "\(n) object\(n == 1 ? "" : "s")"
        case (_, let n?): count = "\(n) non-nil value\(n == 1 ? "" : "s")"
        case (.entity, nil): count = "objects not counted yet"
        case (_, nil): count = "values not counted yet"
        }
        let kind = loss.what.kind == .entity ? "every object" : loss.what.kind.rawValue
        return "\(loss.what.name) (\(kind), \(count))"
    }

    /// The warning for each whole entity with objects a step drops.
    static func warnings(_ index: Int, _ step: ProgressiveMigration.Step, losses: [DataLoss]) -> [String] {
        losses.filter(\.dropsObjects).map { loss in
            "moult: warning: step \(index + 1) (\(step.from.name) -> \(step.to.name)) drops all \(loss.count ?? 0) \(loss.what.entity) objects: no entity mapping reads \(loss.what.entity)"
        }
    }

    /// JSON of a step, with what it does not carry (`null` counts when not counted).
    static func json(_ step: ProgressiveMigration.Step, losses: [DataLoss]) -> String {
        let notCarried = losses.map { loss in
            var fields = ["\"kind\":\(JSONText.string(loss.what.kind.rawValue))", "\"entity\":\(JSONText.string(loss.what.entity))"]
            fields.append("\"property\":" + (loss.what.property.map(JSONText.string) ?? "null"))
            fields.append("\"count\":" + (loss.count.map(String.init) ?? "null"))
            return "{" + fields.joined(separator: ",") + "}"
        }
        var fields = [
            "\"from\":\(JSONText.string(step.from.name))", "\"to\":\(JSONText.string(step.to.name))", "\"inferred\":\(step.inferred)",
            "\"mappings\":[\(step.mappingLabels.map(JSONText.string).joined(separator: ","))]",
            "\"notCarried\":[\(notCarried.joined(separator: ","))]",
        ]
        if let note = step.chainedInference { fields.append("\"chainedInference\":\(JSONText.string(note))") }
        if !step.warnings.isEmpty {
            fields.append("\"warnings\":[\(step.warnings.map { JSONText.string($0.message) }.joined(separator: ","))]")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// `--events FILE`: the run's events as JSON lines (`-` for standard output).
struct EventOptions: ParsableArguments {
    @Option(
        name: .customLong("events"),
        help: ArgumentHelp("Write the run's events to FILE, one JSON object per line (appended; '-' for standard output). The MoultCommand documentation's \"Events, pacing and status\" has the schema.", valueName: "file"))
    var path: String?

    /// The log the options ask for; nil without `--events`.
    func open() throws -> EventLog? {
        guard let path else { return nil }
        return try EventLog(path: path)
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
            let opened = Foundation.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard opened >= 0 else {
                throw CommandFailure(.io, "cannot open the events file \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = opened
            owned = true
        }
    }

    deinit { if owned { close(descriptor) } }

    var toStandardOutput: Bool { descriptor == STDOUT_FILENO }

    var seconds: Double { (ContinuousClock.now - start) / .seconds(1) }

    func write(_ event: MigrationEvent) {
        guard !ended else { return }
        if event.isLast { ended = true }
        let line = Array((event.jsonLine + "\n").utf8)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// The failure event of an error thrown outside the migration (reading the model, say), unless the
    /// stream already ended.
    func fail(_ error: any Error) {
        write(.failed(MigrationEvent.Failure(error, seconds: seconds)))
    }
}

/// An error of the command line itself, with its category (exit code).
struct CommandFailure: CategorizedError {
    var category: FailureCategory
    var message: String

    init(_ category: FailureCategory, _ message: String) {
        self.category = category
        self.message = message
    }

    var description: String { message }
}
