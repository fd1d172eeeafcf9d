package import MoultModel

/// Stage 1 of a chunk in SQL: one `INSERT … SELECT` from the source attached to the destination's
/// connection (see ``attachedSource``), one destination object per source object, every attribute a
/// constant or a copy of a source attribute of the same kind, without bringing a value into Swift.
///
/// The insert refuses (with ``refusal``, its changes undone) a chunk holding a row whose stored values
/// the per-object path would convert or refuse rather than copy as they are (a REAL or an out-of-range
/// integer in an integer column, a blob in a string column, a Boolean other than 0 or 1, a number that
/// is not finite, a row of another entity in a table of one): such a chunk takes the per-object path,
/// so that both paths make the same store or the same error. The guard is evaluated on each row as it
/// is inserted, in the same read. Text that is not valid UTF-8 is told by ``MoultFunctions/validUTF8``,
/// a value over the value size limit by ``MoultFunctions/withinLimit`` (a computed one by ``MoultFunctions/limited``).
///
/// ```swift
/// let copy = EngineBulkCopy(
///     source: person, destination: contact, values: [.copy(name, conversion: nil, defaultForNil: nil)],
///     filter: nil, tableEntityCount: 1)
/// let insert = try copy.preparedInsert(in: destination)
/// if let count = try copy.insert(insert, first: 1, after: 0, through: 5_000, filterArguments: [], into: destination) { … }
/// ```
package struct EngineBulkCopy {
    /// The schema name the source is attached under on the destination's connection.
    package static let attachedSource = "moult_source"

    /// The message of the insert's guard (see ``insertSQL``).
    package static let refusal = "moult: a row of the chunk is not copied as it is stored"

    /// Where a destination attribute's value comes from.
    package enum Source {
        /// A constant, bound as an argument.
        case constant(Value)
        /// A source attribute's stored value, its format changed by `conversion`; a NULL becomes
        /// `defaultForNil`, when there is one.
        case copy(AttributeColumn, conversion: ExternalDataReference.Conversion?, defaultForNil: Value?)
        /// An expression SQLite computes exactly as the Swift evaluator does (`sql`, its `?` bound to
        /// `arguments`), reading the source attributes `reads`; a NULL becomes `defaultForNil`, when there is one.
        case computed(sql: String, arguments: [Value], reads: [AttributeColumn], defaultForNil: Value?)
    }

    /// The attributes' part of a copy's `SELECT`: the destination columns, the values selected, their
    /// arguments in order, and the guard's conditions on the source columns they read.
    struct Selection {
        var columns: [String] = []
        var selected: [String] = []
        var constants: [Value] = []
        var fits: [String] = []

        init(destination: EntityLayout, values: [Source]) {
            for (column, value) in zip(destination.attributes, values) {
                columns.append(column.column)
                switch value {
                case .constant(let constant):
                    selected.append("?")
                    constants.append(constant)
                case .copy(let attribute, let conversion, let defaultForNil):
                    var read = "s.\(SQLName.quoted(attribute.column))"
                    fits.append(EngineBulkCopy.storedAsDecoded(read, type: attribute.type))
                    fits.append("\(MoultFunctions.withinLimit)(\(read))")
                    switch conversion {
                    case .mark?: read = "\(MoultFunctions.externalMark)(\(read))"
                    case .inline?: read = "\(MoultFunctions.externalInline)(\(read))"
                    case nil: break
                    }
                    append(read, arguments: [], defaultForNil: defaultForNil)
                case .computed(let sql, let arguments, let reads, let defaultForNil):
                    for attribute in reads {
                        fits.append(EngineBulkCopy.storedAsDecoded("s.\(SQLName.quoted(attribute.column))", type: attribute.type))
                    }
                    // What SQLite computes is refused over the value size limit, as the writer refuses it.
                    append("\(MoultFunctions.limited)(\(sql))", arguments: arguments, defaultForNil: defaultForNil)
                }
            }
        }

        private mutating func append(_ read: String, arguments: [Value], defaultForNil: Value?) {
            constants += arguments
            if let defaultForNil {
                selected.append("COALESCE(\(read), ?)")
                constants.append(defaultForNil)
            } else {
                selected.append(read)
            }
        }
    }

    /// How the objects a copy makes get their primary keys.
    package enum Keys: Sendable {
        /// Numbered from a first key, in the source's key order.
        case numbered
        /// Each the key of its source object (see `KeptKeys` in the engine).
        case kept
        /// Each the key of its source object, and the chunk refused (it takes the per-object path,
        /// which gives a taken key a fresh one) when one of them is already in the destination's table.
        case keptUnlessTaken
    }

    /// A to-one written with its row: the object its looked-up mapping made from the source key in
    /// `sourceColumn`, read from that mapping's mirror (see ``EngineWorkTables/mirror(ofMapping:)``),
    /// an object of `targetEntity`. With `keptIfMissingFrom`, a source table, a key that names no row
    /// of it (a dangling to-one) is kept as it is, an object of `targetEntity` (the looked-up mapping
    /// keeps its keys: the engine's `keptDangling`).
    package typealias InsertedToOne = (
        toOne: ToOneColumn, mirroredMapping: Int, sourceColumn: String, targetEntity: Int32, keptIfMissingFrom: String?
    )

    /// `INSERT INTO main.<destination> … SELECT … FROM moult_source.<source> …`; its arguments are the
    /// first primary key (none when the objects keep their source keys, see ``Keys``), ``constants``,
    /// the chunk's bounds, then the filter's.
    package let insertSQL: String
    package let constants: [Value]
    /// The insert's `SELECT` alone, for a connection with the source attached under the same name (see
    /// ``evaluation(after:through:filterArguments:in:limit:)``: the second thread's, or the writer's own),
    /// in the source's key order: its first column is NULL (the source key, when the objects keep
    /// theirs), the row's place in the chunk numbering its key instead of
    /// `ROW_NUMBER()`. That window kept a copy of every row of the chunk in a table of its own before
    /// returning the first: 5 ms for 10,000 persons where the rest of the `SELECT` takes 0.9 ms. With a
    /// mirror, each row's source key follows the values.
    package let selectSQL: String
    /// `INSERT INTO main.<destination> (…)`, and `SELECT ? + rowid - 1, c1, …`: with `FROM temp.<rows>`,
    /// the insert of the rows ``selectSQL`` made, their keys continuing from the argument in the rows'
    /// order (a row's `rowid` is its place, from 1; see ``insert(_:first:into:)``).
    private let into: String, rowsSelected: String
    /// `INSERT INTO main.<mirror> … FROM temp.`, to which the rows' table is appended: the chunk's
    /// associations mirrored from the rows (see ``mirror(_:first:in:)``), when the mapping has a mirror.
    private let rowsMirrorSQL: String?
    /// The mappings whose mirrors the insert reads (its to-ones written with the row).
    package let mirrorsRead: Set<Int>
    /// The source keys the insert reads, in order, for the associations (on the source's connection).
    package let keysSQL: String
    /// `INSERT INTO main.<mirror> (source, destination) SELECT …`: the chunk's associations mirrored
    /// (arguments: the first primary key, the chunk's bounds, the filter's), when the mapping has a mirror.
    package let mirrorSQL: String?
    /// How the objects get their keys.
    package let keys: Keys

    /// The copy of the objects of `source` that pass `filter` into `destination`.
    ///
    /// - Parameters:
    ///   - values: For each attribute of `destination`, in layout order, where its value comes from.
    ///   - insertedToOnes: The to-ones written with the row.
    ///   - tableEntityCount: The number of entities of the source's table.
    ///   - mirror: The mapping whose mirror records the chunk's associations, if any.
    ///   - keys: How the objects get their primary keys.
    package init(
        source: EntityLayout, destination: EntityLayout, values: [Source], insertedToOnes: [InsertedToOne] = [], filter: SQLCondition?,
        tableEntityCount: Int, mirror: Int? = nil, keys: Keys = .numbered
    ) {
        self.keys = keys
        let selection = Selection(destination: destination, values: values)
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + selection.columns
        var fits = selection.fits
        let numbered = keys == .numbered ? "? + ROW_NUMBER() OVER (ORDER BY s.Z_PK) - 1" : "s.Z_PK"
        var selected = [numbered, "\(destination.number)", "1"] + selection.selected
        // The looked-up mapping's association, from its mirror table. A key that is not an integer
        // takes the per-object path, which decodes it.
        for inserted in insertedToOnes {
            let mirror = EngineWorkTables.mirrorTable(ofMapping: inserted.mirroredMapping)
            let key = "s.\(SQLName.quoted(inserted.sourceColumn))"
            var value = "(SELECT m.destination FROM \(mirror) AS m WHERE m.source = \(key))"
            if let table = inserted.keptIfMissingFrom {
                let missing = "NOT EXISTS (SELECT 1 FROM \(Self.attachedSource).\(SQLName.quoted(table)) AS t WHERE t.Z_PK = \(key))"
                value = "COALESCE(\(value), CASE WHEN \(missing) THEN \(key) END)"
            }
            columns.append(inserted.toOne.column)
            selected.append(value)
            if let companion = inserted.toOne.entityColumn {
                columns.append(companion)
                selected.append("CASE WHEN \(value) IS NOT NULL THEN \(inserted.targetEntity) END")
            }
            fits.append("typeof(\(key)) IN ('null', 'integer')")
        }
        let rows = RowsRead(source: source, filter: filter, tableEntityCount: tableEntityCount, fits: fits)
        let (condition, read) = (rows.condition, rows.read)
        var odd = rows.odd
        if keys == .keptUnlessTaken {
            odd.append("EXISTS (SELECT 1 FROM main.\(SQLName.quoted(destination.table)) AS d WHERE d.Z_PK = s.Z_PK)")
        }
        if !odd.isEmpty {
            // Z_OPT, 1 for every new object, carries the guard.
            selected[2] = "CASE WHEN \(SQLTerms.joined(odd, by: "OR")) THEN \(MoultFunctions.refuse)('\(Self.refusal)') ELSE 1 END"
        }
        let sourceTable = "\(Self.attachedSource).\(SQLName.quoted(source.table))"
        mirrorSQL = mirror.map {
            "INSERT INTO \(EngineWorkTables.mirrorTable(ofMapping: $0)) (source, destination) SELECT s.Z_PK, \(numbered) "
                + "FROM \(sourceTable) s WHERE \(condition)"
        }
        into = "INSERT INTO main.\(SQLName.quoted(destination.table)) (\(columns.map(SQLName.quoted).joined(separator: ", ")))"
        insertSQL = "\(into) SELECT \(selected.joined(separator: ", ")) FROM \(sourceTable) s WHERE \(read)"
        // With a mirror, the rows also carry each one's source key, last, for the mirror's insert.
        let evaluated = [keys == .numbered ? "NULL" : "s.Z_PK"] + selected.dropFirst() + (mirror == nil ? [] : ["s.Z_PK"])
        selectSQL = "SELECT \(evaluated.joined(separator: ", ")) FROM \(sourceTable) s WHERE \(read) ORDER BY s.Z_PK"
        let placed = keys == .numbered ? "? + rowid - 1" : "c0"
        rowsSelected = "SELECT " + ([placed] + (1..<selected.count).map { "c\($0)" }).joined(separator: ", ")
        rowsMirrorSQL = mirror.map {
            "INSERT INTO \(EngineWorkTables.mirrorTable(ofMapping: $0)) (source, destination) SELECT c\(selected.count), \(placed) FROM temp."
        }
        mirrorsRead = Set(insertedToOnes.map(\.mirroredMapping))
        keysSQL = "SELECT s.Z_PK FROM \(SQLName.quoted(source.table)) s WHERE \(condition) ORDER BY s.Z_PK"
        constants = selection.constants
    }

    /// The source rows a chunk's copy reads, and its guard's conditions on them.
    struct RowsRead {
        /// The mapping's rows of the chunk: of its entity, within its bounds (two `?`), passing its filter.
        var condition: String
        /// The rows the per-object cursor reads: ``condition``, or every row of the chunk in a table of one entity.
        var read: String
        /// Conditions true at a row the per-object path would convert or refuse; none when every row fits.
        var odd: [String]

        /// - Parameter fits: conditions true when a row's stored values are copied as they are decoded.
        init(source: EntityLayout, filter: SQLCondition?, tableEntityCount: Int, fits: [String]) {
            condition = "s.Z_ENT = \(source.number) AND s.Z_PK > ? AND s.Z_PK <= ?"
            if let filter { condition += " AND (\(filter.sql))" }
            // The per-object cursor reads every row of a table of one entity (and refuses another Z_ENT),
            // but only its own entity's rows of a hierarchy table: the copy reads the same rows, and its
            // guard refuses the chunk at a row the per-object path would convert or refuse.
            odd = fits.isEmpty ? [] : ["NOT \(SQLTerms.joined(fits, by: "AND"))"]
            read = condition
            if tableEntityCount == 1 {
                read = "s.Z_PK > ? AND s.Z_PK <= ?" + (filter.map { " AND (\($0.sql))" } ?? "")
                odd.append("s.Z_ENT IS NOT \(source.number)")
            }
        }
    }

    /// An SQL condition true when a column's stored value is exactly what the store cursor decodes for
    /// this type, so that copying it as it is writes what the per-object path writes.
    static func storedAsDecoded(_ column: String, type: AttributeType) -> String {
        let kind = "typeof(\(column))"
        switch type {
        case .integer16: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) BETWEEN -32768 AND 32767))"
        case .integer32: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) BETWEEN -2147483648 AND 2147483647))"
        case .integer64: return "\(kind) IN ('null', 'integer')"
        case .boolean: return "(\(kind) = 'null' OR (\(kind) = 'integer' AND \(column) IN (0, 1)))"
        case .double, .float, .date:
            return "(\(kind) IN ('null', 'integer') OR (\(kind) = 'real' AND abs(\(column)) <= 1.7976931348623157e308))"
        case .decimal:
            return "(\(kind) IN ('null', 'integer') OR (\(kind) = 'real' AND abs(\(column)) <= 1e120 AND (\(column) = 0 OR abs(\(column)) >= 1e-100)))"
        case .string, .uri: return "(\(kind) = 'null' OR (\(kind) = 'text' AND \(MoultFunctions.validUTF8)(\(column))))"
        case .uuid: return "(\(kind) = 'null' OR (\(kind) = 'blob' AND length(\(column)) = 16))"
        case .binary, .transformable: return "\(kind) IN ('null', 'blob')"
        case .composite, .undefined, .objectID: return "1"
        }
    }

    // MARK: - Running it

    /// The first key's argument: none when the objects keep their source keys.
    private func keyArguments(_ first: Int64) -> [Value] {
        keys == .numbered ? [.int(first)] : []
    }

    /// The insert, prepared on the destination's connection (and kept there for the next chunks).
    ///
    /// - Throws: ``StoreError`` when SQLite does not take it.
    package func preparedInsert(in database: Database) throws(StoreError) -> Statement {
        try database.statement(insertSQL)
    }

    /// Runs the insert prepared by ``preparedInsert(in:)`` for a chunk's objects (`lower < Z_PK <= upper`
    /// of the source), their keys continuing from `first`, in a savepoint.
    ///
    /// - Returns: the number of objects inserted; nil, with nothing written, when the guard refused the chunk.
    /// - Throws: ``StoreError`` when the insert fails otherwise (its changes undone).
    package func insert(
        _ insert: Statement, first: Int64, after lower: Int64, through upper: Int64, filterArguments: [Value], into database: Database
    ) throws -> Int? {
        do {
            // In a savepoint: a refused chunk leaves nothing of its insert.
            return try database.transaction {
                try insert.bind(keyArguments(first) + constants + [.int(lower), .int(upper)] + filterArguments)
                defer { insert.reset() }
                while try insert.step() {}
                return database.changes
            }
        } catch let error as StoreError where error.message.contains(Self.refusal) {
            return nil
        }
    }

    /// What evaluating a chunk's rows in memory made of them.
    package enum Evaluation {
        /// The rows, in the order of their source keys.
        case rows(ChunkRows)
        /// The guard refused the chunk: it takes the per-object path.
        case refused
        /// The rows would hold more than the limit: the insert's own `SELECT` streams them instead.
        case overLimit
    }

    /// Evaluates a chunk's rows without writing them: ``selectSQL`` run on `connection`, which has the
    /// source attached as ``attachedSource`` (and Moult's functions, those of external data included).
    /// That is a connection of the engine's second thread, which reads the destination as committed, or
    /// the writer's own, which sees its chunk's transaction as the insert would.
    ///
    /// The rows are held in memory, so they are bounded: a chunk whose rows would hold more than
    /// `limit` bytes (large texts or blobs, a very large chunk) is not evaluated here.
    ///
    /// - Throws: ``StoreError`` when the `SELECT` fails otherwise.
    package func evaluation(after lower: Int64, through upper: Int64, filterArguments: [Value], in connection: Database, limit: Int) throws
        -> Evaluation
    {
        let select = try connection.statement(selectSQL)
        let rows = try ChunkRows(columns: select.columnCount)
        do {
            try select.bind(constants + [.int(lower), .int(upper)] + filterArguments)
            return try select.fill(rows, limit: limit) ? .rows(rows) : .overLimit
        } catch {
            if error.message.contains(Self.refusal) { return .refused }
            throw error
        }
    }

    /// ``evaluation(after:through:filterArguments:in:limit:)`` for the second thread.
    ///
    /// - Returns: the rows, in the order of their keys; nil when the guard refused the chunk
    ///   (it takes the per-object path, as with ``insert(_:first:after:through:filterArguments:into:)``).
    /// - Throws: ``StoreError`` when the `SELECT` fails otherwise, or the rows would pass `limit`
    ///   (the writer then runs the insert's own `SELECT`).
    package func evaluate(after lower: Int64, through upper: Int64, filterArguments: [Value], in reader: Database, limit: Int) throws -> ChunkRows? {
        switch try evaluation(after: lower, through: upper, filterArguments: filterArguments, in: reader, limit: limit) {
        case .rows(let rows): return rows
        case .refused: return nil
        case .overLimit:
            throw StoreError(.invalidValue, "the chunk's rows would hold more than \(limit) bytes: the writer evaluates it", sql: selectSQL)
        }
    }

    /// Inserts rows made by ``evaluate(after:through:filterArguments:in:limit:)``, their keys continuing
    /// from `first`, in a savepoint: the same records, in the same order, as
    /// ``insert(_:first:after:through:filterArguments:into:)`` writes for the chunk.
    ///
    /// - Returns: the number of objects inserted.
    /// - Throws: ``StoreError`` when the insert fails (its changes undone).
    package func insert(_ rows: ChunkRows, first: Int64, into database: Database) throws -> Int {
        try database.transaction {
            try database.withChunkRows(rows) { table in
                try database.statement("\(into) \(rowsSelected) FROM temp.\(table)").execute(keyArguments(first))
                return database.changes
            }
        }
    }

    /// Mirrors the associations of a chunk just inserted (see ``mirrorSQL``), when the copy has a mirror.
    ///
    /// - Returns: the number of associations mirrored; nil without a mirror.
    package func mirror(first: Int64, after lower: Int64, through upper: Int64, filterArguments: [Value], in database: Database) throws(StoreError)
        -> Int?
    {
        guard let mirrorSQL else { return nil }
        try database.execute(mirrorSQL, keyArguments(first) + [.int(lower), .int(upper)] + filterArguments)
        return database.changes
    }

    /// Mirrors the associations of a chunk just inserted from rows made by
    /// ``evaluate(after:through:filterArguments:in:limit:)``, which carry the source keys: the rows
    /// ``mirror(first:after:through:filterArguments:in:)`` writes, without reading the source again.
    ///
    /// - Returns: the number of associations mirrored; nil without a mirror.
    package func mirror(_ rows: ChunkRows, first: Int64, in database: Database) throws -> Int? {
        guard let rowsMirrorSQL else { return nil }
        return try database.withChunkRows(rows) { table in
            try database.statement(rowsMirrorSQL + table).execute(keyArguments(first))
            return database.changes
        }
    }

    /// The source keys of a chunk, in the order the insert made their objects.
    package func sourceKeys(after lower: Int64, through upper: Int64, filterArguments: [Value], in source: Database) throws -> [Int64] {
        try source.query(keysSQL, [.int(lower), .int(upper)] + filterArguments) { $0.int64(at: 0) }
    }
}
