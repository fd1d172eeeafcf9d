import Foundation
import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

/// Why part of a chain cannot be replayed in memory (a policy's code, a function the replay does not
/// answer, a relationship set only from its inverse side).
struct ReplayLimit: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// Replays the steps of a chain in memory, one source object at a time, as the migration ran them
/// (stage 1: each entity mapping of a step, with its filter and attribute expressions, on the objects of
/// its source entity; stage 2's relationship expressions only where a later expression reads them).
///
/// The intermediate stores of a chain are gone when it is verified: this is what stands in for them.
/// An object of an intermediate version is a ``ReplayObject`` made from its parent of the version
/// before by one entity mapping. Its attributes are computed when it is made; its relationships when
/// something reads them (a filter or a value expression of a later step going through them), by the
/// relationship mapping of the step that made it, whose `$manager` functions make the objects they
/// name the same way. Everything one source object reaches is dropped before the next one
/// (``reset()``), so memory is bounded by what one object's expressions reach, not by the store.
///
/// What cannot be replayed throws ``ReplayLimit``: an entity mapping whose policy is not Core Data's
/// default (its code makes what it likes), a `FUNCTION` other than
/// `destinationInstancesForEntityMappingNamed:sourceInstances:` and
/// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`, and a relationship of an
/// intermediate object that its own mapping does not set while a mapping sets its inverse (the store
/// would hold what the other side wrote). A relationship set by both sides is taken from its own side.
final class ChainReplay {
    /// One step, compiled for the replay (filters always in Swift).
    struct Step {
        let label: String
        let fromLayout: StoreLayout
        let toLayout: StoreLayout
        let fromModel: ObjectModel
        let toModel: ObjectModel
        let mappings: [CompiledMapping]
        let byName: [String: Int]
        /// Per mapping, whether the replay can make its objects (Core Data's default policy).
        let replayable: [Bool]
    }

    let steps: [Step]
    let source: SQLiteStore
    /// The source's external binary data files, read into a value whose attribute stops allowing external storage.
    var externalDataFolder: URL { ExternalDataReference.folder(besideStore: URL(filePath: source.database.path)) }
    let variables = VariableLayout(["source", "destination", "manager", "entityMapping", "entityPolicy", "propertyMapping"])
    /// Per version (0: the source's), the schema of each entity's objects.
    private let schemas: [[String: KeySchema]]

    private var registry: [Int64: ReplayObject] = [:]
    /// Source objects by id: primary keys repeat across tables.
    private var sourceObjects: [ObjectID: ReplayObject] = [:]
    private var children: [ChildKey: [ReplayObject]] = [:]
    private var nextKey: Int64 = -1
    /// A limit met where an error cannot be thrown (a relationship read by a key path).
    fileprivate var pendingLimit: ReplayLimit?

    private struct ChildKey: Hashable {
        var step: Int
        var mapping: Int
        var parent: ObjectID
    }

    init(migration: ProgressiveMigration, source: SQLiteStore) throws {
        self.source = source
        var steps: [Step] = []
        var layouts = [source.layout]
        for step in migration.steps {
            layouts.append(try StoreLayout(model: step.to.model))
        }
        for (offset, step) in migration.steps.enumerated() {
            let fromLayout = layouts[offset]
            let toLayout = layouts[offset + 1]
            var compiled: [CompiledMapping] = []
            var used: Set<String> = []
            var replayable: [Bool] = []
            for (modelIndex, mappingModel) in step.mappings.enumerated() {
                for mapping in mappingModel.orderedEntityMappings {
                    let name = used.contains(mapping.name) ? "\(modelIndex + 1):\(mapping.name)" : mapping.name
                    used.insert(name)
                    let policy = try migration.policies.resolve(mapping, source: step.from.model, destination: step.to.model)
                    replayable.append(policy is DefaultMigrationPolicy)
                    compiled.append(
                        try CompiledMapping(
                            index: compiled.count, mappingModelIndex: modelIndex, name: name, mapping: mapping,
                            sourceModel: step.from.model, destinationModel: step.to.model, sourceLayout: fromLayout,
                            destinationLayout: toLayout, policy: policy, variables: variables, sqlAccepts: { _ in false }))
                }
            }
            var byName: [String: Int] = [:]
            for mapping in compiled where byName[mapping.name] == nil { byName[mapping.name] = mapping.index }
            for mapping in compiled where byName[mapping.mapping.name] == nil { byName[mapping.mapping.name] = mapping.index }
            steps.append(
                Step(
                    label: "\(step.from.name) → \(step.to.name)", fromLayout: fromLayout, toLayout: toLayout, fromModel: step.from.model,
                    toModel: step.to.model, mappings: compiled, byName: byName, replayable: replayable))
        }
        self.steps = steps
        schemas = layouts.map { layout in
            Dictionary(layout.entities.map { ($0.name, CompiledMapping.schema(of: $0)) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Forgets every object made so far (between source objects).
    func reset() {
        registry.removeAll(keepingCapacity: true)
        sourceObjects.removeAll(keepingCapacity: true)
        children.removeAll(keepingCapacity: true)
        nextKey = -1
    }

    // MARK: - Objects

    /// A source object from a row of the source store (attributes and to-ones; to-manys when read).
    func sourceObject(_ row: ObjectRow, entity: EntityLayout) -> ReplayObject {
        if let known = sourceObjects[row.id] { return known }
        let schema = schemas[0][entity.name] ?? CompiledMapping.schema(of: entity)
        var values = row.values
        var loaded = Array(repeating: true, count: values.count)
        let extra = max(schema.keys.count - values.count, 0)
        values += Array(repeating: .null, count: extra)
        loaded += Array(repeating: false, count: extra)
        let object = ReplayObject(
            objectID: row.id, entityName: entity.name, version: 0, schema: schema, values: values, loaded: loaded, origin: nil, replay: self)
        sourceObjects[row.id] = object
        return object
    }

    /// The object an id of a version names: one made by the replay, or a row of the source store.
    func record(for id: ObjectID) throws -> ReplayObject? {
        if id.primaryKey < 0 { return registry[id.primaryKey] }
        if let known = sourceObjects[id] { return known }
        guard let entity = source.layout.entity(number: id.entity) else { return nil }
        let cursor = try source.objects(of: entity.name, includingSubentities: false, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
        guard let row = try cursor.next() else { return nil }
        return sourceObject(row, entity: entity)
    }

    /// The objects entity mapping `mapping` of step `step` makes of `object` (none when the object is
    /// not of the mapping's source entity or fails its filter).
    func products(of object: ReplayObject, mapping index: Int, step: Int) throws -> [ReplayObject] {
        let key = ChildKey(step: step, mapping: index, parent: object.objectID)
        if let known = children[key] { return known }
        let compiled = steps[step].mappings[index]
        guard compiled.mapping.sourceEntityName == object.entityName, let destination = compiled.destination, !destination.isAbstract else {
            children[key] = []
            return []
        }
        guard steps[step].replayable[index] else {
            throw ReplayLimit(reason: "the entity mapping \(compiled.name) (\(steps[step].label)) runs a policy")
        }
        let context = self.context(step: step, mapping: compiled, source: object)
        if let filter = compiled.filter {
            let passes = try evaluating("the filter of \(compiled.name) (\(steps[step].label))", object) { try filter.evaluate(context) }
            guard passes else {
                children[key] = []
                return []
            }
        }
        var values: [Value] = []
        values.reserveCapacity(destination.attributes.count)
        for (offset, (column, valueSource)) in zip(destination.attributes, compiled.attributeValues).enumerated() {
            switch valueSource {
            case .constant(let value):
                values.append(DefaultValues.coerce(value, to: column.type))
            case .expression(let expression, let defaultForNil):
                var value = try evaluating("the value of \(column.name) in \(compiled.name) (\(steps[step].label))", object) {
                    try expression.evaluate(context)
                }
                if let conversion = compiled.externalDataConversions[offset] {
                    // The files of every version are the source's: a name is never changed.
                    value = try ExternalDataConversion.apply(conversion, to: value, folder: externalDataFolder)
                }
                values.append(value.isNull ? defaultForNil : DefaultValues.coerce(value, to: column.type))
            }
        }
        let schema = schemas[step + 1][destination.name] ?? CompiledMapping.schema(of: destination)
        let loaded = Array(repeating: true, count: values.count) + Array(repeating: false, count: schema.keys.count - values.count)
        values += Array(repeating: Value.null, count: schema.keys.count - values.count)
        let id = ObjectID(entity: destination.number, primaryKey: nextKey)
        nextKey -= 1
        let child = ReplayObject(
            objectID: id, entityName: destination.name, version: step + 1, schema: schema, values: values, loaded: loaded,
            origin: (index, object), replay: self)
        registry[id.primaryKey] = child
        children[key] = [child]
        return [child]
    }

    /// The values an object made by the replay has for its attributes (those its entity's layout stores).
    func attributeValues(of object: ReplayObject) -> [(name: String, value: Value)] {
        guard let layout = (object.version == 0 ? source.layout : steps[object.version - 1].toLayout).entity(named: object.entityName)
        else { return [] }
        return layout.attributes.enumerated().map { ($1.name, object.values[$0]) }
    }

    // MARK: - Evaluation

    private func context(step: Int, mapping: CompiledMapping, source object: ReplayObject, destination: ObjectID? = nil) -> EvaluationContext {
        var context = EvaluationContext(object: object, variables: variables)
        context.host = ReplayHost(replay: self, step: step, mapping: mapping)
        context.resolver = ReplayResolver(replay: self)
        context[variable: "source"] = .object(object)
        context[variable: "manager"] = .value(.string("manager"))
        context[variable: "entityMapping"] = .value(.string(mapping.name))
        if let destination { context[variable: "destination"] = .value(.object(destination)) }
        return context
    }

    /// Runs an evaluation; a limit met inside it (even where it could not be thrown) is thrown as it is,
    /// any other error is a limit naming what was evaluated, on which object.
    private func evaluating<T>(_ what: String, _ object: ReplayObject, _ body: () throws -> T) throws -> T {
        let outer = pendingLimit
        pendingLimit = nil
        defer { pendingLimit = outer }
        do {
            let value = try body()
            if let limit = pendingLimit { throw limit }
            return value
        } catch let limit as ReplayLimit {
            throw limit
        } catch {
            if let limit = pendingLimit { throw limit }
            throw ReplayLimit(reason: "\(what) could not be evaluated on \(object.entityName) \(object.keyDescription): \(error)")
        }
    }

    /// Loads a relationship of an object (see ``ReplayObject/value(atSlot:)``).
    fileprivate func load(_ object: ReplayObject, slot: Int) throws -> Value {
        let name = object.schema.keys[slot]
        if object.version == 0 {
            guard let layout = source.layout.entity(named: object.entityName), layout.toMany(named: name) != nil else { return .null }
            let found = try source.toManyDestinations(name, of: object.entityName, sources: [object.objectID.primaryKey])
            return .array((found[object.objectID.primaryKey] ?? []).map(Value.object))
        }
        guard let (mappingIndex, parent) = object.origin else { return .null }
        let step = object.version - 1
        let compiled = steps[step].mappings[mappingIndex]
        let toMany = steps[step].toLayout.entity(named: object.entityName)?.toMany(named: name) != nil
        guard let relationship = compiled.relationships.first(where: { $0.name == name }) else {
            // Set from the inverse side only, if at all.
            let model = steps[step].toModel
            if let description = model.relationship(named: name, of: object.entityName), let inverse = model.inverse(of: description),
                let setter = steps[step].mappings.first(where: { other in
                    guard let made = other.mapping.destinationEntityName else { return false }
                    return model.hierarchy(from: description.destinationEntity).contains { $0.name == made }
                        && other.relationships.contains { $0.name == inverse.name }
                })
            {
                throw ReplayLimit(
                    reason: "\(object.entityName).\(name) of \(steps[step].label) is set only from its inverse \(inverse.name), by \(setter.name)")
            }
            return toMany ? .array([]) : .null
        }
        let context = self.context(step: step, mapping: compiled, source: parent, destination: object.objectID)
        let value = try evaluating("the relationship \(name) in \(compiled.name) (\(steps[step].label))", parent) {
            try relationship.expression.evaluate(context)
        }
        let ids = MigrationManager.objectIDs(in: value)
        return toMany ? .array(ids.map(Value.object)) : (ids.last.map(Value.object) ?? .null)
    }

    /// `$manager`'s functions, for an expression of `mapping` in step `step`.
    fileprivate func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value], step: Int, mapping: CompiledMapping) throws -> Value {
        let label = steps[step].label
        switch (receiver, selector) {
        case (.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw ReplayLimit(reason: "\(selector) in \(mapping.name) (\(label)) takes a mapping name and source objects")
            }
            guard let index = steps[step].byName[name] else {
                throw ReplayLimit(reason: "\(mapping.name) (\(label)) names no entity mapping '\(name)'")
            }
            var result: [Value] = []
            for id in MigrationManager.objectIDs(in: arguments[1]) {
                guard let object = try record(for: id) else { continue }
                result += try products(of: object, mapping: index, step: step).map { .object($0.objectID) }
            }
            return .array(result)
        case (.variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw ReplayLimit(reason: "\(selector) in \(mapping.name) (\(label)) takes a relationship name and source objects")
            }
            var result: [Value] = []
            for id in MigrationManager.objectIDs(in: arguments[1]) {
                guard let object = try record(for: id) else { continue }
                for index in mappings(migrating: object.entityName, through: name, of: mapping, step: step) {
                    result += try products(of: object, mapping: index, step: step).map { .object($0.objectID) }
                }
            }
            return .array(result)
        default:
            throw ReplayLimit(reason: "\(mapping.name) (\(label)) calls FUNCTION \(selector), which the replay does not answer")
        }
    }

    /// The mappings that migrate an object of `entity` reached through source relationship `name` of
    /// `mapping`'s source entity: the migration manager's rule.
    private func mappings(migrating entity: String, through name: String, of mapping: CompiledMapping, step: Int) -> [Int] {
        let current = steps[step]
        guard let sourceEntity = mapping.mapping.sourceEntityName,
            let relationship = current.fromModel.relationship(named: name, of: sourceEntity)
        else { return [] }
        var accepted: Set<Int32>?
        if let destinationEntity = mapping.mapping.destinationEntityName,
            let destinationRelationship = current.toModel.relationship(named: name, of: destinationEntity),
            let target = current.toLayout.entity(named: destinationRelationship.destinationEntity)
        {
            accepted = Set(target.hierarchyNumbers)
        }
        let relevant = current.mappings.filter { compiled in
            guard let accepted else { return true }
            return compiled.destination.map { accepted.contains($0.number) } ?? false
        }
        let candidates = relevant.filter { $0.source?.name == entity }.map(\.index)
        return candidates.isEmpty ? relevant.filter { $0.mapping.sourceEntityName == relationship.destinationEntity }.map(\.index) : candidates
    }
}

/// An object of one version of a replayed chain (see ``ChainReplay``).
final class ReplayObject: ObjectRecord {
    let objectID: ObjectID
    let entityName: String
    /// 0 for the source's version, `k` after step `k`.
    let version: Int
    let schema: KeySchema
    fileprivate(set) var values: [Value]
    private var loaded: [Bool]
    /// The mapping (index in its step) and the object of the version before it was made from.
    let origin: (mapping: Int, parent: ReplayObject)?
    private unowned let replay: ChainReplay

    fileprivate init(
        objectID: ObjectID, entityName: String, version: Int, schema: KeySchema, values: [Value], loaded: [Bool],
        origin: (mapping: Int, parent: ReplayObject)?, replay: ChainReplay
    ) {
        self.objectID = objectID
        self.entityName = entityName
        self.version = version
        self.schema = schema
        self.values = values
        self.loaded = loaded
        self.origin = origin
        self.replay = replay
    }

    /// The source object it descends from.
    var root: ReplayObject { origin?.parent.root ?? self }

    /// `Z_PK n` for a source object, what it was made from otherwise.
    var keyDescription: String {
        guard let origin else { return "Z_PK \(objectID.primaryKey)" }
        return "made from \(origin.parent.entityName) \(origin.parent.keyDescription)"
    }

    func value(forKey key: String) -> Value {
        guard let slot = schema.slot(of: key) else { return .null }
        return value(atSlot: slot)
    }

    func value(atSlot slot: Int) -> Value {
        guard slot < values.count else { return .null }
        if !loaded[slot] {
            do {
                values[slot] = try replay.load(self, slot: slot)
                loaded[slot] = true
            } catch let limit as ReplayLimit {
                if replay.pendingLimit == nil { replay.pendingLimit = limit }
                return .null
            } catch {
                if replay.pendingLimit == nil {
                    replay.pendingLimit = ReplayLimit(reason: "\(entityName).\(schema.keys[slot]) could not be read: \(error)")
                }
                return .null
            }
        }
        return values[slot]
    }
}

private struct ReplayHost: ExpressionFunctionHost {
    unowned let replay: ChainReplay
    let step: Int
    let mapping: CompiledMapping

    func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        do {
            return try replay.call(selector, on: receiver, arguments: arguments, step: step, mapping: mapping)
        } catch let limit as ReplayLimit {
            // Evaluation wraps what a host throws: keep the limit itself.
            if replay.pendingLimit == nil { replay.pendingLimit = limit }
            throw limit
        }
    }
}

private struct ReplayResolver: ObjectResolver {
    unowned let replay: ChainReplay

    func record(for id: ObjectID) throws -> (any ObjectRecord)? {
        try replay.record(for: id)
    }
}
