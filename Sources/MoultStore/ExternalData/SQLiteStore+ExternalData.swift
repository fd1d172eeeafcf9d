import Foundation
import MoultModel

// MARK: - External references

/// One column value of a store that refers to an external file (see ``ExternalDataReference``).
public struct ExternalReferenceRow: Sendable, Hashable, CustomStringConvertible {
    /// The object's entity (its own, not its root's).
    public var entity: String
    /// The object's `Z_PK`.
    public var primaryKey: Int64
    /// The Binary Data attribute.
    public var attribute: String
    /// The reference, or nil when the value starts with the external marker but names no plain file.
    public var reference: ExternalDataReference?

    /// `Entity.attribute of Z_PK n`, as messages name the object.
    public var description: String { "\(entity) \(primaryKey) (Z_PK), attribute \(attribute)" }
}

extension StoreLayout {
    /// The attributes of the layout's model whose column may hold an external reference: Binary Data
    /// attributes with `allowsExternalBinaryDataStorage`, each with the entity whose rows it is read in
    /// (every entity, for the attributes it has, inherited ones included).
    public var externalStorageColumns: [(entity: EntityLayout, attribute: AttributeColumn)] {
        entities.flatMap { entity in
            entity.attributes.compactMap { column in
                guard column.type == .binary, model.attribute(named: column.name, of: entity.name)?.allowsExternalBinaryDataStorage == true
                else { return nil }
                return (entity, column)
            }
        }
    }

    /// The columns (table, column) of ``externalStorageColumns``, each once: where every reference of a
    /// store of this layout is, whatever the row's entity.
    public var externalStorageTableColumns: [(table: String, column: String)] {
        var seen: Set<[String]> = []
        return externalStorageColumns.compactMap { entity, attribute in
            seen.insert([entity.table, attribute.column]).inserted ? (entity.table, attribute.column) : nil
        }
    }

    /// Calls `body` with every column value of the store open on `database` (a store of this layout)
    /// that refers to an external file, entity by entity (each object under its own entity), in
    /// primary-key order; only in `columns` when they are given (some of ``externalStorageColumns``).
    ///
    /// - Throws: ``StoreError`` reading the store, or what `body` throws.
    public func forEachExternalReference(
        in database: Database, columns: [(entity: EntityLayout, attribute: AttributeColumn)]? = nil, _ body: (ExternalReferenceRow) throws -> Void
    ) throws {
        for (entity, attribute) in columns ?? externalStorageColumns {
            let column = SQLName.quoted(attribute.column)
            let sql = "SELECT Z_PK, \(column) FROM \(SQLName.quoted(entity.table)) WHERE Z_ENT = \(entity.number) "
                + "AND typeof(\(column)) = 'blob' AND substr(\(column), 1, 1) = x'02' ORDER BY Z_PK"
            try database.forEachRow(sql) { statement in
                let bytes = statement.bytes(at: 1) ?? []
                try body(
                    ExternalReferenceRow(
                        entity: entity.name, primaryKey: statement.int64(at: 0), attribute: attribute.name,
                        reference: ExternalDataReference(columnBytes: bytes)))
            }
        }
    }
}

extension SQLiteStore {
    /// The attributes of the store's model whose column may hold an external reference (see
    /// ``StoreLayout/externalStorageColumns``).
    public var externalStorageColumns: [(entity: EntityLayout, attribute: AttributeColumn)] { layout.externalStorageColumns }

    /// Calls `body` with every column value of the store that refers to an external file, entity by
    /// entity (each object under its own entity), in primary-key order.
    ///
    /// ```swift
    /// try store.forEachExternalReference { row in print(row, row.reference?.fileName ?? "malformed") }
    /// ```
    ///
    /// - Throws: ``StoreError`` reading the store, or what `body` throws.
    public func forEachExternalReference(_ body: (ExternalReferenceRow) throws -> Void) throws {
        try layout.forEachExternalReference(in: database, body)
    }
}

// MARK: - Names referred to

extension ExternalDataReference {
    /// The names of the files that the values of `columns` (table, column) refer to, in every row of
    /// their tables whatever its entity: what no file may be removed from under. A column or table the
    /// store does not have refers to nothing.
    ///
    /// - Throws: ``StoreError`` reading the store.
    public static func names(referredToIn database: Database, columns: [(table: String, column: String)]) throws -> Set<String> {
        var names: Set<String> = []
        for (table, column) in columns {
            guard try database.tableExists(table), try database.columns(of: table).contains(column) else { continue }
            let quoted = SQLName.quoted(column)
            let sql = "SELECT \(quoted) FROM \(SQLName.quoted(table)) WHERE typeof(\(quoted)) = 'blob' AND substr(\(quoted), 1, 1) = x'02'"
            try database.forEachRow(sql) { statement in
                if let reference = statement.withUnsafeBytes(at: 0, { ExternalDataReference(columnBytes: $0) }) {
                    names.insert(reference.fileName)
                }
            }
        }
        return names
    }
}
