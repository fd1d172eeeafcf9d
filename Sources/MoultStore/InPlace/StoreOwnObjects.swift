import Foundation
import MoultModel

/// What a store holds beyond the schema its model's layout makes: Core Data's persistent history
/// (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING` and their indexes), an R-tree index or a fetch index
/// an earlier version of the model made, an application's tables, views, triggers and indexes (Photos'
/// `ZT_…` triggers and `RADAR_…` indexes), columns of its own in an entity's table, and the constraints an
/// entity table's `CREATE TABLE` declares (an older Core Data's uniqueness constraints: ``TableDeclaration``).
///
/// An in-place migration keeps them, as Core Data does: a step by SQL leaves a table of the store's own
/// as it is, and drops a trigger, view or index on an entity's table around its change and makes it
/// again after, when every table and column it names is still there. ``fates(byStepFrom:to:renumbered:rebuilt:)``
/// says, per object, what a step does with it and why; the same answer drives `plan` and `migrate`.
///
/// ```swift
/// let own = try StoreOwnObjects(reading: database, layout: oldLayout)
/// for (object, fate) in own.fates(byStepFrom: oldLayout, to: newLayout) { print(object, fate) }
/// ```
public struct StoreOwnObjects: Sendable, Hashable {
    /// One object of the store's own.
    public struct Object: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable {
            case table, view, index, trigger, column, constraint
        }
        public var kind: Kind
        /// The object's name (`TABLE.COLUMN` for a column, `TABLE: CLAUSE` for a constraint).
        public var name: String
        /// The table it belongs to (its own name for a table or view).
        public var table: String
        /// The statement that makes it, as the store holds it (nil for a column or a constraint).
        public var sql: String?

        public var description: String { "\(kind.rawValue) \(name)" }
    }

    /// What a step does with an object.
    public enum Fate: Sendable, Hashable, CustomStringConvertible {
        /// Left as it is.
        case kept
        /// Dropped before the step's change and made again after it, unchanged.
        case madeAgain
        /// Dropped by the step, for this reason (an index whose column the step removes).
        case dropped(String)
        /// The step cannot keep it, for this reason: an in-place run refuses the store.
        case refused(String)

        public var description: String {
            switch self {
            case .kept: "kept"
            case .madeAgain: "kept (made again after the change)"
            case .dropped(let why): "dropped: \(why)"
            case .refused(let why): "cannot be kept: \(why)"
            }
        }
    }

    /// The objects, in the order SQLite lists them (columns, then constraints, last).
    public var objects: [Object]

    public init(objects: [Object]) { self.objects = objects }

    /// Reads the objects of `database` that `layout` does not make.
    ///
    /// A virtual table's shadow tables (an R-tree's `_node`, `_parent`, `_rowid`) belong to it and are
    /// not listed; nor are SQLite's own objects and automatic indexes.
    public init(reading database: Database, layout: StoreLayout) throws {
        let rows = try database.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND sql IS NOT NULL") {
            (type: $0.string(at: 0) ?? "", name: $0.string(at: 1) ?? "", table: $0.string(at: 2) ?? "", sql: $0.string(at: 3) ?? "")
        }
        let made = layout.madeNames
        let virtualTables = rows.filter { $0.type == "table" && $0.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        let shadowSuffixes = ["_node", "_parent", "_rowid", "_content", "_docsize", "_segments", "_segdir", "_stat", "_config", "_data", "_idx"]
        var objects: [Object] = []
        for row in rows where !made.contains(row.name.uppercased()) {
            let kind: Object.Kind
            switch row.type {
            case "table":
                let isShadow = virtualTables.contains { owner in
                    owner != row.name && shadowSuffixes.contains { row.name.caseInsensitiveCompare(owner + $0) == .orderedSame }
                }
                if isShadow { continue }
                kind = .table
            case "view": kind = .view
            case "index": kind = .index
            case "trigger": kind = .trigger
            default: continue
            }
            objects.append(Object(kind: kind, name: row.name, table: row.table, sql: row.sql))
        }
        for table in layout.allTableColumns.keys.sorted() {
            let laidOut = Set(layout.allTableColumns[table, default: []].map { $0.uppercased() })
            for column in try database.columns(of: table) where !laidOut.contains(column.uppercased()) {
                objects.append(Object(kind: .column, name: "\(table).\(column)", table: table, sql: nil))
            }
        }
        // Constraints inside an entity table's declaration (a join table's `PRIMARY KEY (…)` is its layout).
        let entityTables = Set(layout.tables.map { $0.name.uppercased() })
        for row in rows where row.type == "table" && entityTables.contains(row.name.uppercased()) {
            for clause in TableDeclaration(sql: row.sql).constraints {
                objects.append(Object(kind: .constraint, name: "\(row.name): \(clause)", table: row.name, sql: nil))
            }
        }
        self.objects = objects
    }

    // MARK: - What a step does with them

    /// What a step by SQL from `old` to `new` does with each object; `rebuilt` names the old tables the
    /// step does not keep where they stand (``InPlaceScript/rebuiltTables``).
    ///
    /// - A table of the store's own is kept, unless the new layout makes a table of its name.
    /// - A trigger or view is made again when every layout table its text names keeps every column it
    ///   had; otherwise it cannot be kept (an application's behaviour would be lost silently).
    /// - An index on an entity's table is made again under the same condition; otherwise it is dropped,
    ///   with the reason (an index holds no data). An index on a table of the store's own is kept.
    /// - A column of the store's own in an entity's table cannot be kept: the step may rebuild the table.
    /// - A constraint in an entity table's declaration is kept with its table, or dropped when the step
    ///   rebuilds the table as the new version lays it out (a uniqueness constraint then is the new
    ///   version's index), as Core Data's own migration rebuilds it.
    /// - An index of the store's own whose name the new version gives to one of its indexes (a stale
    ///   name an earlier migration left) is dropped: the step makes the new version's index of that name.
    /// - Persistent history (`ACHANGE.ZENTITY` holds entity numbers) cannot be kept when the step gives a
    ///   removed entity's number to another entity (`renumbered` maps old numbers to new ones).
    public func fates(
        byStepFrom old: StoreLayout, to new: StoreLayout, renumbered: [Int32: Int32] = [:], rebuilt: Set<String> = []
    ) -> [(Object, Fate)] {
        let newTables = new.madeNames
        return objects.map { object in
            switch object.kind {
            case .table:
                if newTables.contains(object.name.uppercased()) {
                    return (object, .refused("the new version makes a table of that name"))
                }
                if object.name.uppercased() == "ACHANGE", let clash = Self.reusedNumber(old: old, new: new, renumbered: renumbered) {
                    return (object, .refused("its changes name entity number \(clash), which the new version gives to another entity"))
                }
                return (object, .kept)
            case .view, .trigger:
                if let lost = Self.lostColumns(object.sql ?? "", old: old, new: new) {
                    return (object, .refused("it names \(lost), which the step removes or changes"))
                }
                return (object, .madeAgain)
            case .index:
                if newTables.contains(object.name.uppercased()) {
                    return (object, .dropped("the new version makes an index of that name, which takes its place"))
                }
                guard old.allTableColumns[object.table] != nil else { return (object, .kept) }
                if let lost = Self.lostColumns(object.sql ?? "", old: old, new: new) {
                    return (object, .dropped("it indexes \(lost), which the step removes or changes"))
                }
                return (object, .madeAgain)
            case .column:
                return (object, .refused("a column the model does not describe, in a table the step may rebuild"))
            case .constraint:
                guard rebuilt.contains(object.table) else { return (object, .kept) }
                return (object, .dropped(Self.rebuiltConstraint))
            }
        }
    }

    /// Why a constraint is dropped when its table is made anew.
    private static let rebuiltConstraint =
        "the step makes the table as the new version lays it out, an older Core Data's declaration replaced (a uniqueness constraint of the model is the new version's index)"


    /// What a streamed step (a new store made from the model) does with each object: an index is
    /// dropped (the new store has the model's), and so is a constraint in an entity table's declaration
    /// (the new store's tables are the model's); anything else cannot be kept.
    public func fatesByCopy() -> [(Object, Fate)] {
        objects.map { object in
            switch object.kind {
            case .index: (object, .dropped("the step makes a new store, which has the model's indexes"))
            case .constraint: (object, .dropped(Self.rebuiltConstraint))
            default: (object, .refused("the step makes a new store from the model, which does not describe it"))
            }
        }
    }

    /// The first of `old`'s layout tables and columns that `sql` names (as a word, in any case) and the
    /// new layout lacks ("ZTABLE" or "ZTABLE.ZCOLUMN"); nil when every one is still there.
    static func lostColumns(_ sql: String, old: StoreLayout, new: StoreLayout) -> String? {
        let words = Set(sql.uppercased().split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
        let newColumns = new.allTableColumns.reduce(into: [String: Set<String>]()) { $0[$1.key.uppercased()] = Set($1.value.map { $0.uppercased() }) }
        for (table, columns) in old.allTableColumns.sorted(by: { $0.key < $1.key }) where words.contains(table.uppercased()) {
            guard let kept = newColumns[table.uppercased()] else { return table }
            if let column = columns.sorted().first(where: { !kept.contains($0.uppercased()) && words.contains($0.uppercased()) }) {
                return "\(table).\(column)"
            }
            // A column the trigger does not name may still be one it reads through `*` or `NEW.*`: the
            // whole table must keep its columns for those.
            if !Set(columns.map { $0.uppercased() }).isSubset(of: kept), sql.contains("*") { return table }
        }
        return nil
    }

    /// A number an entity that the step removes had, which the new layout gives to another entity.
    static func reusedNumber(old: StoreLayout, new: StoreLayout, renumbered: [Int32: Int32]) -> Int32? {
        let newNumbers = Set(new.entities.map(\.number))
        return old.entities.map(\.number).first { renumbered[$0] == nil && newNumbers.contains($0) }
    }

    /// `UPDATE ACHANGE SET ZENTITY = …` for the entities the step renumbers, or nil when none is.
    public static func historyRenumbering(_ renumbered: [Int32: Int32]) -> InPlaceStatement? {
        let moved = renumbered.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
        guard !moved.isEmpty else { return nil }
        let cases = moved.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ")
        let list = moved.map { String($0.key) }.joined(separator: ", ")
        return InPlaceStatement("UPDATE \"ACHANGE\" SET \"ZENTITY\" = CASE \"ZENTITY\" \(cases) END WHERE \"ZENTITY\" IN (\(list))")
    }

    /// Old entity number → new entity number, for each entity the step keeps (by the correspondence).
    public static func entityNumbers(old: StoreLayout, new: StoreLayout, correspondence: LayoutCorrespondence) -> [Int32: Int32] {
        var map: [Int32: Int32] = [:]
        for entity in new.entities {
            guard let source = correspondence.entities[entity.name], let oldEntity = old.entity(named: source) else { continue }
            map[oldEntity.number] = entity.number
        }
        return map
    }
}

extension StoreLayout {
    /// Every table the layout makes (entity tables, join tables), with its columns.
    var allTableColumns: [String: [String]] {
        var columns: [String: [String]] = [:]
        for table in tables { columns[table.name] = table.columns.map(\.name) }
        for table in joinTables { columns[table.name] = table.columns + table.orderColumns }
        return columns
    }

    /// The upper-cased names of every table, index and trigger the layout makes, Core Data's own
    /// tables and the R-tree indexes' shadow tables included.
    var madeNames: Set<String> {
        var names = Set(["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        for table in tables {
            names.insert(table.name.uppercased())
            for index in table.indexes { names.insert(index.name.uppercased()) }
        }
        for table in joinTables {
            names.insert(table.name.uppercased())
            for index in table.indexes { names.insert(index.name.uppercased()) }
        }
        for rTree in rTrees {
            for suffix in ["", "_node", "_parent", "_rowid"] { names.insert((rTree.name + suffix).uppercased()) }
        }
        for name in triggerNames { names.insert(name.uppercased()) }
        return names
    }
}
