extension InPlaceBuilder {
    /// An entity of the new version and the entity of the old one whose objects become its objects.
    typealias EntityPair = (source: EntityLayout, destination: EntityLayout)

    /// How one table of the new version comes to be: made empty (no entity of it has objects), altered
    /// where it stands (and renamed when its name changes), or rebuilt from the one old table its
    /// entities' objects are in.
    mutating func addSteps(for table: TableLayout, to steps: inout TableSteps) {
        let destinationEntities = table.entityNumbers.compactMap { new.entity(number: $0) }
        let pairs: [EntityPair] = destinationEntities.compactMap { entity in source(of: entity.name).map { (source: $0, destination: entity) } }
        let sourceTables = Set(pairs.map(\.source.table))
        if sourceTables.count > 1 {
            problems.append("the table \(table.name) would take the rows of several old tables (\(sourceTables.sorted().joined(separator: ", ")))")
            return
        }
        guard let sourceTableName = sourceTables.first, let sourceTable = old.table(named: sourceTableName) else {
            let stage = stageName()
            steps.rebuilds.append(
                InPlaceChange(
                    kind: .createTable, summary: "\(table.name) (new, empty)",
                    statements: [InPlaceStatement(Self.createSQL(table, name: stage))], touchesRows: false))
            steps.renames.append((stage, table.name))
            return
        }
        steps.maximumSources[table.name] = old.entity(named: sourceTable.rootEntity)?.number

        let values = columnValues(of: table, pairs: pairs, sourceTable: sourceTableName)
        guard problems.isEmpty else { return }

        if let alter = alterInPlace(table, from: sourceTable, pairs: pairs, values: values),
            !mustRebuild(sourceTable, becoming: table, alteredBy: alter)
        {
            steps.alters.append(contentsOf: alter.changes)
            steps.survivingIndexes.formUnion(alter.survivingIndexes)
            if table.name == sourceTable.name {
                steps.keptTables.insert(sourceTable.name)
            } else {
                let stage = stageName()
                steps.alters.append(
                    InPlaceChange(
                        kind: .renameTable, summary: "\(sourceTable.name) → \(table.name)",
                        statements: [
                            InPlaceStatement(
                                "ALTER TABLE \(SQLName.quoted(sourceTable.name, always: true)) RENAME TO \(SQLName.quoted(stage, always: true))")
                        ], touchesRows: false))
                steps.renamedTables.insert(sourceTable.name)
                steps.renames.append((stage, table.name))
            }
        } else {
            let stage = stageName()
            steps.rebuilds.append(rebuild(table, from: sourceTable, pairs: pairs, values: values, stage: stage))
            steps.renames.append((stage, table.name))
        }
    }

    /// Whether a table the store declares otherwise than the layout (``rebuilding``) changes at all:
    /// its columns, values, name or indexes. It is then rebuilt as the new version lays it out, as Core
    /// Data does (SQLite cannot drop a column a table constraint names, and an altered table would keep
    /// a constraint the new version may not have).
    private func mustRebuild(_ sourceTable: TableLayout, becoming table: TableLayout, alteredBy alter: Alteration) -> Bool {
        guard rebuilding.contains(sourceTable.name) else { return false }
        return !alter.changes.isEmpty || table.name != sourceTable.name || Set(table.indexes) != Set(sourceTable.indexes)
    }

    /// Each column's value (`Z_PK`, `Z_ENT` and `Z_OPT` aside) for the rows of each source entity, by
    /// column name and source `Z_ENT`.
    private mutating func columnValues(of table: TableLayout, pairs: [EntityPair], sourceTable: String) -> [String: [Int32: ColumnValue]] {
        var values: [String: [Int32: ColumnValue]] = [:]
        for column in table.columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name) {
            var byEntity: [Int32: ColumnValue] = [:]
            for pair in pairs {
                let value: ColumnValue
                if let role = newRoles[pair.destination.name]?[column.name] {
                    value = self.value(for: role, destination: pair.destination, source: pair.source, sourceTable: sourceTable)
                } else {
                    value = .null
                }
                byEntity[pair.source.number] = value
            }
            values[column.name] = byEntity
        }
        return values
    }
}
