import Foundation
import MoultModel
public import MoultStore

/// The store's own objects (``StoreOwnObjects``) across an in-place run: what each step does with each,
/// decided once from the store as it is, and the same answer for `plan` and `migrate`.
extension InPlaceMigration {
    /// One object of the store's own and what the chain does with it.
    public struct OwnObjectOutcome: Sendable, Hashable, CustomStringConvertible {
        public var object: StoreOwnObjects.Object
        /// The first step (1-based) that drops it or cannot keep it; nil when every step keeps it.
        public var step: Int?
        public var fate: StoreOwnObjects.Fate

        public var description: String {
            "\(object): " + (step.map { "step \($0): " } ?? "") + fate.description
        }
    }

    /// What the chain does with each object the store holds beyond its version's layout (Core Data's
    /// persistent history, R-tree and past fetch indexes, an application's triggers, views, tables and
    /// indexes), step by step as ``methods`` say each step runs, the first as it will run on this store:
    /// a store whose tables are not the layout its version makes (numbered otherwise, say) is streamed.
    /// Reads the store; writes nothing.
    public func ownObjectOutcomes() throws -> [OwnObjectOutcome] {
        guard !chain.steps.isEmpty else { return [] }
        let database = try Database(url: chain.store, mode: .readOnly)
        defer { database.close() }
        let layout = try StoreLayout(model: chain.sourceVersion.model)
        let own = try StoreOwnObjects(reading: database, layout: layout)
        var methods = methods
        if methods[0].isSQL, !(try database.isLaidOut(as: layout)) {
            methods[0] = .streaming(["the store's tables are not the layout version \(chain.sourceVersion.name) makes"])
        }
        return try Self.outcomes(of: own, steps: chain.steps, methods: methods)
    }

    /// Follows `own` through the steps: an object an SQL step keeps meets the next step.
    static func outcomes(of own: StoreOwnObjects, steps: [ProgressiveMigration.Step], methods: [Method]) throws -> [OwnObjectOutcome] {
        var remaining = own.objects
        var outcomes: [StoreOwnObjects.Object: OwnObjectOutcome] = [:]
        for (offset, (step, method)) in zip(steps, methods).enumerated() where !remaining.isEmpty {
            let objects = StoreOwnObjects(objects: remaining)
            let fates: [(StoreOwnObjects.Object, StoreOwnObjects.Fate)]
            if method.isSQL {
                let (old, new) = (try StoreLayout(model: step.from.model), try StoreLayout(model: step.to.model))
                let rebuilt = if case .sql(let script) = method { script.rebuiltTables } else { Set<String>() }
                fates = objects.fates(byStepFrom: old, to: new, renumbered: entityNumbers(step, old: old, new: new), rebuilt: rebuilt)
            } else {
                fates = objects.fatesByCopy()
            }
            remaining = []
            for (object, fate) in fates {
                switch fate {
                case .kept, .madeAgain:
                    remaining.append(object)
                    if outcomes[object] == nil || outcomes[object]?.fate == .kept {
                        outcomes[object] = OwnObjectOutcome(object: object, step: nil, fate: fate)
                    }
                case .dropped, .refused:
                    outcomes[object] = OwnObjectOutcome(object: object, step: offset + 1, fate: fate)
                }
            }
        }
        return own.objects.compactMap { outcomes[$0] }
    }

    /// Old entity number → new one for the entities a step keeps.
    static func entityNumbers(_ step: ProgressiveMigration.Step, old: StoreLayout, new: StoreLayout) -> [Int32: Int32] {
        guard case .success(let correspondence) = step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model) else {
            return [:]
        }
        return StoreOwnObjects.entityNumbers(old: old, new: new, correspondence: correspondence)
    }

    /// Refuses a run that would lose an object of the store's own (a table, view, trigger or column a
    /// step cannot keep); an index a step drops is said in `warn`, with why.
    ///
    /// - Throws: ``MigrationError`` `.incompatibleStore` (66) naming each object and why; nothing is written.
    func refuseLosingTheStoresOwnObjects(warn: (String) -> Void = { _ in }) throws {
        let outcomes = try ownObjectOutcomes()
        for outcome in outcomes { if case .dropped = outcome.fate { warn(outcome.description) } }
        let refused = outcomes.filter { if case .refused = $0.fate { return true } else { return false } }
        guard !refused.isEmpty else { return }
        throw Self.cannotKeep(
            "the store \(chain.store.path) holds what its model does not describe, which this migration cannot keep: "
                + refused.map(\.description).joined(separator: "; "))
    }

    /// The refusal of a run that would lose what `what` says (66), with what the user can do.
    static func cannotKeep(_ what: String) -> MigrationError {
        MigrationError(
            .incompatibleStore, what + ". Nothing was changed. Migrate with --output (a new store; the original stays as it is), or move them out first")
    }

    /// Before a step streams from `input` (a new store made from the model): refuses when `input` holds
    /// anything of its own a copy cannot keep (``StoreOwnObjects/fatesByCopy()``). A safety net: the
    /// refusal before the run (``ownObjectOutcomes()``) judges the same store the same way.
    static func refuseStreamingOwnObjects(from input: URL, step: ProgressiveMigration.Step, offset: Int) throws {
        let database = try Database(url: input, mode: .readOnly)
        defer { database.close() }
        let own = try StoreOwnObjects(reading: database, layout: StoreLayout(model: step.from.model))
        let lost = own.fatesByCopy().compactMap { object, fate in if case .refused = fate { object } else { nil } }
        guard !lost.isEmpty else { return }
        throw cannotKeep(
            "step \(offset + 1) (\(step.from.name) → \(step.to.name)) makes a new store from the model, which would drop "
                + lost.map(\.description).joined(separator: ", ") + " of the store's own")
    }

    /// Drops the objects of the store's own a step by SQL must not have in its way (triggers, views,
    /// indexes on an entity's table), before its change; returns those to make again after it.
    ///
    /// - Throws: ``SQLSteps/SchemaNotLaidOut`` when the step cannot keep one of them.
    static func setAsideOwnObjects(
        _ database: Database, step: ProgressiveMigration.Step, old: StoreLayout, new: StoreLayout
    ) throws -> (again: [StoreOwnObjects.Object], history: InPlaceStatement?) {
        let own = try StoreOwnObjects(reading: database, layout: old)
        let renumbered = entityNumbers(step, old: old, new: new)
        var again: [StoreOwnObjects.Object] = []
        for (object, fate) in own.fates(byStepFrom: old, to: new, renumbered: renumbered) {
            switch fate {
            case .kept: continue
            case .refused: throw SQLSteps.SchemaNotLaidOut()
            case .madeAgain: again.append(object)
            case .dropped: break
            }
            try database.dropIfExists(object)
        }
        let hasHistory = own.objects.contains { $0.kind == .table && $0.name.uppercased() == "ACHANGE" }
        let keepsHistory = try hasHistory && database.historyNamesEntities()
        return (again, keepsHistory ? StoreOwnObjects.historyRenumbering(renumbered) : nil)
    }
}
