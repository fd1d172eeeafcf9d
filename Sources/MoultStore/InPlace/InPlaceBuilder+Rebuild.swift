import MoultModel

// MARK: - Rebuilding a table

extension InPlaceBuilder {
    /// A new table made under the name `stage` and filled by one `INSERT … SELECT` from the old table
    /// (the source row aliased ``rowAlias``), entities renumbered, only the migrated entities' rows.
    func rebuild(
        _ table: TableLayout, from sourceTable: TableLayout, pairs: [EntityPair], values: [String: [Int32: ColumnValue]], stage: String
    ) -> InPlaceChange {
        var arguments: [Value] = []
        let selected = table.columns.map { column in
            selection(of: column.name, pairs: pairs, values: values[column.name] ?? [:], arguments: &arguments)
        }
        let numbers = pairs.map(\.source.number).sorted()
        var sql = "INSERT INTO \(SQLName.quoted(stage, always: true)) (\(table.columns.map { SQLName.quoted($0.name, always: true) }.joined(separator: ", "))) SELECT \(selected.joined(separator: ", ")) FROM \(SQLName.quoted(sourceTable.name, always: true)) AS \(SQLName.quoted(Self.rowAlias, always: true))"
        if Set(sourceTable.entityNumbers) != Set(numbers) {
            sql += " WHERE \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", ")))"
        }
        return InPlaceChange(
            kind: .rebuildTable, summary: "\(table.name) from \(sourceTable.name)",
            statements: [InPlaceStatement(Self.createSQL(table, name: stage)), InPlaceStatement(sql, arguments)], touchesRows: true)
    }

    /// `CREATE TABLE` for a table of the new layout under another name (its stage).
    static func createSQL(_ table: TableLayout, name: String) -> String {
        let body = table.columns.map { column in
            column.name == "Z_PK" ? "\(SQLName.quoted("Z_PK", always: true)) INTEGER PRIMARY KEY" : "\(SQLName.quoted(column.name, always: true)) \(column.declaredType)"
        }
        return "CREATE TABLE \(SQLName.quoted(name, always: true)) ( \(body.joined(separator: ", ")) )"
    }

    /// What the rebuild selects for one column: the same value for every entity's rows, or a
    /// `CASE "Z_ENT" …` of each entity's, its arguments appended.
    private func selection(
        of column: String, pairs: [EntityPair], values byEntity: [Int32: ColumnValue], arguments: inout [Value]
    ) -> String {
        let entity = SQLName.quoted("Z_ENT", always: true)
        switch column {
        case "Z_PK", "Z_OPT":
            return SQLName.quoted(column, always: true)
        case "Z_ENT":
            if pairs.allSatisfy({ $0.source.number == $0.destination.number }) { return entity }
            let cases = pairs.sorted { $0.source.number < $1.source.number }
                .map { "WHEN \($0.source.number) THEN \($0.destination.number)" }.joined(separator: " ")
            return "CASE \(entity) \(cases) END"
        default:
            let distinct = Set(byEntity.values)
            if distinct.count <= 1 { return Self.expression(distinct.first ?? .null, arguments: &arguments) }
            var cases: [String] = []
            for (number, value) in byEntity.sorted(by: { $0.key < $1.key }) where value != .null {
                cases.append("WHEN \(number) THEN \(Self.expression(value, arguments: &arguments))")
            }
            return "CASE \(entity) \(cases.joined(separator: " ")) END"
        }
    }

    /// The SQL expression of a value, its arguments appended.
    private static func expression(_ value: ColumnValue, arguments: inout [Value]) -> String {
        switch value {
        case .null: return "NULL"
        case .column(let column): return SQLName.quoted(column, always: true)
        case .constant(let constant):
            arguments.append(constant)
            return "?"
        case .coalesce(let column, let constant):
            arguments.append(constant)
            return "COALESCE(\(SQLName.quoted(column, always: true)), ?)"
        case .renumbered(let column, let map):
            if map.allSatisfy({ $0.key == $0.value }) { return SQLName.quoted(column, always: true) }
            return renumberSQL(SQLName.quoted(column, always: true), map)
        case .constantUnlessNull(let column, let constant):
            arguments.append(constant)
            return "CASE WHEN \(SQLName.quoted(column, always: true)) IS NULL THEN NULL ELSE ? END"
        case .sql(let sql):
            return sql
        case .sqlCoalesce(let sql, let constant):
            arguments.append(constant)
            return "COALESCE(\(sql), ?)"
        }
    }
}
