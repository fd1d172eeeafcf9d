import MoultModel

/// Builds the SQL of ``StoreLayout/inPlaceChanges(to:correspondence:rebuilding:)`` except the triggers and
/// R-trees: the tables (`+Tables`: each altered where it stands, `+Alter`, or rebuilt, `+Rebuild`, its
/// columns' values from `+ColumnValues`), the join tables (`+JoinTables`), the indexes, then Core
/// Data's own tables (`+CoreDataTables`). What cannot be done by SQL is gathered in ``problems``.
struct InPlaceBuilder {
    let old: StoreLayout
    let new: StoreLayout
    let correspondence: LayoutCorrespondence
    /// Old tables the store declares otherwise than the layout (``TableDeclaration``): rebuilt, never
    /// altered where they stand, when the step changes them.
    let rebuilding: Set<String>
    var problems: [String] = []
    var changes: [InPlaceChange] = []
    /// The old tables neither kept nor renamed (``InPlaceScript/rebuiltTables``).
    var rebuiltTables: Set<String> = []

    var oldRoles: [String: [String: ColumnRole]] = [:]
    var newRoles: [String: [String: ColumnRole]] = [:]
    /// Source `Z_ENT` → destination `Z_ENT`, for every migrated entity.
    var numberMap: [Int32: Int32] = [:]
    /// The source `Z_ENT` of every removed entity.
    private var removedNumbers: Set<Int32> = []
    /// The source table's alias in a rebuild's `INSERT … SELECT`, for ``ColumnValue/sql(_:)``.
    static let rowAlias = "moult_row"
    private var stageCount = 0
    /// The temporary tables of the first objects of to-manys made to-one, by "entity.relationship"
    /// (source), the changes that fill them, in order, and the statements that drop them at the end.
    var firstStages: [String: String] = [:]
    var stagingChanges: [InPlaceChange] = []

    init(old: StoreLayout, new: StoreLayout, correspondence: LayoutCorrespondence, rebuilding: Set<String> = []) {
        self.old = old
        self.new = new
        self.correspondence = correspondence
        self.rebuilding = rebuilding
    }

    func source(of destinationEntity: String) -> EntityLayout? {
        correspondence.entities[destinationEntity].flatMap { old.entity(named: $0) }
    }

    func sourceProperty(_ property: String, of destinationEntity: String) -> String? {
        correspondence.properties[destinationEntity]?[property]
    }

    /// The source entity and property of a property as seen from the entity that declares it, or,
    /// when that entity is new (a new parent), from the first of its sub-entities that has a source.
    func mappedSource(of property: String, declaredBy entityName: String) -> (entity: EntityLayout, property: String)? {
        for entity in new.model.hierarchy(from: entityName) {
            guard let source = source(of: entity.name) else { continue }
            return sourceProperty(property, of: entity.name).map { (source, $0) }
        }
        return nil
    }

    mutating func stageName() -> String {
        stageCount += 1
        return "moult_inplace_\(stageCount)"
    }

    // MARK: - Build

    /// What the tables and join tables come to, gathered one by one before the script is put in order.
    struct TableSteps {
        var survivingIndexes: Set<String> = []
        /// Old tables altered where they stand, under their own name.
        var keptTables: Set<String> = []
        /// Old tables altered then renamed.
        var renamedTables: Set<String> = []
        var rebuilds: [InPlaceChange] = []
        var alters: [InPlaceChange] = []
        var renames: [(stage: String, final: String)] = []
        /// Destination root table → the old root entity whose `Z_MAX` it continues.
        var maximumSources: [String: Int32] = [:]
    }

    mutating func build() {
        oldRoles = Self.columnRoles(of: old)
        newRoles = Self.columnRoles(of: new)
        checkEntities()
        checkInverses()
        guard problems.isEmpty else { return }

        var steps = TableSteps()
        for table in new.tables { addSteps(for: table, to: &steps) }
        for joinTable in new.joinTables { addSteps(for: joinTable, to: &steps) }
        guard problems.isEmpty else { return }

        // 1. Indexes that do not survive go first (a dropped or renamed column may not be indexed).
        changes += indexDrops(sparing: steps.survivingIndexes)
        // 2. New tables filled from the old ones, while these stand; 3. tables altered where they stand.
        changes += stagingChanges
        changes += steps.rebuilds
        changes += steps.alters
        // 4. Old tables neither kept nor renamed.
        rebuiltTables = Set(old.tables.map(\.name) + old.joinTables.map(\.name)).subtracting(steps.keptTables.union(steps.renamedTables))
        changes += tableDrops(sparing: steps.keptTables.union(steps.renamedTables))
        // 5. New tables under their names.
        changes += tableRenames(steps.renames)
        // 6. Indexes.
        changes += indexCreations(sparing: steps.survivingIndexes)
        // 7. Z_PRIMARYKEY: one row per entity; a root's Z_MAX continues its old root's.
        changes.append(primaryKeysChange(maximumSources: steps.maximumSources))
        // 8. The model cache described the old model: it now carries the new one (or none, when the new
        // model has a part whose archived form is not known).
        changes.append(modelCacheChange())
    }

    private func indexDrops(sparing surviving: Set<String>) -> [InPlaceChange] {
        let oldIndexes = (old.tables.flatMap(\.indexes) + old.joinTables.flatMap(\.indexes)).filter { !surviving.contains($0.name) }
        guard !oldIndexes.isEmpty else { return [] }
        return [
            InPlaceChange(
                kind: .dropIndex, summary: oldIndexes.map(\.name).joined(separator: ", "),
                statements: oldIndexes.map { InPlaceStatement("DROP INDEX IF EXISTS \(SQLName.quoted($0.name, always: true))") }, touchesRows: false)
        ]
    }

    private func tableDrops(sparing spared: Set<String>) -> [InPlaceChange] {
        let dropped = (old.tables.map(\.name) + old.joinTables.map(\.name)).filter { !spared.contains($0) }
        let finalNames = Set(new.tables.map(\.name) + new.joinTables.map(\.name))
        return dropped.map { table in
            InPlaceChange(
                kind: .dropTable, summary: table, statements: [InPlaceStatement("DROP TABLE \(SQLName.quoted(table, always: true))")],
                touchesRows: false, deferred: finalNames.contains(table) ? nil : .dropTable(table))
        }
    }

    /// The new tables renamed from their stages to their names, then the temporary tables of first
    /// objects dropped.
    private func tableRenames(_ renames: [(stage: String, final: String)]) -> [InPlaceChange] {
        let renamed = renames.filter { $0.stage != $0.final }.map { stage, final in
            InPlaceChange(
                kind: .renameTable, summary: "\(final)",
                statements: [
                    InPlaceStatement("ALTER TABLE \(SQLName.quoted(stage, always: true)) RENAME TO \(SQLName.quoted(final, always: true))")
                ], touchesRows: false)
        }
        let firstStagesDropped = firstStages.values.sorted().map { stage in
            InPlaceChange(
                kind: .stageLinks, summary: "\(stage) dropped",
                statements: [InPlaceStatement("DROP TABLE temp.\(SQLName.quoted(stage, always: true))")], touchesRows: false)
        }
        return renamed + firstStagesDropped
    }

    private func indexCreations(sparing surviving: Set<String>) -> [InPlaceChange] {
        let created = (new.tables.flatMap(\.indexes) + new.joinTables.flatMap(\.indexes)).filter { !surviving.contains($0.name) }
        // A unique index is a rule of the new version: never deferred (the store would be at the
        // new version while breaking it).
        return created.map { index in
            InPlaceChange(
                kind: .createIndex, summary: index.name, statements: [InPlaceStatement(index.createSQL)], touchesRows: true,
                deferred: index.isUnique ? nil : .createIndex(index.name))
        }
    }

    // MARK: - Checks

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
        // step commits, as the copy's validation checks it (`SQLSteps.rulesTheStepCanBreak`).
        let removed = Set(old.entities.map(\.name)).subtracting(claimed.keys)
        removedNumbers = Set(removed.compactMap { old.entity(named: $0)?.number })
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

    // MARK: - Links to removed objects

    /// The primary keys of the removed objects a key column referring to the old entity `entity`'s
    /// hierarchy may name, as a subquery (`SELECT "Z_PK" FROM … WHERE "Z_ENT" IN (…)`); nil when it can
    /// name none.
    private func removedObjects(namedBy entity: String) -> String? {
        guard !removedNumbers.isEmpty else { return nil }
        let numbers = old.model.hierarchy(from: entity).compactMap { old.entity(named: $0.name)?.number }.filter(removedNumbers.contains).sorted()
        guard !numbers.isEmpty, let table = old.entity(named: entity)?.table else { return nil }
        return "SELECT \(SQLName.quoted("Z_PK", always: true)) FROM \(SQLName.quoted(table, always: true)) WHERE \(SQLName.quoted("Z_ENT", always: true)) IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }

    /// `column` (a key naming an object of the old entity `entity`'s hierarchy) as an expression of the
    /// source row that is nil where the object it names is removed; nil when no removed object can be named.
    func keptKey(_ column: String, naming entity: String, qualifier: String? = nil) -> String? {
        guard let removed = removedObjects(namedBy: entity) else { return nil }
        let reference = (qualifier.map { SQLName.quoted($0, always: true) + "." } ?? "") + SQLName.quoted(column, always: true)
        return "CASE WHEN \(reference) IN (\(removed)) THEN NULL ELSE \(reference) END"
    }

    /// A condition on `column` (qualified) that holds when it names no removed object of `entity`'s
    /// hierarchy (old model); nil when none can be named.
    func keptCondition(_ reference: String, naming entity: String) -> String? {
        removedObjects(namedBy: entity).map { "\(reference) NOT IN (\($0))" }
    }
}
