import MoultModel

// MARK: - Indexes

extension LayoutBuilder {
    /// `<TABLE>_<COLUMN>_INDEX`, once per column.
    mutating func addIndex(_ table: String, column: String) {
        let name = "\(table)_\(column)_INDEX"
        guard !indexes[table, default: []].contains(where: { $0.name == name }) else { return }
        indexes[table, default: []].append(IndexLayout(name: name, table: table, isUnique: false, terms: [SQLName.quoted(column)]))
    }

    /// Whether a root entity's user info asks Core Data to leave out its `Z_ENT` index:
    /// `_NSEntityOmitSubentityColumnIndex`, `yes` or `1` in any case.
    static func omitsSubentityColumnIndex(_ entity: EntityDescription) -> Bool {
        guard let value = entity.userInfo["_NSEntityOmitSubentityColumnIndex"]?.lowercased() else { return false }
        return value == "yes" || value == "1"
    }

    /// An entity's indexes beyond its columns': its hierarchy's `Z_ENT` index (on a root), one unique
    /// index per uniqueness constraint, its fetch indexes and its location attributes' R-trees.
    mutating func layOutIndexes(of entity: EntityDescription) throws(StoreError) {
        let table = table(of: entity.name)
        // Every hierarchy's table gets a Z_ENT index, abstract root with one sub-entity included
        // (CoreDataPlus' SampleModel2: abstract Writer, its one sub-entity Author, ZWRITER_Z_ENT_INDEX),
        // unless the root's user info says `_NSEntityOmitSubentityColumnIndex` = YES (or 1), as Core
        // Data's index maker and store migrator read it (their decompiled form). Photos' GenericAsset
        // carries the key in its store's model cache, and its ZGENERICASSET has no such index.
        if entity.parentName == nil && hierarchy(from: entity.name).count > 1 && !Self.omitsSubentityColumnIndex(entity) {
            indexes[table, default: []].append(IndexLayout(name: "\(table)_Z_ENT_INDEX", table: table, isUnique: false, terms: ["Z_ENT"]))
        }
        for constraint in entity.uniquenessConstraints {
            guard !constraint.isEmpty else {
                throw StoreError(
                    .invalidValue, "entity '\(entity.name)' has a uniqueness constraint with no property: there is no column to index",
                    entity: entity.name)
            }
            let terms = try constraint.map { (property) throws(StoreError) in
                guard let column = column(of: property, from: entity.name) else {
                    throw StoreError(.unknownName, "the uniqueness constraint names '\(property)', which has no column", entity: entity.name)
                }
                return "\(SQLName.quoted(column)) COLLATE BINARY ASC"
            }
            indexes[table, default: []].append(
                IndexLayout(name: "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), table: table, isUnique: true, terms: terms))
        }
        for fetchIndex in entity.fetchIndexes { try layOut(fetchIndex, of: entity, table: table) }
        try layOutLocationAttributes(of: entity, table: table)
    }
}
