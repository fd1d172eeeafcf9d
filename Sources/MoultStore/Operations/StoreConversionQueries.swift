public import MoultModel

// The named operations the conversion between store types (MoultXMLStore) asks of an SQLite store.
extension SQLiteStore {
    /// Sets a to-one relationship of an object to the object of a primary key in the destination's
    /// hierarchy, with the companion `Z_ENT` column read from the destination's row.
    ///
    /// ```swift
    /// try store.setToOne("owner", of: car, toKey: 7)      // Z_ENT of the owner read from its table
    /// ```
    ///
    /// - Parameters:
    ///   - relationship: The to-one relationship's name.
    ///   - object: The object whose relationship is set.
    ///   - key: The destination's primary key.
    /// - Returns: False when no object of the destination's hierarchy has that key (nothing is written).
    /// - Throws: ``StoreError`` (`.unknownName` for an unknown relationship, or from SQLite).
    public func setToOne(_ relationship: String, of object: ObjectID, toKey key: Int64) throws(StoreError) -> Bool {
        guard let entity = layout.entity(number: object.entity), let toOne = entity.toOne(named: relationship),
            let destination = layout.entity(named: toOne.destination)
        else {
            throw StoreError(.unknownName, "entity number \(object.entity) has no to-one relationship '\(relationship)'", path: database.path)
        }
        let lookup = try database.statement("SELECT Z_ENT FROM \(SQLName.quoted(destination.table)) WHERE Z_PK = ?")
        try lookup.bind([.int(key)])
        guard try lookup.step() else {
            lookup.reset()
            return false
        }
        let destinationEntity = lookup.int64(at: 0)
        lookup.reset()
        var sets = ["\(SQLName.quoted(toOne.column)) = ?"]
        var arguments: [Value] = [.int(key)]
        if let entityColumn = toOne.entityColumn {
            sets.append("\(SQLName.quoted(entityColumn)) = ?")
            arguments.append(.int(destinationEntity))
        }
        arguments.append(.int(object.primaryKey))
        try database.execute("UPDATE \(SQLName.quoted(entity.table)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?", arguments)
        return true
    }

    /// Whether no primary key is used by two inheritance roots, and the smallest key in the store.
    ///
    /// An XML store numbers all its objects in one sequence; an SQLite store numbers each root's objects
    /// on their own. A store whose keys never repeat across roots can keep its keys as object numbers.
    ///
    /// - Returns: `disjoint`, and `minimum` (nil for an empty store).
    /// - Throws: ``StoreError`` from SQLite.
    public func rootPrimaryKeySummary() throws(StoreError) -> (disjoint: Bool, minimum: Int64?) {
        let tables = layout.tables.map { "SELECT Z_PK FROM \(SQLName.quoted($0.name))" }
        guard !tables.isEmpty else { return (true, nil) }
        let all = tables.joined(separator: " UNION ALL ")
        var minimum: Int64?
        if case .int(let value) = try database.scalar("SELECT MIN(Z_PK) FROM (\(all))") { minimum = value }
        guard tables.count > 1 else { return (true, minimum) }
        let total = try database.scalar("SELECT COUNT(*) FROM (\(all))")
        let distinct = try database.scalar("SELECT COUNT(*) FROM (\(tables.joined(separator: " UNION ")))")
        return (total == distinct, minimum)
    }

    /// Raises `Z_PRIMARYKEY.Z_MAX` of every inheritance root to at least `value`, so that the next key
    /// handed out is above it.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    public func raiseRootPrimaryKeyMaxima(to value: Int64) throws(StoreError) {
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_SUPER = 0 AND Z_MAX < ?", [.int(value), .int(value)])
    }
}
