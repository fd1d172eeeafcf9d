import MoultModel

extension SQLiteStore {
    /// The layout a store of this model is read with: the computed one, or, when the store's
    /// `Z_PRIMARYKEY` names every entity of the model under other numbers (a store numbered by an
    /// older rule, Moult's before it followed Core Data's case-insensitive order among them), the
    /// layout with the store's numbers. Reading never assumes its own numbering: ``checkLayout()``
    /// then compares the store with the layout it gets here.
    static func layout(of model: ObjectModel, in database: Database) throws(StoreError) -> StoreLayout {
        let computed = try StoreLayout(model: model)
        // Rows 16001… are persistent history's, no entities of the model.
        guard
            let rows = try? database.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT BETWEEN 1 AND 16000", row: {
                (Int32(truncatingIfNeeded: $0.int64(at: 0)), $0.string(at: 1) ?? "")
            })
        else { return computed }
        var numbers: [String: Int32] = [:]
        for (number, name) in rows where model.entity(named: name) != nil {
            guard numbers.updateValue(number, forKey: name) == nil else { return computed }  // a name twice: not a numbering
        }
        guard numbers.count == model.entities.count, computed.entities.contains(where: { numbers[$0.name] != $0.number }) else {
            return computed
        }
        return (try? StoreLayout(model: model, numbers: numbers)) ?? computed
    }

    /// Checks that the store has its model's layout before anything reads it: Core Data's own tables,
    /// a table (not a view) for every inheritance root and join table with every column the layout
    /// names, and a `Z_PRIMARYKEY` row for each entity number with the model's parent and no other
    /// entity's name.
    ///
    /// A store that fails this was damaged, edited by hand, or made by another model whose hashes
    /// happen to match: reading it would fail halfway with SQLite's "no such table" or "no such column",
    /// or read rows as the wrong entity. It is bad input, found before any work starts.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/schemaMismatch`` naming the table, column
    ///   or entity, or ``StoreError/Code/corrupt`` when the schema cannot be read.
    func checkLayout() throws(StoreError) {
        do throws(StoreError) {
            let kinds = try schemaKinds()
            // Core Data's own tables.
            let primaryKeyColumns = try columns(of: "Z_PRIMARYKEY", owner: "the entity numbering", entity: nil, kinds: kinds)
            for column in ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"] {
                try require(column, in: "Z_PRIMARYKEY", primaryKeyColumns, what: "Core Data's entity numbering", entity: nil)
            }
            try checkTables(kinds)
            try checkEntityNumbers()
        } catch {
            guard error.code == .sqlite else { throw error }
            throw StoreError(
                .corrupt, "the store's schema cannot be read (\(error.message))", path: database.path, sql: error.sql, resultCode: error.resultCode)
        }
    }

    // MARK: - Tables and columns

    private func mismatch(_ message: String, entity: String? = nil) -> StoreError {
        StoreError(.schemaMismatch, "the store does not have its model's layout: \(message)", path: database.path, entity: entity)
    }

    /// The kind (`table` or `view`) of each table and view of the store, by uppercased name.
    private func schemaKinds() throws(StoreError) -> [String: String] {
        var kinds: [String: String] = [:]
        let statement = try database.statement("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
        try statement.bind([])
        while try statement.step() {
            // Table names compare without regard to ASCII case, as SQLite's do.
            kinds[(statement.string(at: 0) ?? "").uppercased()] = statement.string(at: 1) ?? ""
        }
        statement.reset()
        return kinds
    }

    /// The uppercased names of a table's columns, once it is known to be a table whose `Z_PK` (if any)
    /// is its `INTEGER PRIMARY KEY`.
    private func columns(of table: String, owner: String, entity: String?, kinds: [String: String]) throws(StoreError) -> Set<String> {
        switch kinds[table.uppercased()] {
        case "table": break
        case "view": throw mismatch("\(table), the table of \(owner), is a view, not a table", entity: entity)
        default: throw mismatch("there is no table \(table) (the table of \(owner))", entity: entity)
        }
        let info = try database.statement("SELECT name, type, pk FROM pragma_table_info(?)")
        try info.bind([.string(table)])
        var names: Set<String> = []
        var primaryKey: [String] = []
        while try info.step() {
            let name = (info.string(at: 0) ?? "").uppercased()
            names.insert(name)
            if info.int64(at: 2) > 0 { primaryKey.append("\(name) \((info.string(at: 1) ?? "").uppercased())") }
        }
        info.reset()
        // Z_PK is the rowid (INTEGER PRIMARY KEY): whole, unique and in order, as the cursors
        // that read by key ranges need.
        if names.contains("Z_PK"), primaryKey != ["Z_PK INTEGER"] {
            throw mismatch("column Z_PK of \(table) is not its INTEGER PRIMARY KEY", entity: entity)
        }
        return names
    }

    private func require(_ column: String, in table: String, _ present: Set<String>, what: String, entity: String?) throws(StoreError) {
        guard present.contains(column.uppercased()) else {
            throw mismatch("table \(table) has no column \(column) (\(what))", entity: entity)
        }
    }

    /// Every entity table and join table, with every column the layout names.
    private func checkTables(_ kinds: [String: String]) throws(StoreError) {
        let meaning = columnMeanings()
        for table in layout.tables {
            let present = try columns(of: table.name, owner: "entity \(table.rootEntity)", entity: table.rootEntity, kinds: kinds)
            for column in table.columns {
                let described = meaning["\(table.name).\(column.name)"]
                try require(
                    column.name, in: table.name, present, what: described?.what ?? "a column of entity \(table.rootEntity)",
                    entity: described?.entity ?? table.rootEntity)
            }
        }
        for table in layout.joinTables {
            let present = try columns(of: table.name, owner: "a many-to-many relationship", entity: nil, kinds: kinds)
            for column in table.columns + table.orderColumns {
                try require(column, in: table.name, present, what: "a key of a many-to-many relationship", entity: nil)
            }
        }
    }

    /// What each column holds, to name it in a message, by "TABLE.COLUMN". Entities come in Z_ENT
    /// order, parents first: the first to name a column declares it.
    private func columnMeanings() -> [String: (what: String, entity: String)] {
        var meaning: [String: (what: String, entity: String)] = [:]
        func describe(_ column: String, of entity: EntityLayout, _ what: String) {
            let key = "\(entity.table).\(column)"
            if meaning[key] == nil { meaning[key] = ("\(what) of \(entity.name)", entity.name) }
        }
        for entity in layout.entities {
            for attribute in entity.attributes { describe(attribute.column, of: entity, "attribute \(attribute.name)") }
            for toOne in entity.toOneRelationships {
                describe(toOne.column, of: entity, "relationship \(toOne.name)")
                if let companion = toOne.entityColumn { describe(companion, of: entity, "the entity of relationship \(toOne.name)") }
            }
        }
        return meaning
    }

    // MARK: - Entity numbers

    /// Every entity has its Z_PRIMARYKEY row, with the model's parent. Z_NAME is kept through renames
    /// (a store migrated in place keeps an entity's old name), so it only disagrees when it names
    /// another entity of the model: then the numbering is not the model's.
    private func checkEntityNumbers() throws(StoreError) {
        var rows: [Int64: (name: String, parent: Value)] = [:]
        let numbering = try database.statement("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY")
        try numbering.bind([])
        while try numbering.step() {
            guard case .int(let number) = numbering.value(at: 0) else { continue }
            rows[number] = (numbering.string(at: 1) ?? "", numbering.value(at: 2))
        }
        numbering.reset()
        for entity in layout.entities {
            guard let row = rows[Int64(entity.number)] else {
                throw mismatch("Z_PRIMARYKEY has no row for entity \(entity.name) (Z_ENT \(entity.number))", entity: entity.name)
            }
            if row.name != entity.name, let other = layout.entity(named: row.name) {
                throw mismatch(
                    "Z_PRIMARYKEY gives Z_ENT \(entity.number) to entity \(other.name), which the model numbers \(other.number) (\(entity.number) is \(entity.name)): the store's entity numbers are not its model's",
                    entity: entity.name)
            }
            if case .int(let parent) = row.parent, parent != Int64(entity.superNumber) {
                throw mismatch(
                    "Z_PRIMARYKEY gives entity \(entity.name) (Z_ENT \(entity.number)) the parent Z_ENT \(parent), where the model's is \(entity.superNumber)",
                    entity: entity.name)
            }
        }
    }
}
