public import Foundation
import MoultEngine
import MoultModel
import MoultStore

/// The source or the destination of a migration, as a policy sees it: ``NSMigrationManager/sourceContext``
/// (read-only) and ``NSMigrationManager/destinationContext``, where new objects are made by the engine.
///
/// The context holds only the objects of the chunk being evaluated; an object met again in a later
/// chunk is read again, with what the run has made of it since. ``registeredObjects`` and
/// ``fetch(_:)`` read the store as they go: iterating them costs what they read.
///
/// ```swift
/// let request = NSFetchRequest<NSManagedObject>(entityName: "Maker")
/// request.predicate = NSPredicate(format: "name == %@", makerName)
/// let maker = try manager.destinationContext.fetch(request).first
/// ```
open class NSManagedObjectContext: NSObject {
    enum Side { case source, destination }

    let side: Side
    unowned let manager: NSMigrationManager
    let model: ObjectModel
    private(set) var states: [ObjectID: ObjectState] = [:]
    private var handles: [ObjectID: NSManagedObject] = [:]
    private var generation = -1
    private var entities: [String: NSEntityDescription] = [:]
    let rows = ChunkRowIndex()
    /// How the fetches in the destination ran so far (see ``FetchStatistics``).
    package var fetchStatistics = FetchStatistics()

    init(side: Side, manager: NSMigrationManager, model: ObjectModel) {
        self.side = side
        self.manager = manager
        self.model = model
    }

    var engine: MigrationManager { manager.engine }

    /// Drops what the context knew of the chunk before, when a new chunk began.
    func synchronize() {
        let current = engine.evaluationGeneration
        guard current != generation else { return }
        generation = current
        states = [:]
        handles = [:]
    }

    // MARK: - Objects

    /// The entity description of the context's model, by name.
    func entityDescription(named name: String) -> NSEntityDescription? {
        if let known = entities[name] { return known }
        guard let entity = model.entity(named: name) else { return nil }
        let description = NSEntityDescription(entity, in: model)
        entities[name] = description
        return description
    }

    private func entityName(of id: ObjectID) -> String? {
        switch side {
        case .source: engine.sourceEntity(number: id.entity)?.name
        case .destination: engine.destinationEntity(number: id.entity)?.name
        }
    }

    /// The object with this id, registered in the context for the chunk.
    func object(for id: ObjectID) -> NSManagedObject? {
        synchronize()
        if let known = handles[id] { return known }
        guard let name = entityName(of: id), let entity = entityDescription(named: name) else {
            manager.fail("no \(side == .source ? "source" : "destination") entity has Z_ENT \(id.entity)")
            return nil
        }
        let object = NSManagedObject(entity: entity, context: self, id: id)
        handles[id] = object
        return object
    }

    /// An object met while iterating, with its values, not registered (so that iterating a store does
    /// not hold it): it is registered when the policy changes it.
    func transient(for id: ObjectID, row: ObjectRow, layout: EntityLayout) -> NSManagedObject? {
        transientObject(for: id, row: row, layout: layout)
    }

    /// The objects the chunk made (destination) or met (source).
    func registeredInChunk() -> [NSManagedObject] {
        synchronize()
        switch side {
        case .destination: return engine.destinationObjectsInChunk(index: rows).compactMap { object(for: $0) }
        case .source: return handles.values.sorted { $0.id < $1.id }
        }
    }

    func transientObject(for id: ObjectID, row: ObjectRow, layout: EntityLayout) -> NSManagedObject? {
        if let known = handles[id] { return known }
        guard let entity = entityDescription(named: layout.name) else { return nil }
        let object = NSManagedObject(entity: entity, context: self, id: id)
        object.ownState = ObjectState(generation: generation, storeRow: row)
        return object
    }

    /// The state of an object for reading: the context's, else the object's own (current), else new.
    func state(of object: NSManagedObject, registering: Bool) -> ObjectState {
        synchronize()
        if let known = states[object.id] { return known }
        if let own = object.ownState, own.generation == generation, !registering { return own }
        let state = object.ownState.flatMap { $0.generation == generation ? $0 : nil } ?? ObjectState(generation: generation)
        object.ownState = nil
        states[object.id] = state
        if handles[object.id] == nil { handles[object.id] = object }
        return state
    }

    /// Seeds a source object's values from the engine's row of it.
    func sourceObject(_ source: MigrationObject) -> NSManagedObject? {
        guard let object = object(for: source.objectID) else { return nil }
        let state = state(of: object, registering: true)
        if state.row == nil {
            var values: [String: Value] = [:]
            for (name, attribute) in object.entity.attributesByName where !attribute.isTransient { values[name] = source.value(forKey: name) }
            for (name, relationship) in object.entity.relationshipsByName where !relationship.isToMany {
                values[name] = source.value(forKey: name)
            }
            state.row = values
        }
        return object
    }

    func row(of object: NSManagedObject, _ state: ObjectState) -> [String: Value] {
        if let row = state.cachedRow { return row }
        var values: [String: Value] = [:]
        do {
            switch side {
            case .source:
                if let (layout, row) = try engine.sourceRow(object.id) {
                    for column in layout.attributes { values[column.name] = row[column.name] ?? .null }
                    for toOne in layout.toOneRelationships { values[toOne.name] = row[toOne.name] ?? .null }
                }
            case .destination:
                values = try engine.destinationRow(object.id, index: rows)?.values ?? [:]
            }
        } catch {
            manager.fail(error)
        }
        for (key, value) in state.rowChanges { values[key] = value }
        state.rowChanges = [:]
        state.row = values
        return values
    }

    func toMany(_ name: String, of object: NSManagedObject, _ state: ObjectState) -> [ObjectID] {
        if let known = state.toMany[name] { return known }
        var ids: [ObjectID]
        do {
            switch side {
            case .source:
                ids = try engine.sourceToMany(name, of: object.id)
            case .destination:
                ids = try engine.committedDestinationToMany(name, of: object.id)
            }
        } catch {
            manager.fail(error)
            ids = []
        }
        if let removed = state.removed.removeValue(forKey: name) { ids.removeAll { removed.contains($0) } }
        for id in state.added[name] ?? [] where !ids.contains(id) { ids.append(id) }
        state.added[name] = nil
        state.toMany[name] = ids
        return ids
    }

    // MARK: - Values

    func value(of object: NSManagedObject, forKey key: String) -> Any? {
        let entity = object.entity
        if entity.attributesByName[key] != nil {
            let state = state(of: object, registering: false)
            return ValueBridge.foundationValue(row(of: object, state)[key] ?? .null)
        }
        guard let relationship = entity.relationshipsByName[key] else {
            manager.fail("the entity \(entity.name ?? "?") has no property '\(key)' (value(forKey:))")
            return nil
        }
        let state = state(of: object, registering: false)
        if !relationship.isToMany {
            guard case .object(let id) = row(of: object, state)[key] ?? .null else { return nil }
            return self.object(for: id)
        }
        let objects = toMany(key, of: object, state).compactMap { self.object(for: $0) }
        return relationship.isOrdered ? NSOrderedSet(array: objects) : Set(objects)
    }

    func setValue(_ value: Any?, of object: NSManagedObject, forKey key: String) {
        guard side == .destination else {
            manager.fail("the source context is read-only: '\(key)' of \(object) cannot be set")
            return
        }
        let entity = object.entity
        if let attribute = entity.attributesByName[key] {
            guard let converted = ValueBridge.value(value, for: attribute.type) else {
                manager.fail("\(String(describing: type(of: value!))) is not a value for the \(attribute.type.rawValue) attribute '\(key)' of \(entity.name ?? "?")")
                return
            }
            do {
                try engine.setValue(converted, forKey: key, of: object.id)
            } catch {
                return manager.fail(error)
            }
            let state = state(of: object, registering: true)
            _ = row(of: object, state)
            state.row?[key] = DefaultValues.coerce(converted, to: attribute.type)
            return
        }
        guard let relationship = entity.relationshipsByName[key] else {
            manager.fail("the entity \(entity.name ?? "?") has no property '\(key)' (setValue(_:forKey:))")
            return
        }
        if relationship.isToMany {
            setToMany(value, of: object, relationship)
        } else {
            setToOne(value, of: object, relationship)
        }
    }

    // MARK: - Making objects

    func insertNewObject(forEntityName name: String) -> NSManagedObject {
        synchronize()
        let fallback = NSManagedObject(entity: entityDescription(named: name) ?? model.entities.first.map { NSEntityDescription($0, in: model) }
            ?? NSEntityDescription(EntityDescription(name: name), in: model), context: self, id: ObjectID(entity: 0, primaryKey: 0))
        guard side == .destination else {
            manager.fail("objects are made in the destination context, not the source one ('\(name)')")
            return fallback
        }
        guard let entity = entityDescription(named: name) else {
            manager.fail("cannot make an object of '\(name)': the destination model has no such entity")
            return fallback
        }
        let id: ObjectID
        do {
            id = try engine.createObject(entity: name, values: [:])
        } catch {
            manager.fail(error)
            return fallback
        }
        let object = NSManagedObject(entity: entity, context: self, id: id)
        handles[id] = object
        var values: [String: Value] = [:]
        for attribute in model.attributes(of: name) { values[attribute.name] = DefaultValues.value(of: attribute) }
        for relationship in model.relationships(of: name) where !relationship.isToMany { values[relationship.name] = .null }
        let state = ObjectState(generation: generation, row: values)
        for relationship in model.relationships(of: name) where relationship.isToMany { state.toMany[relationship.name] = [] }
        states[id] = state
        return object
    }

    // MARK: - Registered objects and fetching

    /// The objects of the context: in the destination context, every object the run has made so far,
    /// the chunk's first, then those earlier chunks committed, read from the store as the sequence is
    /// iterated (so iterating it costs what it reads, and holds one batch); in the source context, the
    /// objects the chunk has met.
    public var registeredObjects: RegisteredObjects { RegisteredObjects(context: self) }

    /// The names of an entity and, when asked, its sub-entities; nil (every entity) for no entity.
    func entityNames(_ name: String?, includingSubentities: Bool) throws -> Set<String>? {
        guard let name else { return nil }
        guard model.entity(named: name) != nil else {
            throw MigrationError(.invalidMapping, "the \(side == .source ? "source" : "destination") model has no entity '\(name)' to fetch")
        }
        return Set(includingSubentities ? model.hierarchy(from: name).map(\.name) : [name])
    }

    /// The objects of an entity (and its sub-entities when asked), those the chunk made first, then the
    /// store's, one at a time.
    func forEachObject(ofEntity name: String?, includingSubentities: Bool, _ body: (NSManagedObject) throws -> Bool) throws {
        synchronize()
        let names = try entityNames(name, includingSubentities: includingSubentities)
        switch side {
        case .destination:
            var seen: Set<ObjectID> = []
            for id in engine.destinationObjectsInChunk(index: rows) {
                guard let layout = engine.destinationEntity(number: id.entity), names?.contains(layout.name) ?? true,
                    let object = object(for: id)
                else { continue }
                seen.insert(id)
                guard try body(object) else { return }
            }
            for layout in engine.destinationEntities where !layout.isAbstract && (names?.contains(layout.name) ?? true) {
                fetchStatistics.scanned += 1
                let cursor = try engine.committedDestinations(of: layout)
                while let row = try cursor.next() {
                    guard !seen.contains(row.id), let object = transientObject(for: row.id, row: row, layout: layout) else { continue }
                    guard try body(object) else { return }
                }
            }
        case .source:
            if names == nil {
                for object in handles.values { guard try body(object) else { return } }
                return
            }
            for layout in engine.sourceEntities where !layout.isAbstract && (names?.contains(layout.name) ?? true) {
                let cursor = try engine.sourceObjects(of: layout)
                while let row = try cursor.next() {
                    guard let object = transientObject(for: row.id, row: row, layout: layout) else { continue }
                    guard try body(object) else { return }
                }
            }
        }
    }

    /// The objects a fetch request asks for, in store order: the chunk's first, then each entity's
    /// committed objects by key. In the destination context the predicate runs as a `WHERE` over each
    /// entity's table where it can (a comparison of an attribute with a constant, a to-one with an
    /// object: see <doc:BringingYourAppsPolicies>), and on the objects the chunk has made or
    /// changed in Swift; elsewhere, and for what SQL cannot say exactly, Moult's predicate language runs
    /// on each object. The objects are the same either way.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` when the entity is unknown or the predicate cannot be
    ///   read or evaluated.
    open func fetch<T: NSFetchRequestResult>(_ request: NSFetchRequest<T>) throws -> [T] {
        let condition = try request.predicate.map { try FetchCondition($0, context: self) }
        var results: [T] = []
        var skipped = 0
        let take = { (object: NSManagedObject) -> Bool in
            if skipped < request.fetchOffset {
                skipped += 1
                return true
            }
            if let result = object as? T { results.append(result) }
            return request.fetchLimit == 0 || results.count < request.fetchLimit
        }
        if side == .destination, engine.fetchesInSQL, let condition, condition.canPushDown {
            try forEachDestination(ofEntity: request.entityName, includingSubentities: request.includesSubentities, matching: condition, take)
            return results
        }
        try forEachObject(ofEntity: request.entityName, includingSubentities: request.includesSubentities) { object in
            if let condition, try !condition.matches(object) { return true }
            return take(object)
        }
        return results
    }

    /// How many objects a fetch request would give.
    open func count<T: NSFetchRequestResult>(for request: NSFetchRequest<T>) throws -> Int {
        try fetch(request).count
    }

    /// Nothing to do: what a policy makes is written with its chunk.
    open func save() throws {}

    /// The object with this id.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        object(for: objectID.id) ?? NSManagedObject(entity: objectID.entity, context: self, id: objectID.id)
    }

    /// Values as a predicate reads them, for ``FetchCondition``.
    func record(of object: NSManagedObject) -> [String: Value] {
        row(of: object, state(of: object, registering: false))
    }

    func toManyIDs(_ name: String, of object: NSManagedObject) -> [ObjectID] {
        toMany(name, of: object, state(of: object, registering: false))
    }
}

/// The objects of a context, read as they are iterated (see ``NSManagedObjectContext/registeredObjects``):
/// in the destination context, the chunk's objects, then each entity's committed objects, a batch at a
/// time. A read that fails ends the iteration and fails the policy's hook once it returns.
public struct RegisteredObjects: Sequence {
    let context: NSManagedObjectContext

    public func makeIterator() -> Iterator { Iterator(context: context) }

    /// Whether the context has no object.
    public var isEmpty: Bool {
        var iterator = makeIterator()
        return iterator.next() == nil
    }

    public struct Iterator: IteratorProtocol {
        let context: NSManagedObjectContext
        private var pending: [NSManagedObject]
        private var seen: Set<ObjectID> = []
        private var layouts: [EntityLayout]
        private var cursor: (any ObjectRowCursor)?
        private var layout: EntityLayout?

        init(context: NSManagedObjectContext) {
            self.context = context
            let chunk = context.registeredInChunk()
            pending = chunk.reversed()
            seen = Set(chunk.map(\.id))
            layouts = context.side == .destination ? context.engine.destinationEntities.filter { !$0.isAbstract }.reversed() : []
        }

        public mutating func next() -> NSManagedObject? {
            if let object = pending.popLast() { return object }
            while true {
                if let cursor, let layout {
                    do {
                        while let row = try cursor.next() {
                            if seen.contains(row.id) { continue }
                            if let object = context.transient(for: row.id, row: row, layout: layout) { return object }
                        }
                    } catch {
                        context.manager.fail(error)
                        layouts = []
                    }
                }
                guard let next = layouts.popLast() else { return nil }
                layout = next
                do {
                    cursor = try context.engine.committedDestinations(of: next)
                } catch {
                    context.manager.fail(error)
                    return nil
                }
            }
        }
    }
}
