// MARK: - Names and limits

extension LayoutBuilder {
    /// One name per index across the schema (SQLite's tables and indexes share one name space): an
    /// index identical to one already there (the same uniqueness constraint twice) is dropped, and a
    /// different one whose name is taken gets `_2`, `_3`… (unverified: two such indexes cannot be made
    /// in Xcode).
    mutating func uniqueIndexNames() {
        var taken = Set(["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"] + tables.map { $0.name.uppercased() } + joinTables.map { $0.name.uppercased() })
        var seen: [String: IndexLayout] = [:]
        func claim(_ indexes: [IndexLayout]) -> [IndexLayout] {
            var kept: [IndexLayout] = []
            for var index in indexes {
                if let existing = seen[index.name.uppercased()], existing.table == index.table, existing.terms == index.terms, existing.condition == index.condition,
                    existing.isUnique == index.isUnique
                {
                    continue
                }
                let base = index.name
                var suffix = 2
                while taken.contains(index.name.uppercased()) {
                    index.name = "\(base)_\(suffix)"
                    suffix += 1
                }
                taken.insert(index.name.uppercased())
                seen[base.uppercased()] = seen[base.uppercased()] ?? index
                kept.append(index)
            }
            return kept
        }
        for position in tables.indices { tables[position].indexes = claim(tables[position].indexes) }
        for position in joinTables.indices { joinTables[position].indexes = claim(joinTables[position].indexes) }
    }

    /// SQLite's limits that a schema can reach, checked before any table is made: the columns of one
    /// table (an inheritance hierarchy shares its root's table) and the length of one statement.
    func checkLimits() throws(StoreError) {
        let limits = SQLite.limits
        for table in tables where table.columns.count > limits.columns {
            throw StoreError(
                .invalidValue,
                "entity '\(table.rootEntity)' and its sub-entities need \(table.columns.count) columns in table \(table.name), more than the \(limits.columns) SQLite allows in one table (its column limit, SQLITE_MAX_COLUMN, is reached)",
                entity: table.rootEntity)
        }
        let statements = tables.map { ($0.rootEntity, $0.createSQL) } + joinTables.map { ($0.name, $0.createSQL) }
            + (tables.flatMap(\.indexes) + joinTables.flatMap(\.indexes)).map { ($0.table, $0.createSQL) }
        for (owner, sql) in statements where sql.utf8.count >= limits.sqlLength {
            throw StoreError(
                .invalidValue, "the SQL creating '\(owner)' is \(sql.utf8.count) bytes, more than the \(limits.sqlLength) SQLite takes in one statement",
                entity: owner)
        }
    }
}
