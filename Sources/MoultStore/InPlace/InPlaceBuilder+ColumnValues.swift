import MoultModel

// MARK: - Roles and values of columns

extension InPlaceBuilder {
    /// What a column holds for the rows of one entity.
    enum ColumnRole: Hashable {
        case attribute(String)
        case toOne(String)
        /// The companion `Z_ENT` column of a to-one.
        case toOneEntity(String)
        /// The key column of a to-many without inverse, stored on the destination's rows: (owner, relationship).
        case toManyKey(String, String)
        /// The `Z_FOK_` column of an ordered to-many stored on the destination's rows: (owner, relationship).
        case toManyOrder(String, String)
    }

    /// The value a destination column gets for the rows of one source entity.
    enum ColumnValue: Hashable {
        case null
        case column(String)
        case constant(Value)
        /// The source column, its nil replaced by a value.
        case coalesce(String, Value)
        /// A companion `Z_ENT` column with entity numbers translated.
        case renumbered(String, [Int32: Int32])
        /// A value when the source column is not nil (a companion `Z_ENT` for a to-one that had none).
        case constantUnlessNull(String, Value)
        /// An SQL expression over the source row (``InPlaceBuilder/rowAlias``): links cleared where they
        /// reach removed objects, an order numbered, the first of a to-many. Only a rebuild selects it.
        case sql(String)
        /// An SQL expression over the source row, its nil replaced by a value (a required attribute's
        /// default where a cast source value is nil). Only a rebuild selects it.
        case sqlCoalesce(String, Value)

        var sourceColumn: String? {
            switch self {
            case .null, .constant, .sql, .sqlCoalesce: nil
            case .column(let c), .coalesce(let c, _), .renumbered(let c, _), .constantUnlessNull(let c, _): c
            }
        }
    }

    /// Each entity's columns and what they hold for its rows: attributes and to-ones (with companions)
    /// from the entity's layout, and the key and order columns of to-manys pointing at it.
    static func columnRoles(of layout: StoreLayout) -> [String: [String: ColumnRole]] {
        var roles: [String: [String: ColumnRole]] = [:]
        for entity in layout.entities {
            var map: [String: ColumnRole] = [:]
            for attribute in entity.attributes { map[attribute.column] = .attribute(attribute.name) }
            for toOne in entity.toOneRelationships {
                map[toOne.column] = .toOne(toOne.name)
                if let companion = toOne.entityColumn { map[companion] = .toOneEntity(toOne.name) }
            }
            roles[entity.name] = map
        }
        for owner in layout.entities {
            for toMany in owner.toManyRelationships {
                guard case .destinationColumn(_, let column, _, let orderColumn) = toMany.storage else { continue }
                for target in layout.entities where layout.model.entity(target.name, isKindOf: toMany.destination) {
                    if roles[target.name]?[column] == nil { roles[target.name]?[column] = .toManyKey(owner.name, toMany.name) }
                    if let orderColumn, roles[target.name]?[orderColumn] == nil {
                        roles[target.name]?[orderColumn] = .toManyOrder(owner.name, toMany.name)
                    }
                }
            }
        }
        return roles
    }

    // MARK: - Column values

    /// The value of a column (of `role`) of the new version for the rows of `source`, an old entity
    /// whose objects become `destination`'s, all in the old table `sourceTable`.
    mutating func value(for role: ColumnRole, destination: EntityLayout, source: EntityLayout, sourceTable: String) -> ColumnValue {
        switch role {
        case .attribute(let name):
            attributeValue(name, of: destination, from: source)
        case .toOne(let name):
            toOneValue(name, of: destination, from: source, entityNumber: false)
        case .toOneEntity(let name):
            toOneValue(name, of: destination, from: source, entityNumber: true)
        case .toManyKey(let owner, let name):
            toManyValue(name, of: owner, in: sourceTable, order: false)
        case .toManyOrder(let owner, let name):
            toManyValue(name, of: owner, in: sourceTable, order: true)
        }
    }

    private mutating func attributeValue(_ name: String, of destination: EntityLayout, from source: EntityLayout) -> ColumnValue {
        let entityName = destination.name
        guard let sourceName = sourceProperty(name, of: entityName) else {
            return correspondence.newAttributeValues[entityName]?[name].map(ColumnValue.constant) ?? .null
        }
        guard let sourceAttribute = source.attribute(named: sourceName), let attribute = destination.attribute(named: name) else {
            problems.append("\(entityName).\(name) comes from \(source.name).\(sourceName), which is not a stored attribute")
            return .null
        }
        guard Self.storesAlike(sourceAttribute.type, attribute.type) else {
            problems.append(
                "\(entityName).\(name): \(sourceAttribute.type.rawValue) → \(attribute.type.rawValue) changes the stored values; it is copied object by object")
            return .null
        }
        let replacement = correspondence.nilReplacements[entityName]?[name].flatMap { $0.isNull ? nil : $0 }
        if attribute.type == .decimal && sourceAttribute.type != .decimal {
            // Integers → Decimal: the copy writes each as a double (`Decimal` bound as its double
            // value), which the DECIMAL column's NUMERIC affinity stores back as an integer when
            // it is one exactly (rounded beyond 2^53, as a double); `CAST(… AS REAL)` does the same.
            // Made required with a default, a nil becomes the default, bound as the copy binds a
            // Decimal (its double value); without one, the nil stays and validation refuses it.
            let cast = "CAST(\(SQLName.quoted(sourceAttribute.column, always: true)) AS REAL)"
            if let replacement { return .sqlCoalesce(cast, replacement) }
            return .sql(cast)
        }
        if let replacement { return .coalesce(sourceAttribute.column, replacement) }
        return .column(sourceAttribute.column)
    }

    /// A to-one's key column, or its companion `Z_ENT` column when `entityNumber`.
    private mutating func toOneValue(
        _ name: String, of destination: EntityLayout, from source: EntityLayout, entityNumber: Bool
    ) -> ColumnValue {
        guard let sourceName = sourceProperty(name, of: destination.name) else { return .null }
        guard let sourceToOne = source.toOne(named: sourceName) else {
            return firstOfToMany(sourceName, of: source, becoming: name, of: destination, entityNumber: entityNumber)
        }
        let kept = keptKey(sourceToOne.column, naming: sourceToOne.destination)
        guard entityNumber else {
            if let kept { return .sql(kept) }
            return .column(sourceToOne.column)
        }
        if let companion = sourceToOne.entityColumn {
            guard let kept else { return .renumbered(companion, numberMap) }
            return .sql("CASE WHEN (\(kept)) IS NULL THEN NULL ELSE \(Self.renumberSQL(SQLName.quoted(companion, always: true), numberMap)) END")
        }
        // The destination removed: every link to it is cleared.
        guard let number = numberMap[sourceToOne.destinationNumber] else { return .null }
        if let kept { return .sql("CASE WHEN (\(kept)) IS NULL THEN NULL ELSE \(number) END") }
        return .constantUnlessNull(sourceToOne.column, .int(Int64(number)))
    }

    /// The key column of a to-many stored on its destination's rows, or its order column when `order`.
    private mutating func toManyValue(_ name: String, of owner: String, in sourceTable: String, order: Bool) -> ColumnValue {
        guard let (ownerSource, sourceName) = mappedSource(of: name, declaredBy: owner) else { return .null }
        guard let sourceToMany = ownerSource.toMany(named: sourceName),
            case .destinationColumn(let table, let keyColumn, _, let orderColumn) = sourceToMany.storage, table == sourceTable
        else {
            problems.append("\(owner).\(name) was stored otherwise in the old version (\(ownerSource.name).\(sourceName))")
            return .null
        }
        // The key names an owner: cleared where that owner is removed.
        let kept = keptKey(keyColumn, naming: ownerSource.rootName)
        guard order else { return kept.map(ColumnValue.sql) ?? .column(keyColumn) }
        let key = kept.map { "(\($0))" } ?? SQLName.quoted(keyColumn, always: true)
        guard let orderColumn else {
            // Unordered → ordered: each owner's objects numbered from 1 in the order the copy reads
            // them (by primary key), as the copy writes them.
            return .sql("CASE WHEN \(key) IS NULL THEN NULL ELSE ROW_NUMBER() OVER (PARTITION BY \(key) ORDER BY \(SQLName.quoted("Z_PK", always: true))) END")
        }
        if kept != nil { return .sql("CASE WHEN \(key) IS NULL THEN NULL ELSE \(SQLName.quoted(orderColumn, always: true)) END") }
        return .column(orderColumn)
    }

    // MARK: - The first of a to-many

    /// A to-one that was a to-many: the first object of the to-many in the order the copy reads it
    /// (its `Z_FOK_` order for an ordered one, then primary key), among the objects that are migrated;
    /// its `Z_ENT` (renumbered) when `entityNumber`. The copy keeps that first object too. A to-one
    /// with an inverse streams: the copy writes the link from both ends, and which write is last
    /// depends on the order of the entity mappings.
    private mutating func firstOfToMany(
        _ sourceName: String, of source: EntityLayout, becoming name: String, of destination: EntityLayout, entityNumber: Bool
    ) -> ColumnValue {
        guard let sourceToMany = source.toMany(named: sourceName) else {
            problems.append("\(destination.name).\(name) comes from \(source.name).\(sourceName), which is not a relationship")
            return .null
        }
        if let relationship = new.model.relationship(named: name, of: destination.name), let inverse = new.model.inverse(of: relationship),
            !keepsItsToOneInverse(relationship, inverse, sourceName, of: source)
        {
            problems.append(
                "\(destination.name).\(name) is to-one with an inverse and comes from the to-many \(source.name).\(sourceName): the copy writes the link from both ends, and which write is kept depends on the order of the mappings")
            return .null
        }
        let targets = old.model.hierarchy(from: sourceToMany.destination).compactMap { old.entity(named: $0.name) }.filter { numberMap[$0.number] != nil }
        guard !targets.isEmpty, let targetTable = old.entity(named: sourceToMany.destination)?.table else { return .null }
        let stage = firstObjectsStage(of: sourceToMany, key: "\(source.name).\(sourceName)", targets: targets, targetTable: targetTable)
        let selected =
            entityNumber ? Self.renumberSQL(SQLName.quoted("entity", always: true), numberMap) : SQLName.quoted("target", always: true)
        return .sql(
            "(SELECT \(selected) FROM temp.\(SQLName.quoted(stage, always: true)) WHERE \(SQLName.quoted("owner", always: true)) = \(SQLName.quoted(Self.rowAlias, always: true)).\(SQLName.quoted("Z_PK", always: true)))"
        )
    }

    /// The temporary table of the first object of each owner of a to-many (`key` is its source
    /// "entity.relationship"), staged once, keyed by the owner (a lookup per row then costs a key
    /// search, not a scan of the to-many's table).
    private mutating func firstObjectsStage(of sourceToMany: ToManyLayout, key: String, targets: [EntityLayout], targetTable: String) -> String {
        if let known = firstStages[key] { return known }
        let stage = "moult_first_\(firstStages.count + 1)"
        firstStages[key] = stage
        let (o, t, e, n) = (
            SQLName.quoted("o", always: true), SQLName.quoted("t", always: true), SQLName.quoted("e", always: true), SQLName.quoted("n", always: true)
        )
        let (pk, entity) = (SQLName.quoted("Z_PK", always: true), SQLName.quoted("Z_ENT", always: true))
        let target = SQLName.quoted("moult_target", always: true)
        let numbers = targets.map { String($0.number) }.joined(separator: ", ")
        // Each owner's objects, numbered in the copy's order.
        let ranked = { (owner: String, order: String) in
            "SELECT \(owner) AS \(o), \(target).\(pk) AS \(t), \(target).\(entity) AS \(e), ROW_NUMBER() OVER (PARTITION BY \(owner) ORDER BY \(order)\(target).\(pk)) AS \(n) FROM "
        }
        let select: String
        switch sourceToMany.storage {
        case .destinationColumn(let table, let keyColumn, _, let orderColumn):
            let owner = "\(target).\(SQLName.quoted(keyColumn, always: true))"
            let order = orderColumn.map { "\(target).\(SQLName.quoted($0, always: true)), " } ?? ""
            select =
                ranked(owner, order)
                + "\(SQLName.quoted(table, always: true)) AS \(target) WHERE \(owner) IS NOT NULL AND \(target).\(entity) IN (\(numbers))"
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
            let link = SQLName.quoted("moult_link", always: true)
            let owner = "\(link).\(SQLName.quoted(sourceColumn, always: true))"
            let order = orderColumn.map { "\(link).\(SQLName.quoted($0, always: true)), " } ?? ""
            select =
                ranked(owner, order)
                + "\(SQLName.quoted(table, always: true)) AS \(link) JOIN \(SQLName.quoted(targetTable, always: true)) AS \(target) ON \(target).\(pk) = \(link).\(SQLName.quoted(destinationColumn, always: true)) WHERE \(target).\(entity) IN (\(numbers))"
        }
        let staged = SQLName.quoted(stage, always: true)
        stagingChanges.append(
            InPlaceChange(
                kind: .stageLinks, summary: "the first of \(key) (temporary)",
                statements: [
                    InPlaceStatement(
                        "CREATE TEMP TABLE \(staged) (\(SQLName.quoted("owner", always: true)) INTEGER PRIMARY KEY, \(SQLName.quoted("target", always: true)) INTEGER, \(SQLName.quoted("entity", always: true)) INTEGER)"
                    ),
                    InPlaceStatement(
                        "INSERT INTO temp.\(staged) SELECT \(o), \(t), \(e) FROM (\(select)) AS \(SQLName.quoted("ranked", always: true)) WHERE \(n) = 1"),
                ], touchesRows: true))
        return stage
    }

    /// Whether a to-many becoming a to-one keeps, as its inverse, the to-one that was its inverse (a
    /// one-to-many made a one-to-one, both sides carried). The copy writes that link from both ends:
    /// where an owner had one object, the first object is that one, as here; where it had several, the
    /// destination's one-to-one check refuses the store (validation, before the step commits), as it
    /// refuses the copy's.
    private func keepsItsToOneInverse(
        _ relationship: RelationshipDescription, _ inverse: RelationshipDescription, _ sourceName: String, of source: EntityLayout
    ) -> Bool {
        guard !inverse.isToMany,
            let sourceRelationship = old.model.relationship(named: sourceName, of: source.name),
            let sourceInverse = old.model.inverse(of: sourceRelationship), !sourceInverse.isToMany,
            correspondence.properties[relationship.destinationEntity]?[inverse.name] == sourceInverse.name,
            let holder = correspondence.entities[relationship.destinationEntity],
            old.model.entity(holder, isKindOf: sourceRelationship.destinationEntity)
        else { return false }
        return true
    }

    // MARK: - Helpers

    /// `CASE <expression> WHEN old THEN new … END`: entity numbers translated, nil for a removed entity.
    static func renumberSQL(_ expression: String, _ map: [Int32: Int32]) -> String {
        let cases = map.sorted { $0.key < $1.key }.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ")
        return "CASE \(expression) \(cases) END"
    }

    /// Whether values of one attribute type are stored exactly as another's, or converted by the new
    /// column's affinity as the copy through the mapping converts them (integers to floating point).
    static func storesAlike(_ a: AttributeType, _ b: AttributeType) -> Bool {
        if a == b { return true }
        let integers: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean]
        let floats: Set<AttributeType> = [.float, .double]
        if integers.contains(a) && integers.contains(b) { return true }
        if floats.contains(a) && floats.contains(b) { return true }
        // Integers → Double/Float: the REAL affinity converts each as the copy does (`Double(i)`, the
        // integers beyond 2^53 rounded to the nearest, ties to even).
        if integers.contains(a) && floats.contains(b) { return true }
        // Integers → Decimal: see `asDecimal`.
        if integers.contains(a) && b == .decimal { return true }
        return false
    }
}
