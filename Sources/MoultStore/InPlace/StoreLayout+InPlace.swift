extension StoreLayout {
    /// The SQL that turns a store of this layout (the old version's) into a store of `destination`'s
    /// layout (the new version's), objects kept with their primary keys, under a lightweight mapping.
    ///
    /// Each destination table is either altered where it stands (`ALTER TABLE … ADD/RENAME/DROP
    /// COLUMN`, a fill by `UPDATE`, `ALTER TABLE … RENAME TO`) when its rows keep their `Z_ENT` and
    /// every column is a source column of the same declared type, a new column or a constant; or rebuilt
    /// (a new table filled by `INSERT … SELECT` from the old one, which is then dropped) when entities
    /// are renumbered, removed, moved between tables or a column's declared type changes. Join tables
    /// are kept, rebuilt from the old join table, or filled from the to-one or to-many they replace.
    /// Then the indexes, `Z_PRIMARYKEY` (each root's `Z_MAX` kept, so primary keys are never reused)
    /// and the model cache (the new model's, or emptied when its archived form is not known: it described
    /// the old model). The metadata is the caller's.
    ///
    /// Every identifier is quoted. The statements are meant to run in one transaction.
    ///
    /// A table named in `rebuilding` (one the store declares otherwise than this layout: an older Core
    /// Data's table constraint, ``TableDeclaration``) is rebuilt whenever the step changes it, never
    /// altered where it stands.
    ///
    /// - Parameters:
    ///   - destination: the new version's layout.
    ///   - correspondence: which old entity and property each new one comes from.
    ///   - rebuilding: old tables the store declares otherwise than this layout.
    /// - Returns: ``InPlaceOutcome/unsupported(_:)`` with the reasons when a change cannot be made by
    ///   SQL alone with the same result as a copy through the mapping (the caller then streams).
    public func inPlaceChanges(
        to destination: StoreLayout, correspondence: LayoutCorrespondence, rebuilding: Set<String> = []
    ) -> InPlaceOutcome {
        var builder = InPlaceBuilder(old: self, new: destination, correspondence: correspondence, rebuilding: rebuilding)
        builder.build()
        guard builder.problems.isEmpty else { return .unsupported(builder.problems) }
        // Derived attributes' triggers (`Z_DA_`), as Core Data rebuilds a schema: dropped before the
        // tables change (a trigger names the tables and columns it updates), then the new version's
        // values computed for every row, then the new version's triggers made.
        // R-trees (`Z_<Entity>_<index>` and location attributes' `Z_RT_` virtual tables kept by triggers
        // on the entity's table): the old ones and their triggers dropped first (dropping the virtual
        // table drops its shadow tables), the new ones made after the tables, filled from every row of
        // their table (the rows the copy's inserts pass through the insert trigger, each with its final
        // values), then their triggers.
        var changes = triggerAndRTreeDrops() + builder.changes
        if !destination.derivedTriggers.isEmpty {
            // Every derived attribute computed for every row, as the copy's triggers compute them: one
            // added, or whose derivation or inputs the step changed, is never left nil or stale.
            let derived = destination.derivedValueUpdates()
            guard derived.problems.isEmpty else { return .unsupported(derived.problems) }
            changes += destination.derivedAttributeChanges(derived.updates)
        }
        changes += destination.rTreeChanges()
        return .script(InPlaceScript(changes: changes, rebuiltTables: builder.rebuiltTables, correspondence: correspondence))
    }

    /// The names of the triggers this layout makes (derived attributes' and R-tree indexes').
    public var triggerNames: [String] {
        (derivedTriggers + rTrees.flatMap(\.triggerSQL)).compactMap { sql in
            // `CREATE TRIGGER name …` or `CREATE TRIGGER "na""me" …`, as the layout writes it.
            let prefix = "CREATE TRIGGER "
            guard sql.hasPrefix(prefix) else { return nil }
            let rest = sql.dropFirst(prefix.count)
            guard rest.first == "\"" else { return rest.prefix { $0 != " " }.isEmpty ? nil : String(rest.prefix { $0 != " " }) }
            var name = ""
            var index = rest.index(after: rest.startIndex)
            while index < rest.endIndex {
                let character = rest[index]
                index = rest.index(after: index)
                if character == "\"" {
                    guard index < rest.endIndex, rest[index] == "\"" else { return name }
                    index = rest.index(after: index)
                }
                name.append(character)
            }
            return nil
        }
    }

    // MARK: - Triggers and R-trees

    /// This (old) layout's triggers dropped, then its R-tree indexes: the first changes of the script.
    private func triggerAndRTreeDrops() -> [InPlaceChange] {
        var changes: [InPlaceChange] = []
        if !derivedTriggers.isEmpty || !rTrees.isEmpty {
            changes.append(
                InPlaceChange(
                    kind: .dropTriggers, summary: "\(derivedTriggers.count) derived attributes' triggers, \(rTrees.count) R-tree indexes' triggers",
                    statements: triggerNames.map { InPlaceStatement("DROP TRIGGER IF EXISTS \(SQLName.quoted($0, always: true))") }, touchesRows: false))
        }
        if !rTrees.isEmpty {
            changes.append(
                InPlaceChange(
                    kind: .dropTable, summary: rTrees.map(\.name).joined(separator: ", ") + " (R-tree indexes)",
                    statements: rTrees.map { InPlaceStatement("DROP TABLE IF EXISTS \(SQLName.quoted($0.name, always: true))") }, touchesRows: false))
        }
        return changes
    }

    /// This (new) layout's derived attributes computed for every row, then their triggers made.
    private func derivedAttributeChanges(_ updates: [DerivedValueUpdate]) -> [InPlaceChange] {
        [
            InPlaceChange(
                kind: .computeDerived, summary: updates.map(\.target).joined(separator: ", "),
                statements: updates.map { InPlaceStatement($0.sql) }, touchesRows: true),
            InPlaceChange(
                kind: .createTriggers, summary: "\(derivedTriggers.count) derived attributes' triggers",
                statements: derivedTriggers.map { InPlaceStatement($0) }, touchesRows: false),
        ]
    }

    /// This (new) layout's R-tree indexes made, each filled from its table's rows, then their triggers.
    private func rTreeChanges() -> [InPlaceChange] {
        rTrees.flatMap { rTree in
            let bounds = rTree.columns.flatMap { [SQLName.quoted($0 + "_MIN", always: true), SQLName.quoted($0 + "_MAX", always: true)] }
            let values = rTree.columns.flatMap { [SQLName.quoted($0, always: true), SQLName.quoted($0, always: true)] }
            let fill =
                "INSERT INTO \(SQLName.quoted(rTree.name, always: true)) (\((["Z_PK"] + bounds).joined(separator: ", "))) SELECT \((["Z_PK"] + values).joined(separator: ", ")) FROM \(SQLName.quoted(rTree.table, always: true)) ORDER BY Z_PK"
            return [
                InPlaceChange(
                    kind: .createTable, summary: "\(rTree.name) (R-tree index of \(rTree.table), filled from its rows)",
                    statements: [InPlaceStatement(rTree.createSQL), InPlaceStatement(fill)], touchesRows: true),
                InPlaceChange(
                    kind: .createTriggers, summary: "\(rTree.name)'s triggers", statements: rTree.triggerSQL.map { InPlaceStatement($0) },
                    touchesRows: false),
            ]
        }
    }
}
