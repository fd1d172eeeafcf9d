import MoultModel
import MoultStore

extension StageStore {
    // MARK: - Writing rows

    /// Setting a to-one writes its own columns only: that is the whole link when its inverse is an
    /// unordered to-many (or there is none). A one-to-one also stores the link on the other side, and
    /// an ordered to-many its position (`Z_FOK_`): setting those here would leave the two sides
    /// disagreeing, so it is refused (raw SQL can do it, keeping both sides).
    func refuseToOneWithStoredInverse(_ key: String, of entity: String) throws {
        try Self.refuseToOneWithStoredInverse(key, of: entity, in: model)
    }

    static func refuseToOneWithStoredInverse(_ key: String, of entity: String, in model: ObjectModel) throws {
        guard let relationship = model.relationship(named: key, of: entity), let inverseName = relationship.inverseName,
            let inverse = model.relationship(named: inverseName, of: relationship.inverseEntity ?? relationship.destinationEntity)
        else { return }
        if !inverse.isToMany || inverse.isOrdered {
            throw MigrationError(
                .invalidMapping,
                "\(entity).\(key) cannot be set by a handler: its inverse \(relationship.destinationEntity).\(inverseName) is \(inverse.isToMany ? "an ordered to-many" : "a to-one"), which stores the link on its side too; set it with raw SQL, keeping both sides",
                entity: entity)
        }
    }

    func entityLayout(_ name: String) throws -> EntityLayout {
        guard let entity = layout.entity(named: name) else {
            throw MigrationError(
                .invalidMapping, "version \(version.name) has no entity '\(name)' (entities: \(layout.entities.map(\.name).sorted().joined(separator: ", ")))",
                entity: name)
        }
        return entity
    }

    func condition(of entity: EntityLayout) -> String? {
        entity.entityCondition(includingSubentities: true, tableEntityCount: layout.table(named: entity.table)?.entityNumbers.count ?? 1)
    }

    func insertRow(_ entity: String, _ values: [String: Value]) throws -> ObjectID {
        let layout = try entityLayout(entity)
        var coerced: [String: Value] = [:]
        for (key, value) in values {
            if let attribute = layout.attribute(named: key) {
                coerced[key] = DefaultValues.coerce(value, to: attribute.type)
            } else {
                if layout.toOne(named: key) != nil, !value.isNull { try refuseToOneWithStoredInverse(key, of: entity) }
                coerced[key] = value
            }
        }
        // Missing attributes get the model's default value, as a new Core Data object does.
        for attribute in model.attributes(of: entity) where !attribute.isTransient && coerced[attribute.name] == nil && layout.attribute(named: attribute.name) != nil {
            let value = DefaultValues.coerce(DefaultValues.value(of: attribute), to: attribute.attributeType)
            if !value.isNull { coerced[attribute.name] = value }
        }
        if writer == nil { writer = try store.makeWriter() }
        do {
            return try writer!.insert(entity, coerced)
        } catch {
            throw MigrationError(.evaluationFailed, "cannot insert \(entity): \(error.message)", entity: entity, underlying: error)
        }
    }

    /// Writes an object's changed values (one UPDATE), or deletes it.
    func apply(_ object: StageObject) throws {
        if object.isDeleted {
            var deleted: Set<ObjectID> = []
            try deleteObject(object.objectID, deleted: &deleted)
            return
        }
        guard !object.changes.isEmpty else { return }
        guard let layout = layout.entity(number: object.objectID.entity) else { return }
        var assignments: [StagedAssignment] = []
        for (key, value) in object.changes.sorted(by: { $0.key < $1.key }) {
            if let attribute = layout.attribute(named: key) {
                let value = DefaultValues.coerce(value, to: attribute.type)
                guard Self.fits(value, attribute.type) else {
                    throw MigrationError(
                        .evaluationFailed, "attribute '\(key)' (\(attribute.type.rawValue)) cannot hold \(value)", entity: layout.name,
                        primaryKey: object.objectID.primaryKey)
                }
                assignments.append(.value(column: attribute.column, value))
            } else if let toOne = layout.toOne(named: key) {
                try refuseToOneWithStoredInverse(key, of: layout.name)
                switch value {
                case .null:
                    assignments.append(.null(column: toOne.column))
                    if let column = toOne.entityColumn { assignments.append(.null(column: column)) }
                case .object(let id):
                    assignments.append(.value(column: toOne.column, .int(id.primaryKey)))
                    if let column = toOne.entityColumn { assignments.append(.value(column: column, .int(Int64(id.entity)))) }
                default:
                    throw MigrationError(
                        .evaluationFailed, "to-one relationship '\(key)' needs an object, not \(value)", entity: layout.name,
                        primaryKey: object.objectID.primaryKey)
                }
            } else {
                throw MigrationError(
                    .invalidMapping, "\(layout.name) has no attribute or to-one relationship '\(key)' to set", entity: layout.name,
                    primaryKey: object.objectID.primaryKey)
            }
        }
        try store.database.update(layout.table, primaryKey: object.objectID.primaryKey, assignments)
    }

    static func fits(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (_, .null): true
        case (.integer16, .int), (.integer32, .int), (.integer64, .int), (.boolean, .bool), (.boolean, .int): true
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.decimal, .double): true
        case (.string, .string), (.uri, .string), (.objectID, .string), (.date, .date), (.uuid, .uuid): true
        case (.binary, .data), (.transformable, .data), (.composite, .data), (.undefined, _): true
        default: false
        }
    }

    /// What deleting an object of an entity does: the relationships whose delete rule is deny or
    /// cascade, and the statements clearing every reference to it and deleting its row. Made once per
    /// entity.
    struct DeletePlan {
        var rules: [(relationship: String, rule: DeleteRule)]
        var deletion: StagedDeletion
    }

    private func deletePlan(for entity: EntityLayout) -> DeletePlan {
        if let plan = deletePlans[entity.number] { return plan }
        let rules = model.relationshipsWithOwners(of: entity.name).map(\.property)
            .filter { $0.deleteRule == .deny || $0.deleteRule == .cascade }.map { ($0.name, $0.deleteRule) }
        let plan = DeletePlan(rules: rules, deletion: StagedDeletion(of: entity, in: layout))
        deletePlans[entity.number] = plan
        return plan
    }

    /// Deletes an object as Core Data does: its deny rules checked, its cascade destinations deleted,
    /// every reference to it (to-one columns, to-many keys, join rows) cleared.
    func deleteObject(_ id: ObjectID, deleted: inout Set<ObjectID>) throws {
        guard deleted.insert(id).inserted, let entity = layout.entity(number: id.entity) else { return }
        let plan = deletePlan(for: entity)
        for (relationship, rule) in plan.rules {
            let destinations = try relatedObjects(of: id, entity: entity, relationship: relationship)
            if rule == .deny, !destinations.isEmpty {
                throw MigrationError(
                    .validationFailed, "\(entity.name) Z_PK \(id.primaryKey) cannot be deleted: its relationship '\(relationship)' has the deny rule and \(destinations.count) destination(s)",
                    entity: entity.name, primaryKey: id.primaryKey)
            }
            if rule == .cascade {
                for destination in destinations { try deleteObject(destination, deleted: &deleted) }
            }
        }
        try plan.deletion.delete(primaryKey: id.primaryKey, in: store.database)
    }

    /// The destinations of one relationship of an object.
    private func relatedObjects(of id: ObjectID, entity: EntityLayout, relationship: String) throws -> [ObjectID] {
        if let toOne = entity.toOne(named: relationship) {
            return try store.database.destination(of: toOne, in: entity.table, primaryKey: id.primaryKey)
        }
        guard entity.toMany(named: relationship) != nil else { return [] }
        return try store.toManyDestinations(relationship, of: entity.name, sources: [id.primaryKey])[id.primaryKey] ?? []
    }
}
