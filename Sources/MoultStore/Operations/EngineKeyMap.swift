package import MoultModel

/// Stage 1 of the built-in `unique(key:)` policy in SQL: per chunk, the key values not yet made get
/// destination objects, numbered in the order of their first holder in the chunk, and every source
/// object of the chunk is associated with the object of its key, by set operations over the source
/// attached to the destination's connection (see ``EngineBulkCopy/attachedSource``).
///
/// The map from key value to destination key lives in a table of the destination
/// (`Z_MOULT_KEYS_<mapping>`: the destination key, the value, the first holder's source key), written
/// in the chunk's transaction and dropped with the engine's other tables when the run ends: a resume
/// sees exactly the committed chunks' keys. The per-object path of the same mapping reads and writes
/// the same table (``destination(ofKey:mapping:in:)``, ``record(key:destination:first:mapping:in:)``).
///
/// Values are compared as SQLite's BINARY collation compares them, whatever the source column
/// declares: strings by their bytes (no folding of case, no Unicode normalisation, trailing spaces
/// kept), integers by value, a string never equal to a number. The copy's guard (see
/// ``EngineBulkCopy``) refuses a chunk holding a row the per-object path would decode differently (a
/// number in a string column, text that is not UTF-8 …): that chunk takes the per-object path.
///
/// ```swift
/// try EngineKeyMap.create(ofMapping: 4, in: destination)
/// let keys = EngineKeyMap(mapping: 4, source: adult, destination: company, key: companyName, values: values,
///                         filter: nil, tableEntityCount: 2, mirror: true)
/// if let made = try keys.make(first: 1, after: 0, through: 10_000, filterArguments: [], in: destination) { … }
/// ```
package struct EngineKeyMap {
    // MARK: - The table

    /// The table of a uniquing mapping's keys.
    package static func table(ofMapping mapping: Int) -> String { "Z_MOULT_KEYS_\(mapping)" }

    /// A `LIKE` pattern (escape `\`) that matches every key table's name.
    static let tablePattern = "Z\\_MOULT\\_KEYS\\_%"

    private static func qualified(_ mapping: Int) -> String { "main.\(SQLName.quoted(table(ofMapping: mapping)))" }

    /// Creates a mapping's key table, when it does not exist. The value column has no type (a value
    /// keeps its storage class) and the BINARY collation.
    package static func create(ofMapping mapping: Int, in database: Database) throws(StoreError) {
        try database.executeScript(
            """
            CREATE TABLE IF NOT EXISTS \(qualified(mapping)) (destination INTEGER PRIMARY KEY, \
            name NOT NULL COLLATE BINARY UNIQUE, first INTEGER NOT NULL)
            """)
    }

    /// The destination key made for a key value, or nil.
    package static func destination(ofKey key: Value, mapping: Int, in database: Database) throws(StoreError) -> Int64? {
        let lookup = try database.statement("SELECT destination FROM \(qualified(mapping)) WHERE name = ?")
        try lookup.bind([key])
        defer { lookup.reset() }
        return try lookup.step() ? lookup.int64(at: 0) : nil
    }

    /// The first holders (source keys) of the objects made with the keys `first` through
    /// `first + count - 1`, in the order of those keys.
    package static func firstHolders(from first: Int64, count: Int, mapping: Int, in database: Database) throws -> [Int64] {
        try database.query(
            "SELECT first FROM \(qualified(mapping)) WHERE destination >= ? AND destination < ? ORDER BY destination",
            [.int(first), .int(first + Int64(count))]
        ) { $0.int64(at: 0) }
    }

    /// Records the destination key made for a key value from its first holder, the source key `first`.
    package static func record(key: Value, destination: Int64, first: Int64, mapping: Int, in database: Database) throws(StoreError) {
        try database.execute(
            "INSERT INTO \(qualified(mapping)) (destination, name, first) VALUES (?, ?, ?)", [.int(destination), key, .int(first)])
    }

    // MARK: - A chunk in SQL

    /// `SELECT 1 … LIMIT 1`: a row of the chunk the per-object path would decode differently (arguments:
    /// the chunk's bounds, the filter's); nil when every row fits.
    package let guardSQL: String?
    /// `INSERT INTO <keys> … GROUP BY`: the chunk's new values, numbered from the first key (arguments:
    /// the first key, the chunk's bounds, the filter's).
    package let newKeysSQL: String
    /// `INSERT INTO main.<destination> … SELECT`: one object per new value, from its first holder
    /// (arguments: ``constants``, then the first key).
    package let insertSQL: String
    package let constants: [Value]
    /// The chunk's associations, source key → destination key, in source order (arguments: the
    /// chunk's bounds, the filter's).
    package let associationsSQL: String
    /// `INSERT INTO main.<mirror> …`: the chunk's associations mirrored, when the mapping has a mirror
    /// (arguments: the chunk's bounds, the filter's).
    package let mirrorSQL: String?

    /// The uniquing of the objects of `source` that pass `filter` by the attribute `key`, into `destination`.
    ///
    /// - Parameters:
    ///   - mapping: The mapping's index: its key table, and its mirror when `mirror` is true.
    ///   - values: For each attribute of `destination`, in layout order, where its value comes from
    ///     (read from the first holder).
    ///   - tableEntityCount: The number of entities of the source's table.
    package init(
        mapping: Int, source: EntityLayout, destination: EntityLayout, key: AttributeColumn, values: [EngineBulkCopy.Source],
        filter: SQLCondition?, tableEntityCount: Int, mirror: Bool
    ) {
        let selection = EngineBulkCopy.Selection(destination: destination, values: values)
        let name = "s.\(SQLName.quoted(key.column))"
        // Each column checked once (the key is often copied, and read by an expression, too).
        var checked: Set<String> = []
        let fits = ([EngineBulkCopy.storedAsDecoded(name, type: key.type)] + selection.fits).filter { checked.insert($0).inserted }
        let rows = EngineBulkCopy.RowsRead(source: source, filter: filter, tableEntityCount: tableEntityCount, fits: fits)
        let sourceTable = "\(EngineBulkCopy.attachedSource).\(SQLName.quoted(source.table))"
        let keys = Self.qualified(mapping)
        guardSQL = rows.odd.isEmpty ? nil : "SELECT 1 FROM \(sourceTable) s WHERE \(rows.read) AND (\(SQLTerms.joined(rows.odd, by: "OR"))) LIMIT 1"
        newKeysSQL = """
            INSERT INTO \(keys) (destination, name, first) \
            SELECT ? + ROW_NUMBER() OVER (ORDER BY MIN(s.Z_PK)) - 1, \(name), MIN(s.Z_PK) FROM \(sourceTable) s \
            WHERE \(rows.condition) AND \(name) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(keys) m WHERE m.name = \(name) COLLATE BINARY) \
            GROUP BY \(name) COLLATE BINARY
            """
        let columns = (["Z_PK", "Z_ENT", "Z_OPT"] + selection.columns).map(SQLName.quoted).joined(separator: ", ")
        insertSQL = """
            INSERT INTO main.\(SQLName.quoted(destination.table)) (\(columns)) \
            SELECT \((["m.destination", "\(destination.number)", "1"] + selection.selected).joined(separator: ", ")) \
            FROM \(keys) m JOIN \(sourceTable) s ON s.Z_PK = m.first WHERE m.destination >= ? ORDER BY m.destination
            """
        constants = selection.constants
        let associated = "FROM \(sourceTable) s JOIN \(keys) m ON m.name = \(name) COLLATE BINARY WHERE \(rows.condition)"
        associationsSQL = "SELECT s.Z_PK, m.destination \(associated) ORDER BY s.Z_PK"
        mirrorSQL =
            mirror ? "INSERT INTO \(EngineWorkTables.mirrorTable(ofMapping: mapping)) (source, destination) SELECT s.Z_PK, m.destination \(associated)" : nil
    }

    /// Whether the chunk (`lower < Z_PK <= upper` of the source) holds a row the per-object path would
    /// decode differently, which sends the chunk to the per-object path. It reads the source only, so
    /// another connection with the source attached can run it ahead of the chunk.
    package func guardRefuses(after lower: Int64, through upper: Int64, filterArguments: [Value], in database: Database) throws(StoreError) -> Bool {
        guard let guardSQL else { return false }
        return try database.scalar(guardSQL, [.int(lower), .int(upper)] + filterArguments) != nil
    }

    /// Makes a chunk's new objects (`lower < Z_PK <= upper` of the source), their keys continuing from
    /// `first`, records their values in the key table, and mirrors the chunk's associations.
    ///
    /// - Parameter guarded: the chunk's guard already ran and found no row the per-object path would
    ///   decode differently (``guardRefuses(after:through:filterArguments:in:)``, on another connection):
    ///   it is not run again.
    /// - Returns: the number of objects made; nil, with nothing written, when the guard refused the chunk.
    /// - Throws: ``StoreError`` when a statement fails (the chunk's transaction then undoes it all).
    package func make(
        first: Int64, after lower: Int64, through upper: Int64, filterArguments: [Value], guarded: Bool = false, in database: Database
    ) throws(StoreError) -> Int? {
        let bounds: [Value] = [.int(lower), .int(upper)] + filterArguments
        if !guarded, try guardRefuses(after: lower, through: upper, filterArguments: filterArguments, in: database) { return nil }
        try database.execute(newKeysSQL, [.int(first)] + bounds)
        let made = database.changes
        if made > 0 {
            try database.execute(insertSQL, constants + [.int(first)])
            guard database.changes == made else {
                throw StoreError(.sqlite, "the chunk made \(made) keys but inserted \(database.changes) objects", sql: insertSQL)
            }
        }
        if let mirrorSQL { try database.execute(mirrorSQL, bounds) }
        return made
    }

    /// The chunk's associations, source key → destination key, in source order.
    package func associations(after lower: Int64, through upper: Int64, filterArguments: [Value], in database: Database) throws
        -> [(source: Int64, destination: Int64)]
    {
        try database.query(associationsSQL, [.int(lower), .int(upper)] + filterArguments) { ($0.int64(at: 0), $0.int64(at: 1)) }
    }
}
