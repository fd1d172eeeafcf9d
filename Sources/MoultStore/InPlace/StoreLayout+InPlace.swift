import Foundation
public import MoultModel

extension StoreLayout {
    /// The SQL that turns a store of this layout (the old version's) into a store of `destination`'s
    /// layout (the new version's), objects kept with their primary keys, under a lightweight mapping.
    ///
    /// Each destination table is either altered where it stands (`ALTER TABLE … ADD/RENAME/DROP
    /// COLUMN`, a fill by `UPDATE`, `ALTER TABLE … RENAME TO`) when its rows keep their `Z_ENT` and
    /// every column is a source column of the same declared type, a new column or a constant; or rebuilt
    /// (a new table filled by `INSERT … SELECT` from the old one, which is then dropped) when entities
    /// are renumbered, removed, moved between tables or a column's declared type changes. Join tables
    /// are kept, rebuilt from the old join table, or filled from the to-one or to-many they replace.
    /// Then the indexes, `Z_PRIMARYKEY` (each root's `Z_MAX` kept, so primary keys are never reused)
    /// and the model cache (the new model's, or emptied when its archived form is not known: it described
    /// the old model). The metadata is the caller's.
    ///
    /// Every identifier is quoted. The statements are meant to run in one transaction.
    ///
    /// - Returns: ``InPlaceOutcome/unsupported(_:)`` with the reasons when a change cannot be made by
    ///   SQL alone with the same result as a copy through the mapping (the caller then streams).
    public func inPlaceChanges(to destination: StoreLayout, correspondence: LayoutCorrespondence) -> InPlaceOutcome {
        var builder = InPlaceBuilder(old: self, new: destination, correspondence: correspondence)
        builder.build()
        guard builder.problems.isEmpty else { return .unsupported(builder.problems) }
        var changes = builder.changes
        // Derived attributes' triggers (`Z_DA_`), as Core Data rebuilds a schema: dropped before the
        // tables change (a trigger names the tables and columns it updates), then the new version's
        // values computed for every row, then the new version's triggers made.
        // R-trees (`Z_<Entity>_<index>` and location attributes' `Z_RT_` virtual tables kept by triggers
        // on the entity's table): the old
        // ones and their triggers dropped first (dropping the virtual table drops its shadow tables), the
        // new ones made after the tables, filled from every row of their table (the rows the copy's
        // inserts pass through the insert trigger, each with its final values), then their triggers.
        if !rTrees.isEmpty {
            changes.insert(
                InPlaceChange(
                    kind: .dropTable, summary: rTrees.map(\.name).joined(separator: ", ") + " (R-tree indexes)",
                    statements: rTrees.map { InPlaceStatement("DROP TABLE IF EXISTS \(SQLName.quoted($0.name, always: true))") }, touchesRows: false),
                at: 0)
        }
        if !derivedTriggers.isEmpty || !rTrees.isEmpty {
            changes.insert(
                InPlaceChange(
                    kind: .dropTriggers, summary: "\(derivedTriggers.count) derived attributes' triggers, \(rTrees.count) R-tree indexes' triggers",
                    statements: triggerNames.map { InPlaceStatement("DROP TRIGGER IF EXISTS \(SQLName.quoted($0, always: true))") }, touchesRows: false),
                at: 0)
        }
        if !destination.derivedTriggers.isEmpty {
            // Every derived attribute computed for every row, as the copy's triggers compute them: one
            // added, or whose derivation or inputs the step changed, is never left nil or stale.
            let derived = destination.derivedValueUpdates()
            guard derived.problems.isEmpty else { return .unsupported(derived.problems) }
            changes.append(
                InPlaceChange(
                    kind: .computeDerived, summary: derived.updates.map(\.target).joined(separator: ", "),
                    statements: derived.updates.map { InPlaceStatement($0.sql) }, touchesRows: true))
            changes.append(
                InPlaceChange(
                    kind: .createTriggers, summary: "\(destination.derivedTriggers.count) derived attributes' triggers",
                    statements: destination.derivedTriggers.map { InPlaceStatement($0) }, touchesRows: false))
        }
        for rTree in destination.rTrees {
            let bounds = rTree.columns.flatMap { [SQLName.quoted($0 + "_MIN", always: true), SQLName.quoted($0 + "_MAX", always: true)] }
            let values = rTree.columns.flatMap { [SQLName.quoted($0, always: true), SQLName.quoted($0, always: true)] }
            changes.append(
                InPlaceChange(
                    kind: .createTable, summary: "\(rTree.name) (R-tree index of \(rTree.table), filled from its rows)",
                    statements: [
                        InPlaceStatement(rTree.createSQL),
                        InPlaceStatement(
                            "INSERT INTO \(SQLName.quoted(rTree.name, always: true)) (\((["Z_PK"] + bounds).joined(separator: ", "))) SELECT \((["Z_PK"] + values).joined(separator: ", ")) FROM \(SQLName.quoted(rTree.table, always: true)) ORDER BY Z_PK"),
                    ], touchesRows: true))
            changes.append(
                InPlaceChange(
                    kind: .createTriggers, summary: "\(rTree.name)'s triggers", statements: rTree.triggerSQL.map { InPlaceStatement($0) },
                    touchesRows: false))
        }
        return .script(InPlaceScript(changes: changes))
    }

    /// The names of the triggers this layout makes (derived attributes' and R-tree indexes').
    public var triggerNames: [String] {
        (derivedTriggers + rTrees.flatMap(\.triggerSQL)).compactMap { sql in
            // `CREATE TRIGGER name …` or `CREATE TRIGGER "na""me" …`, as the layout writes it.
            let prefix = "CREATE TRIGGER "
            guard sql.hasPrefix(prefix) else { return nil }
            let rest = sql.dropFirst(prefix.count)
            guard rest.first == "\"" else { return rest.prefix { $0 != " " }.isEmpty ? nil : String(rest.prefix { $0 != " " }) }
            var name = ""
            var index = rest.index(after: rest.startIndex)
            while index < rest.endIndex {
                let character = rest[index]
                index = rest.index(after: index)
                if character == "\"" {
                    guard index < rest.endIndex, rest[index] == "\"" else { return name }
                    index = rest.index(after: index)
                }
                name.append(character)
            }
            return nil
        }
    }
}

/// `CREATE INDEX` for an index of a layout, as a new store makes it (its `WHERE` included).
func createIndexSQL(_ index: IndexLayout, ifNotExists: Bool = false) -> String {
    index.createSQL(ifNotExists: ifNotExists)
}

// MARK: - Roles of columns

/// What a column holds for the rows of one entity.
private enum ColumnRole: Hashable {
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
private enum ColumnValue: Hashable {
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

extension StoreLayout {
    /// Each entity's columns and what they hold for its rows: attributes and to-ones (with companions)
    /// from the entity's layout, and the key and order columns of to-manys pointing at it.
    fileprivate func columnRoles() -> [String: [String: ColumnRole]] {
        var roles: [String: [String: ColumnRole]] = [:]
        for entity in entities {
            var map: [String: ColumnRole] = [:]
            for attribute in entity.attributes { map[attribute.column] = .attribute(attribute.name) }
            for toOne in entity.toOneRelationships {
                map[toOne.column] = .toOne(toOne.name)
                if let companion = toOne.entityColumn { map[companion] = .toOneEntity(toOne.name) }
            }
            roles[entity.name] = map
        }
        for owner in entities {
            for toMany in owner.toManyRelationships {
                guard case .destinationColumn(_, let column, _, let orderColumn) = toMany.storage else { continue }
                for target in entities where model.entity(target.name, isKindOf: toMany.destination) {
                    if roles[target.name]?[column] == nil { roles[target.name]?[column] = .toManyKey(owner.name, toMany.name) }
                    if let orderColumn, roles[target.name]?[orderColumn] == nil {
                        roles[target.name]?[orderColumn] = .toManyOrder(owner.name, toMany.name)
                    }
                }
            }
        }
        return roles
    }

    fileprivate func tableLayout(named name: String) -> TableLayout? { tables.first { $0.name == name } }
}

// MARK: - Builder

private struct InPlaceBuilder {
    let old: StoreLayout
    let new: StoreLayout
    let correspondence: LayoutCorrespondence
    var problems: [String] = []
    var changes: [InPlaceChange] = []

    private var oldRoles: [String: [String: ColumnRole]] = [:]
    private var newRoles: [String: [String: ColumnRole]] = [:]
    /// Source `Z_ENT` → destination `Z_ENT`, for every migrated entity.
    private var numberMap: [Int32: Int32] = [:]
    /// The source `Z_ENT` of every removed entity.
    private var removedNumbers: Set<Int32> = []
    /// The source table's alias in a rebuild's `INSERT … SELECT`, for ``ColumnValue/sql(_:)``.
    static let rowAlias = "moult_row"
    private var stageCount = 0
    /// The temporary tables of the first objects of to-manys made to-one, by "entity.relationship"
    /// (source), the changes that fill them, in order, and the statements that drop them at the end.
    private var firstStages: [String: String] = [:]
    private var stagingChanges: [InPlaceChange] = []

    init(old: StoreLayout, new: StoreLayout, correspondence: LayoutCorrespondence) {
        self.old = old
        self.new = new
        self.correspondence = correspondence
    }

    private func source(of destinationEntity: String) -> EntityLayout? {
        correspondence.entities[destinationEntity].flatMap { old.entity(named: $0) }
    }

    private func sourceProperty(_ property: String, of destinationEntity: String) -> String? {
        correspondence.properties[destinationEntity]?[property]
    }

    /// The source entity and property of a property as seen from the entity that declares it, or,
    /// when that entity is new (a new parent), from the first of its sub-entities that has a source.
    private func mappedSource(of property: String, declaredBy entityName: String) -> (entity: EntityLayout, property: String)? {
        for entity in new.model.hierarchy(from: entityName) {
            guard let source = source(of: entity.name) else { continue }
            return sourceProperty(property, of: entity.name).map { (source, $0) }
        }
        return nil
    }

    private mutating func stageName() -> String {
        stageCount += 1
        return "moult_inplace_\(stageCount)"
    }

    // MARK: Checks

    private mutating func checkEntities() {
        var claimed: [String: String] = [:]
        for (destination, source) in correspondence.entities.sorted(by: { $0.key < $1.key }) {
            guard let newEntity = new.entity(named: destination) else {
                problems.append("the destination entity \(destination) is not in the new model")
                continue
            }
            guard let oldEntity = old.entity(named: source) else {
                problems.append("\(destination)'s source entity \(source) is not in the old model")
                continue
            }
            if let other = claimed[source] {
                problems.append("the objects of \(source) would become both \(other) and \(destination)")
            }
            claimed[source] = destination
            numberMap[oldEntity.number] = newEntity.number
        }
        // A removed entity's objects disappear, and so do links to them: the copy finds no new object
        // for them and leaves the link out. By SQL, the to-one columns and key columns that can hold
        // them are cleared and the join rows naming them are left out (see `keptCondition`). A required
        // relationship (or one with a minimum count) that may lose its object is checked before the
        // step commits, as the copy's validation checks it (`InPlaceMigration.rulesTheStepCanBreak`).
        let removed = Set(old.entities.map(\.name)).subtracting(claimed.keys)
        removedNumbers = Set(removed.compactMap { old.entity(named: $0)?.number })
    }

    /// The numbers of removed source entities whose objects a key column referring to `entity`'s
    /// hierarchy (old model) may name; empty when none.
    private func removedReachable(from entity: String) -> [Int32] {
        guard !removedNumbers.isEmpty else { return [] }
        return old.model.hierarchy(from: entity).compactMap { old.entity(named: $0.name)?.number }.filter(removedNumbers.contains).sorted()
    }

    /// `column` (a key naming an object of the old entity `entity`'s hierarchy) as an expression of the
    /// source row that is nil where the object it names is removed; nil when no removed object can be named.
    private func keptKey(_ column: String, naming entity: String, qualifier: String? = nil) -> String? {
        let numbers = removedReachable(from: entity)
        guard !numbers.isEmpty, let table = old.entity(named: entity)?.table else { return nil }
        let reference = (qualifier.map { SQLName.quoted($0, always: true) + "." } ?? "") + SQLName.quoted(column, always: true)
        return "CASE WHEN \(reference) IN (SELECT \(SQLName.quoted("Z_PK", always: true)) FROM \(SQLName.quoted(table, always: true)) WHERE \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", ")))) THEN NULL ELSE \(reference) END"
    }

    /// A condition on `column` (qualified) that holds when it names no removed object of `entity`'s
    /// hierarchy (old model); nil when none can be named.
    private func keptCondition(_ reference: String, naming entity: String) -> String? {
        let numbers = removedReachable(from: entity)
        guard !numbers.isEmpty, let table = old.entity(named: entity)?.table else { return nil }
        return "\(reference) NOT IN (SELECT \(SQLName.quoted("Z_PK", always: true)) FROM \(SQLName.quoted(table, always: true)) WHERE \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", "))))"
    }

    /// A relationship and its inverse must both come from a source pair of inverses, or both be new:
    /// then the stored link, whichever side holds it, is the same in both versions.
    private mutating func checkInverses() {
        for destination in new.entities {
            guard let source = source(of: destination.name) else { continue }
            for relationship in new.model.relationships(of: destination.name) where !relationship.isTransient {
                let sourceName = sourceProperty(relationship.name, of: destination.name)
                let sourceRelationship = sourceName.flatMap { old.model.relationship(named: $0, of: source.name) }
                if sourceName != nil, sourceRelationship == nil {
                    problems.append("\(destination.name).\(relationship.name) comes from \(source.name).\(sourceName!), which is not a relationship")
                    continue
                }
                guard let inverse = new.model.inverse(of: relationship) else { continue }
                let inverseOwner = relationship.inverseEntity ?? relationship.destinationEntity
                let inverseSourceName = mappedSource(of: inverse.name, declaredBy: inverseOwner)?.property
                switch (sourceRelationship, inverseSourceName) {
                case (nil, nil): continue
                case (let sourceRelationship?, let inverseSourceName?):
                    if old.model.inverse(of: sourceRelationship)?.name != inverseSourceName {
                        problems.append(
                            "\(destination.name).\(relationship.name) and its inverse \(inverse.name) come from relationships that are not each other's inverse")
                    }
                default:
                    problems.append("\(destination.name).\(relationship.name) and its inverse \(inverse.name): one is new, the other is not")
                }
            }
        }
    }

    // MARK: Column values

    private mutating func value(
        for role: ColumnRole, destination: EntityLayout, source: EntityLayout, sourceTable: String, column: String
    ) -> ColumnValue {
        let entityName = destination.name
        switch role {
        case .attribute(let name):
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
        case .toOne(let name):
            guard let sourceName = sourceProperty(name, of: entityName) else { return .null }
            guard let sourceToOne = source.toOne(named: sourceName) else {
                return firstOfToMany(sourceName, of: source, becoming: name, of: destination, entityNumber: false)
            }
            if let kept = keptKey(sourceToOne.column, naming: sourceToOne.destination) { return .sql(kept) }
            return .column(sourceToOne.column)
        case .toOneEntity(let name):
            guard let sourceName = sourceProperty(name, of: entityName) else { return .null }
            guard let sourceToOne = source.toOne(named: sourceName) else {
                return firstOfToMany(sourceName, of: source, becoming: name, of: destination, entityNumber: true)
            }
            let kept = keptKey(sourceToOne.column, naming: sourceToOne.destination)
            if let companion = sourceToOne.entityColumn {
                guard let kept else { return .renumbered(companion, numberMap) }
                return .sql("CASE WHEN (\(kept)) IS NULL THEN NULL ELSE \(Self.renumberSQL(SQLName.quoted(companion, always: true), numberMap)) END")
            }
            // The destination removed: every link to it is cleared.
            guard let number = numberMap[sourceToOne.destinationNumber] else { return .null }
            if let kept { return .sql("CASE WHEN (\(kept)) IS NULL THEN NULL ELSE \(number) END") }
            return .constantUnlessNull(sourceToOne.column, .int(Int64(number)))
        case .toManyKey(let owner, let name), .toManyOrder(let owner, let name):
            guard let (ownerSource, sourceName) = mappedSource(of: name, declaredBy: owner) else { return .null }
            guard let sourceToMany = ownerSource.toMany(named: sourceName),
                case .destinationColumn(let table, let keyColumn, _, let orderColumn) = sourceToMany.storage, table == sourceTable
            else {
                problems.append("\(owner).\(name) was stored otherwise in the old version (\(ownerSource.name).\(sourceName))")
                return .null
            }
            // The key names an owner: cleared where that owner is removed.
            let kept = keptKey(keyColumn, naming: ownerSource.rootName)
            if case .toManyKey = role { return kept.map(ColumnValue.sql) ?? .column(keyColumn) }
            let key = kept.map { "(\($0))" } ?? SQLName.quoted(keyColumn, always: true)
            guard let orderColumn else {
                // Unordered → ordered: each owner's objects numbered from 1 in the order the copy reads
                // them (by primary key), as the copy writes them.
                return .sql("CASE WHEN \(key) IS NULL THEN NULL ELSE ROW_NUMBER() OVER (PARTITION BY \(key) ORDER BY \(SQLName.quoted("Z_PK", always: true))) END")
            }
            if kept != nil { return .sql("CASE WHEN \(key) IS NULL THEN NULL ELSE \(SQLName.quoted(orderColumn, always: true)) END") }
            return .column(orderColumn)
        }
    }

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
        // The first object of each owner, staged once in a temporary table keyed by the owner (a
        // lookup per row then costs a key search, not a scan of the to-many's table).
        let key = "\(source.name).\(sourceName)"
        let stage: String
        if let known = firstStages[key] {
            stage = known
        } else {
            stage = "moult_first_\(firstStages.count + 1)"
            firstStages[key] = stage
            let target = SQLName.quoted("moult_target", always: true)
            let numbers = targets.map { String($0.number) }.joined(separator: ", ")
            let select: String
            switch sourceToMany.storage {
            case .destinationColumn(let table, let keyColumn, _, let orderColumn):
                let owner = "\(target).\(SQLName.quoted(keyColumn, always: true))"
                let order = orderColumn.map { "\(target).\(SQLName.quoted($0, always: true)), " } ?? ""
                select = "SELECT \(owner) AS \(SQLName.quoted("o", always: true)), \(target).\(SQLName.quoted("Z_PK", always: true)) AS \(SQLName.quoted("t", always: true)), \(target).\(SQLName.quoted("Z_ENT", always: true)) AS \(SQLName.quoted("e", always: true)), ROW_NUMBER() OVER (PARTITION BY \(owner) ORDER BY \(order)\(target).\(SQLName.quoted("Z_PK", always: true))) AS \(SQLName.quoted("n", always: true)) FROM \(SQLName.quoted(table, always: true)) AS \(target) WHERE \(owner) IS NOT NULL AND \(target).\(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers))"
            case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
                let link = SQLName.quoted("moult_link", always: true)
                let owner = "\(link).\(SQLName.quoted(sourceColumn, always: true))"
                let order = orderColumn.map { "\(link).\(SQLName.quoted($0, always: true)), " } ?? ""
                select = "SELECT \(owner) AS \(SQLName.quoted("o", always: true)), \(target).\(SQLName.quoted("Z_PK", always: true)) AS \(SQLName.quoted("t", always: true)), \(target).\(SQLName.quoted("Z_ENT", always: true)) AS \(SQLName.quoted("e", always: true)), ROW_NUMBER() OVER (PARTITION BY \(owner) ORDER BY \(order)\(target).\(SQLName.quoted("Z_PK", always: true))) AS \(SQLName.quoted("n", always: true)) FROM \(SQLName.quoted(table, always: true)) AS \(link) JOIN \(SQLName.quoted(targetTable, always: true)) AS \(target) ON \(target).\(SQLName.quoted("Z_PK", always: true)) = \(link).\(SQLName.quoted(destinationColumn, always: true)) WHERE \(target).\(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers))"
            }
            stagingChanges.append(
                InPlaceChange(
                    kind: .stageLinks, summary: "the first of \(key) (temporary)",
                    statements: [
                        InPlaceStatement("CREATE TEMP TABLE \(SQLName.quoted(stage, always: true)) (\(SQLName.quoted("owner", always: true)) INTEGER PRIMARY KEY, \(SQLName.quoted("target", always: true)) INTEGER, \(SQLName.quoted("entity", always: true)) INTEGER)"),
                        InPlaceStatement(
                            "INSERT INTO temp.\(SQLName.quoted(stage, always: true)) SELECT \(SQLName.quoted("o", always: true)), \(SQLName.quoted("t", always: true)), \(SQLName.quoted("e", always: true)) FROM (\(select)) AS \(SQLName.quoted("ranked", always: true)) WHERE \(SQLName.quoted("n", always: true)) = 1"),
                    ], touchesRows: true))
        }
        let selected = entityNumber ? Self.renumberSQL(SQLName.quoted("entity", always: true), numberMap) : SQLName.quoted("target", always: true)
        return .sql("(SELECT \(selected) FROM temp.\(SQLName.quoted(stage, always: true)) WHERE \(SQLName.quoted("owner", always: true)) = \(SQLName.quoted(Self.rowAlias, always: true)).\(SQLName.quoted("Z_PK", always: true)))")
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

    /// The SQL expression of a value, its arguments appended.
    private func expression(_ value: ColumnValue, arguments: inout [Value]) -> String {
        switch value {
        case .null: return "NULL"
        case .column(let column): return SQLName.quoted(column, always: true)
        case .constant(let constant):
            arguments.append(constant)
            return "?"
        case .coalesce(let column, let constant):
            arguments.append(constant)
            return "COALESCE(\(SQLName.quoted(column, always: true)), ?)"
        case .renumbered(let column, let map):
            if map.allSatisfy({ $0.key == $0.value }) { return SQLName.quoted(column, always: true) }
            return Self.renumberSQL(SQLName.quoted(column, always: true), map)
        case .constantUnlessNull(let column, let constant):
            arguments.append(constant)
            return "CASE WHEN \(SQLName.quoted(column, always: true)) IS NULL THEN NULL ELSE ? END"
        case .sql(let sql):
            return sql
        case .sqlCoalesce(let sql, let constant):
            arguments.append(constant)
            return "COALESCE(\(sql), ?)"
        }
    }

    // MARK: Build

    mutating func build() {
        oldRoles = old.columnRoles()
        newRoles = new.columnRoles()
        checkEntities()
        checkInverses()
        guard problems.isEmpty else { return }

        var survivingIndexes: Set<String> = []
        var keptTables: Set<String> = []  // old tables altered where they stand, under their own name
        var renamedTables: Set<String> = []  // old tables altered then renamed
        var rebuilds: [InPlaceChange] = []
        var alters: [InPlaceChange] = []
        var renames: [(stage: String, final: String)] = []
        var maximumSources: [String: Int32] = [:]  // destination root table → the old root entity whose Z_MAX it continues

        for table in new.tables {
            let destinationEntities = table.entityNumbers.compactMap { new.entity(number: $0) }
            let pairs = destinationEntities.compactMap { entity in source(of: entity.name).map { (source: $0, destination: entity) } }
            let sourceTables = Set(pairs.map(\.source.table))
            if sourceTables.count > 1 {
                problems.append("the table \(table.name) would take the rows of several old tables (\(sourceTables.sorted().joined(separator: ", ")))")
                continue
            }
            guard let sourceTableName = sourceTables.first, let sourceTable = old.tableLayout(named: sourceTableName) else {
                let stage = stageName()
                rebuilds.append(
                    InPlaceChange(
                        kind: .createTable, summary: "\(table.name) (new, empty)",
                        statements: [InPlaceStatement(Self.createSQL(table, name: stage))], touchesRows: false))
                renames.append((stage, table.name))
                continue
            }
            maximumSources[table.name] = old.entity(named: sourceTable.rootEntity)?.number

            // Each column's value for the rows of each source entity.
            var values: [String: [Int32: ColumnValue]] = [:]
            for column in table.columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name) {
                var byEntity: [Int32: ColumnValue] = [:]
                for pair in pairs {
                    let value: ColumnValue
                    if let role = newRoles[pair.destination.name]?[column.name] {
                        value = self.value(
                            for: role, destination: pair.destination, source: pair.source, sourceTable: sourceTableName, column: column.name)
                    } else {
                        value = .null
                    }
                    byEntity[pair.source.number] = value
                }
                values[column.name] = byEntity
            }
            guard problems.isEmpty else { continue }

            if let alter = alterInPlace(table, from: sourceTable, pairs: pairs, values: values) {
                alters.append(contentsOf: alter.changes)
                survivingIndexes.formUnion(alter.survivingIndexes)
                if table.name == sourceTable.name {
                    keptTables.insert(sourceTable.name)
                } else {
                    let stage = stageName()
                    alters.append(
                        InPlaceChange(
                            kind: .renameTable, summary: "\(sourceTable.name) → \(table.name)",
                            statements: [InPlaceStatement("ALTER TABLE \(SQLName.quoted(sourceTable.name, always: true)) RENAME TO \(SQLName.quoted(stage, always: true))")],
                            touchesRows: false))
                    renamedTables.insert(sourceTable.name)
                    renames.append((stage, table.name))
                }
            } else {
                let stage = stageName()
                rebuilds.append(rebuild(table, from: sourceTable, pairs: pairs, values: values, stage: stage))
                renames.append((stage, table.name))
            }
        }

        // Join tables.
        for joinTable in new.joinTables {
            guard let outcome = joinTableChange(joinTable) else { continue }
            if let change = outcome.change {
                rebuilds.append(change)
                renames.append((outcome.stage, joinTable.name))
            } else {
                keptTables.insert(joinTable.name)
                survivingIndexes.formUnion(joinTable.indexes.filter { index in
                    old.joinTables.first { $0.name == joinTable.name }?.indexes.contains(index) == true
                }.map(\.name))
            }
        }
        guard problems.isEmpty else { return }

        // 1. Indexes that do not survive go first (a dropped or renamed column may not be indexed).
        let oldIndexes = (old.tables.flatMap(\.indexes) + old.joinTables.flatMap(\.indexes)).filter { !survivingIndexes.contains($0.name) }
        if !oldIndexes.isEmpty {
            changes.append(
                InPlaceChange(
                    kind: .dropIndex, summary: oldIndexes.map(\.name).joined(separator: ", "),
                    statements: oldIndexes.map { InPlaceStatement("DROP INDEX IF EXISTS \(SQLName.quoted($0.name, always: true))") }, touchesRows: false))
        }
        // 2. New tables filled from the old ones, while these stand; 3. tables altered where they stand.
        changes += stagingChanges
        changes += rebuilds
        changes += alters
        // 4. Old tables neither kept nor renamed.
        let dropped = (old.tables.map(\.name) + old.joinTables.map(\.name)).filter { !keptTables.contains($0) && !renamedTables.contains($0) }
        let finalNames = Set(new.tables.map(\.name) + new.joinTables.map(\.name))
        for table in dropped {
            let statement = InPlaceStatement("DROP TABLE \(SQLName.quoted(table, always: true))")
            changes.append(
                InPlaceChange(
                    kind: .dropTable, summary: table, statements: [statement], touchesRows: false,
                    deferred: finalNames.contains(table) ? nil : .dropTable(table)))
        }
        // 5. New tables under their names.
        for (stage, final) in renames where stage != final {
            changes.append(
                InPlaceChange(
                    kind: .renameTable, summary: "\(final)",
                    statements: [InPlaceStatement("ALTER TABLE \(SQLName.quoted(stage, always: true)) RENAME TO \(SQLName.quoted(final, always: true))")], touchesRows: false))
        }
        for stage in firstStages.values.sorted() {
            changes.append(
                InPlaceChange(
                    kind: .stageLinks, summary: "\(stage) dropped", statements: [InPlaceStatement("DROP TABLE temp.\(SQLName.quoted(stage, always: true))")], touchesRows: false))
        }
        // 6. Indexes.
        let created = (new.tables.flatMap(\.indexes) + new.joinTables.flatMap(\.indexes)).filter { !survivingIndexes.contains($0.name) }
        for index in created {
            let statement = InPlaceStatement(Self.createSQL(index))
            // A unique index is a rule of the new version: never deferred (the store would be at the
            // new version while breaking it).
            changes.append(
                InPlaceChange(
                    kind: .createIndex, summary: index.name, statements: [statement], touchesRows: true,
                    deferred: index.isUnique ? nil : .createIndex(index.name)))
        }
        // 7. Z_PRIMARYKEY: one row per entity; a root's Z_MAX continues its old root's.
        var primaryKeys = [
            InPlaceStatement("ALTER TABLE \(SQLName.quoted("Z_PRIMARYKEY", always: true)) RENAME TO \(SQLName.quoted("moult_inplace_primarykey", always: true))"),
            InPlaceStatement(
                "CREATE TABLE \(SQLName.quoted("Z_PRIMARYKEY", always: true)) (\(SQLName.quoted("Z_ENT", always: true)) INTEGER PRIMARY KEY, \(SQLName.quoted("Z_NAME", always: true)) VARCHAR, \(SQLName.quoted("Z_SUPER", always: true)) INTEGER, \(SQLName.quoted("Z_MAX", always: true)) INTEGER)"),
        ]
        for entity in new.entities {
            let oldMax = { (number: Int32) in
                "COALESCE((SELECT \(SQLName.quoted("Z_MAX", always: true)) FROM \(SQLName.quoted("moult_inplace_primarykey", always: true)) WHERE \(SQLName.quoted("Z_ENT", always: true)) = \(number)), 0)"
            }
            let maximum: String
            if entity.number == entity.rootNumber {
                let rows = "COALESCE((SELECT MAX(\(SQLName.quoted("Z_PK", always: true))) FROM \(SQLName.quoted(entity.table, always: true))), 0)"
                maximum = maximumSources[entity.table].map { "MAX(\(rows), \(oldMax($0)))" } ?? rows
            } else {
                maximum = source(of: entity.name).map { oldMax($0.number) } ?? "0"
            }
            primaryKeys.append(
                InPlaceStatement(
                    "INSERT INTO \(SQLName.quoted("Z_PRIMARYKEY", always: true)) (\(SQLName.quoted("Z_ENT", always: true)), \(SQLName.quoted("Z_NAME", always: true)), \(SQLName.quoted("Z_SUPER", always: true)), \(SQLName.quoted("Z_MAX", always: true))) VALUES (?, ?, ?, \(maximum))",
                    [.int(Int64(entity.number)), .string(entity.name), .int(Int64(entity.superNumber))]))
        }
        // Rows for what is not an entity (Core Data's persistent history numbers its own from 16000) stay.
        primaryKeys.append(
            InPlaceStatement(
                "INSERT INTO \(SQLName.quoted("Z_PRIMARYKEY", always: true)) SELECT \(SQLName.quoted("Z_ENT", always: true)), \(SQLName.quoted("Z_NAME", always: true)), \(SQLName.quoted("Z_SUPER", always: true)), \(SQLName.quoted("Z_MAX", always: true)) FROM \(SQLName.quoted("moult_inplace_primarykey", always: true)) WHERE \(SQLName.quoted("Z_ENT", always: true)) >= 16000"))
        primaryKeys.append(InPlaceStatement("DROP TABLE \(SQLName.quoted("moult_inplace_primarykey", always: true))"))
        changes.append(InPlaceChange(kind: .primaryKeys, summary: "\(new.entities.count) entities", statements: primaryKeys, touchesRows: false))
        // 8. The model cache described the old model: it now carries the new one (or none, when the new
        // model has a part whose archived form is not known).
        var cacheStatements = [InPlaceStatement("DELETE FROM \(SQLName.quoted("Z_MODELCACHE", always: true))")]
        if let cache = try? ModelCache.encoded(new.model) {
            cacheStatements.append(InPlaceStatement("INSERT INTO \(SQLName.quoted("Z_MODELCACHE", always: true)) (\(SQLName.quoted("Z_CONTENT", always: true))) VALUES (?)", [.data(cache)]))
        }
        changes.append(
            InPlaceChange(
                kind: .modelCache, summary: cacheStatements.count > 1 ? "the new model" : "emptied", statements: cacheStatements,
                touchesRows: false))
    }

    // MARK: Altering a table where it stands

    private struct Alteration {
        var changes: [InPlaceChange]
        var survivingIndexes: [String]
    }

    /// The ALTER TABLE form, when the rows keep their `Z_ENT` and each column is one old column of the
    /// same declared type (kept or renamed), a new column, or a fill; nil when the table must be rebuilt.
    private func alterInPlace(
        _ table: TableLayout, from sourceTable: TableLayout, pairs: [(source: EntityLayout, destination: EntityLayout)],
        values: [String: [Int32: ColumnValue]]
    ) -> Alteration? {
        // Every old row stays, under the same Z_ENT.
        let migrated = Set(pairs.map(\.source.number))
        guard Set(sourceTable.entityNumbers).isSubset(of: migrated), pairs.allSatisfy({ $0.source.number == $0.destination.number }) else {
            return nil
        }
        let sourceTypes = Dictionary(sourceTable.columns.map { ($0.name, $0.declaredType) }, uniquingKeysWith: { a, _ in a })
        var renames: [(from: String, to: String)] = []
        var adds: [ColumnLayout] = []
        var fills: [(column: String, value: Value, numbers: [Int32], onlyNil: Bool, unlessNullColumn: String?)] = []
        var used: Set<String> = []
        for column in table.columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name) {
            let byEntity = values[column.name] ?? [:]
            // The one old column this column continues: every row's value is it, or nil where the old
            // row's entity had no such column (its value there is nil too).
            let sourceColumns = Set(byEntity.values.compactMap(\.sourceColumn))
            guard sourceColumns.count <= 1 else { return nil }
            let sourceColumn = sourceColumns.first
            var fillValue: Value?
            var fillNumbers: [Int32] = []
            var onlyNil = false
            var unlessNull: String?
            for (number, value) in byEntity.sorted(by: { $0.key < $1.key }) {
                let entityName = old.entity(number: number)?.name ?? ""
                let hasColumn = { (column: String) in self.oldRoles[entityName]?[column] != nil }
                switch value {
                case .null:
                    if let sourceColumn, hasColumn(sourceColumn) { return nil }
                case .column(let c):
                    _ = c
                case .sql, .sqlCoalesce:
                    return nil
                case .renumbered(_, let map):
                    if !map.allSatisfy({ $0.key == $0.value }) { return nil }
                case .constant(let v), .coalesce(_, let v), .constantUnlessNull(_, let v):
                    if let fillValue, fillValue != v { return nil }
                    fillValue = v
                    fillNumbers.append(number)
                    if case .coalesce = value { onlyNil = true }
                    if case .constantUnlessNull(let c, _) = value { unlessNull = c }
                    if case .constant = value, sourceColumn != nil { return nil }
                }
            }
            if let sourceColumn {
                if unlessNull != nil {
                    // A companion filled where its to-one's column is set: a new column, the to-one kept.
                    adds.append(column)
                } else {
                    guard sourceTypes[sourceColumn] == column.declaredType, !used.contains(sourceColumn) else { return nil }
                    used.insert(sourceColumn)
                    if sourceColumn != column.name { renames.append((sourceColumn, column.name)) }
                }
            } else {
                adds.append(column)
            }
            if let fillValue {
                fills.append((column.name, fillValue, fillNumbers, onlyNil, unlessNull))
            }
        }
        let drops = sourceTable.columns.map(\.name).filter { !["Z_PK", "Z_ENT", "Z_OPT"].contains($0) && !used.contains($0) }
        // Keep an index when nothing about it changes.
        let changedColumns = Set(drops + renames.map(\.from))
        let surviving = table.name == sourceTable.name
            ? sourceTable.indexes.filter { index in
                table.indexes.contains(index) && !index.terms.contains { term in changedColumns.contains(Self.termColumn(term)) }
            }.map(\.name)
            : []

        var changes: [InPlaceChange] = []
        let name = SQLName.quoted(sourceTable.name, always: true)
        let entityCondition = { (numbers: [Int32]) -> String in
            numbers.count == sourceTable.entityNumbers.count
                ? "" : " AND \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", ")))"
        }
        // A dropped column can wait unless a renamed or added column takes its name.
        let claimedNames = Set(renames.map(\.to) + adds.map(\.name))
        for column in drops {
            changes.append(
                InPlaceChange(
                    kind: .dropColumn, summary: "\(sourceTable.name).\(column)",
                    statements: [InPlaceStatement("ALTER TABLE \(name) DROP COLUMN \(SQLName.quoted(column, always: true))")], touchesRows: true,
                    deferred: claimedNames.contains(column) ? nil : .dropColumn(table: table.name, column: column)))
        }
        // Renames through temporary names when one's new name is another's old one.
        let remaining = Set(sourceTable.columns.map(\.name)).subtracting(drops)
        let clash = renames.contains { remaining.contains($0.to) }
        for (index, rename) in renames.enumerated() {
            var statements: [InPlaceStatement] = []
            if clash {
                statements.append(InPlaceStatement("ALTER TABLE \(name) RENAME COLUMN \(SQLName.quoted(rename.from, always: true)) TO \(SQLName.quoted("moult_column_\(index)", always: true))"))
            } else {
                statements.append(InPlaceStatement("ALTER TABLE \(name) RENAME COLUMN \(SQLName.quoted(rename.from, always: true)) TO \(SQLName.quoted(rename.to, always: true))"))
            }
            changes.append(InPlaceChange(kind: .renameColumn, summary: "\(sourceTable.name).\(rename.from) → \(rename.to)", statements: statements, touchesRows: false))
        }
        if clash {
            for (index, rename) in renames.enumerated() {
                changes.append(
                    InPlaceChange(
                        kind: .renameColumn, summary: "\(sourceTable.name).\(rename.to)",
                        statements: [InPlaceStatement("ALTER TABLE \(name) RENAME COLUMN \(SQLName.quoted("moult_column_\(index)", always: true)) TO \(SQLName.quoted(rename.to, always: true))")],
                        touchesRows: false))
            }
        }
        for column in adds {
            changes.append(
                InPlaceChange(
                    kind: .addColumn, summary: "\(sourceTable.name).\(column.name) \(column.declaredType)",
                    statements: [InPlaceStatement("ALTER TABLE \(name) ADD COLUMN \(SQLName.quoted(column.name, always: true)) \(column.declaredType)")],
                    touchesRows: false))
        }
        for fill in fills {
            var condition = "1"
            if fill.onlyNil { condition = "\(SQLName.quoted(fill.column, always: true)) IS NULL" }
            // The to-one's column under its name after the renames above.
            if let column = fill.unlessNullColumn {
                condition = "\(SQLName.quoted(renames.first { $0.from == column }?.to ?? column, always: true)) IS NOT NULL"
            }
            changes.append(
                InPlaceChange(
                    kind: .fillColumn, summary: "\(sourceTable.name).\(fill.column) = \(fill.value)\(fill.onlyNil ? " where nil" : "")",
                    statements: [
                        InPlaceStatement(
                            "UPDATE \(name) SET \(SQLName.quoted(fill.column, always: true)) = ? WHERE \(condition)\(entityCondition(fill.numbers))", [fill.value])
                    ], touchesRows: true))
        }
        return Alteration(changes: changes, survivingIndexes: surviving)
    }

    /// The column an index term names (`ZMAKER COLLATE BINARY ASC` → `ZMAKER`).
    static func termColumn(_ term: String) -> String {
        let first = term.split(separator: " ").first.map(String.init) ?? term
        return first.trimmingCharacters(in: CharacterSet(charactersIn: "\"`[]"))
    }

    // MARK: Rebuilding a table

    private func rebuild(
        _ table: TableLayout, from sourceTable: TableLayout, pairs: [(source: EntityLayout, destination: EntityLayout)],
        values: [String: [Int32: ColumnValue]], stage: String
    ) -> InPlaceChange {
        var arguments: [Value] = []
        var selected: [String] = []
        let numbers = pairs.map(\.source.number).sorted()
        for column in table.columns {
            switch column.name {
            case "Z_PK", "Z_OPT":
                selected.append(SQLName.quoted(column.name, always: true))
            case "Z_ENT":
                if pairs.allSatisfy({ $0.source.number == $0.destination.number }) {
                    selected.append(SQLName.quoted("Z_ENT", always: true))
                } else {
                    let cases = pairs.sorted { $0.source.number < $1.source.number }
                        .map { "WHEN \($0.source.number) THEN \($0.destination.number)" }.joined(separator: " ")
                    selected.append("CASE \(SQLName.quoted("Z_ENT", always: true)) \(cases) END")
                }
            default:
                let byEntity = values[column.name] ?? [:]
                let distinct = Set(byEntity.values)
                if distinct.count <= 1 {
                    selected.append(expression(distinct.first ?? .null, arguments: &arguments))
                } else {
                    var cases: [String] = []
                    for (number, value) in byEntity.sorted(by: { $0.key < $1.key }) where value != .null {
                        cases.append("WHEN \(number) THEN \(expression(value, arguments: &arguments))")
                    }
                    selected.append("CASE \(SQLName.quoted("Z_ENT", always: true)) \(cases.joined(separator: " ")) END")
                }
            }
        }
        var sql = "INSERT INTO \(SQLName.quoted(stage, always: true)) (\(table.columns.map { SQLName.quoted($0.name, always: true) }.joined(separator: ", "))) SELECT \(selected.joined(separator: ", ")) FROM \(SQLName.quoted(sourceTable.name, always: true)) AS \(SQLName.quoted(Self.rowAlias, always: true))"
        if Set(sourceTable.entityNumbers) != Set(numbers) {
            sql += " WHERE \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", ")))"
        }
        return InPlaceChange(
            kind: .rebuildTable, summary: "\(table.name) from \(sourceTable.name)",
            statements: [InPlaceStatement(Self.createSQL(table, name: stage)), InPlaceStatement(sql, arguments)], touchesRows: true)
    }

    static func createSQL(_ table: TableLayout, name: String) -> String {
        let body = table.columns.map { column in
            column.name == "Z_PK" ? "\(SQLName.quoted("Z_PK", always: true)) INTEGER PRIMARY KEY" : "\(SQLName.quoted(column.name, always: true)) \(column.declaredType)"
        }
        return "CREATE TABLE \(SQLName.quoted(name, always: true)) ( \(body.joined(separator: ", ")) )"
    }

    static func createSQL(_ index: IndexLayout) -> String { createIndexSQL(index) }

    // MARK: Join tables

    private struct JoinChange {
        var change: InPlaceChange?
        var stage: String
    }

    /// How a new join table comes to be: kept as it is (change nil), created empty, or filled from
    /// the old join table, to-many or to-one of the relationship it stores. Nil after a problem.
    private mutating func joinTableChange(_ joinTable: JoinTableLayout) -> JoinChange? {
        // The side whose source column is the table's first column, and the other side.
        var sides: [(owner: EntityLayout, toMany: ToManyLayout, sourceColumn: String, destinationColumn: String, order: String?)] = []
        for entity in new.entities {
            for toMany in entity.toManyRelationships {
                guard case .joinTable(let table, let sourceColumn, let destinationColumn, let order) = toMany.storage, table == joinTable.name,
                    !sides.contains(where: { $0.toMany.name == toMany.name && $0.sourceColumn == sourceColumn })
                else { continue }
                sides.append((entity, toMany, sourceColumn, destinationColumn, order))
            }
        }
        guard let side = sides.first else {
            problems.append("the join table \(joinTable.name) stores no relationship")
            return nil
        }
        let stage = stageName()
        let create = InPlaceStatement(Self.createJoinSQL(joinTable, name: stage))
        guard let (ownerSource, sourceName) = mappedSource(of: side.toMany.name, declaredBy: side.owner.name) else {
            return JoinChange(
                change: InPlaceChange(kind: .createTable, summary: "\(joinTable.name) (new, empty)", statements: [create], touchesRows: false),
                stage: stage)
        }
        // The other side's order column, when that side is ordered.
        let otherSide = sides.first { $0.sourceColumn == side.destinationColumn && $0.destinationColumn == side.sourceColumn }
        var columns = [side.sourceColumn, side.destinationColumn]
        var select: [String] = []
        let from: String
        var conditions: [String] = []
        // Links to removed objects are left out, as the copy leaves them out.
        let ownerRoot = ownerSource.rootName
        // An order the old version did not keep: each object's links numbered from 1 in the order the
        // copy reads them (by the other object's primary key), as the copy writes them.
        let numbered = { (partition: String, order: String) in
            "ROW_NUMBER() OVER (PARTITION BY \(SQLName.quoted(partition, always: true)) ORDER BY \(SQLName.quoted(order, always: true)))"
        }
        if let sourceToMany = ownerSource.toMany(named: sourceName) {
            let targetRoot = old.entity(named: sourceToMany.destination)?.rootName ?? sourceToMany.destination
            switch sourceToMany.storage {
            case .joinTable(let table, let sourceColumn, let destinationColumn, let order):
                select = [SQLName.quoted(sourceColumn, always: true), SQLName.quoted(destinationColumn, always: true)]
                from = table
                conditions += [
                    keptCondition("\(SQLName.quoted(table, always: true)).\(SQLName.quoted(sourceColumn, always: true))", naming: ownerRoot),
                    keptCondition("\(SQLName.quoted(table, always: true)).\(SQLName.quoted(destinationColumn, always: true))", naming: targetRoot),
                ].compactMap { $0 }
                if let sideOrder = side.order {
                    columns.append(sideOrder)
                    select.append(order.map { SQLName.quoted($0, always: true) } ?? numbered(sourceColumn, destinationColumn))
                }
                if let otherOrder = otherSide?.order {
                    let oldOther = old.joinTables.first { $0.name == table }?.orderColumns.first { $0 != order }
                    columns.append(otherOrder)
                    select.append(oldOther.map { SQLName.quoted($0, always: true) } ?? numbered(destinationColumn, sourceColumn))
                }
                // The same table, the same columns, no link left out: nothing to do.
                if let oldTable = old.joinTables.first(where: { $0.name == table }), table == joinTable.name,
                    oldTable.columns == joinTable.columns, oldTable.orderColumns == joinTable.orderColumns,
                    sourceColumn == side.sourceColumn, destinationColumn == side.destinationColumn, columns.count == 2 + joinTable.orderColumns.count,
                    conditions.isEmpty, !select.contains(where: { $0.hasPrefix("ROW_NUMBER") })
                {
                    return JoinChange(change: nil, stage: joinTable.name)
                }
            case .destinationColumn(let table, let keyColumn, _, let order):
                // One-to-many (or to-many without inverse) becoming many-to-many.
                select = [SQLName.quoted(keyColumn, always: true), SQLName.quoted("Z_PK", always: true)]
                from = table
                conditions = ["\(SQLName.quoted(keyColumn, always: true)) IS NOT NULL"]
                conditions += [
                    keptCondition("\(SQLName.quoted(table, always: true)).\(SQLName.quoted(keyColumn, always: true))", naming: ownerRoot),
                    keptCondition("\(SQLName.quoted(table, always: true)).\(SQLName.quoted("Z_PK", always: true))", naming: targetRoot),
                ].compactMap { $0 }
                if let sideOrder = side.order {
                    columns.append(sideOrder)
                    select.append(order.map { SQLName.quoted($0, always: true) } ?? numbered(keyColumn, "Z_PK"))
                }
                if let otherOrder = otherSide?.order {
                    columns.append(otherOrder)
                    select.append(numbered("Z_PK", keyColumn))
                }
            }
        } else if let sourceToOne = ownerSource.toOne(named: sourceName) {
            select = [SQLName.quoted("Z_PK", always: true), SQLName.quoted(sourceToOne.column, always: true)]
            from = ownerSource.table
            conditions = ["\(SQLName.quoted(sourceToOne.column, always: true)) IS NOT NULL"]
            let targetRoot = old.entity(named: sourceToOne.destination)?.rootName ?? sourceToOne.destination
            conditions += [
                keptCondition("\(SQLName.quoted(from, always: true)).\(SQLName.quoted("Z_PK", always: true))", naming: ownerRoot),
                keptCondition("\(SQLName.quoted(from, always: true)).\(SQLName.quoted(sourceToOne.column, always: true))", naming: targetRoot),
            ].compactMap { $0 }
            if side.order != nil {
                columns.append(side.order!)
                select.append(numbered("Z_PK", sourceToOne.column))
            }
            if let otherOrder = otherSide?.order {
                columns.append(otherOrder)
                select.append(numbered(sourceToOne.column, "Z_PK"))
            }
        } else {
            problems.append("\(side.owner.name).\(side.toMany.name) comes from \(ownerSource.name).\(sourceName), which is not a relationship")
            return nil
        }
        if columns.count != 2 + joinTable.orderColumns.count {
            problems.append("the join table \(joinTable.name): its order columns do not match its relationships")
            return nil
        }
        let condition = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let insert = InPlaceStatement(
            "INSERT INTO \(SQLName.quoted(stage, always: true)) (\(columns.map { SQLName.quoted($0, always: true) }.joined(separator: ", "))) SELECT \(select.joined(separator: ", ")) FROM \(SQLName.quoted(from, always: true))\(condition)")
        return JoinChange(
            change: InPlaceChange(kind: .copyJoinTable, summary: "\(joinTable.name) from \(from)", statements: [create, insert], touchesRows: true),
            stage: stage)
    }

    static func createJoinSQL(_ table: JoinTableLayout, name: String) -> String {
        let all = (table.columns + table.orderColumns).map { "\(SQLName.quoted($0, always: true)) INTEGER" }.joined(separator: ", ")
        return "CREATE TABLE \(SQLName.quoted(name, always: true)) ( \(all), PRIMARY KEY (\(table.columns.map { SQLName.quoted($0, always: true) }.joined(separator: ", "))) )"
    }
}
