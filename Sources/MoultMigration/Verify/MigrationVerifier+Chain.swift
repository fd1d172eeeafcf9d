import Foundation
import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

extension MigrationVerifier {
    /// Counts per destination entity and the value sample for a chain of steps, whose intermediate
    /// stores are gone: one streamed pass over the source replays every step in memory for one source
    /// object at a time (``ChainReplay``), counting what reaches the destination version per entity and
    /// keeping a seeded reservoir of the values it gets per path of entity mappings (one mapping per
    /// step); then each sampled path's destination entity is streamed once to find its objects.
    ///
    /// Not checked, and said so in ``VerificationReport/skipped``: the count of an entity that a mapping
    /// with a policy other than Core Data's default makes (in its step or before: nothing is replayed
    /// through a policy, so such a mapping's objects are not sampled either); and, when the replay meets
    /// a limit on one object of a mapping (a `FUNCTION` it does not answer, a relationship set only from
    /// its inverse side, an expression that fails), the count of every entity that mapping's objects end
    /// as and the sample through it, with the first reason.
    func checkChain(_ store: SQLiteStore, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        let source = try SQLiteStore(url: migration.store, model: migration.steps[0].from.model, mode: .readOnly, configuration: valueLimits)
        defer { source.database.close() }
        let walk = ChainWalk(
            replay: try ChainReplay(migration: migration, source: source), store: store, target: migration.targetVersion.model,
            sampleSize: sampleSize, seed: seed)
        let chain = ([migration.steps[0].from.name] + migration.steps.map(\.to.name)).joined(separator: " → ")
        var reached: Set<String> = []
        for entity in source.layout.entities where !entity.isAbstract { reached.formUnion(walk.finals(0, entity.name)) }
        let uncountable = walk.uncountable()
        try walk.walk(source)
        try checkChainCounts(store, walk, reached: reached, uncountable: uncountable, chain: chain, &result, fail)
        try checkChainSample(store, walk, &result, fail)
    }

    /// Compares the objects per destination entity with what the replay made of the source.
    private func checkChainCounts(
        _ store: SQLiteStore, _ walk: ChainWalk, reached: Set<String>, uncountable: [String: String], chain: String, _ result: inout VerificationReport,
        _ fail: (VerificationFailure) -> Void
    ) throws {
        for entityName in reached.sorted() {
            if let why = uncountable[entityName] ?? walk.limits[entityName] {
                result.skipped.append("the count of \(entityName): \(why)")
                continue
            }
            guard let entity = store.layout.entity(named: entityName), !entity.isAbstract else { continue }
            result.checked[.count, default: 0] += 1
            guard let found = try store.database.objectCount(of: entity) else { continue }
            let expected = walk.counts[entityName] ?? 0
            if Int(found) != expected {
                fail(
                    VerificationFailure(
                        check: .count,
                        message: "\(entityName): \(found) objects in the destination, \(expected) made from the source by replaying \(chain)"))
            }
        }
    }

    /// The sample: not through a mapping the replay met a limit in (its reservoirs lack objects, or it
    /// has none); each other path's destination entity streamed once.
    private func checkChainSample(_ store: SQLiteStore, _ walk: ChainWalk, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        let steps = walk.steps
        if sampleSize > 0 {
            for (key, reason) in walk.limited.sorted(by: { ($0.key.step, $0.key.mapping) < ($1.key.step, $1.key.mapping) }) {
                result.skipped.append("the sample through \(steps[key.step].mappings[key.mapping].name) (\(steps[key.step].label)): \(reason)")
            }
        }
        for (path, reservoir) in walk.reservoirs.sorted(by: { $0.value.name < $1.value.name }) {
            if path.enumerated().contains(where: { walk.limited[ChainWalk.StepMapping(step: $0, mapping: $1)] != nil }) { continue }
            let positions = walk.compared(reservoir.entity)
            guard !positions.isEmpty, let layout = store.layout.entity(named: reservoir.entity) else {
                result.skipped.append("the sample of \(reservoir.name): no attribute to compare")
                continue
            }
            // A value that may be kept in a file is compared by its bytes, on both sides (as in one step's sample).
            let external = Set(positions.indices.filter { index in
                store.layout.model.attribute(named: layout.attributes[positions[index]].name, of: reservoir.entity)?.allowsExternalBinaryDataStorage == true
            })
            func content(_ values: [Value], besideStore store: URL) throws -> [Value] {
                guard !external.isEmpty else { return values }
                return try values.indices.map { index in
                    external.contains(index) ? try Self.content(values[index], folder: ExternalDataReference.folder(besideStore: store)) : values[index]
                }
            }
            var missing: [[Value]: [String]] = [:]
            for item in reservoir.items { missing[try content(item.values, besideStore: migration.store), default: []].append(item.root) }
            let cursor = try store.objects(of: reservoir.entity, includingSubentities: false)
            while !missing.isEmpty, let row = try cursor.next() {
                missing[try content(positions.map { row[$0] }, besideStore: destination)] = nil
            }
            result.sampled += reservoir.items.count
            result.checked[.sample, default: 0] += reservoir.items.count
            Self.reportMissing(missing, attributes: positions.map { layout.attributes[$0].name }, fail) { root, described in
                "no \(reservoir.entity) in the destination holds what \(reservoir.name) \(path.count == 1 ? "makes" : "make") of \(root): \(described)"
            }
        }
    }
}

/// One streamed pass over a chain's source, replaying every step on one source object at a time: what
/// reaches the destination version, counted per entity, the limits the replay met, and a seeded
/// reservoir of the values per path of entity mappings.
private final class ChainWalk {
    let replay: ChainReplay
    let steps: [ChainReplay.Step]
    /// The destination store, and its version's model.
    let store: SQLiteStore
    let target: ObjectModel
    /// Objects sampled per path, and the seed of each path's generator.
    let sampleSize: Int
    let seed: UInt64

    /// Objects per destination entity.
    private(set) var counts: [String: Int] = [:]
    /// Per destination entity, the first limit the replay met on the way to it.
    private(set) var limits: [String: String] = [:]
    /// Per entity mapping, the first limit the replay met in it.
    private(set) var limited: [StepMapping: String] = [:]
    /// Per path of entity mappings (one per step), its sample.
    private(set) var reservoirs: [[Int]: Reservoir] = [:]
    private var finalsMemo: [String: Set<String>] = [:]
    private var comparedMemo: [String: [Int]] = [:]

    init(replay: ChainReplay, store: SQLiteStore, target: ObjectModel, sampleSize: Int, seed: UInt64) {
        self.replay = replay
        self.steps = replay.steps
        self.store = store
        self.target = target
        self.sampleSize = sampleSize
        self.seed = seed
    }

    /// The destination entities an entity of a version ends as, through any mappings.
    func finals(_ version: Int, _ entity: String) -> Set<String> {
        if version == steps.count { return [entity] }
        let key = "\(version)|\(entity)"
        if let known = finalsMemo[key] { return known }
        var found: Set<String> = []
        for mapping in steps[version].mappings where mapping.mapping.sourceEntityName == entity {
            if let made = mapping.destination?.name { found.formUnion(finals(version + 1, made)) }
        }
        finalsMemo[key] = found
        return found
    }

    /// The destination entities that a mapping the replay does not run (a policy's) makes, in its step
    /// or before, with why they are not counted.
    func uncountable() -> [String: String] {
        var uncountable: [String: String] = [:]
        for (version, step) in steps.enumerated() {
            for mapping in step.mappings where !step.replayable[mapping.index] && mapping.source != nil {
                guard let made = mapping.destination?.name else { continue }
                for entity in finals(version + 1, made) where uncountable[entity] == nil {
                    uncountable[entity] = "the entity mapping \(mapping.name) (\(step.label)) runs a policy"
                }
            }
        }
        return uncountable
    }

    /// What each destination entity compares: its stored attributes, not transient or derived.
    func compared(_ entity: String) -> [Int] {
        if let known = comparedMemo[entity] { return known }
        let positions = (store.layout.entity(named: entity)?.attributes ?? []).enumerated().compactMap { offset, column -> Int? in
            let description = target.attribute(named: column.name, of: entity)
            return description?.isTransient == true || description?.derivationExpression != nil ? nil : offset
        }
        comparedMemo[entity] = positions
        return positions
    }

    /// Replays every source object of an entity the first step maps, one object at a time.
    func walk(_ source: SQLiteStore) throws {
        for entity in source.layout.entities where !entity.isAbstract {
            guard steps[0].mappings.contains(where: { $0.mapping.sourceEntityName == entity.name }) else { continue }
            let cursor = try source.objects(of: entity.name, includingSubentities: false)
            while let row = try cursor.next() {
                replay.reset()
                var path: [Int] = []
                try descend(replay.sourceObject(row, entity: entity), &path)
            }
        }
        replay.reset()
    }

    private func descend(_ object: ReplayObject, _ path: inout [Int]) throws {
        if object.version == steps.count {
            visit(object, path)
            return
        }
        let step = steps[object.version]
        for mapping in step.mappings where mapping.mapping.sourceEntityName == object.entityName && step.replayable[mapping.index] {
            let made: [ReplayObject]
            do {
                made = try replay.products(of: object, mapping: mapping.index, step: object.version)
            } catch let limit as ReplayLimit {
                let key = StepMapping(step: object.version, mapping: mapping.index)
                if limited[key] == nil { limited[key] = limit.reason }
                for entity in finals(object.version + 1, mapping.destination?.name ?? "") where limits[entity] == nil {
                    limits[entity] = limit.reason
                }
                continue
            }
            for child in made {
                path.append(mapping.index)
                try descend(child, &path)
                path.removeLast()
            }
        }
    }

    /// Counts an object that reached the destination version, and offers it to its path's reservoir.
    private func visit(_ object: ReplayObject, _ path: [Int]) {
        counts[object.entityName, default: 0] += 1
        guard sampleSize > 0 else { return }
        if reservoirs[path] == nil {
            let name = path.enumerated().map { "\(steps[$0].mappings[$1].name) (\(steps[$0].label))" }.joined(separator: ", ")
            reservoirs[path] = Reservoir(name: name, entity: object.entityName, random: SplitMix64(seed: seed ^ UInt64(truncatingIfNeeded: name.hashValueStable)))
        }
        let sampleSize = self.sampleSize
        // Changed in place: the reservoir's items are not copied per object.
        modify(&reservoirs[path]) { reservoir in
            reservoir.seen += 1
            let slot = reservoir.seen <= sampleSize ? reservoir.seen - 1 : Int(reservoir.random.next() % UInt64(reservoir.seen))
            guard slot < sampleSize else { return }
            let all = replay.attributeValues(of: object)
            let item = (root: "\(object.root.entityName) Z_PK \(object.root.objectID.primaryKey)", values: compared(object.entityName).map { all[$0].value })
            if slot < reservoir.items.count { reservoir.items[slot] = item } else { reservoir.items.append(item) }
        }
    }

    /// A sample of the objects one path of entity mappings makes.
    struct Reservoir {
        var name: String
        var entity: String
        var random: SplitMix64
        var seen = 0
        var items: [(root: String, values: [Value])] = []
    }

    /// One entity mapping of one step.
    struct StepMapping: Hashable {
        var step: Int
        var mapping: Int
    }
}

/// Runs `body` on the value an optional holds, in place.
private func modify<T>(_ value: inout T?, _ body: (inout T) throws -> Void) rethrows {
    guard value != nil else { return }
    try body(&value!)
}
