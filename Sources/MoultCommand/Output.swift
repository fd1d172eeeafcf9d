import Foundation
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
