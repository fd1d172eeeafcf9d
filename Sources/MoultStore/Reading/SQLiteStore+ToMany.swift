public import MoultModel

extension SQLiteStore {
    /// The destinations of a to-many relationship for a batch of source objects, in one query per up to
    /// 500 sources (never one query per object).
    ///
    /// Destinations come in the relationship's order for an ordered one (`Z_FOK_`), else by primary key.
    ///
    /// ```swift
    /// let cars = try store.toManyDestinations("cars", of: "Person", sources: [1, 2, 3])   // [Z_PK: [ObjectID]]
    /// ```
    ///
    /// - Parameters:
    ///   - relationship: The to-many relationship's name.
    ///   - entityName: The entity declaring (or inheriting) it.
    ///   - sources: Primary keys of the source objects.
    /// - Returns: For each source with at least one destination, its destinations' object ids.
    /// - Throws: ``StoreError`` (`.unknownName` for an unknown relationship, or from SQLite).
    public func toManyDestinations(
        _ relationship: String, of entityName: String, sources: [Int64]
    ) throws(StoreError) -> [Int64: [ObjectID]] {
        let entity = try entity(entityName)
        guard let toMany = entity.toMany(named: relationship) else {
            throw StoreError(.unknownName, "entity '\(entityName)' has no to-many relationship '\(relationship)'", path: database.path, entity: entityName)
        }
        guard let destination = layout.entity(named: toMany.destination) else {
            throw StoreError(.unknownName, "the destination entity '\(toMany.destination)' is not in the model", path: database.path, entity: entityName)
        }
        let destinationCondition = destination.entityCondition(
            includingSubentities: true, tableEntityCount: layout.table(named: destination.table)?.entityNumbers.count ?? 1)
        var result: [Int64: [ObjectID]] = [:]
        let unique = Array(Set(sources)).sorted()
        var start = 0
        while start < unique.count {
            let chunk = Array(unique[start..<min(start + 500, unique.count)])
            start += chunk.count
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            let sql: String
            switch toMany.storage {
            case .destinationColumn(let table, let column, _, let orderColumn):
                let order = orderColumn.map { "\($0), " } ?? ""
                let entityClause = destinationCondition.map { " AND \($0)" } ?? ""
                sql = "SELECT \(column), Z_PK, Z_ENT FROM \(table) WHERE \(column) IN (\(placeholders))\(entityClause) ORDER BY \(column), \(order)Z_PK"
            case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
                let order = orderColumn.map { "j.\($0), " } ?? ""
                sql = """
                    SELECT j.\(sourceColumn), d.Z_PK, d.Z_ENT FROM \(table) j JOIN \(destination.table) d ON d.Z_PK = j.\(destinationColumn) \
                    WHERE j.\(sourceColumn) IN (\(placeholders)) ORDER BY j.\(sourceColumn), \(order)d.Z_PK
                    """
            }
            let statement = try database.statement(sql)
            try statement.bind(chunk.map { .int($0) })
            defer { statement.reset() }
            while try statement.step() {
                let id = ObjectID(entity: Int32(truncatingIfNeeded: statement.int64(at: 2)), primaryKey: statement.int64(at: 1))
                result[statement.int64(at: 0), default: []].append(id)
            }
        }
        return result
    }
}
