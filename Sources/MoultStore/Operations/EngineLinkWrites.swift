package import MoultModel

/// The migration engine's writes to objects already inserted: a to-one's columns set object by
/// object, an attribute set by a policy, and stage 2's relationships as set operations, staged in a
/// temporary table of links and written by one `UPDATE … FROM` per relationship and chunk.
///
/// ```swift
/// let owner = EngineLinkWrites.ToOneUpdate(car.toOne(named: "owner")!, table: car.table)
/// try owner.run(object: carID, target: personID, in: destination)
///
/// try EngineLinkWrites.createLinks(in: destination)
/// let links = try EngineLinkWrites.Links(in: destination)
/// try links.clear()
/// try links.add(object: 7, value: 3, entity: 2, position: 0)
/// try EngineLinkWrites.ColumnUpdate(table: "ZCAR", column: "ZOWNER", entityColumn: nil, orderColumn: nil).run(in: destination)
/// ```
package enum EngineLinkWrites {}

// MARK: - Object by object

extension EngineLinkWrites {
    /// `UPDATE <table> SET <column> = ?[, <companion> = ?] WHERE Z_PK = ?`: a to-one set on one object.
    package struct ToOneUpdate: Sendable {
        private let sql: String
        private let hasEntityColumn: Bool

        /// The update of the to-one `toOne` of the objects of `table`.
        package init(_ toOne: ToOneColumn, table: String) {
            hasEntityColumn = toOne.entityColumn != nil
            let (table, column) = (SQLName.quoted(table), SQLName.quoted(toOne.column))
            sql = toOne.entityColumn.map { "UPDATE \(table) SET \(column) = ?, \(SQLName.quoted($0)) = ? WHERE Z_PK = ?" }
                ?? "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?"
        }

        /// Points `object`'s to-one at `target`.
        package func run(object: ObjectID, target: ObjectID, in database: Database) throws(StoreError) {
            let statement = try database.statement(sql)
            try statement.bind(target.primaryKey, at: 1)
            if hasEntityColumn {
                try statement.bind(Int64(target.entity), at: 2)
                try statement.bind(object.primaryKey, at: 3)
            } else {
                try statement.bind(object.primaryKey, at: 2)
            }
            while try statement.step() {}
        }
    }

    /// `UPDATE <table> SET <column> = NULL[, <companion> = NULL][, <order> = NULL] WHERE Z_PK = ? AND <column> = ?`:
    /// a to-one set back to nil on one object that still names the target (the `Z_FOK_` column of the
    /// inverse's order, when the inverse is an ordered to-many kept in this column, cleared with it).
    package struct ToOneClear: Sendable {
        private let sql: String

        /// The clearing of the to-one `toOne` of the objects of `table`; `orderColumn` is the
        /// inverse's `Z_FOK_` column on the same rows, if it has one.
        package init(_ toOne: ToOneColumn, table: String, orderColumn: String?) {
            let columns = [toOne.column] + [toOne.entityColumn, orderColumn].compactMap { $0 }
            let sets = columns.map { "\(SQLName.quoted($0)) = NULL" }.joined(separator: ", ")
            sql = "UPDATE \(SQLName.quoted(table)) SET \(sets) WHERE Z_PK = ? AND \(SQLName.quoted(toOne.column)) = ?"
        }

        /// Sets `object`'s to-one to nil when it names `target` (else leaves it).
        package func run(object: ObjectID, target: ObjectID, in database: Database) throws(StoreError) {
            try database.execute(sql, [.int(object.primaryKey), .int(target.primaryKey)])
        }
    }

    /// Sets the attribute stored in `column` of the object `primaryKey` of `table`.
    package static func setAttribute(_ value: Value, column: String, table: String, primaryKey: Int64, in database: Database) throws(StoreError) {
        try database.execute("UPDATE \(SQLName.quoted(table)) SET \(SQLName.quoted(column)) = ? WHERE Z_PK = ?", [value, .int(primaryKey)])
    }
}

// MARK: - As set operations

extension EngineLinkWrites {
    /// The temporary table of a chunk's links for one relationship: the row written (`object`), the key
    /// and `Z_ENT` it gets (`value`, `entity`), and its place in an ordered relationship (`position`).
    private static let links = "temp.moult_links"

    /// Creates the table of links on this connection, when it does not exist.
    package static func createLinks(in database: Database) throws(StoreError) {
        try database.executeScript(
            "CREATE TEMP TABLE IF NOT EXISTS moult_links (object INTEGER PRIMARY KEY, value INTEGER NOT NULL, entity INTEGER NOT NULL, position INTEGER NOT NULL)")
    }

    /// The links of one relationship and chunk, as they are staged (the table made by ``createLinks(in:)``).
    package struct Links {
        private let database: Database
        private let insert: Statement

        package init(in database: Database) throws(StoreError) {
            self.database = database
            insert = try database.statement("INSERT OR REPLACE INTO \(EngineLinkWrites.links) (object, value, entity, position) VALUES (?, ?, ?, ?)")
        }

        /// Removes every link staged.
        package func clear() throws(StoreError) {
            try database.executeScript("DELETE FROM \(EngineLinkWrites.links)")
        }

        /// Stages a link; a later link of the same row replaces an earlier one, as a later `UPDATE` would.
        package func add(object: Int64, value: Int64, entity: Int32, position: Int) throws(StoreError) {
            try insert.execute([.int(object), .int(value), .int(Int64(entity)), .int(Int64(position))])
        }
    }

    /// `UPDATE main.<table> AS t SET <column> = l.value[, <entity column> = l.entity][, <order column> = l.position]
    /// FROM temp.moult_links AS l WHERE t.Z_PK = +l.object`: the staged links written into one column of
    /// `table` (the `+` keeps SQLite from scanning the whole table for each chunk: the links are the
    /// outer loop).
    package struct ColumnUpdate: Sendable {
        package let sql: String
        /// The column written, as `<table>.<column>`: two updates of one chunk must not write the same.
        package let target: String

        package init(table: String, column: String, entityColumn: String?, orderColumn: String?) {
            target = "\(table).\(column)"
            var sets = ["\(SQLName.quoted(column)) = l.value"]
            if let entityColumn { sets.append("\(SQLName.quoted(entityColumn)) = l.entity") }
            if let orderColumn { sets.append("\(SQLName.quoted(orderColumn)) = l.position") }
            sql = "UPDATE main.\(SQLName.quoted(table)) AS t SET \(sets.joined(separator: ", ")) FROM \(EngineLinkWrites.links) AS l WHERE t.Z_PK = +l.object"
        }

        /// Writes the staged links.
        package func run(in database: Database) throws(StoreError) {
            try database.execute(sql, [])
        }
    }
}
