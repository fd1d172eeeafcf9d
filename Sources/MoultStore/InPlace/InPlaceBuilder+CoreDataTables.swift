import MoultModel

// MARK: - Core Data's own tables

extension InPlaceBuilder {
    /// `Z_PRIMARYKEY` made again: one row per entity of the new version, a root's `Z_MAX` continuing
    /// its old root's (`maximumSources`: destination root table → old root `Z_ENT`) so that primary
    /// keys are never reused, a sub-entity's its source's; the rows of what is not an entity kept.
    func primaryKeysChange(maximumSources: [String: Int32]) -> InPlaceChange {
        let (primaryKey, saved) = (SQLName.quoted("Z_PRIMARYKEY", always: true), SQLName.quoted("moult_inplace_primarykey", always: true))
        let (entityColumn, nameColumn, superColumn, maxColumn) = (
            SQLName.quoted("Z_ENT", always: true), SQLName.quoted("Z_NAME", always: true), SQLName.quoted("Z_SUPER", always: true),
            SQLName.quoted("Z_MAX", always: true)
        )
        var statements = [
            InPlaceStatement("ALTER TABLE \(primaryKey) RENAME TO \(saved)"),
            InPlaceStatement(
                "CREATE TABLE \(primaryKey) (\(entityColumn) INTEGER PRIMARY KEY, \(nameColumn) VARCHAR, \(superColumn) INTEGER, \(maxColumn) INTEGER)"),
        ]
        let oldMax = { (number: Int32) in "COALESCE((SELECT \(maxColumn) FROM \(saved) WHERE \(entityColumn) = \(number)), 0)" }
        for entity in new.entities {
            let maximum: String
            if entity.number == entity.rootNumber {
                let rows = "COALESCE((SELECT MAX(\(SQLName.quoted("Z_PK", always: true))) FROM \(SQLName.quoted(entity.table, always: true))), 0)"
                maximum = maximumSources[entity.table].map { "MAX(\(rows), \(oldMax($0)))" } ?? rows
            } else {
                maximum = source(of: entity.name).map { oldMax($0.number) } ?? "0"
            }
            statements.append(
                InPlaceStatement(
                    "INSERT INTO \(primaryKey) (\(entityColumn), \(nameColumn), \(superColumn), \(maxColumn)) VALUES (?, ?, ?, \(maximum))",
                    [.int(Int64(entity.number)), .string(entity.name), .int(Int64(entity.superNumber))]))
        }
        // Rows for what is not an entity (Core Data's persistent history numbers its own from 16000) stay.
        statements.append(
            InPlaceStatement(
                "INSERT INTO \(primaryKey) SELECT \(entityColumn), \(nameColumn), \(superColumn), \(maxColumn) FROM \(saved) WHERE \(entityColumn) >= 16000"))
        statements.append(InPlaceStatement("DROP TABLE \(saved)"))
        return InPlaceChange(kind: .primaryKeys, summary: "\(new.entities.count) entities", statements: statements, touchesRows: false)
    }

    /// `Z_MODELCACHE` emptied, then given the new model's cache when its archived form is known.
    ///
    /// The archive is made when the change's summary or statements are first asked for (a plan that
    /// only says how each step runs never archives the new model).
    func modelCacheChange() -> InPlaceChange {
        let model = new.model
        return InPlaceChange(kind: .modelCache, touchesRows: false) {
            let cacheTable = SQLName.quoted("Z_MODELCACHE", always: true)
            var statements = [InPlaceStatement("DELETE FROM \(cacheTable)")]
            if let cache = try? ModelCache.encoded(model) {
                statements.append(InPlaceStatement("INSERT INTO \(cacheTable) (\(SQLName.quoted("Z_CONTENT", always: true))) VALUES (?)", [.data(cache)]))
            }
            return (statements.count > 1 ? "the new model" : "emptied", statements)
        }
    }
}
