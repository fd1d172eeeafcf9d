import Foundation
import MoultAssociations
public import MoultExpressions
public import MoultMapping
public import MoultModel
import MoultStore

/// Runs entity mappings from a source store into a destination store, chunk by chunk: Core Data's
/// `NSMigrationManager`, streaming.
///
/// Policies see the manager: they create destination objects (``createObject(entity:values:)``),
/// record associations (``associate(source:destination:mapping:)``), look them up
/// (``destinationInstances(forEntityMappingNamed:sourceInstances:)``), and keep state across chunks
/// (``state(_:)``). Value expressions reach it as `$manager`.
///
/// A manager is made and driven by the engine for a driver (`StreamingMigrator` of MoultMigration); it is confined to the thread that runs the
/// migration.
public final class MigrationManager {
    public let sourceModel: ObjectModel
    public let destinationModel: ObjectModel
    /// Free-form values for policies (Core Data's `userInfo`), not persisted across a resume.
    public var userInfo: [String: Value] = [:]
    /// The entity mapping being run.
    public private(set) var currentMapping: EntityMapping?
    /// The stage being run.
    public private(set) var currentStage: MigrationStage = .preparing

    let sourceStore: SQLiteStore
    let destinationStore: SQLiteStore
    let writer: StoreWriter
    var destination: Database { destinationStore.database }
    var sourceLayout: StoreLayout { sourceStore.layout }
    var destinationLayout: StoreLayout { destinationStore.layout }
    let associations: any AssociationTable
    var mappings: [CompiledMapping] = []
    private var mappingIndexByName: [String: Int] = [:]
    let variables = VariableLayout(["source", "destination", "manager", "entityMapping", "entityPolicy", "propertyMapping"])
    private var context: EvaluationContext
    private let sourceSlot: Int
    private let destinationSlot: Int

    /// The folder holding the source's external binary data files (see ``ExternalDataConversion``), and
    /// the largest file read into a row.
    var externalData: (folder: URL, maxBytes: Int)?

    private var failures: [ValidationFailure] = []
    private(set) var failureCount = 0
    static let failureLimit = 10_000

    init(
        source: SQLiteStore, destination: SQLiteStore, sourceModel: ObjectModel, destinationModel: ObjectModel,
        associations: any AssociationTable
    ) throws {
        self.sourceStore = source
        self.destinationStore = destination
        self.writer = try destination.makeWriter()
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.associations = associations
        context = EvaluationContext(variables: variables)
        sourceSlot = variables.slot(adding: "source")
        destinationSlot = variables.slot(adding: "destination")
        // Unowned, like the resolver: the context is the manager's own, and a strong reference back
        // would keep every finished step's manager, and its open stores, alive.
        context.host = ManagerHost(manager: self)
        context.resolver = SourceResolver(manager: self)
        context[variable: "manager"] = .value(.string("manager"))
    }

    func install(_ mappings: [CompiledMapping]) {
        self.mappings = mappings
        mappingIndexByName = [:]
        for mapping in mappings where mappingIndexByName[mapping.name] == nil {
            mappingIndexByName[mapping.name] = mapping.index
        }
        for mapping in mappings where mappingIndexByName[mapping.mapping.name] == nil {
            mappingIndexByName[mapping.mapping.name] = mapping.index
        }
    }

    // MARK: - Creating objects

    /// Creates a destination object with these attribute values; attributes not given get their
    /// default value. Relationships are set in stage 2.
    ///
    /// - Returns: the new object's id.
    /// - Throws: ``MigrationError`` when the entity is unknown or abstract, or the insert fails.
    @discardableResult
    public func createObject(entity name: String, values: [String: Value]) throws -> ObjectID {
        guard let layout = destinationLayout.entity(named: name), !layout.isAbstract else {
            throw MigrationError(
                .invalidMapping, "cannot create an object of '\(name)': no such concrete entity in the destination model",
                mapping: currentMapping?.name, entity: name)
        }
        var row: [Value] = []
        row.reserveCapacity(layout.attributes.count)
        for column in layout.attributes {
            if let value = values[column.name] {
                row.append(DefaultValues.coerce(value, to: column.type))
            } else {
                row.append(destinationModel.attribute(named: column.name, of: name).map(DefaultValues.value(of:)) ?? .null)
            }
        }
        return try insert(row, into: layout)
    }

    /// Stage 1's default: one destination object from the attribute mappings, associated with its source.
    public func createDefaultDestinationInstance(for source: MigrationObject, mapping: EntityMapping) throws {
        try createDestinationInstance(for: source, mapping: mapping)
    }

    /// One destination object from the attribute mappings, associated with its source, as
    /// ``createDefaultDestinationInstance(for:mapping:)`` makes it; `variables` are bound while the
    /// expressions are evaluated (`["value": "red"]` for `$value`).
    ///
    /// - Returns: the new object's id; nil when the mapping has no concrete destination entity.
    @discardableResult
    public func createDestinationInstance(
        for source: MigrationObject, mapping: EntityMapping, variables: [String: Value] = [:]
    ) throws -> ObjectID? {
        let compiled = try self.compiled(mapping)
        guard let layout = compiled.destination else { return nil }
        context.object = source
        context[variableSlot: sourceSlot] = .object(source)
        for (name, value) in variables { context[variable: name] = .value(value) }
        defer { for name in variables.keys { context[variable: name] = .unbound } }
        var row: [Value] = []
        row.reserveCapacity(compiled.attributeValues.count)
        for (offset, (column, valueSource)) in zip(layout.attributes, compiled.attributeValues).enumerated() {
            switch valueSource {
            case .constant(let value):
                row.append(value)
            case .expression(let expression, let defaultForNil):
                do {
                    var value = try expression.evaluate(context)
                    if let conversion = compiled.externalDataConversions[offset], let externalData {
                        value = try ExternalDataConversion.apply(conversion, to: value, folder: externalData.folder, maxBytes: externalData.maxBytes)
                    }
                    row.append(value.isNull ? defaultForNil : DefaultValues.coerce(value, to: column.type))
                } catch let error as StoreError {
                    throw MigrationError(
                        error.code == .invalidValue ? .invalidStore : .io, "the value of '\(column.name)' could not be read: \(error.message)",
                        mapping: compiled.name, entity: source.entityName, primaryKey: source.objectID.primaryKey, underlying: error)
                } catch {
                    throw MigrationError(
                        .evaluationFailed, "the value of '\(column.name)' could not be computed", mapping: compiled.name,
                        entity: source.entityName, primaryKey: source.objectID.primaryKey, underlying: error)
                }
            }
        }
        let id: ObjectID
        if compiled.insertedToOnes.isEmpty {
            id = try insert(row, into: layout)
        } else {
            id = try insert(row, toOnes: try insertedToOneValues(compiled, layout: layout, source: source), into: layout)
        }
        pendingAssociations.append(Association(source: source.objectID, destination: id, mapping: compiled.index))
        if let mirror = compiled.mirrorTable { try self.mirror(source: source.objectID, destination: id, in: mirror) }
        return id
    }

    /// The to-one values of a new object whose to-ones are written at insert (see ``ToOnesAtInsert``):
    /// the looked-up mapping's object, as stage 2 would set it; nil for the others.
    private func insertedToOneValues(_ compiled: CompiledMapping, layout: EntityLayout, source: MigrationObject) throws -> [Value] {
        var values = [Value](repeating: .null, count: layout.toOneRelationships.count)
        for inserted in compiled.insertedToOnes {
            guard let offset = layout.toOneRelationships.firstIndex(where: { $0.name == inserted.name }) else { continue }
            let key: ObjectID
            if let slot = inserted.slot {
                guard case .object(let held) = source.value(atSlot: slot) else { continue }
                key = held
            } else {
                key = source.objectID
            }
            // The looked-up mapping ran in an earlier pass (see `ToOnesAtInsert.createOrder`): its mirror is
            // whole (its associations may not be written, see `UnreadAssociations`).
            let lookup = try destination.statement(
                "SELECT destination FROM main.\(SQLName.quoted(ToOnesAtInsert.mirror(inserted.lookup))) WHERE source = ?")
            try lookup.bind([.int(key.primaryKey)])
            if try lookup.step() { values[offset] = .object(ObjectID(entity: inserted.targetEntity, primaryKey: lookup.int64(at: 0))) }
            lookup.reset()
        }
        return values
    }

    /// Records an association in the destination's mirror table of its mapping.
    private func mirror(source: ObjectID, destination: ObjectID, in table: String) throws {
        try self.destination.execute(
            "INSERT INTO main.\(SQLName.quoted(table)) (source, destination) VALUES (?, ?)", [.int(source.primaryKey), .int(destination.primaryKey)])
    }

    /// Stage 1 of a chunk as one `INSERT … SELECT` from the attached source (see ``CompiledMapping/BulkCopy``):
    /// primary keys continue from the writer's counter in source order, and the chunk's associations
    /// are recorded from the same keys.
    ///
    /// A mapping whose associations nothing reads (see ``UnreadAssociations``) records the chunk as one row
    /// instead, under its pass, without reading the keys.
    ///
    /// - Returns: false, with nothing written, when the chunk holds a row the per-object path would
    ///   convert or refuse rather than copy as it is stored (see ``CompiledMapping/BulkCopy/insertSQL``):
    ///   that chunk takes the per-object path.
    func bulkCreate(
        _ mapping: CompiledMapping, _ bulk: CompiledMapping.BulkCopy, pass: Int, after lowerBound: Int64, through upperBound: Int64
    ) throws -> Bool {
        guard let layout = mapping.destination else { return true }
        let filterArguments = mapping.filterSQL?.arguments ?? []
        let first = try writer.lastPrimaryKey(for: layout.name) + 1
        let insert = try destination.statement(bulk.insertSQL)
        let count: Int
        do {
            // In a savepoint: a refused chunk leaves nothing of its insert.
            count = try destination.transaction {
                try insert.bind([.int(first)] + bulk.constants + [.int(lowerBound), .int(upperBound)] + filterArguments)
                defer { insert.reset() }
                while try insert.step() {}
                return destination.changes
            }
        } catch let error as StoreError where error.message.contains(CompiledMapping.refusal) {
            return false
        } catch {
            throw MigrationError(
                .evaluationFailed, "inserting the chunk's '\(layout.name)' objects failed", mapping: mapping.name, entity: layout.name,
                underlying: error)
        }
        guard count > 0 else { return true }
        if let mirrorSQL = bulk.mirrorSQL {
            try destination.execute(mirrorSQL, [.int(first), .int(lowerBound), .int(upperBound)] + filterArguments)
            guard destination.changes == count else {
                throw MigrationError(
                    .evaluationFailed, "the chunk inserted \(count) objects but mirrored \(destination.changes) associations", mapping: mapping.name)
            }
            FaultInjection.reach(.associationsMirrored)
        }
        _ = try writer.allocatePrimaryKeys(for: layout.name, count: count)
        if unreadAssociations.contains(mapping.index) {
            try UnreadAssociations.record(pass: pass, first: first, count: count, lower: lowerBound, upper: upperBound, in: destination)
            FaultInjection.reach(.associationsUnwritten)
            return true
        }
        let keys = try sourceStore.database.statement(bulk.keysSQL)
        try keys.bind([.int(lowerBound), .int(upperBound)] + filterArguments)
        var next = first
        while try keys.step() {
            let source = ObjectID(entity: mapping.source?.number ?? 0, primaryKey: keys.int64(at: 0))
            pendingAssociations.append(Association(source: source, destination: ObjectID(entity: layout.number, primaryKey: next), mapping: mapping.index))
            next += 1
        }
        keys.reset()
        guard next - first == Int64(count) else {
            throw MigrationError(
                .evaluationFailed, "the chunk inserted \(count) objects but read \(next - first) source keys", mapping: mapping.name)
        }
        return true
    }

    private func insert(_ row: [Value], toOnes: [Value]? = nil, into layout: EntityLayout) throws -> ObjectID {
        var values = row
        if let toOnes {
            values.append(contentsOf: toOnes)
        } else if !layout.toOneRelationships.isEmpty {
            values.append(contentsOf: repeatElement(Value.null, count: layout.toOneRelationships.count))
        }
        do {
            return try writer.insert(layout.name, values: values)
        } catch {
            throw MigrationError(
                .evaluationFailed, "inserting a '\(layout.name)' object failed", mapping: currentMapping?.name,
                entity: layout.name, underlying: error)
        }
    }

    // MARK: - Associations

    /// Associations recorded in the chunk and not yet written: written together (ascending keys are
    /// appends) before any lookup and before the chunk commits.
    private var pendingAssociations: [Association] = []

    /// Writes the associations recorded since the last flush into the chunk's transaction.
    func flushAssociations() throws {
        guard !pendingAssociations.isEmpty else { return }
        try associations.associate(pendingAssociations)
        pendingAssociations.removeAll(keepingCapacity: true)
    }

    /// Forgets the associations of a chunk that failed.
    func discardPendingAssociations() {
        pendingAssociations.removeAll(keepingCapacity: true)
    }

    /// Records that `mapping` made `destination` from `source`.
    public func associate(source: ObjectID, destination: ObjectID, mapping: EntityMapping) throws {
        let compiled = try self.compiled(mapping)
        pendingAssociations.append(Association(source: source, destination: destination, mapping: compiled.index))
        if let mirror = compiled.mirrorTable { try self.mirror(source: source, destination: destination, in: mirror) }
    }

    /// The destination objects the named entity mapping made from these source objects.
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for source in sourceInstances {
            result += try associations.destinations(forMapping: index, source: source.primaryKey)
        }
        return result
    }

    /// The source objects the named entity mapping made these destination objects from.
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        guard let index = mappingIndexByName[name] else {
            throw MigrationError(.invalidMapping, "no entity mapping is named '\(name)'", mapping: currentMapping?.name)
        }
        var result: [ObjectID] = []
        for destination in destinationInstances {
            result += try associations.sources(forMapping: index, destination: destination)
        }
        return result
    }

    /// The destinations of these source objects through whichever mappings migrate the destination
    /// entity of the source relationship `name` of the current mapping's source entity.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectID]) throws -> [ObjectID] {
        try flushAssociations()
        var result: [ObjectID] = []
        for source in sourceInstances {
            result += try associations.destinations(forSource: source, mappings: try mappings(migrating: source.entity, through: name))
        }
        return result
    }

    private struct SourceRelationshipKey: Hashable {
        var mapping: String
        var relationship: String
        var sourceEntity: Int32
    }

    /// The mappings that migrate an object of `entity` reached through the current mapping's source
    /// relationship `name`, worked out once per (mapping, relationship, entity): the model look-ups
    /// are not repeated per object.
    private var sourceRelationshipMappings: [SourceRelationshipKey: [Int]] = [:]

    private func mappings(migrating entityNumber: Int32, through name: String) throws -> [Int] {
        guard let mapping = currentMapping, let sourceEntity = mapping.sourceEntityName,
            let relationship = sourceModel.relationship(named: name, of: sourceEntity)
        else {
            throw MigrationError(
                .invalidMapping, "the source entity has no relationship named '\(name)'", mapping: currentMapping?.name)
        }
        let key = SourceRelationshipKey(mapping: currentCompiled?.name ?? mapping.name, relationship: name, sourceEntity: entityNumber)
        if let known = sourceRelationshipMappings[key] { return known }
        guard sourceLayout.entity(number: entityNumber) != nil else {
            sourceRelationshipMappings[key] = []
            return []
        }
        // Only mappings that make objects the destination relationship can hold: a source object may
        // also be migrated into an unrelated entity (an Adult into its Company).
        var accepted: Set<Int32>?
        if let destinationEntity = mapping.destinationEntityName,
            let destinationRelationship = destinationModel.relationship(named: name, of: destinationEntity),
            let target = destinationLayout.entity(named: destinationRelationship.destinationEntity)
        {
            accepted = Set(target.hierarchyNumbers)
        }
        let relevant = mappings.filter { compiled in
            guard let accepted else { return true }
            return compiled.destination.map { accepted.contains($0.number) } ?? false
        }
        // Mappings whose source entity is this object's own entity, or (for objects of a sub-entity
        // migrated by a mapping of the destination entity) the relationship's destination.
        let candidates = relevant.filter { $0.source?.number == entityNumber }.map(\.index)
        let chosen = candidates.isEmpty
            ? relevant.filter { $0.mapping.sourceEntityName == relationship.destinationEntity }.map(\.index) : candidates
        sourceRelationshipMappings[key] = chosen
        return chosen
    }

    // MARK: - Relationships

    /// Stage 2's default: every relationship mapping evaluated and set on the destination object.
    public func createDefaultRelationships(for destination: ObjectID, source: MigrationObject, mapping: EntityMapping) throws {
        let compiled = try self.compiled(mapping)
        var contextIsSet = false
        for (index, (name, expression)) in compiled.relationships.enumerated() {
            if let direct = compiled.directLookups[index], let mapping = mappingIndexByName[direct.mappingName] {
                var key = source.objectID.primaryKey
                if let slot = direct.slot {
                    guard case .object(let id) = source.value(atSlot: slot) else { continue }
                    key = id.primaryKey
                }
                try flushAssociations()
                try setRelationship(name, of: destination, to: try associations.destinations(forMapping: mapping, source: key))
                continue
            }
            if !contextIsSet {
                context.object = source
                context[variableSlot: sourceSlot] = .object(source)
                context[variableSlot: destinationSlot] = .value(.object(destination))
                contextIsSet = true
            }
            let value: Value
            do {
                value = try expression.evaluate(context)
            } catch {
                throw MigrationError(
                    .evaluationFailed, "the relationship '\(name)' could not be computed", mapping: compiled.name,
                    entity: source.entityName, primaryKey: source.objectID.primaryKey, underlying: error)
            }
            try setRelationship(name, of: destination, to: Self.objectIDs(in: value))
        }
    }

    package static func objectIDs(in value: Value) -> [ObjectID] {
        switch value {
        case .object(let id): [id]
        case .array(let values): values.flatMap(objectIDs(in:))
        default: []
        }
    }

    /// Sets a relationship of a destination object: the to-one's columns, the inverse columns of a
    /// to-many's destinations, or the join rows of a many-to-many. Adding is idempotent, so a chunk
    /// replayed after a crash writes the same rows.
    public func setRelationship(_ name: String, of object: ObjectID, to targets: [ObjectID]) throws {
        let plan = try relationshipWrite(name, entity: object.entity)
        for target in targets where !plan.accepted.contains(target.entity) {
            let found = destinationLayout.entity(number: target.entity)?.name ?? "Z_ENT \(target.entity)"
            throw MigrationError(
                .evaluationFailed,
                "the relationship '\(name)' of \(plan.entityName) \(object) holds \(plan.destinationName) objects, not the \(found) \(target)",
                mapping: currentMapping?.name, entity: plan.entityName, primaryKey: object.primaryKey)
        }
        switch plan.kind {
        case .toOne(let update, let inverse):
            guard let target = targets.first else { return }
            try update.run(object: object, target: target, in: destination)
            // A one-to-one is stored on both sides: keep the inverse's column in step, as Core Data does.
            try inverse?[target.entity]?.run(object: target, target: object, in: destination)
        case .toMany:
            try writer.relate(name, object, to: targets)
        }
    }

    /// How a relationship of an entity is written, worked out once per (entity, relationship).
    private struct RelationshipWrite {
        enum Kind {
            /// The to-one's update and, for a one-to-one, the inverse's update by the target's entity.
            case toOne(ToOneUpdate, inverse: [Int32: ToOneUpdate]?)
            case toMany
        }

        var kind: Kind
        var entityName: String
        var destinationName: String
        /// The `Z_ENT` values a target may have: the destination entity's and its sub-entities'.
        var accepted: [Int32]
    }

    /// `UPDATE <table> SET <column> = ?[, <companion> = ?] WHERE Z_PK = ?`.
    private struct ToOneUpdate {
        var sql: String
        var hasEntityColumn: Bool

        init(_ toOne: ToOneColumn, table: String) {
            hasEntityColumn = toOne.entityColumn != nil
            sql = toOne.entityColumn.map { "UPDATE \(table) SET \(toOne.column) = ?, \($0) = ? WHERE Z_PK = ?" }
                ?? "UPDATE \(table) SET \(toOne.column) = ? WHERE Z_PK = ?"
        }

        func run(object: ObjectID, target: ObjectID, in database: Database) throws {
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

    private struct RelationshipKey: Hashable {
        var entity: Int32
        var name: String
    }

    private var relationshipWrites: [RelationshipKey: RelationshipWrite] = [:]

    private func relationshipWrite(_ name: String, entity number: Int32) throws -> RelationshipWrite {
        let key = RelationshipKey(entity: number, name: name)
        if let plan = relationshipWrites[key] { return plan }
        guard let layout = destinationLayout.entity(number: number) else {
            throw MigrationError(.invalidMapping, "no destination entity has Z_ENT \(number)", mapping: currentMapping?.name)
        }
        let plan: RelationshipWrite
        if let toOne = layout.toOne(named: name) {
            var inverseUpdates: [Int32: ToOneUpdate]?
            if let relationship = destinationModel.relationship(named: name, of: layout.name),
                let inverse = destinationModel.inverse(of: relationship), !inverse.isToMany
            {
                inverseUpdates = [:]
                for number in destinationLayout.entity(named: toOne.destination)?.hierarchyNumbers ?? [] {
                    guard let target = destinationLayout.entity(number: number), let column = target.toOne(named: inverse.name) else { continue }
                    inverseUpdates?[number] = ToOneUpdate(column, table: target.table)
                }
            }
            plan = RelationshipWrite(
                kind: .toOne(ToOneUpdate(toOne, table: layout.table), inverse: inverseUpdates), entityName: layout.name,
                destinationName: toOne.destination, accepted: destinationLayout.entity(named: toOne.destination)?.hierarchyNumbers ?? [])
        } else if let toMany = layout.toMany(named: name) {
            plan = RelationshipWrite(
                kind: .toMany, entityName: layout.name, destinationName: toMany.destination,
                accepted: destinationLayout.entity(named: toMany.destination)?.hierarchyNumbers ?? [])
        } else {
            throw MigrationError(
                .invalidMapping, "the destination entity '\(layout.name)' has no relationship '\(name)'",
                mapping: currentMapping?.name, entity: layout.name)
        }
        relationshipWrites[key] = plan
        return plan
    }

    // MARK: - Stage 2 as set operations

    /// A pass's relationships written as set operations: per relationship and chunk, the links are
    /// staged in a temporary table in the order the per-object path would write them (a later link to
    /// the same row replaces an earlier one, as a later `UPDATE` would), then one `UPDATE … FROM` writes
    /// them all.
    private struct SetWrite {
        struct Relationship {
            var name: String
            /// The mapping whose associations the relationship holds, and the source slot looked up
            /// (nil for the source object itself).
            var lookup: Int
            var slot: Int?
            var isToOne: Bool
            var accepted: Set<Int32>
            /// `UPDATE main.<table> AS t SET … FROM temp.moult_links AS l WHERE t.Z_PK = +l.object`
            /// (the `+` keeps SQLite from scanning the whole table for each chunk: the links are the outer loop).
            var updateSQL: String
        }

        var entity: Int32
        var relationships: [Relationship]
    }

    /// The set form of each mapping's stage 2, by mapping index: nil inside when it has none.
    private var setWrites: [Int: SetWrite?] = [:]

    static let linksTable = "temp.moult_links"
    private var linksTableReady = false

    /// The set form of a mapping's stage 2: every relationship a direct lookup (see
    /// ``CompiledMapping/keysOnlyRead``), written through a column (a to-one without a one-to-one
    /// inverse, or a to-many through its inverse's column), no two relationships writing the same
    /// column. Anything else keeps the per-object path.
    private func setWrite(for compiled: CompiledMapping) -> SetWrite? {
        if let known = setWrites[compiled.index] { return known }
        var result: SetWrite?
        defer { setWrites[compiled.index] = result }
        guard compiled.keysOnlyRead != nil, let layout = compiled.destination, !layout.isAbstract else { return nil }
        var relationships: [SetWrite.Relationship] = []
        var columns: Set<String> = []
        for (index, (name, _)) in compiled.relationships.enumerated() {
            guard let direct = compiled.directLookups[index], let lookup = mappingIndexByName[direct.mappingName],
                let plan = try? relationshipWrite(name, entity: layout.number)
            else { return nil }
            let table: String
            var sets: [String]
            let isToOne: Bool
            switch plan.kind {
            case .toOne(_, let inverse):
                guard inverse == nil, let toOne = layout.toOne(named: name) else { return nil }
                table = layout.table
                sets = ["\(SQLName.quoted(toOne.column)) = l.value"]
                if let companion = toOne.entityColumn { sets.append("\(SQLName.quoted(companion)) = l.entity") }
                isToOne = true
            case .toMany:
                guard let toMany = layout.toMany(named: name),
                    case .destinationColumn(let destinationTable, let column, let entityColumn, let orderColumn) = toMany.storage
                else { return nil }
                table = destinationTable
                sets = ["\(SQLName.quoted(column)) = l.value"]
                if let entityColumn { sets.append("\(SQLName.quoted(entityColumn)) = l.entity") }
                if let orderColumn { sets.append("\(SQLName.quoted(orderColumn)) = l.position") }
                isToOne = false
            }
            guard columns.insert("\(table).\(sets[0])").inserted else { return nil }
            relationships.append(
                SetWrite.Relationship(
                    name: name, lookup: lookup, slot: direct.slot, isToOne: isToOne, accepted: Set(plan.accepted),
                    updateSQL: "UPDATE main.\(SQLName.quoted(table)) AS t SET \(sets.joined(separator: ", ")) FROM \(Self.linksTable) AS l WHERE t.Z_PK = +l.object"))
        }
        result = SetWrite(entity: layout.number, relationships: relationships)
        return result
    }

    /// Stage 2 of a chunk as set operations, when the mapping allows it (see ``setWrite(for:)``):
    /// `objects` are the chunk's source objects (keys and looked-up to-ones), `made` their destinations.
    /// Writes exactly what ``createDefaultRelationships(for:source:mapping:)`` writes object by object.
    ///
    /// - Returns: false when the chunk must take the per-object path (nothing was written then): the
    ///   mapping has no set form, a destination is of another entity, or a target is of an entity the
    ///   relationship cannot hold (the per-object path then reports it).
    func createRelationshipsAsSets(_ compiled: CompiledMapping, objects: [MigrationObject], made: [[ObjectID]]) throws -> Bool {
        guard let plan = setWrite(for: compiled) else { return false }
        for destinations in made {
            for destination in destinations where destination.entity != plan.entity { return false }
        }
        try flushAssociations()
        // Every lookup and check first, so that a chunk that falls back has written nothing.
        var targetsByRelationship: [[(object: Int, targets: [ObjectID])]] = []
        for relationship in plan.relationships {
            var objectIndices: [Int] = []
            var keys: [Int64] = []
            objectIndices.reserveCapacity(objects.count)
            keys.reserveCapacity(objects.count)
            for (index, object) in objects.enumerated() {
                if let slot = relationship.slot {
                    guard case .object(let id) = object.value(atSlot: slot) else { continue }
                    keys.append(id.primaryKey)
                } else {
                    keys.append(object.objectID.primaryKey)
                }
                objectIndices.append(index)
            }
            let found = try associations.destinations(forMapping: relationship.lookup, sources: keys)
            var targets: [(object: Int, targets: [ObjectID])] = []
            targets.reserveCapacity(found.count)
            for (index, list) in zip(objectIndices, found) {
                for target in list where !relationship.accepted.contains(target.entity) { return false }
                targets.append((index, list))
            }
            targetsByRelationship.append(targets)
        }
        if !linksTableReady {
            try destination.executeScript(
                "CREATE TEMP TABLE IF NOT EXISTS moult_links (object INTEGER PRIMARY KEY, value INTEGER NOT NULL, entity INTEGER NOT NULL, position INTEGER NOT NULL)")
            linksTableReady = true
        }
        let stage = try destination.statement("INSERT OR REPLACE INTO \(Self.linksTable) (object, value, entity, position) VALUES (?, ?, ?, ?)")
        for (relationship, targets) in zip(plan.relationships, targetsByRelationship) {
            try destination.executeScript("DELETE FROM \(Self.linksTable)")
            var staged = 0
            for (index, list) in targets {
                for destinationObject in made[index] {
                    if relationship.isToOne {
                        guard let target = list.first else { continue }
                        try stage.execute([.int(destinationObject.primaryKey), .int(target.primaryKey), .int(Int64(target.entity)), .int(0)])
                        staged += 1
                    } else {
                        for (position, target) in list.enumerated() {
                            try stage.execute([
                                .int(target.primaryKey), .int(destinationObject.primaryKey), .int(Int64(destinationObject.entity)),
                                .int(Int64(position + 1)),
                            ])
                            staged += 1
                        }
                    }
                }
            }
            FaultInjection.reach(.setLinksStaged)
            guard staged > 0 else { continue }
            do {
                try destination.execute(relationship.updateSQL, [])
            } catch {
                throw MigrationError(
                    .evaluationFailed, "writing the chunk's '\(relationship.name)' relationships failed", mapping: compiled.name,
                    underlying: error)
            }
            FaultInjection.reach(.setLinksWritten)
        }
        return true
    }

    /// Sets an attribute of a destination object already created.
    public func setValue(_ value: Value, forKey key: String, of object: ObjectID) throws {
        guard let layout = destinationLayout.entity(number: object.entity), let column = layout.attribute(named: key) else {
            throw MigrationError(
                .invalidMapping, "the destination object \(object) has no attribute '\(key)'", mapping: currentMapping?.name)
        }
        try destination.execute(
            "UPDATE \(layout.table) SET \(column.column) = ? WHERE Z_PK = ?",
            [DefaultValues.coerce(value, to: column.type), .int(object.primaryKey)])
    }

    // MARK: - Policies' state

    /// A policy's state that survives chunks and resumes: it commits with each chunk, in the
    /// destination's transaction, and is removed when the migration ends.
    public func state(_ namespace: String) -> PolicyState {
        PolicyState(database: destination, namespace: namespace)
    }

    /// Records a validation failure found by a policy's ``EntityMigrationPolicy/performCustomValidation(mapping:manager:)``.
    public func reportValidationFailure(_ failure: ValidationFailure) {
        failureCount += 1
        guard failures.count < Self.failureLimit else { return }
        var failure = failure
        if failure.sourceEntity == nil, let origin = sourceObject(ofDestination: failure.entity, primaryKey: failure.primaryKey) {
            failure.sourceEntity = origin.entity
            failure.sourcePrimaryKey = origin.primaryKey
        }
        failures.append(failure)
    }

    /// The source object a destination object was made from, by the association table of the
    /// mappings that make objects of its entity, or by the chunks recorded for those whose
    /// associations were not written (nil for an object no mapping made from a source).
    func sourceObject(ofDestination entity: String, primaryKey: Int64) -> (entity: String, primaryKey: Int64)? {
        guard let number = destinationLayout.entity(named: entity)?.number else { return nil }
        let destination = ObjectID(entity: number, primaryKey: primaryKey)
        for mapping in mappings where mapping.mapping.destinationEntityName == entity && mapping.mapping.sourceEntityName != nil {
            if let source = (try? associations.sources(forMapping: mapping.index, destination: destination))?.first,
                let layout = sourceLayout.entity(number: source.entity)
            {
                return (layout.name, source.primaryKey)
            }
            if unreadAssociations.contains(mapping.index), let key = unwrittenSource?(mapping.index, primaryKey),
                let layout = mapping.source
            {
                return (layout.name, key)
            }
        }
        return nil
    }

    /// Mappings whose bulk-copied chunks write no associations (see ``UnreadAssociations``).
    var unreadAssociations: Set<Int> = []
    /// The source key of a destination object made by a chunk of such a mapping: (mapping index,
    /// destination key) → source key. Set by the session, which knows the plan.
    var unwrittenSource: ((Int, Int64) -> Int64?)?

    var validationFailures: [ValidationFailure] { failures }

    // MARK: - Driving

    func compiled(_ mapping: EntityMapping) throws -> CompiledMapping {
        if let current = currentCompiled, current.mapping == mapping { return current }
        guard let index = mappingIndexByName[mapping.name] else {
            throw MigrationError(.invalidMapping, "the entity mapping '\(mapping.name)' is not part of this migration")
        }
        return mappings[index]
    }

    private(set) var currentCompiled: CompiledMapping?

    func enter(_ mapping: CompiledMapping?, stage: MigrationStage) {
        currentCompiled = mapping
        currentMapping = mapping?.mapping
        currentStage = stage
        context[variable: "entityMapping"] = .value(mapping.map { .string($0.name) } ?? .null)
    }

    /// Reads the source objects of a mapping with `lowerBound < Z_PK <= upperBound` that pass its
    /// filter, with the to-many relationships its expressions use.
    func sourceObjects(_ mapping: CompiledMapping, after lowerBound: Int64, through upperBound: Int64) throws -> [MigrationObject] {
        guard let layout = mapping.source, let schema = mapping.sourceSchema else { return [] }
        let cursor = try sourceStore.objects(
            of: layout.name, includingSubentities: false, after: lowerBound, through: upperBound, condition: mapping.filterSQL,
            batchSize: 4096)
        var objects: [MigrationObject] = []
        let extra = layout.toManyRelationships.count
        while let row = try cursor.next() {
            var values = row.values
            if extra > 0 { values.append(contentsOf: repeatElement(Value.null, count: extra)) }
            let object = MigrationObject(objectID: row.id, entityName: layout.name, schema: schema, values: values)
            objects.append(object)
        }
        if !mapping.toManyLoads.isEmpty, !objects.isEmpty {
            let keys = objects.map(\.objectID.primaryKey)
            for (slot, name) in mapping.toManyLoads {
                let destinations = try sourceStore.toManyDestinations(name, of: layout.name, sources: keys)
                for index in objects.indices {
                    objects[index].values[slot] = .array((destinations[keys[index]] ?? []).map(Value.object))
                }
            }
        }
        if let filter = mapping.filter {
            var kept: [MigrationObject] = []
            kept.reserveCapacity(objects.count)
            for object in objects {
                context.object = object
                context[variableSlot: sourceSlot] = .object(object)
                do {
                    if try filter.evaluate(context) { kept.append(object) }
                } catch {
                    throw MigrationError(
                        .evaluationFailed, "the filter predicate could not be evaluated", mapping: mapping.name,
                        entity: layout.name, primaryKey: object.objectID.primaryKey, underlying: error)
                }
            }
            objects = kept
        }
        return objects
    }

    /// Stage 2's source objects with only their keys and the to-one values the direct lookups use (see
    /// ``CompiledMapping/KeysOnlyRead``); the other slots are nil.
    func sourceKeys(_ mapping: CompiledMapping, _ read: CompiledMapping.KeysOnlyRead, after lowerBound: Int64, through upperBound: Int64)
        throws -> [MigrationObject]
    {
        guard let layout = mapping.source, let schema = mapping.sourceSchema else { return [] }
        let statement = try sourceStore.database.statement(read.sql)
        try statement.bind([.int(lowerBound), .int(upperBound)] + (mapping.filterSQL?.arguments ?? []))
        defer { statement.reset() }
        var objects: [MigrationObject] = []
        let empty = [Value](repeating: .null, count: schema.keys.count)
        while try statement.step() {
            var values = empty
            for toOne in read.toOnes where !statement.isNull(at: toOne.column) {
                let entity = toOne.entityColumn.map { Int32(truncatingIfNeeded: statement.int64(at: $0)) } ?? toOne.destinationNumber
                values[toOne.slot] = .object(ObjectID(entity: entity, primaryKey: statement.int64(at: toOne.column)))
            }
            let id = ObjectID(entity: Int32(truncatingIfNeeded: statement.int64(at: 1)), primaryKey: statement.int64(at: 0))
            objects.append(MigrationObject(objectID: id, entityName: layout.name, schema: schema, values: values))
        }
        return objects
    }

    /// A source object by id, for key paths that go through relationships (`$source.owner.name`).
    func sourceObject(_ id: ObjectID) throws -> MigrationObject? {
        guard let layout = sourceLayout.entity(number: id.entity) else { return nil }
        let cursor = try sourceStore.objects(of: layout.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
        guard let row = try cursor.next() else { return nil }
        let schema = CompiledMapping.schema(of: layout)
        var values = row.values
        for toMany in layout.toManyRelationships {
            let destinations = try sourceStore.toManyDestinations(toMany.name, of: layout.name, sources: [id.primaryKey])
            values.append(.array((destinations[id.primaryKey] ?? []).map(Value.object)))
        }
        return MigrationObject(objectID: id, entityName: layout.name, schema: schema, values: values)
    }
}
@available(*, unavailable)
extension MigrationManager: Sendable {}

// MARK: - $manager in expressions

extension MigrationManager: ExpressionFunctionHost {
    public func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        switch (receiver, selector) {
        case (.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a mapping name and source objects")
            }
            return .array(try destinationInstances(forEntityMappingNamed: name, sourceInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a relationship name and source objects")
            }
            return .array(try destinationInstances(forSourceRelationshipNamed: name, sourceInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("manager"), "sourceInstancesForEntityMappingNamed:destinationInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a mapping name and destination objects")
            }
            return .array(try sourceInstances(forEntityMappingNamed: name, destinationInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("entityPolicy"), _):
            guard let host = currentCompiled?.policy as? any ExpressionFunctionHost else {
                throw MigrationError(.invalidMapping, "the policy of this mapping does not answer \(selector)", mapping: currentMapping?.name)
            }
            return try host.call(selector, on: receiver, arguments: arguments)
        default:
            throw MigrationError(.invalidMapping, "unknown function \(selector) on \(receiver)", mapping: currentMapping?.name)
        }
    }
}

/// Answers `$manager` calls for the manager's own evaluation context, without retaining it.
package struct ManagerHost: ExpressionFunctionHost {
    unowned let manager: MigrationManager

    package func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        try manager.call(selector, on: receiver, arguments: arguments)
    }
}

/// Resolves relationship values of source objects for key paths that go through them.
package struct SourceResolver: ObjectResolver {
    unowned let manager: MigrationManager

    package func record(for id: ObjectID) throws -> (any ObjectRecord)? {
        try manager.sourceObject(id)
    }

    package func schema(forEntity entity: Int32) -> KeySchema? {
        manager.sourceLayout.entity(number: entity).map(CompiledMapping.schema(of:))
    }
}
