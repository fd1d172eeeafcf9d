import Foundation
import MoultAssociations
import MoultModel
import MoultStore

// MARK: - Chunks: evaluated, then written

extension Session {
    /// Runs the plan's passes from `position`; returns the chunks run.
    package func execute(
        _ plan: MigrationPlan, from position: inout Checkpoint.Position, progress: ((MigrationProgress) -> Void)?,
        isCancelled: () -> Bool
    ) throws -> Int {
        guard let manager, let destination, let writer = chunkWriter else { return 0 }
        guard position.stage == .passes else { return 0 }
        try writeUnwrittenAssociations(plan, manager: manager, destination: destination)
        let total = plan.estimatedRows
        var chunksRun = 0
        let bulkAhead = try bulkReadAhead()
        defer {
            readAhead?.discardPending()
            bulkAhead?.close()
        }
        while position.pass < plan.passes.count {
            let pass = plan.passes[position.pass]
            let compiled = try variant(mappings[pass.mapping], pass.partition)
            let stage: MigrationStage = pass.stage == .createObjects ? .createObjects : .createRelationships
            manager.enter(compiled, stage: stage)
            if pass.stage == .createObjects {
                // What `begin` creates or remembers is written at once, outside the chunks, as it always was.
                manager.beginEvaluation()
                try compiled.policy.begin(mapping: compiled.mapping, manager: manager)
                try writer.apply(try manager.takeEvaluated())
            }
            let chunkCount = max(pass.chunks.count, 1)
            var mappingDone = pass.chunks.prefix(position.chunk).reduce(0) { $0 + $1.estimatedRows }
            while position.chunk < chunkCount {
                if isCancelled() {
                    throw MigrationError(.interrupted, "the migration was cancelled; run it again to resume", mapping: compiled.name)
                }
                FaultInjection.reach(.chunkStart)
                let step = chunkStep(pass, compiled, at: position, chunkCount: chunkCount)
                let rows = try readAhead.flatMap { readAhead in
                    try readRequest(step, manager: manager).flatMap { try readAhead.take($0) }
                }
                let evaluated = bulkAhead.flatMap { bulkAhead in bulkRequest(step).flatMap { bulkAhead.take($0) } }
                if step.bulk != nil { profile?.countBulkChunk(evaluatedAhead: evaluated != nil) }
                if !step.isLast {
                    var after = position
                    after.chunk += 1
                    let nextStep = chunkStep(pass, compiled, at: after, chunkCount: chunkCount)
                    if let readAhead, let request = readRequest(nextStep, manager: manager) {
                        readAhead.start(request)
                    }
                    if let bulkAhead, let request = bulkRequest(nextStep) {
                        try keepWALSmall(destination)
                        if let bulk = nextStep.bulk {
                            bulkAhead.start(request, copy: bulk, filterArguments: compiled.filterSQL?.arguments ?? [])
                        } else if let keyMap = nextStep.unique {
                            bulkAhead.startGuard(request, keyMap: keyMap, filterArguments: compiled.filterSQL?.arguments ?? [])
                        }
                    }
                }
                try run(step, rows: rows, evaluated: evaluated, from: &position, manager: manager, writer: writer)
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
    struct ChunkStep {
        var pass: MigrationPlan.Pass
        var compiled: CompiledMapping
        /// The chunk's bounds; nil for a pass without chunks (no source objects), which runs once.
        var chunk: MigrationPlan.Chunk?
        var passIndex: Int
        var chunkIndex: Int
        var isLast: Bool
        /// Stage 1 as one `INSERT … SELECT`, when the run and the mapping allow it.
        var bulk: EngineBulkCopy?
        /// Stage 1 of the built-in uniquing policy as set operations, when the run and the mapping allow it.
        var unique: EngineKeyMap?
        /// Whether stage 1 runs in SQL (the chunk writer's), whichever way.
        var inSQL: Bool { bulk != nil || unique != nil }
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

    func chunkStep(_ pass: MigrationPlan.Pass, _ compiled: CompiledMapping, at position: Checkpoint.Position, chunkCount: Int) -> ChunkStep {
        ChunkStep(
            pass: pass, compiled: compiled, chunk: pass.chunks.isEmpty ? nil : pass.chunks[position.chunk], passIndex: position.pass,
            chunkIndex: position.chunk, isLast: position.chunk + 1 == chunkCount,
            bulk: pass.stage == .createObjects && usesSQLFastPaths ? compiled.bulkCopy : nil,
            unique: pass.stage == .createObjects && usesSQLFastPaths && compiled.keysInMap ? compiled.keyMapCopy : nil,
            keysOnly: pass.stage == .createRelationships && usesSQLFastPaths ? compiled.keysOnlyRead : nil,
            nothingToRelate: pass.stage == .createRelationships && compiled.relationships.isEmpty
                && (!(compiled.omittedRelationships.isEmpty && compiled.insertedToOnes.isEmpty)
                    || RepeatedLinks.writesOnlyItsOwnRelationships(compiled.policy)))
    }

    /// Runs a chunk: evaluates it (reading its source objects, writing nothing), then writes what it
    /// evaluated with its checkpoint in one transaction of the destination, inside which the
    /// association table's chunk commits, and moves `position` past it.
    ///
    /// A stage 1 copied in bulk is evaluated by SQLite inside that transaction (see ``ChunkWriter``);
    /// its policy's last hook then runs there too, on what the copy wrote.
    ///
    /// `rows` are the chunk's source rows when they were read ahead (``SourceReadAhead``).
    private func run(
        _ step: ChunkStep, rows: [ObjectRow]?, evaluated bulkRows: BulkReadAhead.Evaluated?, from position: inout Checkpoint.Position,
        manager: MigrationManager, writer: ChunkWriter
    ) throws {
        let (name, stage) = (step.compiled.name, step.pass.stage)
        var clock = profile?.start()
        let next = step.next(after: position)
        var evaluated: EvaluatedChunk?
        if !step.inSQL {
            let objects = try read(step, rows: rows, manager: manager)
            profile?.lap(&clock, name, stage, .read)
            evaluated = try writer.snapshot { try evaluate(step, objects, manager: manager) }
            profile?.lap(&clock, name, stage, .evaluate)
        }
        try writer.commit(next, durable: job.options.durable) {
            if step.inSQL {
                var objects: [MigrationObject] = []
                if let chunk = step.chunk, try !createInSQL(step, chunk, evaluated: bulkRows, manager: manager) {
                    // Values the per-object path converts or refuses: it reads this chunk.
                    objects = try manager.sourceObjects(step.compiled, after: chunk.lowerBound, through: chunk.upperBound)
                }
                evaluated = try evaluate(step, objects, manager: manager)
            }
            if let evaluated { try writer.apply(evaluated) }
            profile?.lap(&clock, name, stage, .write)
        }
        profile?.lap(&clock, name, stage, .commit)
        position = next
    }

    /// Stage 1 of a chunk in SQL: a bulk copy, or the uniquing policy's set operations. False, with
    /// nothing written, when the chunk must take the per-object path.
    private func createInSQL(
        _ step: ChunkStep, _ chunk: MigrationPlan.Chunk, evaluated: BulkReadAhead.Evaluated?, manager: MigrationManager
    ) throws -> Bool {
        if let bulk = step.bulk {
            return try manager.bulkCreate(
                step.compiled, bulk, pass: step.passIndex, after: chunk.lowerBound, through: chunk.upperBound, evaluated: evaluated)
        }
        guard let unique = step.unique else { return false }
        // The guard run ahead: a refusal sends the chunk to the per-object path, as the writer's own would.
        var guarded = false
        switch evaluated {
        case .refused?: return false
        case .guarded?: guarded = true
        case .rows?, nil: break
        }
        return try manager.uniqueCreate(
            step.compiled, unique, pass: step.passIndex, after: chunk.lowerBound, through: chunk.upperBound, guarded: guarded)
    }

    /// The chunk's source objects, as its stage reads them: none for a stage 1 in SQL or a stage 2 with
    /// nothing to do, keys only for a stage 2 that allows it, else whole objects (from `rows` when
    /// they were read ahead).
    private func read(_ step: ChunkStep, rows: [ObjectRow]?, manager: MigrationManager) throws -> [MigrationObject] {
        guard let chunk = step.chunk, !step.inSQL, !step.nothingToRelate else { return [] }
        if let keysOnly = step.keysOnly {
            return try manager.sourceKeys(step.compiled, keysOnly, after: chunk.lowerBound, through: chunk.upperBound)
        }
        return try manager.sourceObjects(step.compiled, after: chunk.lowerBound, through: chunk.upperBound, rows: rows)
    }

    /// What a second thread can read of a chunk's source ahead of it: its whole objects' rows, when
    /// the chunk reads them (see ``read(_:rows:manager:)``).
    private func readRequest(_ step: ChunkStep, manager: MigrationManager) -> SourceReadAhead.Request? {
        guard let chunk = step.chunk, !step.inSQL, !step.nothingToRelate, step.keysOnly == nil else { return nil }
        return manager.readAheadRequest(step.compiled, after: chunk.lowerBound, through: chunk.upperBound)
    }

    /// What the second thread can evaluate of a chunk ahead of it: its bulk copy, when its `SELECT`
    /// reads no mirror of its own mapping's (which the chunk before it may still be writing; see
    /// ``BulkReadAhead``), or the guard of a uniquing chunk in SQL, which reads the source only.
    private func bulkRequest(_ step: ChunkStep) -> BulkReadAhead.Request? {
        guard let chunk = step.chunk else { return nil }
        if let bulk = step.bulk, bulk.mirrorsRead.contains(step.compiled.index) { return nil }
        guard step.bulk != nil || step.unique?.guardSQL != nil else { return nil }
        return BulkReadAhead.Request(pass: step.passIndex, after: chunk.lowerBound, through: chunk.upperBound)
    }

    /// Checkpoints and truncates the destination's WAL when it has grown over
    /// ``MigrationOptions/walLimitBytes``. Called between two chunks, when neither connection is in a
    /// transaction: with the second thread's connection reading the destination most of the time,
    /// SQLite seldom finds the moment to start its WAL over, and the WAL would grow with the run (People
    /// v2 → v3: 43 MiB at a million persons, 93 to 167 MiB at five million; 52 MiB on one thread), and
    /// with it the wal-index every page read goes through. A checkpoint
    /// moves pages between files; the store's bytes are the same.
    private func keepWALSmall(_ destination: SQLiteStore) throws {
        let path = destination.database.path + "-wal"
        let size = FileOperations.size(of: path) ?? 0
        guard size > job.options.walLimitBytes else { return }
        _ = try destination.database.checkpointWALIfInWALMode()
        profile?.walCheckpoints += 1
    }

    /// The second thread's evaluation of bulk copies, for a run on two threads or more that copies in
    /// bulk into a destination in WAL mode (where its connection reads while the run writes; a
    /// rollback journal would have the two wait for each other); nil otherwise.
    private func bulkReadAhead() throws -> BulkReadAhead? {
        guard job.options.threads >= 2, usesSQLFastPaths, let destination, try destination.database.isInWALMode() else { return nil }
        return try BulkReadAhead(
            destination: destination.database, source: job.sourceURL,
            externalDataFolder: ExternalDataReference.folder(besideStore: job.externalDataSource))
    }

    /// A chunk evaluated: its source objects through the policy's hooks of its stage, into what the
    /// destination is to hold (see ``EvaluatedChunk``). Nothing is written.
    func evaluate(_ step: ChunkStep, _ objects: [MigrationObject], manager: MigrationManager) throws -> EvaluatedChunk {
        manager.beginEvaluation()
        switch step.pass.stage {
        case .createObjects: try createObjects(step, objects, manager: manager)
        case .createRelationships: try createRelationships(step, objects, manager: manager)
        }
        return try manager.takeEvaluated()
    }

    /// Stage 1 of a chunk, object by object through the policy.
    private func createObjects(_ step: ChunkStep, _ objects: [MigrationObject], manager: MigrationManager) throws {
        let (compiled, policy) = (step.compiled, step.compiled.policy)
        for object in objects {
            try policy.createDestinationInstances(for: object, mapping: compiled.mapping, manager: manager)
        }
        if step.isLast { try policy.endInstanceCreation(mapping: compiled.mapping, manager: manager) }
    }

    /// Stage 2 of a chunk: as set operations when it can be, else object by object through the policy.
    private func createRelationships(_ step: ChunkStep, _ objects: [MigrationObject], manager: MigrationManager) throws {
        let (compiled, policy) = (step.compiled, step.compiled.policy)
        if step.nothingToRelate { FaultInjection.reach(.relationshipsLeftOut) }
        let destinations = try manager.destinations(forMapping: compiled.index, sources: objects.map(\.objectID.primaryKey))
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
}
