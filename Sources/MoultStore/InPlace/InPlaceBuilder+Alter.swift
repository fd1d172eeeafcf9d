import Foundation
import MoultModel

// MARK: - Altering a table where it stands

extension InPlaceBuilder {
    struct Alteration {
        var changes: [InPlaceChange]
        var survivingIndexes: [String]
    }

    /// What becomes of a table's columns when it is altered where it stands.
    private struct ColumnChanges {
        var renames: [(from: String, to: String)] = []
        var adds: [ColumnLayout] = []
        var fills: [Fill] = []
        /// The old columns the table keeps, under their names or renamed.
        var used: Set<String> = []
    }

    /// One value an `UPDATE` gives one column, for the rows of some source entities.
    private struct Fill {
        var column: String
        var value: Value
        var numbers: [Int32] = []
        /// Only where the column is nil (a nil replaced by a default).
        var onlyNil = false
        /// Only where this column (its old name) is set: a companion `Z_ENT` for a to-one that had none.
        var unlessNullColumn: String?
    }

    /// The table cannot be altered where it stands: it is rebuilt.
    private struct NeedsRebuild: Error {}

    /// The ALTER TABLE form, when the rows keep their `Z_ENT` and each column is one old column of the
    /// same declared type (kept or renamed), a new column, or a fill; nil when the table must be rebuilt.
    func alterInPlace(
        _ table: TableLayout, from sourceTable: TableLayout, pairs: [EntityPair], values: [String: [Int32: ColumnValue]]
    ) -> Alteration? {
        // Every old row stays, under the same Z_ENT.
        let migrated = Set(pairs.map(\.source.number))
        guard Set(sourceTable.entityNumbers).isSubset(of: migrated), pairs.allSatisfy({ $0.source.number == $0.destination.number }) else {
            return nil
        }
        guard let columns = try? columnChanges(of: table, from: sourceTable, values: values) else { return nil }
        let drops = sourceTable.columns.map(\.name).filter { !["Z_PK", "Z_ENT", "Z_OPT"].contains($0) && !columns.used.contains($0) }
        // Keep an index when nothing about it changes.
        let changedColumns = Set(drops + columns.renames.map(\.from))
        let surviving = table.name == sourceTable.name
            ? sourceTable.indexes.filter { index in
                table.indexes.contains(index) && !index.terms.contains { term in changedColumns.contains(Self.termColumn(term)) }
            }.map(\.name)
            : []
        // A dropped column can wait unless a renamed or added column takes its name.
        let claimedNames = Set(columns.renames.map(\.to) + columns.adds.map(\.name))
        // Renames through temporary names when one's new name is another's old one.
        let remaining = Set(sourceTable.columns.map(\.name)).subtracting(drops)
        let clash = columns.renames.contains { remaining.contains($0.to) }
        let changes =
            Self.columnDrops(drops, of: sourceTable, becoming: table, claimed: claimedNames)
            + Self.columnRenames(columns.renames, of: sourceTable, throughTemporaryNames: clash)
            + Self.columnAdds(columns.adds, to: sourceTable)
            + Self.columnFills(columns.fills, of: sourceTable, renames: columns.renames)
        return Alteration(changes: changes, survivingIndexes: surviving)
    }

    /// The column an index term names (`ZMAKER COLLATE BINARY ASC` → `ZMAKER`).
    static func termColumn(_ term: String) -> String {
        let first = term.split(separator: " ").first.map(String.init) ?? term
        return first.trimmingCharacters(in: CharacterSet(charactersIn: "\"`[]"))
    }

    // MARK: - The columns' changes

    private func columnChanges(
        of table: TableLayout, from sourceTable: TableLayout, values: [String: [Int32: ColumnValue]]
    ) throws(NeedsRebuild) -> ColumnChanges {
        let sourceTypes = Dictionary(sourceTable.columns.map { ($0.name, $0.declaredType) }, uniquingKeysWith: { a, _ in a })
        var changes = ColumnChanges()
        for column in table.columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name) {
            let byEntity = values[column.name] ?? [:]
            // The one old column this column continues: every row's value is it, or nil where the old
            // row's entity had no such column (its value there is nil too).
            let sourceColumns = Set(byEntity.values.compactMap(\.sourceColumn))
            guard sourceColumns.count <= 1 else { throw NeedsRebuild() }
            let sourceColumn = sourceColumns.first
            let fill = try self.fill(of: column.name, byEntity, continuing: sourceColumn)
            if let sourceColumn {
                if fill?.unlessNullColumn != nil {
                    // A companion filled where its to-one's column is set: a new column, the to-one kept.
                    changes.adds.append(column)
                } else {
                    guard sourceTypes[sourceColumn] == column.declaredType, !changes.used.contains(sourceColumn) else { throw NeedsRebuild() }
                    changes.used.insert(sourceColumn)
                    if sourceColumn != column.name { changes.renames.append((sourceColumn, column.name)) }
                }
            } else {
                changes.adds.append(column)
            }
            if let fill { changes.fills.append(fill) }
        }
        return changes
    }

    /// The one value a column is filled with, from its values by source entity, when it needs one.
    private func fill(
        of column: String, _ byEntity: [Int32: ColumnValue], continuing sourceColumn: String?
    ) throws(NeedsRebuild) -> Fill? {
        var fill: Fill?
        for (number, value) in byEntity.sorted(by: { $0.key < $1.key }) {
            let entityName = old.entity(number: number)?.name ?? ""
            switch value {
            case .null:
                if let sourceColumn, oldRoles[entityName]?[sourceColumn] != nil { throw NeedsRebuild() }
            case .column:
                break
            case .sql, .sqlCoalesce:
                throw NeedsRebuild()
            case .renumbered(_, let map):
                if !map.allSatisfy({ $0.key == $0.value }) { throw NeedsRebuild() }
            case .constant(let v), .coalesce(_, let v), .constantUnlessNull(_, let v):
                if let fill, fill.value != v { throw NeedsRebuild() }
                var filled = fill ?? Fill(column: column, value: v)
                filled.numbers.append(number)
                if case .coalesce = value { filled.onlyNil = true }
                if case .constantUnlessNull(let c, _) = value { filled.unlessNullColumn = c }
                fill = filled
                if case .constant = value, sourceColumn != nil { throw NeedsRebuild() }
            }
        }
        return fill
    }

    // MARK: - Statements

    private static func columnDrops(
        _ drops: [String], of sourceTable: TableLayout, becoming table: TableLayout, claimed: Set<String>
    ) -> [InPlaceChange] {
        drops.map { column in
            InPlaceChange(
                kind: .dropColumn, summary: "\(sourceTable.name).\(column)",
                statements: [
                    InPlaceStatement("ALTER TABLE \(SQLName.quoted(sourceTable.name, always: true)) DROP COLUMN \(SQLName.quoted(column, always: true))")
                ], touchesRows: true,
                deferred: claimed.contains(column) ? nil : .dropColumn(table: table.name, column: column))
        }
    }

    /// Each rename, straight to its new name, or through `moult_column_<n>` when `throughTemporaryNames`.
    private static func columnRenames(
        _ renames: [(from: String, to: String)], of sourceTable: TableLayout, throughTemporaryNames: Bool
    ) -> [InPlaceChange] {
        let name = SQLName.quoted(sourceTable.name, always: true)
        let temporary = { (index: Int) in SQLName.quoted("moult_column_\(index)", always: true) }
        let firsts = renames.enumerated().map { index, rename in
            let to = throughTemporaryNames ? temporary(index) : SQLName.quoted(rename.to, always: true)
            return InPlaceChange(
                kind: .renameColumn, summary: "\(sourceTable.name).\(rename.from) → \(rename.to)",
                statements: [InPlaceStatement("ALTER TABLE \(name) RENAME COLUMN \(SQLName.quoted(rename.from, always: true)) TO \(to)")],
                touchesRows: false)
        }
        guard throughTemporaryNames else { return firsts }
        return firsts
            + renames.enumerated().map { index, rename in
                InPlaceChange(
                    kind: .renameColumn, summary: "\(sourceTable.name).\(rename.to)",
                    statements: [
                        InPlaceStatement("ALTER TABLE \(name) RENAME COLUMN \(temporary(index)) TO \(SQLName.quoted(rename.to, always: true))")
                    ], touchesRows: false)
            }
    }

    private static func columnAdds(_ adds: [ColumnLayout], to sourceTable: TableLayout) -> [InPlaceChange] {
        adds.map { column in
            InPlaceChange(
                kind: .addColumn, summary: "\(sourceTable.name).\(column.name) \(column.declaredType)",
                statements: [
                    InPlaceStatement(
                        "ALTER TABLE \(SQLName.quoted(sourceTable.name, always: true)) ADD COLUMN \(SQLName.quoted(column.name, always: true)) \(column.declaredType)")
                ], touchesRows: false)
        }
    }

    private static func columnFills(_ fills: [Fill], of sourceTable: TableLayout, renames: [(from: String, to: String)]) -> [InPlaceChange] {
        fills.map { fill in
            var condition = "1"
            if fill.onlyNil { condition = "\(SQLName.quoted(fill.column, always: true)) IS NULL" }
            // The to-one's column under its name after the renames above.
            if let column = fill.unlessNullColumn {
                condition = "\(SQLName.quoted(renames.first { $0.from == column }?.to ?? column, always: true)) IS NOT NULL"
            }
            if fill.numbers.count != sourceTable.entityNumbers.count {
                condition += " AND \(SQLName.quoted("Z_ENT", always: true)) IN (\(fill.numbers.map(String.init).joined(separator: ", ")))"
            }
            return InPlaceChange(
                kind: .fillColumn, summary: "\(sourceTable.name).\(fill.column) = \(fill.value)\(fill.onlyNil ? " where nil" : "")",
                statements: [
                    InPlaceStatement(
                        "UPDATE \(SQLName.quoted(sourceTable.name, always: true)) SET \(SQLName.quoted(fill.column, always: true)) = ? WHERE \(condition)",
                        [fill.value])
                ], touchesRows: true)
        }
    }
}
