public import MoultModel

// The named operations the conversion between store types (MoultXMLStore) asks of an SQLite store.
extension SQLiteStore {
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

    /// Raises `Z_PRIMARYKEY.Z_MAX` of every inheritance root but `except` to at least `value`, so that the
    /// next key handed out is above it.
    ///
    /// - Parameters:
    ///   - value: The smallest `Z_MAX` each root gets.
    ///   - except: Roots (by entity number) left as they are.
    /// - Throws: ``StoreError`` from SQLite.
    public func raiseRootPrimaryKeyMaxima(to value: Int64, except: [Int32] = []) throws(StoreError) {
        let excluded = except.isEmpty ? "" : " AND Z_ENT NOT IN (\(except.map(String.init).joined(separator: ", ")))"
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_SUPER = 0 AND Z_MAX < ?\(excluded)", [.int(value), .int(value)])
    }

    /// Sets `Z_PRIMARYKEY.Z_MAX` of an inheritance root: the largest key it has handed out.
    ///
    /// - Parameters:
    ///   - root: The root entity's number.
    ///   - maximum: Its `Z_MAX`.
    /// - Throws: ``StoreError`` from SQLite.
    public func setRootPrimaryKeyMaximum(_ root: Int32, to maximum: Int64) throws(StoreError) {
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.int(maximum), .int(Int64(root))])
    }

    /// The Decimal columns of a batch of objects as SQLite holds them (an integer, a REAL, text), not
    /// through Foundation's `Decimal`, whose exponent cannot hold 1e-130.
    ///
    /// ```swift
    /// let raw = try store.decimalColumnValues(of: item, attributes: [7], keys: [1, 2])   // [1: [.double(1e-130)], 2: [.int(3)]]
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity whose table is read.
    ///   - attributes: The slots of its Decimal attributes.
    ///   - keys: The objects' primary keys.
    /// - Returns: For each key found, the values of those attributes in the order of `attributes`.
    /// - Throws: ``StoreError`` from SQLite.
    public func decimalColumnValues(of entity: EntityLayout, attributes: [Int], keys: [Int64]) throws(StoreError) -> [Int64: [Value]] {
        guard !attributes.isEmpty, !keys.isEmpty else { return [:] }
        let columns = attributes.map { SQLName.quoted(entity.attributes[$0].column) }.joined(separator: ", ")
        var result: [Int64: [Value]] = [:]
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 500, keys.count)]
            start += chunk.count
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            let statement = try database.statement("SELECT Z_PK, \(columns) FROM \(SQLName.quoted(entity.table)) WHERE Z_PK IN (\(placeholders))")
            try statement.bind(chunk.map { .int($0) })
            defer { statement.reset() }
            while try statement.step() {
                result[statement.int64(at: 0)] = attributes.indices.map { statement.value(at: $0 + 1) }
            }
        }
        return result
    }

    /// What the store holds beyond what its model's layout makes, which a store of another type made
    /// from it does not hold: Core Data's persistent history (`ACHANGE`, `ATRANSACTION`,
    /// `ATRANSACTIONSTRING`, and their rows 16001… of `Z_PRIMARYKEY`), an application's tables, views,
    /// triggers and indexes, and columns of its own in an entity's table; each table with its rows.
    ///
    /// An R-tree or an index the model declares is not among them: the store made back from the other
    /// type makes it again. Nor is a constraint an older Core Data wrote into an entity table's
    /// declaration: the model's uniqueness constraints are made again as indexes.
    ///
    /// ```swift
    /// for (object, rows) in try store.objectsOfItsOwn() { print(object, rows ?? 0) }   // table ACHANGE 566
    /// ```
    ///
    /// - Returns: The objects in the order SQLite lists them, each table's or view's row count beside it.
    /// - Throws: ``StoreError`` from SQLite.
    public func objectsOfItsOwn() throws(StoreError) -> [(object: StoreOwnObjects.Object, rows: Int64?)] {
        let own: StoreOwnObjects
        do {
            own = try StoreOwnObjects(reading: database, layout: layout)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.corrupt, "the store's schema cannot be read: \(error)", path: database.path)
        }
        var result: [(object: StoreOwnObjects.Object, rows: Int64?)] = []
        for object in own.objects where object.kind != .constraint {
            var rows: Int64?
            if object.kind == .table || object.kind == .view, case .int(let count) = try database.scalar("SELECT COUNT(*) FROM \(SQLName.quoted(object.name, always: true))") {
                rows = count
            }
            result.append((object, rows))
        }
        return result
    }
}
