import Foundation
package import MoultAssociations
import MoultExpressions
import MoultMapping
import MoultModel
package import MoultStore

/// One run of the engine over a ``MigrationJob``: the open stores, the compiled mappings, the manager;
/// makes the plan, and executes it from a checkpoint position.
package final class Session {
    let job: MigrationJob
    package let source: SQLiteStore
    let destination: SQLiteStore?
    let manager: MigrationManager?
    package let mappings: [CompiledMapping]
    /// The order of the create passes, by mapping index (see ``ToOnesAtInsert/createOrder(in:destinationLayout:destinationModel:)``).
    let createOrder: [Int]
    private var variants: [String: CompiledMapping] = [:]
    private let variables: VariableLayout
    private let destinationLayout: StoreLayout

    package init(
        job: MigrationJob, source: SQLiteStore, destination: SQLiteStore?, associations: (any AssociationTable)? = nil
    ) throws {
        self.job = job
        self.source = source
        self.destination = destination
        profile = job.options.profile ? StageProfile() : nil
        destinationLayout = try destination?.layout ?? StoreLayout(model: job.destinationModel)
        if let destination, let associations {
            manager = try MigrationManager(
                source: source, destination: destination, sourceModel: job.sourceModel,
                destinationModel: job.destinationModel, associations: associations)
        } else {
            manager = nil
        }
        variables = manager?.variables ?? VariableLayout(["source", "destination", "manager", "entityMapping", "entityPolicy", "propertyMapping"])

        // Names unique over all the mapping models: the first keeps its name, later clashes are prefixed.
        var compiled: [CompiledMapping] = []
        var used: Set<String> = []
        for (modelIndex, mappingModel) in job.mappingModels.enumerated() {
            for mapping in mappingModel.orderedEntityMappings {
                let name = used.contains(mapping.name) ? "\(modelIndex + 1):\(mapping.name)" : mapping.name
                used.insert(name)
                let policy = try job.policies.resolve(mapping, source: job.sourceModel, destination: job.destinationModel)
                compiled.append(
                    try CompiledMapping(
                        index: compiled.count, mappingModelIndex: modelIndex, name: name, mapping: mapping,
                        sourceModel: job.sourceModel, destinationModel: job.destinationModel,
                        sourceLayout: source.layout, destinationLayout: destinationLayout, policy: policy, variables: variables,
                        sqlAccepts: Self.sqlAccepts(source)))
            }
        }
        // Relationship mappings whose links another mapping writes identically: compiled again without them.
        if job.options.skipRepeatedLinks {
            let omitted = RepeatedLinks.omitted(
                in: compiled, sourceLayout: source.layout, destinationLayout: destinationLayout, destinationModel: job.destinationModel)
            for (index, names) in omitted {
                let mapping = compiled[index]
                compiled[index] = try CompiledMapping(
                    index: index, mappingModelIndex: mapping.mappingModelIndex, name: mapping.name, mapping: mapping.mapping,
                    sourceModel: job.sourceModel, destinationModel: job.destinationModel, sourceLayout: source.layout,
                    destinationLayout: destinationLayout, policy: mapping.policy, variables: variables, sqlAccepts: Self.sqlAccepts(source),
                    omitting: names)
            }
        }
        // The create passes' order: a mapping whose objects an earlier mapping's to-one looks up is made
        // first. A run keeps the order of the plan it began with (in its checkpoint).
        if job.options.reorderCreatePasses {
            createOrder = ToOnesAtInsert.createOrder(in: compiled, destinationLayout: destinationLayout, destinationModel: job.destinationModel)
        } else {
            createOrder = compiled.map(\.index)
        }
        // To-ones written with their row in stage 1: decided when the run starts, kept in the destination.
        if let destination, manager != nil {
            var order = createOrder
            if try destination.database.tableExists(Checkpoint.table) {
                var planned: [Int] = []
                for pass in try Checkpoint.plan(in: destination.database).passes where pass.stage == .createObjects && !planned.contains(pass.mapping) {
                    planned.append(pass.mapping)
                }
                order = planned
            }
            let decided = try Self.toOnesAtInsert(
                in: compiled, order: order, destination: destination, enabled: job.options.toOnesAtInsert,
                destinationModel: job.destinationModel)
            var mirrored: Set<Int> = []
            for (index, names) in decided {
                let inserted = ToOnesAtInsert.resolve(names, of: compiled[index], in: compiled)
                mirrored.formUnion(inserted.map(\.lookup))
                compiled[index] = try Self.recompile(
                    compiled[index], job: job, source: source, destinationLayout: destinationLayout, variables: variables,
                    insertedToOnes: inserted)
            }
            for index in mirrored.sorted() {
                compiled[index] = try Self.recompile(
                    compiled[index], job: job, source: source, destinationLayout: destinationLayout, variables: variables,
                    mirrorsAssociations: true)
                try EngineWorkTables.createMirror(ofMapping: index, in: destination.database)
            }
        }
        mappings = compiled
        manager?.install(compiled)
        if let destination, let manager, job.options.skipUnreadAssociations {
            manager.unreadAssociations = UnreadAssociations.mappings(in: compiled, partitions: job.options.partitions)
            if !manager.unreadAssociations.isEmpty { try EngineWorkTables.createMadeChunks(in: destination.database) }
        }
        if let destination, job.options.bulkSQL {
            try destination.database.attachReadOnly(job.sourceURL, as: EngineBulkCopy.attachedSource)
        }
        if let destination {
            // Values whose format changes with the external storage flag read their files here.
            let folder = ExternalDataReference.folder(besideStore: job.externalDataSource)
            try destination.database.registerExternalDataFunctions(folder: folder)
            manager?.externalData = (folder, job.options.maxValueBytes)
        }
    }

    /// A mapping compiled again with what the run decided about it (its other decisions kept).
    private static func recompile(
        _ mapping: CompiledMapping, job: MigrationJob, source: SQLiteStore, destinationLayout: StoreLayout,
        variables: VariableLayout, insertedToOnes: [ToOnesAtInsert.Relationship]? = nil, mirrorsAssociations: Bool? = nil
    ) throws -> CompiledMapping {
        try CompiledMapping(
            index: mapping.index, mappingModelIndex: mapping.mappingModelIndex, name: mapping.name, mapping: mapping.mapping,
            sourceModel: job.sourceModel, destinationModel: job.destinationModel, sourceLayout: source.layout,
            destinationLayout: destinationLayout, policy: mapping.policy, variables: variables, sqlAccepts: Self.sqlAccepts(source),
            omitting: mapping.omittedRelationships, insertedToOnes: insertedToOnes ?? mapping.insertedToOnes,
            mirrorsAssociations: mirrorsAssociations ?? mapping.mirrorsAssociations)
    }

    static let toOnesDecisionKey = "to-ones-at-insert"

    /// Which to-ones are written at insert, by mapping index: what the destination records (a resume
    /// does as its run began, whatever its options), else decided now and recorded when the run is at
    /// its start (a run begun by a build that did not decide writes none this way).
    private static func toOnesAtInsert(
        in mappings: [CompiledMapping], order: [Int], destination: SQLiteStore, enabled: Bool, destinationModel: ObjectModel
    ) throws -> [Int: [String]] {
        let state = PolicyState(database: destination.database, namespace: "moult")
        var byName: [String: [String]] = [:]
        if case .string(let recorded)? = try state.value(forKey: toOnesDecisionKey) {
            for line in recorded.split(separator: "\n") {
                let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard parts.count == 2 else { continue }
                byName[String(parts[0])] = parts[1].split(separator: ",").map(String.init)
            }
        } else {
            let position = try Checkpoint.position(in: destination.database)
            let atStart = position.stage == .passes && position.pass == 0 && position.chunk == 0
            if enabled && atStart {
                let layout = destination.layout
                let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($0.element, $0.offset) })
                for (index, names) in ToOnesAtInsert.eligible(
                    in: mappings, position: position, destinationLayout: layout, destinationModel: destinationModel)
                {
                    byName[mappings[index].name] = names
                }
            }
            let text = byName.keys.sorted().map { "\($0)\t\(byName[$0]!.joined(separator: ","))" }.joined(separator: "\n")
            try destination.database.write { try state.set(.string(text), forKey: toOnesDecisionKey) }
        }
        var result: [Int: [String]] = [:]
        for mapping in mappings {
            if let names = byName[mapping.name] { result[mapping.index] = names }
        }
        return result
    }

    /// Whether SQLite prepares this SQL on the source: a filter it refuses is evaluated in Swift.
    private static func sqlAccepts(_ source: SQLiteStore) -> (String) -> Bool {
        let database = source.database
        return { sql in (try? database.makeStatement(sql)) != nil }
    }

    private var partitioner: Partitioner {
        Partitioner(chunkSize: job.options.chunkSize, partitions: job.options.partitions)
    }

    package func makePlan(fingerprint: String? = nil) throws -> MigrationPlan {
        let fingerprint = try fingerprint ?? job.fingerprint(source: source)
        return try partitioner.plan(
            mappings: mappings, variant: variant, source: source.database, fingerprint: fingerprint, createOrder: createOrder)
    }

    /// The compiled form of a mapping restricted to a partition (the mapping itself without one).
    func variant(_ mapping: CompiledMapping, _ partition: String?) throws -> CompiledMapping {
        guard let partition else { return mapping }
        let key = "\(mapping.index)|\(partition)"
        if let cached = variants[key] { return cached }
        var restricted = mapping.mapping
        restricted.filterPredicate = restricted.filterPredicate.map { "(\($0)) AND (\(partition))" } ?? partition
        let compiled = try CompiledMapping(
            index: mapping.index, mappingModelIndex: mapping.mappingModelIndex, name: mapping.name, mapping: restricted,
            sourceModel: job.sourceModel, destinationModel: job.destinationModel, sourceLayout: source.layout,
            destinationLayout: destinationLayout, policy: mapping.policy, variables: variables, sqlAccepts: Self.sqlAccepts(source),
            omitting: mapping.omittedRelationships, insertedToOnes: mapping.insertedToOnes, mirrorsAssociations: mapping.mirrorsAssociations)
        variants[key] = compiled
        return compiled
    }

    // MARK: - Passes

    /// Runs the plan's passes from `position`; returns the chunks run.
    package func execute(
        _ plan: MigrationPlan, from position: inout Checkpoint.Position, progress: ((MigrationProgress) -> Void)?,
        isCancelled: () -> Bool
    ) throws -> Int {
        guard let manager, let destination else { return 0 }
        guard position.stage == .passes else { return 0 }
        try writeUnwrittenAssociations(plan, manager: manager, destination: destination)
        let total = plan.estimatedRows
        var chunksRun = 0
        while position.pass < plan.passes.count {
            let pass = plan.passes[position.pass]
            let compiled = try variant(mappings[pass.mapping], pass.partition)
            let stage: MigrationStage = pass.stage == .createObjects ? .createObjects : .createRelationships
            manager.enter(compiled, stage: stage)
            if pass.stage == .createObjects { try compiled.policy.begin(mapping: compiled.mapping, manager: manager) }
            let chunkCount = max(pass.chunks.count, 1)
            var mappingDone = pass.chunks.prefix(position.chunk).reduce(0) { $0 + $1.estimatedRows }
            while position.chunk < chunkCount {
                if isCancelled() {
                    throw MigrationError(.interrupted, "the migration was cancelled; run it again to resume", mapping: compiled.name)
                }
                FaultInjection.reach(.chunkStart)
                let step = chunkStep(pass, compiled, at: position, chunkCount: chunkCount)
                try run(step, from: &position, manager: manager, destination: destination)
                chunksRun += 1
                mappingDone += step.chunk?.estimatedRows ?? 0
                if let progress {
                    var report = MigrationProgress(
                        stage: stage, mapping: compiled.name, done: position.done, total: total, mappingDone: mappingDone,
                        mappingTotal: pass.estimatedRows)
                    (report.pass, report.passes, report.chunk, report.chunks) = (step.passIndex, plan.passes.count, step.chunkIndex, chunkCount)
                    report.rows = step.chunk?.estimatedRows ?? 0
                    progress(report)
                }
                if step.isLast { break }
            }
        }
        profile?.report()
        return chunksRun
    }

    /// One chunk of a pass, and how the run takes it.
    private struct ChunkStep {
        var pass: MigrationPlan.Pass
        var compiled: CompiledMapping
        /// The chunk's bounds; nil for a pass without chunks (no source objects), which runs once.
        var chunk: MigrationPlan.Chunk?
        var passIndex: Int
        var chunkIndex: Int
        var isLast: Bool
        /// Stage 1 as one `INSERT … SELECT`, when the run and the mapping allow it.
        var bulk: EngineBulkCopy?
        /// Stage 2's read of keys only, when the run and the mapping allow it.
        var keysOnly: CompiledMapping.KeysOnlyRead?
        /// A stage 2 with no relationship to write (none mapped, or its links written by other
        /// mappings, see `RepeatedLinks`) under a policy whose stage 2 sets only the mapping's own
        /// relationships: nothing to read or do.
        var nothingToRelate: Bool

        /// Where the run is once the chunk is written.
        func next(after position: Checkpoint.Position) -> Checkpoint.Position {
            var next = position
            next.done += chunk?.estimatedRows ?? 0
            if isLast {
                next.pass += 1
                next.chunk = 0
            } else {
                next.chunk += 1
            }
            return next
        }
    }

    private func chunkStep(_ pass: MigrationPlan.Pass, _ compiled: CompiledMapping, at position: Checkpoint.Position, chunkCount: Int) -> ChunkStep {
        ChunkStep(
            pass: pass, compiled: compiled, chunk: pass.chunks.isEmpty ? nil : pass.chunks[position.chunk], passIndex: position.pass,
            chunkIndex: position.chunk, isLast: position.chunk + 1 == chunkCount,
            bulk: pass.stage == .createObjects && job.options.bulkSQL ? compiled.bulkCopy : nil,
            keysOnly: pass.stage == .createRelationships && job.options.bulkSQL ? compiled.keysOnlyRead : nil,
            nothingToRelate: pass.stage == .createRelationships && compiled.relationships.isEmpty
                && (!(compiled.omittedRelationships.isEmpty && compiled.insertedToOnes.isEmpty)
                    || RepeatedLinks.writesOnlyItsOwnRelationships(compiled.policy)))
    }

    /// Runs a chunk: reads its source objects, evaluates and writes them, and moves `position` past it,
    /// in one transaction of the destination with the checkpoint (the association table's chunk
    /// commits inside it).
    private func run(_ step: ChunkStep, from position: inout Checkpoint.Position, manager: MigrationManager, destination: SQLiteStore) throws {
        let (name, stage) = (step.compiled.name, step.pass.stage)
        var clock = profile?.start()
        let objects = try read(step, manager: manager)
        let next = step.next(after: position)
        profile?.lap(&clock, name, stage, .read)
        try manager.associations.beginChunk()
        do {
            try manager.writer.write {
                switch stage {
                case .createObjects: try createObjects(step, objects, manager: manager)
                case .createRelationships: try createRelationships(step, objects, manager: manager)
                }
                profile?.lap(&clock, name, stage, .evaluateAndWrite)
                try manager.flushAssociations()
                profile?.lap(&clock, name, stage, .associationWrites)
                try Checkpoint.save(next, in: destination.database)
                FaultInjection.reach(.afterRows)
                try manager.associations.commitChunk(durable: job.options.durable)
                FaultInjection.reach(.afterLMDBCommit)
                profile?.lap(&clock, name, stage, .associationCommit)
            }
        } catch {
            manager.discardPendingAssociations()
            manager.associations.abortChunk()
            throw error
        }
        profile?.lap(&clock, name, stage, .sqliteCommit)
        FaultInjection.reach(.afterSQLiteCommit)
        position = next
    }

    /// The chunk's source objects, as its stage reads them: none for a bulk copy or a stage 2 with
    /// nothing to do, keys only for a stage 2 that allows it, else whole objects.
    private func read(_ step: ChunkStep, manager: MigrationManager) throws -> [MigrationObject] {
        guard let chunk = step.chunk, step.bulk == nil, !step.nothingToRelate else { return [] }
        if let keysOnly = step.keysOnly {
            return try manager.sourceKeys(step.compiled, keysOnly, after: chunk.lowerBound, through: chunk.upperBound)
        }
        return try manager.sourceObjects(step.compiled, after: chunk.lowerBound, through: chunk.upperBound)
    }

    /// Stage 1 of a chunk: in bulk when it can be, else object by object through the policy.
    private func createObjects(_ step: ChunkStep, _ objects: [MigrationObject], manager: MigrationManager) throws {
        let (compiled, policy) = (step.compiled, step.compiled.policy)
        var objects = objects
        if let bulk = step.bulk, let chunk = step.chunk,
            try !manager.bulkCreate(compiled, bulk, pass: step.passIndex, after: chunk.lowerBound, through: chunk.upperBound)
        {
            // Values the per-object path converts or refuses: it reads this chunk.
            objects = try manager.sourceObjects(compiled, after: chunk.lowerBound, through: chunk.upperBound)
        }
        for object in objects {
            try policy.createDestinationInstances(for: object, mapping: compiled.mapping, manager: manager)
        }
        if step.isLast { try policy.endInstanceCreation(mapping: compiled.mapping, manager: manager) }
    }

    /// Stage 2 of a chunk: as set operations when it can be, else object by object through the policy.
    private func createRelationships(_ step: ChunkStep, _ objects: [MigrationObject], manager: MigrationManager) throws {
        let (compiled, policy) = (step.compiled, step.compiled.policy)
        if step.nothingToRelate { FaultInjection.reach(.relationshipsLeftOut) }
        try manager.flushAssociations()
        let destinations = try manager.associations.destinations(forMapping: compiled.index, sources: objects.map(\.objectID.primaryKey))
        var asSets = false
        if step.keysOnly != nil, job.options.setRelationships {
            asSets = try manager.createRelationshipsAsSets(compiled, objects: objects, made: destinations)
        }
        for (object, made) in zip(objects, destinations) where !asSets {
            for destinationObject in made {
                try policy.createRelationships(for: destinationObject, source: object, mapping: compiled.mapping, manager: manager)
            }
        }
        if step.isLast { try policy.endRelationshipCreation(mapping: compiled.mapping, manager: manager) }
    }

    // MARK: - Associations not written

    /// The source keys of a chunk recorded in place of its associations, in the order its objects were made.
    private func unwrittenKeys(_ chunk: UnreadAssociations.Chunk, _ plan: MigrationPlan) throws -> (CompiledMapping, [Int64]) {
        let pass = plan.passes[chunk.pass]
        let compiled = try variant(mappings[pass.mapping], pass.partition)
        guard let bulk = compiled.bulkCopy else {
            throw MigrationError(
                .checkpointMismatch, "a chunk of '\(compiled.name)' was copied in bulk, but this mapping no longer can be; start the migration again",
                mapping: compiled.name)
        }
        let keys = try bulk.sourceKeys(
            after: chunk.lower, through: chunk.upper, filterArguments: compiled.filterSQL?.arguments ?? [], in: source.database)
        guard Int64(keys.count) == chunk.count else {
            throw MigrationError(
                .checkpointMismatch, "a chunk of '\(compiled.name)' made \(chunk.count) objects, but its source now holds \(keys.count)",
                mapping: compiled.name)
        }
        return (compiled, keys)
    }

    /// Writes the associations of the chunks recorded without them (see ``UnreadAssociations``) whose
    /// mapping this run reads: a resume under options that read more than the run began with.
    private func writeUnwrittenAssociations(_ plan: MigrationPlan, manager: MigrationManager, destination: SQLiteStore) throws {
        let passes = Set(plan.passes.indices.filter { !manager.unreadAssociations.contains(plan.passes[$0].mapping) })
        let chunks = try UnreadAssociations.chunks(ofPasses: passes, in: destination.database)
        guard !chunks.isEmpty else { return }
        try manager.associations.beginChunk()
        do {
            for chunk in chunks {
                let (compiled, keys) = try unwrittenKeys(chunk, plan)
                guard let made = compiled.destination?.number, let from = compiled.source?.number else { continue }
                try manager.associations.associate(
                    keys.enumerated().map {
                        Association(
                            source: ObjectID(entity: from, primaryKey: $0.element),
                            destination: ObjectID(entity: made, primaryKey: chunk.first + Int64($0.offset)), mapping: compiled.index)
                    })
            }
            try manager.associations.commitChunk(durable: job.options.durable)
        } catch {
            manager.associations.abortChunk()
            throw error
        }
    }

    /// The source key of a destination object made by a chunk recorded without its associations.
    private func unwrittenSource(mapping: Int, destination key: Int64, _ plan: MigrationPlan) -> Int64? {
        guard let destination else { return nil }
        let passes = Set(plan.passes.indices.filter { plan.passes[$0].mapping == mapping && plan.passes[$0].stage == .createObjects })
        guard let chunk = try? UnreadAssociations.chunk(holding: key, ofPasses: passes, in: destination.database),
            let (_, keys) = try? unwrittenKeys(chunk, plan)
        else { return nil }
        let offset = Int(key - chunk.first)
        return keys.indices.contains(offset) ? keys[offset] : nil
    }

    /// Where a run's time goes, by pass and kind of work (``MigrationOptions/profile``).
    private let profile: StageProfile?

    // MARK: - Validation and the end

    /// Stage 3 and the policies' last hooks; returns the failures found (none when it returns).
    package func validateAndEnd(_ plan: MigrationPlan, position: inout Checkpoint.Position, progress: ((MigrationProgress) -> Void)?) throws -> Int {
        guard let manager, let destination else { return 0 }
        guard position.stage == .passes else { return 0 }
        progress?(MigrationProgress(stage: .validate, done: plan.estimatedRows, total: plan.estimatedRows))
        manager.enter(nil, stage: .validate)
        manager.unwrittenSource = { [unowned self] mapping, key in unwrittenSource(mapping: mapping, destination: key, plan) }
        let options = job.options
        if options.validate {
            let validator = Validator(
                model: job.destinationModel, layout: destination.layout, database: destination.database,
                stopAtFirst: options.stopAtFirstValidationFailure, report: { manager.reportValidationFailure($0) })
            try validator.run()
        }
        for compiled in mappings {
            manager.enter(compiled, stage: .validate)
            try compiled.policy.performCustomValidation(mapping: compiled.mapping, manager: manager)
        }
        guard manager.failureCount == 0 else {
            throw MigrationError(
                .validationFailed,
                "\(manager.failureCount) object(s) break the destination model's rules; nothing was written at the output",
                failures: manager.validationFailures)
        }
        try destination.database.write {
            for compiled in mappings {
                manager.enter(compiled, stage: .finishing)
                try compiled.policy.end(mapping: compiled.mapping, manager: manager)
            }
            position.stage = .validated
            try Checkpoint.save(position, in: destination.database)
        }
        return 0
    }

    /// Removes Moult's own tables and leaves a store Core Data would open, as one file.
    package func finalize(_ plan: MigrationPlan, uuid: String) throws {
        guard let destination else { return }
        let database = destination.database
        if job.options.bulkSQL { try database.detach(EngineBulkCopy.attachedSource) }
        try database.write {
            // The policies' state, the checkpoint, the chunks recorded without associations, and every
            // mirror of associations (see `ToOnesAtInsert`), whichever run made it.
            try EngineWorkTables.dropAll(in: database)
            // The source's application keys (not Core Data's NS… ones) are kept.
            var metadata = StoreMetadata(model: job.destinationModel, storeUUID: uuid)
            metadata.keepApplicationKeys(of: try source.metadata())
            metadata.additionalKeys[StoreMetadata.runKey] = job.options.runRecord.map { .string($0) }
            try metadata.write(to: database)
        }
        try EngineWorkTables.foldIntoOneFile(database)
    }

    /// Objects per concrete destination entity.
    package func objectCounts() throws -> [String: Int] {
        guard let destination else { return [:] }
        return try Self.objectCounts(in: destination)
    }

    /// Objects per concrete entity of a store (sub-entities counted on their own).
    package static func objectCounts(in store: SQLiteStore) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in store.layout.entities where !entity.isAbstract {
            counts[entity.name] = try store.count(of: entity.name, includingSubentities: false)
        }
        return counts
    }
}

/// Seconds spent per (mapping, stage, kind of work), for ``MigrationOptions/profile``.
package final class StageProfile {
    enum Kind: String, CaseIterable {
        /// Reading the chunk's source objects (or keys) into Swift.
        case read
        /// The policy's work: expressions evaluated, objects inserted or the bulk `INSERT … SELECT`,
        /// association look-ups and relationship writes.
        case evaluateAndWrite = "evaluate+write"
        /// Recording the chunk's new associations in the association table.
        case associationWrites = "association-writes"
        /// The checkpoint row and the association table's commit.
        case associationCommit = "checkpoint+association-commit"
        /// The destination's commit.
        case sqliteCommit = "sqlite-commit"
    }

    private var seconds: [String: Double] = [:]
    private var order: [String] = []

    func start() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func lap(_ clock: inout UInt64?, _ mapping: String, _ stage: MigrationPlan.Stage, _ kind: Kind) {
        guard let started = clock else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let key = "\(stage == .createObjects ? "stage1" : "stage2")\t\(mapping)\t\(kind.rawValue)"
        if seconds[key] == nil { order.append(key) }
        seconds[key, default: 0] += Double(now - started) / 1e9
        clock = now
    }

    func report() {
        let total = seconds.values.reduce(0, +)
        var lines = ["moult profile: stage\tmapping\twork\tseconds\tshare"]
        for key in order {
            let value = seconds[key] ?? 0
            lines.append("moult profile: \(key)\t\(String(format: "%.3f", value))\t\(String(format: "%.1f%%", total > 0 ? value / total * 100 : 0))")
        }
        lines.append("moult profile: total\t\t\t\(String(format: "%.3f", total))")
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
