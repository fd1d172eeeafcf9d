import MoultMapping
import MoultMigration
import MoultModel

/// What a migration would drop, said before it runs and, with `--strict`, refused.
///
/// A step drops what no mapping of it reads: an entity's objects, or a property's non-nil values. The
/// first step's losses are counted in the store; a later step reads a store that exists only once the
/// steps before it have run, so its losses are uncounted here (a run counts them when it reaches the
/// step). `--strict` treats an uncounted loss as a loss: it refuses what it cannot rule out.
struct DataLossGuard {
    /// What each step of the chain does not carry (index: step, from 0).
    let losses: [[DataLoss]]
    let steps: [ProgressiveMigration.Step]

    init(_ migration: ProgressiveMigration) {
        steps = migration.steps
        losses = migration.steps.indices.map { index in
            migration.dataLosses(of: migration.steps[index], in: index == 0 ? migration.store : nil)
        }
    }

    /// The losses that drop or may drop data: a count above zero, or not counted.
    var dropping: [(step: Int, loss: DataLoss)] {
        losses.enumerated().flatMap { index, found in
            found.filter { ($0.count ?? 1) > 0 }.map { (index, $0) }
        }
    }

    /// `--strict`: refuses (66) a migration that drops or may drop data, naming each loss, before
    /// anything is written.
    func refuseUnderStrict() throws {
        let dropping = self.dropping
        guard !dropping.isEmpty else { return }
        let lines = dropping.map { "  " + Self.line($0.step, steps[$0.step], $0.loss) }
        throw CommandFailure(
            .incompatible,
            "--strict: refused, this migration would drop data (nothing was written):\n" + lines.joined(separator: "\n")
                + "\n  give a mapping model that carries it (--mapping), or run without --strict to accept the loss")
    }

    /// The `moult: warning:` line for each loss that drops or may drop data.
    var warnings: [String] {
        dropping.map { "moult: warning: " + Self.line($0.step, steps[$0.step], $0.loss) }
    }

    /// The warning event of a step that does not carry `losses` (none when it carries everything).
    func event(step index: Int, _ losses: [DataLoss]) -> MigrationEvent? {
        guard !losses.isEmpty else { return nil }
        let step = steps[index]
        let what = losses.map(\.what.name).joined(separator: ", ")
        return .warning(MigrationEvent.Warning(
            step: index + 1, message: "step \(index + 1) (\(step.from.name) -> \(step.to.name)) does not carry: \(what)", notCarried: losses))
    }

    /// `step 1 (v2 -> v3) drops 1630 non-nil values of Person.state: no mapping reads it`.
    static func line(_ index: Int, _ step: ProgressiveMigration.Step, _ loss: DataLoss) -> String {
        let prefix = "step \(index + 1) (\(step.from.name) -> \(step.to.name))"
        let what = loss.what
        switch (what.kind, loss.count) {
        case (.entity, let n?):
            return "\(prefix) drops all \(n) \(what.entity) object\(n == 1 ? "" : "s"): no entity mapping reads \(what.entity)"
        case (.entity, nil):
            return "\(prefix) drops every \(what.entity) object its input holds (not counted before step 1 runs): no entity mapping reads \(what.entity)"
        case (_, let n?):
            return "\(prefix) drops \(n) non-nil value\(n == 1 ? "" : "s") of \(what.name) (\(what.kind.rawValue)): no mapping reads it"
        case (_, nil):
            return "\(prefix) drops the values of \(what.name) (\(what.kind.rawValue)) its input holds (not counted before step 1 runs): no mapping reads it"
        }
    }
}
