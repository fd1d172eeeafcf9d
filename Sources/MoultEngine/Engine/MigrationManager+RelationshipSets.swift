import MoultAssociations
import MoultMapping
import MoultModel
import MoultStore

// MARK: - Relationships (stage 2) as set operations

extension MigrationManager {
    /// A pass's relationships written as set operations: per relationship and chunk, the links are
    /// staged in a temporary table in the order the per-object path would write them (a later link to
    /// the same row replaces an earlier one, as a later `UPDATE` would), then one `UPDATE … FROM` writes
    /// them all.
    struct SetWrite {
        struct Relationship {
            var name: String
            /// The mapping whose associations the relationship holds, and the source slot looked up
            /// (nil for the source object itself).
            var lookup: Int
            var slot: Int?
            var isToOne: Bool
            var accepted: Set<Int32>
            /// The update that writes the staged links.
            var update: EngineLinkWrites.ColumnUpdate
        }

        var entity: Int32
        var relationships: [Relationship]
    }

    /// The set form of a mapping's stage 2: every relationship a direct lookup (see
    /// ``CompiledMapping/keysOnlyRead``), written through a column (a to-one without a one-to-one
    /// inverse, or a to-many through its inverse's column), no two relationships writing the same
    /// column. Anything else keeps the per-object path.
    func setWrite(for compiled: CompiledMapping) -> SetWrite? {
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
            let update: EngineLinkWrites.ColumnUpdate
            let isToOne: Bool
            switch plan.kind {
            case .toOne(_, let inverse):
                guard inverse == nil, let toOne = layout.toOne(named: name) else { return nil }
                update = EngineLinkWrites.ColumnUpdate(table: layout.table, column: toOne.column, entityColumn: toOne.entityColumn, orderColumn: nil)
                isToOne = true
            case .toMany:
                guard let toMany = layout.toMany(named: name),
                    case .destinationColumn(let table, let column, let entityColumn, let orderColumn) = toMany.storage
                else { return nil }
                update = EngineLinkWrites.ColumnUpdate(table: table, column: column, entityColumn: entityColumn, orderColumn: orderColumn)
                isToOne = false
            }
            guard columns.insert(update.target).inserted else { return nil }
            relationships.append(
                SetWrite.Relationship(
                    name: name, lookup: lookup, slot: direct.slot, isToOne: isToOne, accepted: Set(plan.accepted), update: update))
        }
        result = SetWrite(entity: layout.number, relationships: relationships)
        return result
    }

    /// Stage 2 of a chunk as set operations, when the mapping allows it (see ``setWrite(for:)``):
    /// `objects` are the chunk's source objects (keys and looked-up to-ones), `made` their destinations.
    /// Records, per relationship, the links the per-object path would write, in its order (a later
    /// link to the same row replaces an earlier one, as a later `UPDATE` would); the chunk writer
    /// stages them and writes each relationship with one `UPDATE … FROM` (see ``EvaluatedChunk/LinkSet``).
    ///
    /// - Returns: false when the chunk must take the per-object path (nothing was recorded then): the
    ///   mapping has no set form, a destination is of another entity, or a target is of an entity the
    ///   relationship cannot hold (the per-object path then reports it).
    func createRelationshipsAsSets(_ compiled: CompiledMapping, objects: [MigrationObject], made: [[ObjectID]]) throws -> Bool {
        guard let plan = setWrite(for: compiled) else { return false }
        for destinations in made {
            for destination in destinations where destination.entity != plan.entity { return false }
        }
        // Every lookup and check first, so that a chunk that falls back has recorded nothing.
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
            let found = try destinations(forMapping: relationship.lookup, sources: keys)
            var targets: [(object: Int, targets: [ObjectID])] = []
            targets.reserveCapacity(found.count)
            for ((index, list), key) in zip(zip(objectIndices, found), keys) {
                for target in list where !relationship.accepted.contains(target.entity) { return false }
                // A source to-one's key that names no object may be kept (see `keptDangling`).
                if list.isEmpty, relationship.isToOne, relationship.slot != nil, let kept = try keptDangling(lookup: relationship.lookup, sourceKey: key) {
                    guard relationship.accepted.contains(kept.entity) else { return false }
                    targets.append((index, [kept]))
                    continue
                }
                targets.append((index, list))
            }
            targetsByRelationship.append(targets)
        }
        for (relationship, targets) in zip(plan.relationships, targetsByRelationship) {
            evaluation.append(Self.links(of: relationship, targets: targets, made: made))
        }
        return true
    }

    /// One relationship's links, in the order the per-object path writes them.
    private static func links(
        of relationship: SetWrite.Relationship, targets: [(object: Int, targets: [ObjectID])], made: [[ObjectID]]
    ) -> EvaluatedChunk.LinkSet {
        var links: [EvaluatedChunk.LinkSet.Link] = []
        for (index, list) in targets {
            for destinationObject in made[index] {
                if relationship.isToOne {
                    guard let target = list.first else { continue }
                    links.append(.init(object: destinationObject.primaryKey, value: target.primaryKey, entity: target.entity, position: 0))
                } else {
                    for (position, target) in list.enumerated() {
                        links.append(
                            .init(
                                object: target.primaryKey, value: destinationObject.primaryKey, entity: destinationObject.entity,
                                position: position + 1))
                    }
                }
            }
        }
        return EvaluatedChunk.LinkSet(relationship: relationship.name, update: relationship.update, links: links)
    }
}
