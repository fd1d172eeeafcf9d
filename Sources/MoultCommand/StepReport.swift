import MoultMapping
import MoultMigration
import MoultModel

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

    /// The lines under a step: which entity mappings a partial mapping gave and which were inferred,
    /// why it is one of several inferred steps, inference warnings, and what it does not carry.
    static func details(_ step: ProgressiveMigration.Step, losses: [DataLoss]) -> [String] {
        var lines = origins(step).map { "  " + $0 }
        if let note = step.chainedInference { lines.append("  note: \(note)") }
        for warning in step.warnings { lines.append("  warning: \(warning.message)") }
        if !losses.isEmpty {
            lines.append("  not carried: " + losses.map(\.description).joined(separator: ", "))
        }
        return lines
    }

    /// For each partial mapping of a step, completed: `given: AdultToCompany` and
    /// `inferred: AddressToAddress, AdultToAdult, …` (nothing for a mapping given whole or inferred whole).
    static func origins(_ step: ProgressiveMigration.Step) -> [String] {
        step.mappings.filter { !$0.inferredEntityMappingNames.isEmpty }.flatMap { mapping in
            let ordered = mapping.orderedEntityMappings
            let given = ordered.filter { !mapping.isInferred($0) }.map(\.name)
            return [
                "given: " + (given.isEmpty ? "none" : given.joined(separator: ", ")),
                "inferred: " + ordered.filter(mapping.isInferred).map(\.name).joined(separator: ", "),
            ]
        }
    }

    /// The warning for each loss a step counted: the objects of an entity, or the non-nil values of a
    /// property, that it drops.
    static func warnings(_ index: Int, _ step: ProgressiveMigration.Step, losses: [DataLoss]) -> [String] {
        losses.filter { ($0.count ?? 0) > 0 }.map { "moult: warning: " + DataLossGuard.line(index, step, $0) }
    }
}

extension StepReport {
    /// A step as `--json` gives it, with what it does not carry.
    struct Step: Encodable {
        /// What the step does not carry (`count` is `null` when not counted).
        struct NotCarried: Encodable {
            var kind: String
            var entity: String
            @ExplicitNull var property: String?
            @ExplicitNull var count: Int?
        }

        /// One entity mapping of the step, and whether it was given or inferred (a whole inferred step,
        /// or the rest of a partial mapping).
        struct EntityMappingOrigin: Encodable {
            var name: String
            @ExplicitNull var source: String?
            @ExplicitNull var destination: String?
            var inferred: Bool

            /// Every entity mapping of every pass of `step`, in the order each pass runs them.
            static func all(of step: ProgressiveMigration.Step) -> [EntityMappingOrigin] {
                step.mappings.flatMap { mapping in
                    mapping.orderedEntityMappings.map {
                        EntityMappingOrigin(
                            name: $0.name, source: $0.sourceEntityName, destination: $0.destinationEntityName,
                            inferred: step.inferred || mapping.isInferred($0))
                    }
                }
            }
        }

        var from: String
        var to: String
        var inferred: Bool
        var mappings: [String]
        /// Every entity mapping of every pass, in the order each pass runs them.
        var entityMappings: [EntityMappingOrigin]
        var notCarried: [NotCarried]
        /// Left out unless the step is one of several inferred steps.
        var chainedInference: String?
        /// Left out when there is none.
        var warnings: [String]?

        init(_ step: ProgressiveMigration.Step, losses: [DataLoss]) {
            from = step.from.name
            to = step.to.name
            inferred = step.inferred
            mappings = step.mappingLabels
            entityMappings = EntityMappingOrigin.all(of: step)
            notCarried = losses.map { NotCarried(kind: $0.what.kind.rawValue, entity: $0.what.entity, property: $0.what.property, count: $0.count) }
            chainedInference = step.chainedInference
            warnings = step.warnings.isEmpty ? nil : step.warnings.map(\.message)
        }
    }
}
