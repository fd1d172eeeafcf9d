import Foundation
import MoultEngine
import MoultModel

// MARK: - Setting relationships, both sides kept as Core Data keeps them

// A relationship set by a policy changes the destination store as Core Data's context would at its
// save: what the relationship held and no longer holds is unlinked (a to-one set back to nil, a
// to-many given fewer objects), its inverse kept in step on every object concerned (the old target, a
// one-to-one's former partner, the former owner of an object moved to another to-many), and an ordered
// to-many's positions written `1, 2, 3…` in its order (only from the first place that changed: a list
// appended to writes its new objects only). The writes are the chunk's, in order; the context's cached
// values of every object concerned follow them, so the chunk's later reads see the change.

extension NSManagedObjectContext {
    /// The inverse of a relationship, as its destination entity declares it.
    private func inverse(of relationship: NSRelationshipDescription) -> NSRelationshipDescription? {
        guard let name = relationship.inverseName else { return nil }
        return entityDescription(named: relationship.destinationEntityName)?.relationshipsByName[name]
    }

    /// The objects of a to-many value: a set, an ordered set, an array; nil (none) or `NSNull` for none.
    private func objects(in value: Any?, key: String) -> [NSManagedObject]? {
        switch value {
        case nil, is NSNull: return []
        case let set as Set<NSManagedObject>: return Array(set).sorted { $0.id < $1.id }
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }.sorted { $0.id < $1.id }
        case let array as [NSManagedObject]: return array
        case let array as NSArray: return array.compactMap { $0 as? NSManagedObject }
        default:
            manager.fail("the to-many '\(key)' takes a set of objects, not \(String(describing: type(of: value!)))")
            return nil
        }
    }

    func setToOne(_ value: Any?, of object: NSManagedObject, _ relationship: NSRelationshipDescription) {
        let key = relationship.name
        let target: NSManagedObject?
        switch value {
        case nil, is NSNull: target = nil
        case let given as NSManagedObject: target = given
        default:
            manager.fail("the to-one '\(key)' takes an object, not \(String(describing: type(of: value!)))")
            return
        }
        if let target, target.managedObjectContext !== self {
            manager.fail("\(target) is not an object of the destination context; it cannot be the '\(key)' of \(object)")
            return
        }
        let state = state(of: object, registering: true)
        var current: ObjectID?
        if case .object(let id) = row(of: object, state)[key] ?? .null { current = id }
        guard current != target?.id else { return }
        let inverse = inverse(of: relationship)
        do {
            if let current, let old = self.object(for: current) {
                // Unlinked from the old target: a one-to-one's inverse there too, or its place in the old target's to-many.
                try engine.removeFromRelationship(key, of: object.id, targets: [current])
                try forget(object, inInverse: inverse, of: old)
            }
            state.row?[key] = .null
            guard let target else { return }
            if let inverse, !inverse.isToMany {
                // A one-to-one: the target's former partner loses it.
                let targetState = self.state(of: target, registering: true)
                if case .object(let partnerID) = row(of: target, targetState)[inverse.name] ?? .null, partnerID != object.id,
                    let partner = self.object(for: partnerID)
                {
                    try engine.removeFromRelationship(key, of: partnerID, targets: [target.id])
                    let partnerState = self.state(of: partner, registering: true)
                    _ = row(of: partner, partnerState)
                    partnerState.row?[key] = .null
                }
            }
            try engine.setRelationship(key, of: object.id, to: [target.id])
            state.row?[key] = .object(target.id)
            try remember(object, inInverse: inverse, of: target)
        } catch {
            manager.fail(error)
        }
    }

    func setToMany(_ value: Any?, of object: NSManagedObject, _ relationship: NSRelationshipDescription) {
        let key = relationship.name
        guard let targets = objects(in: value, key: key) else { return }
        if let stranger = targets.first(where: { $0.managedObjectContext !== self }) {
            manager.fail("\(stranger) is not an object of the destination context; it cannot be in the '\(key)' of \(object)")
            return
        }
        let state = state(of: object, registering: true)
        let current = toMany(key, of: object, state)
        var wanted: [ObjectID] = []
        var wantedSet: Set<ObjectID> = []
        for target in targets where wantedSet.insert(target.id).inserted { wanted.append(target.id) }
        let currentSet = Set(current)
        let removed = current.filter { !wantedSet.contains($0) }
        let added = wanted.filter { !currentSet.contains($0) }
        let kept = current.filter { wantedSet.contains($0) }
        // An ordered to-many takes the order given; a set given to it keeps the order it had, new objects last.
        let list = relationship.isOrdered && (value is NSOrderedSet || value is NSArray || value is [NSManagedObject]) ? wanted : kept + added
        guard !removed.isEmpty || !added.isEmpty || (relationship.isOrdered && list != current) else { return }
        let inverse = inverse(of: relationship)
        do {
            if !removed.isEmpty {
                try engine.removeFromRelationship(key, of: object.id, targets: removed)
                for id in removed {
                    if let target = self.object(for: id) { try forget(object, inInverse: inverse, of: target) }
                }
            }
            if let inverse, !inverse.isToMany {
                // A one-to-many: an object added leaves the to-many of the owner it had.
                for id in added {
                    guard let target = self.object(for: id) else { continue }
                    let targetState = self.state(of: target, registering: true)
                    if case .object(let ownerID) = row(of: target, targetState)[inverse.name] ?? .null, ownerID != object.id,
                        let owner = self.object(for: ownerID)
                    {
                        try removeMember(id, from: relationship, of: owner, writing: true)
                    }
                }
            }
            if relationship.isOrdered {
                let unchanged = zip(current, list).prefix { $0 == $1 }.count
                if unchanged < list.count {
                    try engine.setRelationship(key, of: object.id, to: Array(list[unchanged...]), firstPosition: unchanged + 1)
                }
            } else if !added.isEmpty {
                try engine.setRelationship(key, of: object.id, to: added)
            }
            state.toMany[key] = list
            for id in added {
                if let target = self.object(for: id) { try remember(object, inInverse: inverse, of: target) }
            }
        } catch {
            manager.fail(error)
        }
    }

    // MARK: - The inverse side

    /// `object` now holds `target` through the relationship whose inverse is `inverse`: `target`'s
    /// inverse names `object` (a to-one), or holds it last (a to-many; an ordered one's position written).
    private func remember(
        _ object: NSManagedObject, inInverse inverse: NSRelationshipDescription?, of target: NSManagedObject, writing: Bool = true
    ) throws {
        guard let inverse else { return }
        if inverse.isToMany {
            try addMember(object.id, to: inverse, of: target, writing: writing)
        } else {
            let targetState = state(of: target, registering: true)
            if writing { _ = row(of: target, targetState) }
            if targetState.cachedRow != nil {
                targetState.row?[inverse.name] = .object(object.id)
            } else {
                targetState.rowChanges[inverse.name] = .object(object.id)
            }
        }
    }

    /// `object` no longer holds `target`: `target`'s inverse no longer names `object` (a to-one), or no
    /// longer holds it (a to-many; an ordered one's later positions written again).
    private func forget(
        _ object: NSManagedObject, inInverse inverse: NSRelationshipDescription?, of target: NSManagedObject, writing: Bool = true
    ) throws {
        guard let inverse else { return }
        if inverse.isToMany {
            try removeMember(object.id, from: inverse, of: target, writing: writing)
        } else if writing {
            // (Not writing: the engine left a one-to-one's former partner as it was, and so does the context.)
            let targetState = state(of: target, registering: true)
            if case .object(object.id) = row(of: target, targetState)[inverse.name] ?? .null { targetState.row?[inverse.name] = .null }
        }
    }

    /// Adds `id` last to the to-many `relationship` of `owner`, in what the context knows; an ordered
    /// one's position is written when `writing` (its link is the other side's write).
    private func addMember(_ id: ObjectID, to relationship: NSRelationshipDescription, of owner: NSManagedObject, writing: Bool) throws {
        let name = relationship.name
        let state = state(of: owner, registering: true)
        guard (writing && relationship.isOrdered) || state.toMany[name] != nil else {
            // Not read yet: recorded, and applied to what the store holds when it is.
            state.removed[name]?.remove(id)
            if !(state.added[name]?.contains(id) ?? false) { state.added[name, default: []].append(id) }
            return
        }
        var list = toMany(name, of: owner, state)
        guard !list.contains(id) else { return }
        list.append(id)
        state.toMany[name] = list
        if writing, relationship.isOrdered { try engine.setRelationship(name, of: owner.id, to: [id], firstPosition: list.count) }
    }

    /// Removes `id` from the to-many `relationship` of `owner`, in what the context knows; an ordered
    /// one's later objects get their positions again, one place earlier, when `writing` (its
    /// unlinking is the other side's write).
    private func removeMember(_ id: ObjectID, from relationship: NSRelationshipDescription, of owner: NSManagedObject, writing: Bool) throws {
        let name = relationship.name
        let state = state(of: owner, registering: true)
        guard (writing && relationship.isOrdered) || state.toMany[name] != nil else {
            state.added[name]?.removeAll { $0 == id }
            state.removed[name, default: []].insert(id)
            return
        }
        var list = toMany(name, of: owner, state)
        guard let index = list.firstIndex(of: id) else { return }
        list.remove(at: index)
        state.toMany[name] = list
        if writing, relationship.isOrdered, index < list.count {
            try engine.setRelationship(name, of: owner.id, to: Array(list[index...]), firstPosition: index + 1)
        }
    }

    // MARK: - What super wrote

    /// Runs `body`, a call into the engine that sets relationships itself (`super.createRelationships`),
    /// and takes what it sets into what the context knows of the objects concerned, so that the
    /// policy's later reads in the chunk see it (the engine writes with the chunk; the store does not
    /// hold it yet).
    func absorbingRelationshipWrites(_ body: () throws -> Void) throws {
        engine.didSetRelationship = { [unowned self] name, object, targets in self.engineDidSet(name, of: object, to: targets) }
        defer { engine.didSetRelationship = nil }
        try body()
    }

    /// The engine set the relationship `name` of `objectID` to `targets` (a to-one: the first; a to-many:
    /// added): what the context knows follows, writing nothing.
    private func engineDidSet(_ name: String, of objectID: ObjectID, to targets: [ObjectID]) {
        guard let object = object(for: objectID), let relationship = object.entity.relationshipsByName[name] else { return }
        let inverse = inverse(of: relationship)
        let state = state(of: object, registering: true)
        do {
            if relationship.isToMany {
                for id in targets {
                    guard let target = self.object(for: id) else { continue }
                    if let inverse, !inverse.isToMany, let row = self.state(of: target, registering: true).cachedRow,
                        case .object(let ownerID) = row[inverse.name] ?? .null, ownerID != objectID, let owner = self.object(for: ownerID)
                    {
                        try removeMember(id, from: relationship, of: owner, writing: false)
                    }
                    try addMember(id, to: relationship, of: object, writing: false)
                    try remember(object, inInverse: inverse, of: target, writing: false)
                }
            } else if let id = targets.first, let target = self.object(for: id) {
                guard let row = state.cachedRow else {
                    state.rowChanges[name] = .object(id)
                    try remember(object, inInverse: inverse, of: target, writing: false)
                    return
                }
                if case .object(id) = row[name] ?? .null { return }
                if case .object(let oldID) = row[name] ?? .null, let old = self.object(for: oldID) {
                    try forget(object, inInverse: inverse, of: old, writing: false)
                }
                state.row?[name] = .object(id)
                try remember(object, inInverse: inverse, of: target, writing: false)
            }
        } catch {
            manager.fail(error)
        }
    }
}
