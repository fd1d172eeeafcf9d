import MoultModel

/// A query over a finished store that finds what a migration got wrong in its relationships: each row
/// it gives is one finding, a primary key and (when there is one) the key it names.
///
/// ```swift
/// try database.forEachFinding(.danglingKeys(of: toOne, in: person, target: address)) { key, value in
///     print("Person Z_PK \(key) points at Z_PK \(value ?? 0), which is no Address")
/// }
/// ```
package struct RelationshipCheck: Sendable, Hashable {
    /// The query: its first column is a `Z_PK`, its second (when there is one) the key it names.
    package var sql: String

    /// The rows of `entity` whose to-one key points at no row of `target`'s hierarchy (or at one of
    /// another entity than the relationship's entity column says): the row's key and the key.
    package static func danglingKeys(of toOne: ToOneColumn, in entity: EntityLayout, target: EntityLayout) -> RelationshipCheck {
        let column = SQLName.quoted(toOne.column)
        let sameEntity = toOne.entityColumn.map { " AND d.Z_ENT = a.\(SQLName.quoted($0))" } ?? ""
        return RelationshipCheck(
            sql: "SELECT a.Z_PK, a.\(column) FROM \(SQLName.quoted(entity.table)) a WHERE a.Z_ENT = \(entity.number) AND a.\(column) IS NOT NULL "
                + "AND NOT EXISTS (SELECT 1 FROM \(SQLName.quoted(target.table)) d WHERE d.Z_PK = a.\(column) AND d.Z_ENT IN (\(numbers(target)))\(sameEntity))")
    }

    /// The rows of `entity` whose one-to-one destination's inverse column does not point back: the
    /// row's key and the destination's.
    package static func inversesNotPointingBack(
        of toOne: ToOneColumn, in entity: EntityLayout, target: EntityLayout, inverse: ToOneColumn
    ) -> RelationshipCheck {
        let column = SQLName.quoted(toOne.column)
        return RelationshipCheck(
            sql: "SELECT a.Z_PK, d.Z_PK FROM \(SQLName.quoted(entity.table)) a JOIN \(SQLName.quoted(target.table)) d ON d.Z_PK = a.\(column) "
                + "AND d.Z_ENT IN (\(numbers(target))) WHERE a.Z_ENT = \(entity.number) AND d.\(SQLName.quoted(inverse.column)) IS NOT a.Z_PK")
    }

    /// The keys in a join table's column that name no object of `side`'s hierarchy.
    package static func orphans(inJoinTable table: String, column: String, side: EntityLayout) -> RelationshipCheck {
        let column = SQLName.quoted(column)
        return RelationshipCheck(
            sql: "SELECT j.\(column) FROM \(SQLName.quoted(table)) j WHERE NOT EXISTS "
                + "(SELECT 1 FROM \(SQLName.quoted(side.table)) s WHERE s.Z_PK = j.\(column) AND s.Z_ENT IN (\(numbers(side))))")
    }

    /// The rows of `target` whose to-many key column (the hidden inverse of `entity`'s to-many) names
    /// no object of `entity`'s hierarchy: the row's key and the key.
    package static func orphanKeys(in table: String, column: String, target: EntityLayout, entity: EntityLayout) -> RelationshipCheck {
        let column = SQLName.quoted(column)
        return RelationshipCheck(
            sql: "SELECT d.Z_PK, d.\(column) FROM \(SQLName.quoted(table)) d WHERE d.Z_ENT IN (\(numbers(target))) AND d.\(column) IS NOT NULL AND NOT EXISTS "
                + "(SELECT 1 FROM \(SQLName.quoted(entity.table)) s WHERE s.Z_PK = d.\(column) AND s.Z_ENT IN (\(numbers(entity))))")
    }

    /// An entity's hierarchy's numbers, as an SQL list.
    private static func numbers(_ entity: EntityLayout) -> String { entity.hierarchyNumbers.map(String.init).joined(separator: ", ") }
}

extension Database {
    /// Calls `each` with every finding of a check: the row's primary key and, when the query gives a
    /// second column, the key it names.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func forEachFinding(_ check: RelationshipCheck, _ each: (Int64, Int64?) -> Void) throws(StoreError) {
        let statement = try statement(check.sql)
        try statement.bind([])
        defer { statement.reset() }
        while try statement.step() {
            each(statement.int64(at: 0), statement.columnCount > 1 ? statement.int64(at: 1) : nil)
        }
    }

    /// Calls `each` with every to-one key of a store of `layout` that names no object (see
    /// ``RelationshipCheck/danglingKeys(of:in:target:)``): the entity, its to-one, the to-one's
    /// destination entity, the row's primary key and the key it names.
    ///
    /// ```swift
    /// try database.forEachDanglingToOne(in: layout) { entity, toOne, _, key, value in
    ///     print("\(entity.name) Z_PK \(key).\(toOne.name) names Z_PK \(value ?? 0), which does not exist")
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func forEachDanglingToOne(
        in layout: StoreLayout, _ each: (_ entity: EntityLayout, _ toOne: ToOneColumn, _ target: EntityLayout, _ key: Int64, _ value: Int64?) -> Void
    ) throws(StoreError) {
        for entity in layout.entities {
            for toOne in entity.toOneRelationships {
                guard let target = layout.entity(named: toOne.destination) else { continue }
                try forEachFinding(.danglingKeys(of: toOne, in: entity, target: target)) { each(entity, toOne, target, $0, $1) }
            }
        }
    }

    /// The number of objects of exactly this entity (not its sub-entities); nil when SQLite gives no
    /// integer.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    package func objectCount(of entity: EntityLayout) throws(StoreError) -> Int64? {
        guard case .int(let count)? = try scalar("SELECT COUNT(*) FROM \(SQLName.quoted(entity.table)) WHERE Z_ENT = \(entity.number)") else { return nil }
        return count
    }
}
