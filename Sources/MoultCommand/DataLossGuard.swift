import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTesting

/// What a migration would drop, said before it runs and, with `--strict`, refused.
///
/// A step drops what no mapping of it reads: an entity's objects, or a property's non-nil values; and
/// the objects of an entity every mapping of which has a filter that rejects them (filters evaluated
/// object by object, ``/MoultTesting/ObjectCoverage``). The first step's losses are counted in the
/// store; a later step reads a store that exists only once the steps before it have run, so its losses
/// are uncounted here (a run counts what it does not read when it reaches the step). `--strict` treats
/// an uncounted loss as a loss: it refuses what it cannot rule out.
struct DataLossGuard {
    /// What each step of the chain does not carry (index: step, from 0).
    let losses: [[DataLoss]]
    /// The objects each step's filters reject and no other mapping carries (index: step, from 0).
    let filtered: [[FilterDrop]]
    let steps: [ProgressiveMigration.Step]

    /// The objects of one source entity a step's filters drop; `count` nil when not counted.
    struct FilterDrop {
        var entity: String
        var mappings: [String]
        var count: Int?
        var total: Int?
    }

    init(_ migration: ProgressiveMigration) {
        steps = migration.steps
        losses = migration.steps.indices.map { index in
            migration.dataLosses(of: migration.steps[index], in: index == 0 ? migration.store : nil)
        }
        filtered = migration.steps.indices.map { index in
            let step = migration.steps[index]
            let entities = ObjectCoverage.filteredEntities(of: step.mappings)
            guard !entities.isEmpty else { return [] }
            let uncounted = entities.map { FilterDrop(entity: $0.entity, mappings: $0.mappings) }
            guard index == 0, let store = try? SQLiteStore(url: migration.store, model: step.from.model) else { return uncounted }
            defer { store.database.close() }
            guard let coverage = try? ObjectCoverage(mappings: step.mappings, source: step.from.model, store: store) else { return uncounted }
            return coverage.drops.map { FilterDrop(entity: $0.entity, mappings: $0.filters, count: $0.count, total: $0.total) }
        }
    }

    /// The losses that drop or may drop data: a count above zero, or not counted.
    var dropping: [(step: Int, loss: DataLoss)] {
        losses.enumerated().flatMap { index, found in
            found.filter { ($0.count ?? 1) > 0 }.map { (index, $0) }
        }
    }

    /// The filter drops that drop or may drop objects.
    var droppingByFilters: [(step: Int, drop: FilterDrop)] {
        filtered.enumerated().flatMap { index, found in
            found.filter { ($0.count ?? 1) > 0 }.map { (index, $0) }
        }
    }

    /// The warning lines of the objects step `index`'s filters drop.
    func filterWarnings(step index: Int) -> [String] {
        droppingByFilters.filter { $0.step == index }.map { "moult: warning: " + Self.line(index, steps[index], $0.drop) }
    }

    /// `step 1 (v1 -> v2) drops 1 of 2 Blob objects: the filter of BlobToBlob rejects them, and no other mapping reads them`.
    static func line(_ index: Int, _ step: ProgressiveMigration.Step, _ drop: FilterDrop) -> String {
        let prefix = "step \(index + 1) (\(step.from.name) -> \(step.to.name))"
        let filters = drop.mappings.count == 1 ? "the filter of \(drop.mappings[0]) rejects them" : "the filters of \(drop.mappings.joined(separator: ", ")) reject them"
        guard let count = drop.count else {
            return "\(prefix) may drop \(drop.entity) objects its input holds (not counted before step 1 runs): every mapping of \(drop.entity) has a filter (\(drop.mappings.joined(separator: ", ")))"
        }
        return "\(prefix) drops \(count) of \(drop.total ?? count) \(drop.entity) object\(drop.total == 1 ? "" : "s"): \(filters), and no other mapping reads them"
    }

    /// `--strict`: refuses (66) a migration that drops or may drop data, naming each loss, before
    /// anything is written.
    func refuseUnderStrict() throws {
        let dropping = self.dropping
        let byFilters = droppingByFilters
        guard !dropping.isEmpty || !byFilters.isEmpty else { return }
        let lines = dropping.map { "  " + Self.line($0.step, steps[$0.step], $0.loss) } + byFilters.map { "  " + Self.line($0.step, steps[$0.step], $0.drop) }
        throw CommandFailure(
            .incompatible,
            "--strict: refused, this migration would drop data (nothing was written):\n" + lines.joined(separator: "\n")
                + "\n  give a mapping model that carries it (--mapping), or run without --strict to accept the loss")
    }

    /// The `moult: warning:` line for each loss that drops or may drop data.
    var warnings: [String] {
        dropping.map { "moult: warning: " + Self.line($0.step, steps[$0.step], $0.loss) } + steps.indices.flatMap(filterWarnings(step:))
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
