import Foundation
package import MoultAssociations
import MoultExpressions
import MoultMapping
import MoultModel
package import MoultStore

/// One run of the engine over a ``MigrationJob``: the open stores, the compiled mappings with the
/// run's ``ExecutionDecisions``, the manager that evaluates chunks and the ``ChunkWriter`` that writes
/// them; makes the plan, and executes it from a checkpoint position.
///
/// The source is read through ``/MoultStore/StoreReading``, whatever its store type. When it also runs
/// SQL (``sqlSource``, an SQLite store) the engine takes its fast paths: filters and partitions in SQL,
/// chunk boundaries by SQL steps, stage 1 as one `INSERT … SELECT` from the attached source, stage 2's
/// keys-only read. Without it every chunk takes the per-object path: filters evaluated in Swift, chunk
/// boundaries from the reader (``/MoultStore/StoreReading/keyBoundaries(of:chunkSize:)``), to-manys
/// through ``/MoultStore/StoreReading/toManyDestinations(_:of:sources:)``.
///
/// Its work is in files by role: the decisions (`Session+Decisions`), a chunk evaluated then written
/// (`Session+Chunks`), and the associations of chunks recorded without them (`+UnwrittenAssociations`).
package final class Session {
    let job: MigrationJob
    /// The source, read object by object.
    package let source: any StoreReading
    /// The source's SQL capability, when it has one (an SQLite store); nil for another store type.
    package let sqlSource: (any SQLFastPaths)?
    let destination: SQLiteStore?
    let manager: MigrationManager?
    let chunkWriter: ChunkWriter?
    package let mappings: [CompiledMapping]
    /// How the run executes its mappings: recorded in its checkpoint's plan, read back on a resume.
    package let decisions: ExecutionDecisions
    /// The order of the create passes, by mapping index (see ``ExecutionDecisions/createOrder``).
    var createOrder: [Int] { decisions.createOrder }
    private var variants: [String: CompiledMapping] = [:]
    private let compiler: Compiler

    package init(
        job: MigrationJob, source: any StoreReading, destination: SQLiteStore?, associations: (any AssociationTable)? = nil
    ) throws {
        self.job = job
        self.source = source
        let sqlSource = source as? any SQLFastPaths
        self.sqlSource = sqlSource
        self.destination = destination
        profile = job.options.profile ? StageProfile() : nil
        if job.options.threads >= 2, destination != nil, associations != nil, let reopenable = source as? any ReopenableStore {
            readAhead = SourceReadAhead(store: try reopenable.secondReader())
        } else {
            readAhead = nil
        }
        let destinationLayout = try destination?.layout ?? StoreLayout(model: job.destinationModel)
        if let destination, let associations {
            let manager = try MigrationManager(
                source: source, sqlSource: sqlSource, destination: destination, sourceModel: job.sourceModel,
                destinationModel: job.destinationModel, associations: associations)
            manager.fetchesInSQL = job.options.fetchesInSQL
            self.manager = manager
            chunkWriter = ChunkWriter(writer: manager.writer, associations: associations)
        } else {
            manager = nil
            chunkWriter = nil
        }
        let variables = manager?.variables ?? VariableLayout(["source", "destination", "manager", "entityMapping", "entityPolicy", "propertyMapping"])
        compiler = Compiler(
            job: job, sourceLayout: source.layout, destinationLayout: destinationLayout, variables: variables, sqlAccepts: Self.sqlAccepts(sqlSource))

        // Names unique over all the mapping models: the first keeps its name, later clashes are prefixed.
        var compiled: [CompiledMapping] = []
        var used: Set<String> = []
        for (modelIndex, mappingModel) in job.mappingModels.enumerated() {
            for mapping in mappingModel.orderedEntityMappings {
                let name = used.contains(mapping.name) ? "\(modelIndex + 1):\(mapping.name)" : mapping.name
                used.insert(name)
                let policy = try job.policies.resolve(mapping, source: job.sourceModel, destination: job.destinationModel)
                compiled.append(
                    try compiler.compile(index: compiled.count, mappingModelIndex: modelIndex, name: name, mapping: mapping, policy: policy))
            }
        }
        // A resume executes as its run began (the decisions in its checkpoint); a new run decides now.
        var recorded: ExecutionDecisions?
        if let destination, try destination.database.tableExists(Checkpoint.table) {
            recorded = try Self.recordedDecisions(in: destination.database)
        }
        // Uniquing in SQL needs a source that runs SQL; from another store type the policy runs object by object.
        var options = job.options
        if sqlSource == nil { options.uniqueInSQL = false }
        (mappings, decisions) = try Self.applyDecisions(recorded, to: compiled, compiler: compiler, options: options, compileToOnes: manager != nil)
        try prepare()
    }

    /// What the run needs in the destination and on its connection before its first chunk.
    private func prepare() throws {
        guard let destination else { return }
        if let manager {
            for mapping in mappings where mapping.mirrorsAssociations {
                try EngineWorkTables.createMirror(ofMapping: mapping.index, in: destination.database)
            }
            for mapping in mappings where mapping.keysInMap {
                try EngineKeyMap.create(ofMapping: mapping.index, in: destination.database)
            }
            manager.install(mappings)
            try reserveKeptKeys(with: manager.writer)
            if job.options.skipUnreadAssociations {
                manager.unreadAssociations = UnreadAssociations.mappings(in: mappings, partitions: job.options.partitions)
                if !manager.unreadAssociations.isEmpty { try EngineWorkTables.createMadeChunks(in: destination.database) }
            }
        }
        if usesSQLFastPaths {
            try destination.database.attachReadOnly(job.sourceURL, as: EngineBulkCopy.attachedSource)
        }
        // Values whose format changes with the external storage flag read their files here.
        let folder = ExternalDataReference.folder(besideStore: job.externalDataSource)
        try destination.database.registerExternalDataFunctions(folder: folder)
        manager?.externalData = (folder, job.options.maxValueBytes)
    }

    /// Whether SQLite prepares this SQL on the source: a filter it refuses, or any filter of a source
    /// without SQL, is evaluated in Swift.
    private static func sqlAccepts(_ source: (any SQLFastPaths)?) -> (String) -> Bool {
        guard let database = source?.database else { return { _ in false } }
        return { sql in (try? database.makeStatement(sql)) != nil }
    }

    /// Whether the run takes the SQL fast paths that read the source by SQL (the bulk copy of stage 1,
    /// stage 2's keys-only read and its set operations): asked for by the options, and the source runs SQL.
    var usesSQLFastPaths: Bool { job.options.bulkSQL && sqlSource != nil }

    private var partitioner: Partitioner {
        Partitioner(chunkSize: job.options.chunkSize, partitions: job.options.partitions)
    }

    package func makePlan(fingerprint: String? = nil) throws -> MigrationPlan {
        let fingerprint = try fingerprint ?? job.fingerprint(source: source)
        // On two threads, a second connection to the source cuts another mapping's chunks meanwhile
        // (none when it cannot be opened: the first does all).
        let sql = sqlSource?.database
        let secondConnection = { () -> Database? in
            guard self.job.options.threads >= 2, let database = sql else { return nil }
            return try? database.scanningReader(pageCacheKiB: Self.scanningPageCacheKiB)
        }
        var plan = try partitioner.plan(
            mappings: mappings, variant: variant, source: source, sql: sql, secondConnection: secondConnection,
            fingerprint: fingerprint, createOrder: createOrder)
        plan.decisions = decisions
        return plan
    }

    /// The compiled form of a mapping restricted to a partition (the mapping itself without one).
    func variant(_ mapping: CompiledMapping, _ partition: String?) throws -> CompiledMapping {
        guard let partition else { return mapping }
        let key = "\(mapping.index)|\(partition)"
        if let cached = variants[key] { return cached }
        var restricted = mapping.mapping
        restricted.filterPredicate = restricted.filterPredicate.map { "(\($0)) AND (\(partition))" } ?? partition
        let compiled = try compiler.recompile(mapping, mapping: restricted)
        variants[key] = compiled
        return compiled
    }

    /// Where a run's time goes, by pass and kind of work (``MigrationOptions/profile``).
    let profile: StageProfile?
    /// The second thread's reads of the next chunk's source objects (``MigrationOptions/threads``).
    let readAhead: SourceReadAhead?


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
            var validator = Validator(
                model: job.destinationModel, layout: destination.layout, database: destination.database,
                stopAtFirst: options.stopAtFirstValidationFailure, report: { manager.reportValidationFailure($0) })
            validator.second = validationReader()
            defer { validator.second?.close() }
            try validator.run()
        }
        // What the last hooks set or remember is written at once, as it always was.
        for compiled in mappings {
            manager.enter(compiled, stage: .validate)
            manager.beginEvaluation()
            try compiled.policy.performCustomValidation(mapping: compiled.mapping, manager: manager)
            try chunkWriter?.apply(try manager.takeEvaluated())
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
                manager.beginEvaluation()
                try compiled.policy.end(mapping: compiled.mapping, manager: manager)
                try chunkWriter?.apply(try manager.takeEvaluated())
            }
            // Keys reserved and never used (no chunk wrote after them) are saved too: Z_MAX keeps the source's.
            try manager.writer.savePrimaryKeys()
            position.stage = .validated
            try Checkpoint.save(position, in: destination.database)
        }
        return 0
    }

    /// A second connection to the destination for the validation's scans, on two threads or more when
    /// the destination is in WAL mode (where it reads what the run committed while the other reads
    /// too) and nothing is left uncommitted; nil otherwise, or when it cannot be opened.
    private func validationReader() -> Database? {
        guard job.options.threads >= 2, let database = destination?.database, !database.isInTransaction, (try? database.isInWALMode()) == true
        else { return nil }
        return try? database.queryOnlyReader(pageCacheKiB: Self.scanningPageCacheKiB)
    }

    /// The page cache of the second connections that scan each table once (the plan's, the
    /// validation's), in KiB: enough for a scan, so that a second connection adds little to the
    /// run's heap.
    static let scanningPageCacheKiB = 1024

    /// Removes Moult's own tables and leaves a store Core Data would open, as one file.
    package func finalize(_ plan: MigrationPlan, uuid: String) throws {
        guard let destination else { return }
        let database = destination.database
        if usesSQLFastPaths { try database.detach(EngineBulkCopy.attachedSource) }
        try database.write {
            // The policies' state, the checkpoint, the chunks recorded without associations, and every
            // mirror of associations (see `ToOnesAtInsert`), whichever run made it.
            try EngineWorkTables.dropAll(in: database)
            try EngineWorkTables.reclaimFreePages(in: database)
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
