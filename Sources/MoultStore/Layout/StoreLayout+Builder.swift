import Foundation
import MoultModel

/// Builds a ``StoreLayout`` from a model, rule by rule (CORE-DATA-FORMATS.md §3).
struct LayoutBuilder {
    let model: ObjectModel
    var entities: [EntityLayout] = []
    var tables: [TableLayout] = []
    var joinTables: [JoinTableLayout] = []
    var rTrees: [RTreeLayout] = []
    var derivedTriggers: [String] = []
    var unwritableDerivations: [String] = []
    var ignoredFetchIndexElements: [String] = []

    /// `Z_ENT` by entity name.
    private var numbers: [String: Int32] = [:]
    /// Per table: columns taken so far, and the columns with their sort keys.
    private var taken: [String: Set<String>] = [:]
    private var pending: [String: [PendingColumn]] = [:]
    var indexes: [String: [IndexLayout]] = [:]
    /// Columns of the properties each entity declares: entity → property → column.
    private var declared: [String: [String: String]] = [:]
    private var declaredToOnes: [String: [ToOneColumn]] = [:]
    private var declaredAttributes: [String: [AttributeColumn]] = [:]
    private var declaredToManys: [String: [ToManyLayout]] = [:]
    /// Join-table column names taken, per inheritance root: one name space across the join tables of a
    /// hierarchy.
    private var joinColumnsTaken: [String: Set<String>] = [:]

    private struct PendingColumn {
        var column: ColumnLayout
        var rank: Int
        var entity: Int32
        var kind: Int
        var sortName: String
    }

    /// Entity numbers read from a store (`Z_PRIMARYKEY`), used instead of computed ones.
    private let givenNumbers: [String: Int32]?

    init(model: ObjectModel, numbers: [String: Int32]? = nil) {
        self.model = model
        givenNumbers = numbers
    }

    // MARK: - Rules

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

    /// Core Data's order of entity names: Foundation's `caseInsensitiveCompare`, so `_` sorts before
    /// letters and `Item10` before `Item2`. Names equal but for case fall back to byte order (unverified).
    static func precedes(_ a: String, _ b: String) -> Bool {
        switch a.caseInsensitiveCompare(b) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }

    /// The entity and its descendants in numbering order: depth first, parents before children,
    /// siblings in ``precedes(_:_:)`` order.
    func hierarchy(from entityName: String) -> [EntityDescription] {
        guard let entity = model.entity(named: entityName) else { return [] }
        return [entity] + model.subentities(of: entityName).sorted { Self.precedes($0.name, $1.name) }.flatMap { hierarchy(from: $0.name) }
    }

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

    /// Whether a root entity's user info asks Core Data to leave out its `Z_ENT` index:
    /// `_NSEntityOmitSubentityColumnIndex`, `yes` or `1` in any case.
    static func omitsSubentityColumnIndex(_ entity: EntityDescription) -> Bool {
        guard let value = entity.userInfo["_NSEntityOmitSubentityColumnIndex"]?.lowercased() else { return false }
        return value == "yes" || value == "1"
    }

    private func rootNumber(of entityName: String) -> Int32 {
        numbers[model.root(of: entityName)?.name ?? entityName] ?? 0
    }

    func table(of entityName: String) -> String {
        "Z" + Self.uppercasedName(model.root(of: entityName)?.name ?? entityName)
    }

    /// Claims a column name in a table, suffixing `1`, `2`… on a collision (the rule beyond `1` is unverified).
    private mutating func claim(_ base: String, in table: String) -> String {
        var name = base
        var suffix = 1
        while taken[table, default: []].contains(name) {
            name = base + String(suffix)
            suffix += 1
        }
        taken[table, default: []].insert(name)
        return name
    }

    /// Claims a join key-column name in the name space of the hierarchy of `entityName`, whose number
    /// the name carries: a name taken gets `1`, then `2`….
    private mutating func claimJoinColumn(_ base: String, of entityName: String) -> String {
        let space = model.root(of: entityName)?.name ?? entityName
        var name = base
        var suffix = 1
        while joinColumnsTaken[space, default: []].contains(name) {
            name = base + String(suffix)
            suffix += 1
        }
        joinColumnsTaken[space, default: []].insert(name)
        return name
    }

    private mutating func addColumn(
        _ name: String, _ type: String, table: String, rank: Int, entity: Int32, kind: Int, sortName: String
    ) {
        pending[table, default: []].append(
            PendingColumn(column: ColumnLayout(name: name, declaredType: type), rank: rank, entity: entity, kind: kind, sortName: sortName))
    }

    private mutating func addIndex(_ table: String, column: String) {
        let name = "\(table)_\(column)_INDEX"
        guard !indexes[table, default: []].contains(where: { $0.name == name }) else { return }
        indexes[table, default: []].append(IndexLayout(name: name, table: table, isUnique: false, terms: [SQLName.quoted(column)]))
    }

    /// Whether an ancestor declares this very attribute: a sub-entity listing what it inherits (models
    /// rebuilt from a store's model cache do) stores it once, in the inherited column.
    private func inherits(_ attribute: AttributeDescription, in entity: EntityDescription) -> Bool {
        model.ancestors(of: entity.name).contains { $0.attribute(named: attribute.name) == attribute }
    }

    /// Whether an ancestor declares this very relationship (as for attributes); a
    /// different one under the same name is refused when the model is created.
    private func inherits(_ relationship: RelationshipDescription, in entity: EntityDescription) -> Bool {
        model.ancestors(of: entity.name).contains { $0.relationship(named: relationship.name) == relationship }
    }

    /// The entity among `entityName` and its ancestors that declares a relationship with this name: the
    /// topmost, as a sub-entity may list what it inherits again (models rebuilt from a model cache do).
    private func declaringEntity(ofRelationship name: String, from entityName: String) -> EntityDescription? {
        ([model.entity(named: entityName)].compactMap { $0 } + model.ancestors(of: entityName))
            .last { $0.relationship(named: name) != nil }
    }

    /// The column of a property as seen from an entity (declared there or inherited).
    func column(of property: String, from entityName: String) -> String? {
        for entity in [model.entity(named: entityName)].compactMap({ $0 }) + model.ancestors(of: entityName) {
            if let column = declared[entity.name]?[property] { return column }
        }
        return nil
    }

    // MARK: - Build

    mutating func build() throws(StoreError) {
        let roots = model.entities.filter { $0.parentName == nil }.sorted { Self.precedes($0.name, $1.name) }
        let ordered = roots.flatMap { hierarchy(from: $0.name) }
        if let given = givenNumbers {
            numbers = given
        } else {
            for (index, entity) in ordered.enumerated() { numbers[entity.name] = Int32(index + 1) }
        }

        // Attributes and to-one relationships, entity by entity in Z_ENT order: a lower Z_ENT claims a
        // name first, so a later sub-entity declaring the same attribute gets the suffixed column.
        for root in roots {
            let table = table(of: root.name)
            for name in ["Z_PK", "Z_ENT", "Z_OPT"] {
                taken[table, default: []].insert(name)
                addColumn(name, "INTEGER", table: table, rank: -1, entity: 0, kind: 0, sortName: name == "Z_PK" ? "0" : name == "Z_ENT" ? "1" : "2")
            }
        }
        for entity in ordered {
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

        // To-many relationships.
        for entity in ordered {
            let number = numbers[entity.name]!
            for relationship in entity.relationships
            where !relationship.isTransient && relationship.isToMany && !inherits(relationship, in: entity) {
                let inverse = model.inverse(of: relationship)
                let destinationTable = table(of: relationship.destinationEntity)
                let storage: ToManyLayout.Storage
                if let inverse, !inverse.isToMany {
                    // One-to-many: the inverse's column is the link; an ordered one adds Z_FOK_<INVERSE>.
                    let inverseEntity = relationship.inverseEntity ?? relationship.destinationEntity
                    let inverseToOne = ([inverseEntity] + model.ancestors(of: inverseEntity).map(\.name))
                        .compactMap { [declaredToOnes] in declaredToOnes[$0]?.first { $0.name == inverse.name } }.first
                    guard let column = inverseToOne?.column else {
                        throw StoreError(
                            .unknownName, "the inverse '\(inverse.name)' of '\(entity.name).\(relationship.name)' has no column",
                            entity: entity.name)
                    }
                    var orderColumn: String?
                    if relationship.isOrdered {
                        let fok = claim("Z_FOK_" + Self.uppercasedName(inverse.name), in: destinationTable)
                        addColumn(fok, "INTEGER", table: destinationTable, rank: 0, entity: number, kind: 2, sortName: fok)
                        orderColumn = fok
                    }
                    storage = .destinationColumn(
                        table: destinationTable, column: column, entityColumn: inverseToOne?.entityColumn, orderColumn: orderColumn)
                } else if inverse != nil {
                    continue  // many-to-many: a join table, laid out by layOutManyToMany()
                } else {
                    // No inverse: a hidden key on the destination table, Z<N><NAME> (unverified), indexed.
                    let column = claim("Z\(number)" + Self.uppercasedName(relationship.name), in: destinationTable)
                    addColumn(column, "INTEGER", table: destinationTable, rank: 0, entity: number, kind: 2, sortName: column)
                    addIndex(destinationTable, column: column)
                    var orderColumn: String?
                    if relationship.isOrdered {
                        // Unverified: the order column of an ordered to-many without inverse.
                        let fok = claim("Z_FOK_\(number)" + Self.uppercasedName(relationship.name), in: destinationTable)
                        addColumn(fok, "INTEGER", table: destinationTable, rank: 0, entity: number, kind: 2, sortName: fok)
                        orderColumn = fok
                    }
                    storage = .destinationColumn(table: destinationTable, column: column, entityColumn: nil, orderColumn: orderColumn)
                }
                declaredToManys[entity.name, default: []].append(
                    ToManyLayout(name: relationship.name, destination: relationship.destinationEntity, isOrdered: relationship.isOrdered, storage: storage))
            }
        }

        layOutManyToMany()
        for entity in ordered { layOutDerivedAttributes(of: entity) }

        // Hierarchy, uniqueness and fetch indexes.
        for entity in ordered {
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

        // Assemble.
        for root in roots {
            let name = table(of: root.name)
            let columns = (pending[name] ?? []).sorted { a, b in
                (a.rank, a.entity, a.kind, a.sortName) < (b.rank, b.entity, b.kind, b.sortName)
            }.map(\.column)
            tables.append(
                TableLayout(
                    name: name, rootEntity: root.name, entityNumbers: hierarchy(from: root.name).compactMap { numbers[$0.name] },
                    columns: columns, indexes: indexes[name] ?? []))
        }
        // With a store's own numbers, the walk's order need not be Z_ENT order.
        tables.sort { (numbers[$0.rootEntity] ?? 0) < (numbers[$1.rootEntity] ?? 0) }
        uniqueIndexNames()
        try checkLimits()
        for entity in ordered {
            let chain = model.ancestors(of: entity.name).reversed().map(\.name) + [entity.name]
            entities.append(
                EntityLayout(
                    name: entity.name, number: numbers[entity.name]!, superNumber: entity.parentName.flatMap { numbers[$0] } ?? 0,
                    rootName: model.root(of: entity.name)?.name ?? entity.name, rootNumber: rootNumber(of: entity.name),
                    table: table(of: entity.name),
                    hierarchyNumbers: hierarchy(from: entity.name).compactMap { numbers[$0.name] },
                    isAbstract: entity.isAbstract,
                    attributes: chain.flatMap { declaredAttributes[$0] ?? [] },
                    toOneRelationships: chain.flatMap { declaredToOnes[$0] ?? [] },
                    toManyRelationships: chain.flatMap { declaredToManys[$0] ?? [] }))
        }
        entities.sort { $0.number < $1.number }
    }

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
    private mutating func layOutManyToMany() {
        var made: Set<String> = []
        for entity in model.entities.sorted(by: { Self.precedes($0.name, $1.name) }) {
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

    // MARK: - Derived attributes

    /// The triggers that keep an entity's derived attributes current, as Core Data writes them.
    ///
    /// One form is confirmed by a real store: `toMany.@count` through a one-to-many (CoreDataPlus'
    /// `Book.pagesCount = pages.@count`), whose five triggers SampleModel2_V2.sqlite holds. The others
    /// follow Core Data's trigger generator (`NSSQLDerivedAttributeSQLGenerator`) as published in
    /// decompiled form, which gives exactly those five for that form; no fixture store has them (see the
    /// <doc:CoreDataStoreLayout> article, "Derived attributes"):
    /// - an own attribute, or a string function of one (`name`, `canonical:(name)`), and `now()`:
    ///   `Z_DA_<TABLE>_<Entity>_<attribute>_INSERT` and `_UPDATE` on the entity's table;
    /// - a to-one's attribute, or a string function of one (`author.name`, `lowercase:(author.name)`):
    ///   `…_SOURCE_INSERT`, `…_SOURCE_UPDATE` on the entity's table and `…_PARAMETER_INSERT`,
    ///   `…_PARAMETER_UPDATE` on the destination's;
    /// - `@count` and `@sum` through a one-to-many: `…_PARAMETER_INSERT`, `_UPDATE_INCREMENT`,
    ///   `_UPDATE_DECREMENT`, `_DELETE` on the destination's table and `…_SOURCE_INSERT` on the entity's;
    /// - `@min` and `@max` through a one-to-many: `Z_DA_<DESTINATION TABLE>_…_INSERT`, `_UPDATE_SET`,
    ///   `_UPDATE_UNSET`, `_DELETE` and `Z_DA_<TABLE>_…_INSERT`;
    /// - `@count` through a many-to-many: `…_PARAMETER_INSERT` and `_DELETE` on the join table and
    ///   `…_SOURCE_INSERT`.
    ///
    /// The triggers also compute the values while a store is filled, in any order of rows and links, so
    /// `create` and a migration need nothing more. What Core Data's store refuses is recorded in
    /// ``unwritableDerivations`` (reading a store is not affected; writing one is refused).
    private mutating func layOutDerivedAttributes(of entity: EntityDescription) {
        for attribute in entity.attributes where attribute.isDerived && !inherits(attribute, in: entity) {
            let text = attribute.derivationExpression ?? ""
            let subject = "the derived attribute '\(entity.name).\(attribute.name)' ('\(text)')"
            do throws(Unwritable) {
                let expression: DerivationExpression
                do {
                    expression = try DerivationExpression(text)
                } catch {
                    throw Unwritable(error.message)
                }
                derivedTriggers += try derivedTriggerSQL(expression, of: attribute, in: entity)
            } catch {
                unwritableDerivations.append("\(subject): \(error.message)")
            }
        }
    }

    private struct Unwritable: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The `Z_ENT` condition Core Data adds for an entity that shares its table with a parent:
    /// `3 = NEW.Z_ENT`, or `3 <= NEW.Z_ENT AND NEW.Z_ENT <= 5` with sub-entities; nil for a root.
    private func entityCondition(_ entityName: String, row: String) -> String? {
        guard model.entity(named: entityName)?.parentName != nil, let number = numbers[entityName] else { return nil }
        let last = hierarchy(from: entityName).compactMap { numbers[$0.name] }.max() ?? number
        let column = row.isEmpty ? "Z_ENT" : "\(row).Z_ENT"
        return last > number ? "\(number) <= \(column) AND \(column) <= \(last)" : "\(number) = \(column)"
    }

    /// The triggers of one derived attribute, as Core Data's generator writes them for its form.
    private func derivedTriggerSQL(
        _ expression: DerivationExpression, of attribute: AttributeDescription, in entity: EntityDescription
    ) throws(Unwritable) -> [String] {
        guard let derivedColumn = declared[entity.name]?[attribute.name] else {
            throw Unwritable("it has no column (its type has none)")
        }
        let table = self.table(of: entity.name)
        let name = "Z_DA_\(table)_\(entity.name)_\(attribute.name)"
        let (t, c) = (SQLName.quoted(table), SQLName.quoted(derivedColumn))
        func notify(_ function: String, from: String, where condition: String) -> String {
            "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute.name)', \(c)) FROM \(SQLName.quoted(from)) WHERE \(condition)"
        }
        let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
        let inserted = "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"
        func sqlFunction(_ function: DerivationExpression.StringFunction) -> String {
            switch function {
            case .canonical: "NSCoreDataCanonical"
            case .lowercase: "NSCoreDataToLower"
            case .uppercase: "NSCoreDataToUpper"
            }
        }

        // An own attribute, a function of one, or now(): two triggers on the entity's own table.
        func onOwnTable(watching watched: String, newValue: String) -> [String] {
            [
                "CREATE TRIGGER \(SQLName.quoted(name + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW WHEN (NEW.\(watched) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE Z_PK = NEW.Z_PK; \(notify(inserted, from: table, where: "Z_PK = NEW.Z_PK")); END",
                "CREATE TRIGGER \(SQLName.quoted(name + "_UPDATE")) AFTER UPDATE OF \(watched) ON \(t) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE Z_PK = NEW.Z_PK; \(notify(updated, from: table, where: "Z_PK = NEW.Z_PK")); END",
            ]
        }
        let path = expression.keyPath
        switch expression.form {
        case .now:
            return onOwnTable(watching: "Z_OPT", newValue: "NSCoreDataNow()")
        case .keyPath where path.count == 1, .function where path.count == 1:
            guard model.attribute(named: path[0], of: entity.name) != nil, let source = column(of: path[0], from: entity.name) else {
                throw Unwritable("'\(path[0])' is not an attribute of '\(entity.name)' with a column (Core Data: bad keypath)")
            }
            let quoted = SQLName.quoted(source)
            if case .function(let function, _) = expression.form {
                return onOwnTable(watching: quoted, newValue: "\(sqlFunction(function))(NEW.\(quoted))")
            }
            return onOwnTable(watching: quoted, newValue: "NEW.\(quoted)")
        case .keyPath, .function:
            guard path.count == 2 else {
                throw Unwritable("a key path of \(path.count) steps: Core Data's store takes a to-one and an attribute at most (Unsupported: multi-step keypath)")
            }
            guard let toOne = model.relationship(named: path[0], of: entity.name), !toOne.isToMany,
                let key = column(of: path[0], from: entity.name)
            else {
                throw Unwritable("'\(path[0])' is not a to-one of '\(entity.name)': a key path of two steps goes through a to-one")
            }
            guard model.attribute(named: path[1], of: toOne.destinationEntity) != nil,
                let parameter = column(of: path[1], from: toOne.destinationEntity)
            else {
                throw Unwritable("'\(path[1])' is not an attribute of '\(toOne.destinationEntity)' with a column (Unsupported: bad keypath, should be toOne.attribute)")
            }
            let destination = self.table(of: toOne.destinationEntity)
            let (d, k, p) = (SQLName.quoted(destination), SQLName.quoted(key), SQLName.quoted(parameter))
            var selected = p
            var newValue = "NEW.\(p)"
            if case .function(let function, _) = expression.form {
                selected = "\(sqlFunction(function))(\(p))"
                newValue = "\(sqlFunction(function))(NEW.\(p))"
            }
            let own = entityCondition(entity.name, row: "NEW")
            let shared = entityCondition(entity.name, row: "")
            let andOwn = own.map { " AND " + $0 } ?? ""
            let andShared = shared.map { " AND " + $0 } ?? ""
            let source = "\(name)_SOURCE"
            let parameterName = "Z_DA_\(destination)_\(entity.name)_\(attribute.name)_PARAMETER"
            let fetch = "(SELECT \(selected) FROM \(d) WHERE Z_PK = NEW.\(k))"
            return [
                "CREATE TRIGGER \(SQLName.quoted(source + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(fetch) WHERE Z_PK = NEW.Z_PK\(andOwn); \(notify(inserted, from: table, where: "Z_PK = NEW.Z_PK" + andOwn)); END",
                "CREATE TRIGGER \(SQLName.quoted(source + "_UPDATE")) AFTER UPDATE OF \(k) ON \(t) FOR EACH ROW\(own.map { " WHEN " + $0 } ?? "") BEGIN UPDATE \(t) SET \(c) = \(fetch) WHERE Z_PK = NEW.Z_PK; \(notify(updated, from: table, where: "Z_PK = NEW.Z_PK")); END",
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE \(k) = NEW.Z_PK\(andShared); \(notify(inserted, from: table, where: "\(k) = NEW.Z_PK" + andShared)); END",
                "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE")) AFTER UPDATE OF \(p) ON \(d) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(newValue) WHERE \(k) = NEW.Z_PK\(andShared); \(notify(updated, from: table, where: "\(k) = NEW.Z_PK" + andShared)); END",
            ]
        case .count, .aggregate:
            guard let toMany = model.relationship(named: path[0], of: entity.name), toMany.isToMany,
                let storage = (declaredToManys[entity.name] ?? []).first(where: { $0.name == path[0] })?.storage
            else {
                throw Unwritable("'\(path[0])' is not a stored to-many of '\(entity.name)': an aggregate is taken over a to-many")
            }
            let when = entityCondition(entity.name, row: "NEW").map { " WHEN " + $0 } ?? ""
            let andShared = entityCondition(entity.name, row: "").map { " AND " + $0 } ?? ""
            switch storage {
            case .joinTable(let joinTable, let sourceColumn, _, _):
                guard case .count = expression.form, path.count == 1 else {
                    throw Unwritable("Core Data's store takes only @count over a many-to-many (Unsupported: unsupported function)")
                }
                let (j, k) = (SQLName.quoted(joinTable), SQLName.quoted(sourceColumn))
                let parameterName = "Z_DA_\(joinTable)_\(entity.name)_\(attribute.name)_PARAMETER"
                return [
                    "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(j) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = IFNULL(\(c), 0) + 1 WHERE Z_PK = NEW.\(k)\(andShared); \(notify(updated, from: table, where: "Z_PK = NEW.\(k)" + andShared)); END",
                    "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(j) FOR EACH ROW BEGIN UPDATE \(t) SET \(c) = \(c) - 1 WHERE Z_PK = OLD.\(k)\(andShared); \(notify(updated, from: table, where: "Z_PK = OLD.\(k)" + andShared)); END",
                    "CREATE TRIGGER \(SQLName.quoted(name + "_SOURCE_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT IFNULL(COUNT(\(k)), 0) FROM \(j) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(notify(updated, from: table, where: "Z_PK = NEW.Z_PK")); END",
                ]
            case .destinationColumn(let destinationTable, let inverseColumn, _, _):
                guard model.relationship(named: path[0], of: entity.name).flatMap({ model.inverse(of: $0) }) != nil else {
                    throw Unwritable("'\(path[0])' has no inverse: Core Data keeps an aggregate through the inverse's column")
                }
                let (d, k) = (SQLName.quoted(destinationTable), SQLName.quoted(inverseColumn))
                let parameterName = "Z_DA_\(destinationTable)_\(entity.name)_\(attribute.name)"
                var valueColumn: String?
                if case .aggregate(let aggregate, _) = expression.form {
                    let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .double, .float, .decimal]
                    guard let attribute = model.attribute(named: path[1], of: toMany.destinationEntity),
                        aggregate != .sum || numeric.contains(attribute.attributeType),
                        let value = column(of: path[1], from: toMany.destinationEntity)
                    else {
                        throw Unwritable(
                            "'\(path[1])' is not \(aggregate == .sum ? "a numeric attribute" : "an attribute") of '\(toMany.destinationEntity)' with a column")
                    }
                    valueColumn = value
                }
                switch expression.form {
                case .count where path.count == 1:
                    return countTriggers(
                        name: name, parameterName: parameterName + "_PARAMETER", table: table, c: c, d: d, k: k, watched: k, plus: "+ 1", minus: "- 1",
                        total: "COUNT(\(k))", when: when, andShared: andShared, notify: notify)
                case .aggregate(.sum, _):
                    let v = SQLName.quoted(valueColumn!)
                    return countTriggers(
                        name: name, parameterName: parameterName + "_PARAMETER", table: table, c: c, d: d, k: k, watched: "\(k), \(v)",
                        plus: "+ IFNULL(NEW.\(v), 0)", minus: "- IFNULL(OLD.\(v), 0)", total: "SUM(\(v))", when: when, andShared: andShared,
                        notify: notify)
                case .aggregate(let aggregate, _):
                    guard model.entity(named: toMany.destinationEntity)?.parentName == nil else {
                        // Core Data's generator puts an unqualified Z_ENT into the WHEN clause here, which SQLite refuses.
                        throw Unwritable("@\(aggregate.rawValue) over a sub-entity ('\(toMany.destinationEntity)'): Core Data's triggers for it are not valid SQL")
                    }
                    let v = SQLName.quoted(valueColumn!)
                    let (function, comparison) = aggregate == .min ? ("MIN", "<") : ("MAX", ">")
                    let recompute = "UPDATE \(t) SET \(c) = (SELECT \(function)(\(v)) FROM \(d) WHERE \(k) = OLD.\(k)) WHERE Z_PK = OLD.\(k)\(andShared)"
                    let owners = "NEW.\(k) NOT NULL AND NEW.\(v) NOT NULL"
                    return [
                        "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW WHEN (\(owners)) BEGIN UPDATE \(t) SET \(c) = NEW.\(v) WHERE Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison) \(c)); \(notify(updated, from: table, where: "Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison)= \(c))")); END",
                        "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_SET")) AFTER UPDATE OF \(k), \(v) ON \(d) FOR EACH ROW WHEN (\(owners)) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(notify(updated, from: table, where: "Z_PK = OLD.\(k)\(andShared) AND OLD.\(v) \(comparison)= \(c)")); UPDATE \(t) SET \(c) = NEW.\(v) WHERE Z_PK = NEW.\(k)\(andShared) AND (\(c) IS NULL OR NEW.\(v) \(comparison) \(c)); \(notify(updated, from: table, where: "Z_PK = NEW.\(k)\(andShared) AND NEW.\(v) \(comparison)= \(c)")); END",
                        "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_UNSET")) AFTER UPDATE OF \(k), \(v) ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL AND OLD.\(v) NOT NULL AND (NEW.\(k) IS NULL OR NEW.\(v) IS NULL)) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(notify(updated, from: table, where: "Z_PK = OLD.\(k)\(andShared) AND (\(c) IS NULL OR OLD.\(v) \(comparison)= \(c))")); END",
                        "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL AND OLD.\(v) NOT NULL) BEGIN \(recompute) AND OLD.\(v) \(comparison)= \(c); \(notify(updated, from: table, where: "Z_PK = OLD.\(k)\(andShared) AND (\(c) IS NULL OR OLD.\(v) \(comparison)= \(c))")); END",
                        "CREATE TRIGGER \(SQLName.quoted(name + "_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT \(function)(\(v)) FROM \(d) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(notify(inserted, from: table, where: "Z_PK = NEW.Z_PK")); END",
                    ]
                default:
                    throw Unwritable("@count of a key path of \(path.count) steps: Core Data's store counts a to-many's destinations only")
                }
            }
        }
    }

    /// `@count` and `@sum` through a one-to-many: the four triggers on the destination's table that add
    /// and take away, and the one on the entity's table that totals a new row.
    private func countTriggers(
        name: String, parameterName: String, table: String, c: String, d: String, k: String, watched: String, plus: String, minus: String,
        total: String, when: String, andShared: String, notify: (String, String, String) -> String
    ) -> [String] {
        let t = SQLName.quoted(table)
        let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
        return [
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_INSERT")) AFTER INSERT ON \(d) FOR EACH ROW WHEN (NEW.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = IFNULL(\(c), 0) \(plus) WHERE Z_PK = NEW.\(k)\(andShared); \(notify(updated, table, "Z_PK = NEW.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_INCREMENT")) AFTER UPDATE OF \(watched) ON \(d) FOR EACH ROW WHEN (NEW.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(plus) WHERE Z_PK = NEW.\(k)\(andShared); \(notify(updated, table, "Z_PK = NEW.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_UPDATE_DECREMENT")) AFTER UPDATE OF \(watched) ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(minus) WHERE Z_PK = OLD.\(k)\(andShared); \(notify(updated, table, "Z_PK = OLD.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(parameterName + "_DELETE")) AFTER DELETE ON \(d) FOR EACH ROW WHEN (OLD.\(k) NOT NULL) BEGIN UPDATE \(t) SET \(c) = \(c) \(minus) WHERE Z_PK = OLD.\(k)\(andShared); \(notify(updated, table, "Z_PK = OLD.\(k)" + andShared)); END",
            "CREATE TRIGGER \(SQLName.quoted(name + "_SOURCE_INSERT")) AFTER INSERT ON \(t) FOR EACH ROW\(when) BEGIN UPDATE \(t) SET \(c) = (SELECT IFNULL(\(total), 0) FROM \(d) WHERE \(k) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(notify("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", table, "Z_PK = NEW.Z_PK")); END",
        ]
    }

    // MARK: - Names and limits

    /// One name per index across the schema (SQLite's tables and indexes share one name space): an
    /// index identical to one already there (the same uniqueness constraint twice) is dropped, and a
    /// different one whose name is taken gets `_2`, `_3`… (unverified: two such indexes cannot be made
    /// in Xcode).
    private mutating func uniqueIndexNames() {
        var taken = Set(["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"] + tables.map { $0.name.uppercased() } + joinTables.map { $0.name.uppercased() })
        var seen: [String: IndexLayout] = [:]
        func claim(_ indexes: [IndexLayout]) -> [IndexLayout] {
            var kept: [IndexLayout] = []
            for var index in indexes {
                if let existing = seen[index.name.uppercased()], existing.table == index.table, existing.terms == index.terms, existing.condition == index.condition,
                    existing.isUnique == index.isUnique
                {
                    continue
                }
                let base = index.name
                var suffix = 2
                while taken.contains(index.name.uppercased()) {
                    index.name = "\(base)_\(suffix)"
                    suffix += 1
                }
                taken.insert(index.name.uppercased())
                seen[base.uppercased()] = seen[base.uppercased()] ?? index
                kept.append(index)
            }
            return kept
        }
        for position in tables.indices { tables[position].indexes = claim(tables[position].indexes) }
        for position in joinTables.indices { joinTables[position].indexes = claim(joinTables[position].indexes) }
    }

    /// SQLite's limits that a schema can reach, checked before any table is made: the columns of one
    /// table (an inheritance hierarchy shares its root's table) and the length of one statement.
    private func checkLimits() throws(StoreError) {
        let limits = SQLite.limits
        for table in tables where table.columns.count > limits.columns {
            throw StoreError(
                .invalidValue,
                "entity '\(table.rootEntity)' and its sub-entities need \(table.columns.count) columns in table \(table.name), more than the \(limits.columns) SQLite allows in one table (its column limit, SQLITE_MAX_COLUMN, is reached)",
                entity: table.rootEntity)
        }
        let statements = tables.map { ($0.rootEntity, $0.createSQL) } + joinTables.map { ($0.name, $0.createSQL) }
            + (tables.flatMap(\.indexes) + joinTables.flatMap(\.indexes)).map { ($0.table, $0.createSQL) }
        for (owner, sql) in statements where sql.utf8.count >= limits.sqlLength {
            throw StoreError(
                .invalidValue, "the SQL creating '\(owner)' is \(sql.utf8.count) bytes, more than the \(limits.sqlLength) SQLite takes in one statement",
                entity: owner)
        }
    }
}
