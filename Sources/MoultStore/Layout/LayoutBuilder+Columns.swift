import MoultModel

// MARK: - Columns and property order

extension LayoutBuilder {
    /// The column type Core Data declares for an attribute type, and its rank in Core Data's column order.
    static func declaredType(_ attribute: AttributeDescription) -> (type: String, rank: Int)? {
        switch attribute.attributeType {
        case .integer16, .integer32, .integer64, .boolean: ("INTEGER", 0)
        case .double, .float: ("FLOAT", 1)
        case .date: ("TIMESTAMP", 2)
        case .decimal: ("DECIMAL", 3)
        case .string, .uri: ("VARCHAR", 4)
        // ObjectID attributes: unverified against a real store; Core Data keeps them as URI text.
        case .objectID: ("VARCHAR", 4)
        case .uuid, .transformable: ("BLOB", 5)
        // Composite attributes: unverified (Core Data may flatten them into one column per element).
        case .composite: ("BLOB", 5)
        case .binary: ("BLOB", attribute.allowsExternalBinaryDataStorage ? 6 : 5)
        case .undefined: nil
        }
    }

    static func uppercasedName(_ name: String) -> String { name.uppercased() }

    /// The keys of an entity's SQL properties in declaration order, inherited ones first: `_ent`, `_pk`,
    /// `_opt`; each attribute's name; for a to-one `_Z<NAME>`, `_Z<n>_<NAME>` when it has a companion
    /// column, and its name; each to-many's name. Transient properties are left out (unverified: no
    /// decision seen depends on them). Within one entity, attributes come before relationships, as
    /// Xcode lists them.
    func propertyKeys(of entityName: String) -> [String] {
        var keys = ["_ent", "_pk", "_opt"]
        var seen: Set<String> = []
        for entity in model.ancestors(of: entityName).reversed() + [model.entity(named: entityName)].compactMap({ $0 }) {
            for attribute in entity.attributes
            where (!attribute.isTransient || attribute.isDerived) && Self.declaredType(attribute) != nil && seen.insert(attribute.name).inserted {
                keys.append(attribute.name)
            }
            for relationship in entity.relationships where !relationship.isTransient && seen.insert(relationship.name).inserted {
                if !relationship.isToMany {
                    keys.append("_Z" + Self.uppercasedName(relationship.name))
                    if !model.subentities(of: relationship.destinationEntity).isEmpty {
                        keys.append("_Z\(rootNumber(of: relationship.destinationEntity))_" + Self.uppercasedName(relationship.name))
                    }
                }
                keys.append(relationship.name)
            }
        }
        return keys
    }

    /// Claims a column name in a table, suffixing `1`, `2`… on a collision (the rule beyond `1` is unverified).
    mutating func claim(_ base: String, in table: String) -> String {
        Self.claim(base, in: &taken[table, default: []])
    }

    /// `base`, or on a collision `base` suffixed `1`, then `2`…, taken in `names`.
    private static func claim(_ base: String, in names: inout Set<String>) -> String {
        var name = base
        var suffix = 1
        while names.contains(name) {
            name = base + String(suffix)
            suffix += 1
        }
        names.insert(name)
        return name
    }

    private mutating func addColumn(
        _ name: String, _ type: String, table: String, rank: Int, entity: Int32, kind: Int, sortName: String
    ) {
        pending[table, default: []].append(
            PendingColumn(column: ColumnLayout(name: name, declaredType: type), rank: rank, entity: entity, kind: kind, sortName: sortName))
    }

    /// Whether an ancestor declares this very attribute: a sub-entity listing what it inherits (models
    /// rebuilt from a store's model cache do) stores it once, in the inherited column.
    func inherits(_ attribute: AttributeDescription, in entity: EntityDescription) -> Bool {
        model.ancestors(of: entity.name).contains { $0.attribute(named: attribute.name) == attribute }
    }

    /// Whether an ancestor declares this very relationship (as for attributes); a
    /// different one under the same name is refused when the model is created.
    private func inherits(_ relationship: RelationshipDescription, in entity: EntityDescription) -> Bool {
        model.ancestors(of: entity.name).contains { $0.relationship(named: relationship.name) == relationship }
    }

    /// The column of a property as seen from an entity (declared there or inherited).
    func column(of property: String, from entityName: String) -> String? {
        for entity in [model.entity(named: entityName)].compactMap({ $0 }) + model.ancestors(of: entityName) {
            if let column = declared[entity.name]?[property] { return column }
        }
        return nil
    }

    // MARK: - Laying out columns

    /// `Z_PK`, `Z_ENT` and `Z_OPT`, first in a root's table.
    mutating func addKeyColumns(of root: EntityDescription) {
        let table = table(of: root.name)
        for name in ["Z_PK", "Z_ENT", "Z_OPT"] {
            taken[table, default: []].insert(name)
            addColumn(name, "INTEGER", table: table, rank: -1, entity: 0, kind: 0, sortName: name == "Z_PK" ? "0" : name == "Z_ENT" ? "1" : "2")
        }
    }

    /// The columns of the attributes and to-ones an entity declares (a to-one's companion `Z_ENT`
    /// column when its destination has sub-entities), each to-one indexed.
    mutating func layOutAttributesAndToOnes(of entity: EntityDescription) {
        let table = table(of: entity.name)
        let number = numbers[entity.name]!
        for attribute in entity.attributes where (!attribute.isTransient || attribute.isDerived) && !inherits(attribute, in: entity) {
            guard let (type, rank) = Self.declaredType(attribute) else { continue }
            let column = claim("Z" + Self.uppercasedName(attribute.name), in: table)
            addColumn(column, type, table: table, rank: rank, entity: number, kind: 0, sortName: attribute.name)
            declared[entity.name, default: [:]][attribute.name] = column
            declaredAttributes[entity.name, default: []].append(
                AttributeColumn(name: attribute.name, type: attribute.attributeType, column: column))
            if attribute.isIndexed { addIndex(table, column: column) }  // unverified: classic indexed attribute
        }
        for relationship in entity.relationships
        where !relationship.isTransient && !relationship.isToMany && !inherits(relationship, in: entity) {
            let column = claim("Z" + Self.uppercasedName(relationship.name), in: table)
            addColumn(column, "INTEGER", table: table, rank: 0, entity: number, kind: 1, sortName: relationship.name)
            addIndex(table, column: column)
            var entityColumn: String?
            if !model.subentities(of: relationship.destinationEntity).isEmpty {
                let companion = claim(
                    "Z\(rootNumber(of: relationship.destinationEntity))_" + Self.uppercasedName(relationship.name), in: table)
                addColumn(companion, "INTEGER", table: table, rank: 0, entity: number, kind: 1, sortName: relationship.name + "\u{1}")
                entityColumn = companion
            }
            declared[entity.name, default: [:]][relationship.name] = column
            declaredToOnes[entity.name, default: []].append(
                ToOneColumn(
                    name: relationship.name, destination: relationship.destinationEntity, column: column,
                    entityColumn: entityColumn, destinationNumber: numbers[relationship.destinationEntity] ?? 0))
        }
    }

    /// The to-manys an entity declares that are stored on their destination's rows: a one-to-many
    /// through its inverse's column, a to-many without inverse through a hidden key column. A
    /// many-to-many is laid out by ``layOutManyToMany()``.
    mutating func layOutToManys(of entity: EntityDescription) throws(StoreError) {
        for relationship in entity.relationships
        where !relationship.isTransient && relationship.isToMany && !inherits(relationship, in: entity) {
            let storage: ToManyLayout.Storage
            if let inverse = model.inverse(of: relationship) {
                guard !inverse.isToMany else { continue }  // many-to-many: a join table, laid out by layOutManyToMany()
                storage = try oneToManyStorage(relationship, inverse: inverse, of: entity)
            } else {
                storage = withoutInverseStorage(relationship, of: entity)
            }
            declaredToManys[entity.name, default: []].append(
                ToManyLayout(name: relationship.name, destination: relationship.destinationEntity, isOrdered: relationship.isOrdered, storage: storage))
        }
    }

    /// One-to-many: the inverse's column is the link; an ordered one adds Z_FOK_<INVERSE>.
    private mutating func oneToManyStorage(
        _ relationship: RelationshipDescription, inverse: RelationshipDescription, of entity: EntityDescription
    ) throws(StoreError) -> ToManyLayout.Storage {
        let destinationTable = table(of: relationship.destinationEntity)
        let inverseEntity = relationship.inverseEntity ?? relationship.destinationEntity
        let inverseToOne = ([inverseEntity] + model.ancestors(of: inverseEntity).map(\.name))
            .compactMap { [declaredToOnes] in declaredToOnes[$0]?.first { $0.name == inverse.name } }.first
        guard let column = inverseToOne?.column else {
            throw StoreError(
                .unknownName, "the inverse '\(inverse.name)' of '\(entity.name).\(relationship.name)' has no column",
                entity: entity.name)
        }
        let orderColumn =
            relationship.isOrdered ? addOrderColumn("Z_FOK_" + Self.uppercasedName(inverse.name), in: destinationTable, of: entity) : nil
        return .destinationColumn(table: destinationTable, column: column, entityColumn: inverseToOne?.entityColumn, orderColumn: orderColumn)
    }

    /// No inverse: a hidden key on the destination table, Z<N><NAME> (unverified), indexed.
    private mutating func withoutInverseStorage(_ relationship: RelationshipDescription, of entity: EntityDescription) -> ToManyLayout.Storage {
        let number = numbers[entity.name]!
        let destinationTable = table(of: relationship.destinationEntity)
        let column = claim("Z\(number)" + Self.uppercasedName(relationship.name), in: destinationTable)
        addColumn(column, "INTEGER", table: destinationTable, rank: 0, entity: number, kind: 2, sortName: column)
        addIndex(destinationTable, column: column)
        // Unverified: the order column of an ordered to-many without inverse.
        let orderColumn =
            relationship.isOrdered ? addOrderColumn("Z_FOK_\(number)" + Self.uppercasedName(relationship.name), in: destinationTable, of: entity) : nil
        return .destinationColumn(table: destinationTable, column: column, entityColumn: nil, orderColumn: orderColumn)
    }

    /// The `Z_FOK_` column of an ordered to-many `entity` declares, on its destination's table.
    private mutating func addOrderColumn(_ base: String, in destinationTable: String, of entity: EntityDescription) -> String {
        let fok = claim(base, in: destinationTable)
        addColumn(fok, "INTEGER", table: destinationTable, rank: 0, entity: numbers[entity.name]!, kind: 2, sortName: fok)
        return fok
    }

    // MARK: - Join tables

    /// Lays out every many-to-many pair: one join table each (CORE-DATA-FORMATS.md §3).
    ///
    /// Every entity in case-insensitive name order (a sub-entity at its own place, not under its parent)
    /// meets its relationships, inherited ones included, in its ``PropertyOrder``; the first side of a
    /// pair met owns the table. With the owner O declared on the entity numbered n_O and its inverse I
    /// declared on n_I: table `Z_<n_O><O>`, columns `Z_<n_O><I>` (the owner side's keys) and
    /// `Z_<n_I><O>` (the other side's), then `Z_FOK_` twins of the columns named after an ordered
    /// relationship (the first column's, then the second's). A relationship that is its own inverse
    /// gets `Z_<n><NAME> ( Z_<n><NAME>, REFLEXIVE )`. A key-column name is unique within the hierarchy
    /// of the entity whose number it carries: in the order tables are made, a name taken gets `1`, `2`….
    /// Each table is indexed on both columns, the second first.
    mutating func layOutManyToMany() {
        var made: Set<String> = []
        for entity in model.entities.sorted(by: { Self.precedes($0.name, $1.name) }) {
            // Only a to-many relationship, declared or inherited, can have a join table: an entity
            // without one is not put in Core Data's property order (the cost of laying out an entity of
            // hundreds of attributes).
            guard ([entity] + model.ancestors(of: entity.name)).contains(where: { $0.relationships.contains(where: \.isToMany) }) else { continue }
            for key in PropertyOrder.order(propertyKeys(of: entity.name)) {
                guard let relationship = model.relationship(named: key, of: entity.name), !relationship.isTransient, relationship.isToMany,
                    let inverse = model.inverse(of: relationship), inverse.isToMany,
                    let owner = declaringEntity(ofRelationship: relationship.name, from: entity.name)?.name,
                    let inverseOwner = declaringEntity(
                        ofRelationship: inverse.name, from: relationship.inverseEntity ?? relationship.destinationEntity)?.name
                else { continue }
                let pair = [owner + "." + relationship.name, inverseOwner + "." + inverse.name].sorted().joined(separator: "|")
                guard made.insert(pair).inserted else { continue }
                layOutJoinTable(owner: owner, relationship, inverseOwner: inverseOwner, inverse)
            }
        }
    }

    /// The entity among `entityName` and its ancestors that declares a relationship with this name: the
    /// topmost, as a sub-entity may list what it inherits again (models rebuilt from a model cache do).
    private func declaringEntity(ofRelationship name: String, from entityName: String) -> EntityDescription? {
        ([model.entity(named: entityName)].compactMap { $0 } + model.ancestors(of: entityName))
            .last { $0.relationship(named: name) != nil }
    }

    /// Claims a join key-column name in the name space of the hierarchy of `entityName`, whose number
    /// the name carries: a name taken gets `1`, then `2`….
    private mutating func claimJoinColumn(_ base: String, of entityName: String) -> String {
        let space = model.root(of: entityName)?.name ?? entityName
        return Self.claim(base, in: &joinColumnsTaken[space, default: []])
    }

    /// One join table, its owner side O (`relationship`, declared on `owner`) already chosen.
    private mutating func layOutJoinTable(
        owner: String, _ relationship: RelationshipDescription, inverseOwner: String, _ inverse: RelationshipDescription
    ) {
        let ownerNumber = numbers[owner]!
        let inverseNumber = numbers[inverseOwner]!
        let name = "Z_\(ownerNumber)" + Self.uppercasedName(relationship.name)
        let first = claimJoinColumn("Z_\(ownerNumber)" + Self.uppercasedName(inverse.name), of: owner)
        let twin = { (column: String) in "Z_FOK_" + column.dropFirst(2) }
        if owner == inverseOwner && inverse.name == relationship.name {
            // Its own inverse: Z_<N><NAME> ( Z_<N><NAME>, REFLEXIVE ), indexed (REFLEXIVE, Z_<N><NAME>).
            let order = relationship.isOrdered ? [twin(first)] : []  // unverified
            joinTables.append(
                JoinTableLayout(
                    name: name, columns: [first, "REFLEXIVE"], orderColumns: order,
                    indexes: [
                        IndexLayout(name: "\(name)_REFLEXIVE_INDEX", table: name, isUnique: false, terms: ["REFLEXIVE", SQLName.quoted(first)])
                    ]))
            declaredToManys[owner, default: []].append(
                ToManyLayout(
                    name: relationship.name, destination: relationship.destinationEntity, isOrdered: relationship.isOrdered,
                    storage: .joinTable(table: name, sourceColumn: first, destinationColumn: "REFLEXIVE", orderColumn: order.first)))
            return
        }
        let second = claimJoinColumn("Z_\(inverseNumber)" + Self.uppercasedName(relationship.name), of: inverseOwner)
        // A twin per column named after an ordered relationship: the first column's (named after I),
        // then the second's (named after O). Both ordered: their order is unverified.
        let firstTwin = inverse.isOrdered ? twin(first) : nil
        let secondTwin = relationship.isOrdered ? twin(second) : nil
        // Z_1KEYWORDS_Z_37KEYWORDS_INDEX ON Z_1KEYWORDS (Z_37KEYWORDS, Z_1ASSETATTRIBUTES) in every
        // many-to-many of real stores from framework 637 on.
        let index = IndexLayout(
            name: "\(name)_\(second)_INDEX", table: name, isUnique: false, terms: [SQLName.quoted(second), SQLName.quoted(first)])
        joinTables.append(
            JoinTableLayout(name: name, columns: [first, second], orderColumns: [firstTwin, secondTwin].compactMap { $0 }, indexes: [index]))
        declaredToManys[owner, default: []].append(
            ToManyLayout(
                name: relationship.name, destination: relationship.destinationEntity, isOrdered: relationship.isOrdered,
                storage: .joinTable(table: name, sourceColumn: first, destinationColumn: second, orderColumn: secondTwin)))
        declaredToManys[inverseOwner, default: []].append(
            ToManyLayout(
                name: inverse.name, destination: inverse.destinationEntity, isOrdered: inverse.isOrdered,
                storage: .joinTable(table: name, sourceColumn: second, destinationColumn: first, orderColumn: firstTwin)))
    }
}
