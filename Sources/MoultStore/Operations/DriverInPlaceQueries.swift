/// What a migration in place asks of a store's schema and writes around a step's SQL: whether the
/// store is laid out as a layout says, its triggers, the objects of its own set aside and made again,
/// its metadata row replaced.
///
/// ```swift
/// guard try database.isLaidOut(as: oldLayout) else { … }         // a step by SQL needs the old layout
/// let foreign = try database.triggers(notMadeBy: layout)
/// for trigger in foreign { try database.drop(trigger) }
/// try database.clearMetadata()
/// try metadata.write(to: database)
/// for trigger in foreign { try database.make(trigger) }
/// ```
extension Database {
    // MARK: - The schema

    /// Whether every table the layout makes is in the store with exactly its columns (Core Data's own
    /// tables, the entity and join tables, an R-tree's virtual and shadow tables), and the store numbers
    /// its entities as the layout does. What the store holds beyond the layout (its own tables, views,
    /// triggers, indexes) is ``StoreOwnObjects``' to judge.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func isLaidOut(as layout: StoreLayout) throws -> Bool {
        try differenceFromLayout(layout) == nil
    }

    /// How the store's tables differ from `layout` (the first difference found, in words), or nil when
    /// it is laid out so (``isLaidOut(as:)``): what makes a migration in place stream a step the models
    /// alone would run by SQL.
    ///
    /// ```swift
    /// if let why = try database.differenceFromLayout(oldLayout) { print("streamed: \(why)") }
    /// ```
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func differenceFromLayout(_ layout: StoreLayout) throws -> String? {
        var tables: Set<String> = []
        try forEachRow("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") { row in
            tables.insert(row.string(at: 0) ?? "")
        }
        var expected: [String: Set<String>] = [
            "Z_PRIMARYKEY": ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"], "Z_METADATA": ["Z_VERSION", "Z_UUID", "Z_PLIST"], "Z_MODELCACHE": ["Z_CONTENT"],
        ]
        for table in layout.tables { expected[table.name] = Set(table.columns.map(\.name)) }
        for table in layout.joinTables { expected[table.name] = Set(table.columns + table.orderColumns) }
        // An R-tree index: its virtual table and the shadow tables SQLite keeps for it.
        for rTree in layout.rTrees {
            expected[rTree.name] = Set(["Z_PK"] + rTree.columns.flatMap { [$0 + "_MIN", $0 + "_MAX"] })
            expected[rTree.name + "_node"] = ["nodeno", "data"]
            expected[rTree.name + "_parent"] = ["nodeno", "parentnode"]
            expected[rTree.name + "_rowid"] = ["rowid", "nodeno"]
        }
        // (In name order: the same store gives the same reason.)
        for (name, columns) in expected.sorted(by: { $0.key < $1.key }) {
            guard tables.contains(name) else { return "it has no table \(name)" }
            let found = Set(try self.columns(of: name))
            guard found != columns else { continue }
            let extra = found.subtracting(columns).sorted(), missing = columns.subtracting(found).sorted()
            var parts: [String] = []
            if !extra.isEmpty { parts.append("column\(extra.count == 1 ? "" : "s") \(extra.joined(separator: ", ")) of its own") }
            if !missing.isEmpty { parts.append("no column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))") }
            return "its table \(name) has " + parts.joined(separator: " and ")
        }
        // Entity numbers: a store numbered otherwise than the layout (by an older Moult) is streamed,
        // whose reading takes the store's own numbers, rather than rewritten with the layout's.
        let numbers = try query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < 16000") { ($0.int64(at: 0), $0.string(at: 1) ?? "") }
        for (number, name) in numbers.sorted(by: { $0.0 < $1.0 }) {
            if let entity = layout.entity(named: name), Int64(entity.number) != number {
                return "it numbers the entity \(name) \(number) where the model numbers it \(entity.number)"
            }
        }
        return nil
    }

    // MARK: - Triggers and the store's own objects

    /// The store's triggers the layout does not make (an application's), in the order SQLite lists them.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func triggers(notMadeBy layout: StoreLayout) throws -> [StoreTrigger] {
        let known = Set(layout.triggerNames)
        return try query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL") { row in
            StoreTrigger(name: row.string(at: 0) ?? "", sql: row.string(at: 1) ?? "")
        }.filter { !known.contains($0.name) }
    }

    /// Drops a trigger.
    package func drop(_ trigger: StoreTrigger) throws(StoreError) {
        try execute("DROP TRIGGER \(SQLName.quoted(trigger.name))")
    }

    /// Makes a trigger again, by the statement the store held.
    package func make(_ trigger: StoreTrigger) throws(StoreError) {
        try executeScript(trigger.sql)
    }

    /// Drops an object of the store's own when it is a trigger, a view or an index (nothing else).
    package func dropIfExists(_ object: StoreOwnObjects.Object) throws(StoreError) {
        let keyword = ["trigger": "TRIGGER", "view": "VIEW", "index": "INDEX"][object.kind.rawValue]
        if let keyword { try execute("DROP \(keyword) IF EXISTS \(SQLName.quoted(object.name))") }
    }

    /// Makes an object of the store's own again, by the statement the store held.
    package func makeAgain(_ object: StoreOwnObjects.Object) throws(StoreError) {
        try executeScript(object.sql ?? "")
    }

    /// Whether the store keeps Core Data's persistent history with the entity of each change (the
    /// column its renumbering rewrites).
    package func historyNamesEntities() throws -> Bool {
        try columns(of: "ACHANGE").contains("ZENTITY")
    }

    // MARK: - Writing

    /// Runs one statement of a step's script.
    ///
    /// - Throws: ``StoreError``; a unique index the rows break (`CREATE UNIQUE INDEX Z_Room_UNIQUE_label …`)
    ///   is a constraint error naming the entity, the attributes and the objects that share a value.
    package func execute(_ statement: InPlaceStatement) throws(StoreError) {
        do {
            try execute(statement.sql, statement.arguments)
        } catch let error where error.uniqueColumns != nil && statement.sql.uppercased().hasPrefix("CREATE UNIQUE INDEX") {
            throw uniquenessBroken(error, index: statement.sql)
        }
    }

    /// A unique index that could not be made, named as the uniqueness constraint of the model it is: its
    /// entity and attributes (from Core Data's index name, `Z_<Entity>_UNIQUE_<attributes>`), and up
    /// to five groups of objects that share a value.
    private func uniquenessBroken(_ error: StoreError, index sql: String) -> StoreError {
        guard let columns = error.uniqueColumns, let marker = error.message.firstRange(of: "UNIQUE constraint failed: ") else { return error }
        let table = error.message[marker.upperBound...].prefix { $0 != "." }
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "(" }).map { $0.filter { $0 != "\"" } }
        let name = words.count > 3 ? words[3] : ""
        let cut = name.firstRange(of: "_UNIQUE_")
        let entity = cut.map { String(name[..<$0.lowerBound].dropFirst(2)) } ?? String(table)
        let attributes = cut.map { name[$0.upperBound...].split(separator: "_").joined(separator: ", ") } ?? columns.joined(separator: ", ")
        let quoted = columns.map(SQLName.quoted).joined(separator: ", ")
        let groups: [String] = (try? query(
            // A NULL in any column never breaks a unique index: those rows share no value.
            "SELECT \(quoted), group_concat(Z_PK, ', ') FROM \(SQLName.quoted(String(table))) WHERE "
                + columns.map { "\(SQLName.quoted($0)) IS NOT NULL" }.joined(separator: " AND ")
                + " GROUP BY \(quoted) HAVING count(*) > 1 LIMIT 5"
        ) { (row: Statement) -> String in
            let values = columns.indices.map { (index: Int) -> String in String(describing: row.value(at: index)) }.joined(separator: ", ")
            return "(\(values)): Z_PK \(row.string(at: columns.count) ?? "")"
        }) ?? []
        var copy = error
        copy.message = "\(entity): the uniqueness constraint on \(attributes) is broken"
            + (groups.isEmpty ? "" : ": objects share a value, \(groups.joined(separator: "; "))") + " (\(error.message))"
        copy.entity = copy.entity ?? entity
        return copy
    }

    /// Deletes the metadata row, before the new metadata is written.
    package func clearMetadata() throws(StoreError) {
        try execute("DELETE FROM \"Z_METADATA\"")
    }
}

/// A trigger a store holds: its name and the statement that makes it.
package struct StoreTrigger: Sendable, Hashable {
    package var name: String
    package var sql: String
}

extension StoreLayout {
    /// The statements of ``schemaSQL`` that make something other than a table (virtual or not), an
    /// index or a trigger: a schema a migration by SQL does not make.
    package var schemaBeyondTablesIndexesAndTriggers: [String] {
        // Core Data's own tables, the entity and join tables and their indexes are `CREATE TABLE` and
        // `CREATE [UNIQUE] INDEX` as ``schemaSQL`` makes them: only the R-trees' statements and the
        // derived attributes' triggers are looked at (the tables' statements of a model of hundreds of
        // attributes cost more to make than the rest of a step's method).
        (rTrees.flatMap { [$0.createSQL] + $0.triggerSQL } + derivedTriggers).filter { sql in
            !["CREATE TABLE", "CREATE INDEX", "CREATE UNIQUE INDEX", "CREATE TRIGGER", "CREATE VIRTUAL TABLE"].contains { sql.uppercased().hasPrefix($0) }
        }
    }
}
