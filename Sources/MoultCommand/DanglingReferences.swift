import Foundation
import MoultMigration
import MoultModel
import MoultStore

/// The to-one references of a store that name objects it does not hold (issue 40, item 6), counted
/// before a run and again in what it made, so that what the run did with them is said.
///
/// Core Data's lightweight migration keeps such a value (the store's tables are changed by SQL, no row
/// is read). Moult keeps it on every SQLite path: a step by SQL in place leaves it, and a step that
/// streams (`--output`, a streamed step in place, a chain's steps) keeps it wherever the objects it
/// would name keep their primary keys (`KeptKeys`). Where a step gives them new keys (a hierarchy fed
/// from two source hierarchies, a uniquing mapping or a policy), the key would name another object or
/// none: the streamed step sets it to nil, and a required to-one then fails validation. The warnings
/// count them by relationship, before the run and after it, with what became of them: `--output`, in
/// place and a staged run (`--stages`) alike.
struct DanglingReferences {
    /// (entity, relationship, how many objects name a missing one), in the layout's order.
    let counts: [(entity: String, relationship: String, count: Int)]
    /// Whether the store could be read as an SQLite store of the model.
    let readable: Bool

    /// Counts them in `store` (an SQLite store made by `model`); none when it cannot be read, or is no
    /// SQLite store (an XML store cannot hold one: its reader refuses it).
    init(store: URL, model: ObjectModel) {
        guard let opened = try? SQLiteStore(url: store, model: model, mode: .readOnly) else {
            counts = []
            readable = false
            return
        }
        defer { opened.database.close() }
        var counts: [(entity: String, relationship: String, count: Int)] = []
        try? opened.database.forEachDanglingToOne(in: opened.layout) { entity, toOne, _, _, _ in
            if let last = counts.last, last.entity == entity.name, last.relationship == toOne.name {
                counts[counts.count - 1].count += 1
            } else {
                counts.append((entity.name, toOne.name, 1))
            }
        }
        self.counts = counts
        readable = true
    }

    var total: Int { counts.reduce(0) { $0 + $1.count } }

    private var listed: String { counts.map { "\($0.entity).\($0.relationship): \($0.count)" }.joined(separator: ", ") }

    private static func references(_ count: Int) -> String { "\(count) to-one reference\(count == 1 ? "" : "s")" }

    /// The warning before a run, nil when there is none: how many, by relationship.
    var warning: String? {
        guard total > 0 else { return nil }
        return "moult: warning: the store holds \(Self.references(total)) naming an object that does not exist (\(listed)); "
            + "they are kept where the objects they would name keep their keys, as Core Data's lightweight migration keeps them"
    }

    /// The warning after a run, nil when the store held none: how many of them `migrated` (the finished
    /// store, counted with the target model) kept, by relationship, and how many were set to nil.
    func outcome(in migrated: DanglingReferences) -> String? {
        guard total > 0, migrated.readable else { return nil }
        let kept = min(migrated.total, total)
        let dropped = total - kept
        var line = "moult: warning: of the \(Self.references(total)) naming an object that does not exist, "
        line += kept == 0 ? "none was kept" : "\(kept) \(kept == 1 ? "was" : "were") kept (\(migrated.listed))"
        if dropped > 0 {
            line += "; \(dropped) \(dropped == 1 ? "was" : "were") set to nil: a streamed step gave the objects they would name new primary keys"
        }
        return line
    }
}
