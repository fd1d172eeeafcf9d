import Foundation
public import MoultModel
import MoultMapping

extension MigrationEvent {
    /// The event as one line of JSON (no newline), the `--events` format: an object with `"v"` (the
    /// schema version), `"event"` (its kind) and the kind's fields. The command line's "Events, pacing and status" article (MoultCommand) lists them.
    public var jsonLine: String {
        var fields = EventJSON()
        fields.add("v", MigrationEvent.schemaVersion)
        switch self {
        case .plan(let value):
            fields.add("event", "plan")
            fields.add("step", value.step)
            fields.add("steps", value.steps)
            fields.add("from", value.from)
            fields.add("to", value.to)
            fields.add("resumed", value.resumed)
            let plan = value.plan
            fields.add("chunkSize", plan.chunkSize)
            fields.add("chunks", plan.chunkCount)
            fields.add("estimatedRows", plan.estimatedRows)
            let passes = plan.passes.map { pass -> String in
                var object = EventJSON()
                object.add("stage", pass.stage.rawValue)
                object.add("mapping", plan.mappings[pass.mapping].name)
                object.add("sourceEntity", plan.mappings[pass.mapping].sourceEntity)
                object.add("destinationEntity", plan.mappings[pass.mapping].destinationEntity)
                object.add("partition", pass.partition)
                object.add("chunks", pass.chunks.count)
                object.add("estimatedRows", pass.estimatedRows)
                return object.text
            }
            fields.raw("passes", "[" + passes.joined(separator: ",") + "]")
        case .chunk(let value):
            fields.add("event", "chunk")
            value.add(to: &fields)
        case .stage(let value):
            fields.add("event", "stage")
            fields.add("step", value.step)
            fields.add("steps", value.steps)
            fields.add("stage", value.stage.rawValue)
            fields.add("mapping", value.mapping)
        case .warning(let value):
            fields.add("event", "warning")
            fields.add("step", value.step)
            fields.add("message", value.message)
            let losses = value.notCarried.map { loss -> String in
                var object = EventJSON()
                object.add("kind", loss.what.kind.rawValue)
                object.add("entity", loss.what.entity)
                object.add("property", loss.what.property)
                object.add("count", loss.count)
                return object.text
            }
            fields.raw("notCarried", "[" + losses.joined(separator: ",") + "]")
        case .inPlaceStep(let value):
            fields.add("event", "inplace-step")
            fields.add("step", value.step)
            fields.add("steps", value.steps)
            fields.add("from", value.from)
            fields.add("to", value.to)
            fields.add("phase", value.phase.rawValue)
            fields.add("method", value.method.rawValue)
            fields.add("changes", value.changes)
            fields.add("schemaOnly", value.schemaOnly)
            fields.raw("reasons", "[" + value.reasons.map(EventJSON.string).joined(separator: ",") + "]")
            fields.raw("rowsRead", "[" + value.rowsRead.map(EventJSON.string).joined(separator: ",") + "]")
            fields.add("seconds", value.seconds)
        case .staged(let value):
            fields.add("event", "staged")
            fields.add("stage", value.stage)
            fields.add("stages", value.stages)
            fields.add("activity", value.activity)
            fields.add("objects", value.objects)
        case .paused(let value):
            fields.add("event", value.paused ? "paused" : "resumed")
            fields.add("reason", value.reason)
        case .finished(let value):
            fields.add("event", "finished")
            fields.add("outcome", value.outcome.rawValue)
            fields.add("exitCode", Int(value.exitCode))
            fields.add("resumed", value.resumed)
            fields.add("seconds", value.seconds)
            let objects = value.objects.sorted { $0.key < $1.key }.map { EventJSON.string($0.key) + ":" + String($0.value) }
            fields.raw("objects", "{" + objects.joined(separator: ",") + "}")
        case .failed(let value):
            fields.add("event", "failed")
            fields.add("outcome", value.category == .interrupted ? "interrupted" : "failed")
            fields.add("exitCode", Int(value.exitCode))
            fields.add("code", value.code)
            fields.add("category", value.category.identifier)
            fields.add("message", value.message)
            fields.add("file", value.file)
            fields.add("position", value.position)
            fields.add("step", value.step)
            fields.add("seconds", value.seconds)
        }
        return fields.text
    }
}

extension FailureCategory {
    /// A stable identifier for machine-readable output: `usage`, `bad-input`, `incompatible`,
    /// `validation`, `io`, `busy`, `interrupted`, `internal`.
    public var identifier: String {
        switch self {
        case .internalError: "internal"
        case .usage: "usage"
        case .badInput: "bad-input"
        case .incompatible: "incompatible"
        case .validationFailed: "validation"
        case .interrupted: "interrupted"
        case .io: "io"
        case .busy: "busy"
        }
    }
}

/// A JSON object built field by field, in order.
extension MigrationEvent.Chunk {
    /// Adds this chunk's fields (where the run stands) to a JSON object: the chunk event's fields, and
    /// `moult status`'s, which may name a later stage than the chunk's.
    public func add(to object: inout EventJSON, stage: MigrationStage? = nil) {
        object.add("step", step)
        object.add("steps", steps)
        object.add("pass", pass)
        object.add("passes", passes)
        object.add("stage", (stage ?? self.stage).rawValue)
        object.add("mapping", mapping)
        object.add("chunk", chunk)
        object.add("chunks", chunks)
        object.add("rows", rows)
        object.add("done", done)
        object.add("total", total)
        object.add("elapsed", elapsed)
        object.add("rate", rate)
        object.add("eta", eta)
    }
}

public struct EventJSON: Sendable {
    private var parts: [String] = []

    public init() {}

    public var text: String { "{" + parts.joined(separator: ",") + "}" }

    public mutating func raw(_ key: String, _ json: String) { parts.append(Self.string(key) + ":" + json) }
    public mutating func add(_ key: String, _ value: String?) { raw(key, value.map(Self.string) ?? "null") }
    public mutating func add(_ key: String, _ value: Int?) { raw(key, value.map { String($0) } ?? "null") }
    public mutating func add(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }
    public mutating func add(_ key: String, _ value: Double?) {
        guard let value, value.isFinite else { return raw(key, "null") }
        raw(key, String(format: "%.3f", value))
    }

    /// A JSON string literal.
    public static func string(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
