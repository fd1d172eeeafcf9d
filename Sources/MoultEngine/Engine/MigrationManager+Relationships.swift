import MoultAssociations
import MoultExpressions
public import MoultMapping
public import MoultModel
import MoultStore

// MARK: - Relationships (stage 2), object by object

extension MigrationManager {
    /// Stage 2's default: every relationship mapping evaluated and set on the destination object.
    public func createDefaultRelationships(for destination: ObjectID, source: MigrationObject, mapping: EntityMapping) throws {
        let compiled = try self.compiled(mapping)
        var contextIsSet = false
        for (index, (name, expression)) in compiled.relationships.enumerated() {
            if let direct = compiled.directLookups[index], let mapping = mappingIndexByName[direct.mappingName] {
                guard let slot = direct.slot else {
                    let found = try destinations(forMapping: mapping, source: source.objectID.primaryKey)
                    try setRelationship(name, of: destination, to: found)
                    didSetRelationship?(name, destination, found)
                    continue
                }
                guard case .object(let id) = source.value(atSlot: slot) else { continue }
                var found = try destinations(forMapping: mapping, source: id.primaryKey)
                // A source to-one's key that names no object, into a to-one: it may be kept (see `keptDangling`).
                if found.isEmpty, case .toOne = try relationshipWrite(name, entity: destination.entity).kind,
                    let kept = try keptDangling(lookup: mapping, sourceKey: id.primaryKey)
                {
                    found = [kept]
                }
                try setRelationship(name, of: destination, to: found)
                didSetRelationship?(name, destination, found)
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
            let targets = Self.objectIDs(in: value)
            try setRelationship(name, of: destination, to: targets)
            didSetRelationship?(name, destination, targets)
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
        try setRelationship(name, of: object, to: targets, firstPosition: 1)
    }

    /// Sets a relationship of a destination object (see ``setRelationship(_:of:to:)``), the positions of
    /// an ordered to-many's `targets` counted from `firstPosition`: they follow, in order, the first
    /// `firstPosition - 1` objects of its list, which keep theirs (a policy appending to a list, or
    /// rewriting it from its first change).
    public func setRelationship(_ name: String, of object: ObjectID, to targets: [ObjectID], firstPosition: Int) throws {
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
            evaluation.append(.setToOne(update, object: object, target: target))
            // A one-to-one is stored on both sides: keep the inverse's column in step, as Core Data does.
            if let inverse = inverse?[target.entity] { evaluation.append(.setToOne(inverse, object: target, target: object)) }
        case .toMany:
            evaluation.append(.relate(relationship: name, source: object, destinations: targets, firstPosition: firstPosition))
        }
    }

    /// Removes `targets` from a relationship of a destination object, as Core Data stores the removal:
    /// a to-one that names a target set back to nil (a one-to-one's inverse on the target too, when it
    /// names the object), a to-many's destinations unlinked (their inverse column, hidden key or join
    /// row). What does not name a target is left as it is, so a chunk replayed after a crash writes
    /// the same rows. An ordered to-many's remaining positions are the caller's to renumber
    /// (``setRelationship(_:of:to:firstPosition:)``).
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` for a relationship the entity does not have.
    public func removeFromRelationship(_ name: String, of object: ObjectID, targets: [ObjectID]) throws {
        guard !targets.isEmpty else { return }
        let plan = try relationshipRemoval(name, entity: object.entity)
        switch plan {
        case .toOne(let clear, let inverse):
            for target in targets {
                evaluation.append(.clearToOne(clear, object: object, target: target))
                if let inverse = inverse[target.entity] { evaluation.append(.clearToOne(inverse, object: target, target: object)) }
            }
        case .toMany:
            evaluation.append(.unrelate(relationship: name, source: object, destinations: targets))
        }
    }

    /// How a relationship of an entity is unset: a to-one's clearing (and, for a one-to-one, its
    /// inverse's by the target's entity), or a to-many's unlinking.
    enum RelationshipRemoval {
        case toOne(EngineLinkWrites.ToOneClear, inverse: [Int32: EngineLinkWrites.ToOneClear])
        case toMany
    }

    /// How the relationship `name` of the destination entity `number` is unset, worked out once.
    func relationshipRemoval(_ name: String, entity number: Int32) throws -> RelationshipRemoval {
        let key = RelationshipKey(entity: number, name: name)
        if let plan = relationshipRemovals[key] { return plan }
        guard let layout = destinationLayout.entity(number: number) else {
            throw MigrationError(.invalidMapping, "no destination entity has Z_ENT \(number)", mapping: currentMapping?.name)
        }
        let plan: RelationshipRemoval
        if let toOne = layout.toOne(named: name) {
            let inverse = destinationModel.relationship(named: name, of: layout.name).flatMap { destinationModel.inverse(of: $0) }
            var inverseClears: [Int32: EngineLinkWrites.ToOneClear] = [:]
            var orderColumn: String?
            for number in destinationLayout.entity(named: toOne.destination)?.hierarchyNumbers ?? [] {
                guard let target = destinationLayout.entity(number: number), let inverse else { continue }
                if let column = target.toOne(named: inverse.name) {
                    inverseClears[number] = EngineLinkWrites.ToOneClear(column, table: target.table, orderColumn: nil)
                } else if let toMany = target.toMany(named: inverse.name),
                    case .destinationColumn(let table, let column, _, let order?) = toMany.storage, table == layout.table, column == toOne.column
                {
                    // An ordered one-to-many: its position, on this object's row, goes with the link.
                    orderColumn = order
                }
            }
            plan = .toOne(EngineLinkWrites.ToOneClear(toOne, table: layout.table, orderColumn: orderColumn), inverse: inverseClears)
        } else if layout.toMany(named: name) != nil {
            plan = .toMany
        } else {
            throw MigrationError(
                .invalidMapping, "the destination entity '\(layout.name)' has no relationship '\(name)'",
                mapping: currentMapping?.name, entity: layout.name)
        }
        relationshipRemovals[key] = plan
        return plan
    }

    /// How a relationship of an entity is written, worked out once per (entity, relationship).
    struct RelationshipWrite {
        enum Kind {
            /// The to-one's update and, for a one-to-one, the inverse's update by the target's entity.
            case toOne(EngineLinkWrites.ToOneUpdate, inverse: [Int32: EngineLinkWrites.ToOneUpdate]?)
            case toMany
        }

        var kind: Kind
        var entityName: String
        var destinationName: String
        /// The `Z_ENT` values a target may have: the destination entity's and its sub-entities'.
        var accepted: [Int32]
    }

    struct RelationshipKey: Hashable {
        var entity: Int32
        var name: String
    }

    /// How the relationship `name` of the destination entity `number` is written, worked out once.
    func relationshipWrite(_ name: String, entity number: Int32) throws -> RelationshipWrite {
        let key = RelationshipKey(entity: number, name: name)
        if let plan = relationshipWrites[key] { return plan }
        guard let layout = destinationLayout.entity(number: number) else {
            throw MigrationError(.invalidMapping, "no destination entity has Z_ENT \(number)", mapping: currentMapping?.name)
        }
        let plan: RelationshipWrite
        if let toOne = layout.toOne(named: name) {
            var inverseUpdates: [Int32: EngineLinkWrites.ToOneUpdate]?
            if let relationship = destinationModel.relationship(named: name, of: layout.name),
                let inverse = destinationModel.inverse(of: relationship), !inverse.isToMany
            {
                inverseUpdates = [:]
                for number in destinationLayout.entity(named: toOne.destination)?.hierarchyNumbers ?? [] {
                    guard let target = destinationLayout.entity(number: number), let column = target.toOne(named: inverse.name) else { continue }
                    inverseUpdates?[number] = EngineLinkWrites.ToOneUpdate(column, table: target.table)
                }
            }
            plan = RelationshipWrite(
                kind: .toOne(EngineLinkWrites.ToOneUpdate(toOne, table: layout.table), inverse: inverseUpdates), entityName: layout.name,
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
}
