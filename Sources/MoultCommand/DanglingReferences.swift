import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// The to-one references of a store that name objects it does not hold (issue 40, item 6), counted
/// before a run so that what the run does with them is said.
///
/// Core Data's lightweight migration keeps such a value (the store's tables are changed by SQL, no row
/// is read). Moult keeps it in place by SQL; a step that streams makes new objects, with new keys, and
/// sets such a reference to nil (a required one then fails validation). The warning counts them, by
/// relationship, and says which.
struct DanglingReferences {
    /// (entity, relationship, how many objects name a missing one), in the layout's order.
    let counts: [(entity: String, relationship: String, count: Int)]

    /// Counts them in `store` (an SQLite store made by `model`); none when it cannot be read, or is no
    /// SQLite store (an XML store cannot hold one: its reader refuses it).
    init(store: URL, model: ObjectModel) {
        guard let opened = try? SQLiteStore(url: store, model: model) else {
            counts = []
            return
        }
        defer { opened.database.close() }
        let layout = opened.layout
        var counts: [(entity: String, relationship: String, count: Int)] = []
        for entity in layout.entities {
            for toOne in entity.toOneRelationships {
                guard let target = layout.entity(named: toOne.destination) else { continue }
                var count = 0
                try? opened.database.forEachFinding(.danglingKeys(of: toOne, in: entity, target: target)) { _, _ in count += 1 }
                if count > 0 { counts.append((entity.name, toOne.name, count)) }
            }
        }
        self.counts = counts
    }

    var total: Int { counts.reduce(0) { $0 + $1.count } }

    /// The warning line, nil when there is none: what the run does with them, `kept` when its first
    /// step is by SQL.
    func warning(kept: Bool) -> String? {
        guard total > 0 else { return nil }
        let listed = counts.map { "\($0.entity).\($0.relationship): \($0.count)" }.joined(separator: ", ")
        let fate = kept
            ? "the step by SQL keeps them, as Core Data's lightweight migration does"
            : "the objects are copied into a new store, which sets them to nil (Core Data's lightweight migration keeps them)"
        return "moult: warning: the store holds \(total) to-one reference\(total == 1 ? "" : "s") naming an object that does not exist (\(listed)); \(fate)"
    }
}
