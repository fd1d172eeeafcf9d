import Crypto
public import Foundation
public import MoultMapping
public import MoultModel
import MoultStore
import MoultXMLStore

/// Migrates a store from whichever version of a versioned model made it to a target version: each
/// mapping model given is one step (or a pass of one), and each stretch between them is inferred by
/// Core Data's lightweight rules, directly across when it can be (as Core Data's automatic migration
/// does), else in several steps (progressive migration, v1 → v2 → v3).
///
/// Each step is a ``StreamingMigrator`` run into an intermediate store in `<output>.moult-steps/`
/// (the last one straight into the output), so an interrupted chain resumes at the step it was in,
/// from that step's last chunk. The intermediate stores are removed when the chain is done.
///
/// ```swift
/// let migration = try ProgressiveMigration(store: url, model: people, to: "v3", mappings: [])
/// for step in migration.steps { print(step.from, "->", step.to, step.inferred ? "(inferred)" : "") }
/// try migration.run(output: destination)
/// ```
public struct ProgressiveMigration {
    /// One step of the chain.
    public struct Step: Sendable {
        public var from: VersionedModel.Version
        public var to: VersionedModel.Version
        /// The mapping models of the step: one, or several run as successive passes into the same
        /// destination (Core Data's "multiple passes" recipe), in the order given.
        public var mappings: [MappingModel]
        /// Whether the mapping was inferred rather than given.
        public var inferred: Bool
        /// What names each of ``mappings`` in messages (the file it was read from, when given).
        public var mappingLabels: [String] = []
        /// For an inferred step that is one of several across a stretch without a given mapping: why
        /// the stretch was not inferred directly (the stretch, and the problems of the direct inference).
        public var chainedInference: String?
        /// What the inference warns about (an optional attribute that becomes required without a
        /// default: the objects whose value is nil fail validation).
        public var warnings: [MappingIssue] = []

        /// The step's (first) mapping model.
        public var mapping: MappingModel { mappings[0] }

        /// What the step does not carry from its source model (whole entities, attributes,
        /// relationships), without counting.
        public var uncarried: [UncarriedData] { MappingModel.uncarried(by: mappings, source: from.model, destination: to.model) }
    }

    public let store: URL
    public let model: VersionedModel
    /// The version that made the store.
    public let sourceVersion: VersionedModel.Version
    public let targetVersion: VersionedModel.Version
    /// The chain, planned once: its steps and how each runs in place.
    public let chainPlan: ChainPlan
    /// The steps (the chain plan's); empty when the store is already at the target version (``isUpToDate``).
    public var steps: [Step] { chainPlan.steps }
    public var policies: PolicyRegistry
    public var options: MigrationOptions

    /// Whether the store is already at the target version: there is nothing to migrate, and ``run(output:resume:progress:isCancelled:losses:events:)``
    /// writes nothing.
    public var isUpToDate: Bool { steps.isEmpty }

    /// Finds the store's version and the steps to `target` (the model's current version when nil).
    ///
    /// How the chain is made:
    /// - Each mapping model given is matched to the versions it connects by content
    ///   (``/MoultMapping/MappingModel/matchingVersions(_:in:)``: entity version hashes when it records them, else
    ///   its version names and the entities and properties it names). It may connect versions that
    ///   are not adjacent, and may go to an older version.
    /// - Every mapping given is used by exactly one step (mappings connecting the same two versions
    ///   are passes of one step), or the migration is refused: one that fits no version, or connects
    ///   versions off the way from the store to the target, or against its direction.
    /// - Each stretch with no given mapping (from the store's version to the first given mapping,
    ///   between given mappings, and from the last to the target) is inferred directly across, as Core
    ///   Data's lightweight migration does; only when that is impossible, it is inferred in several
    ///   steps, each as long as a search finds that tries inference only on the edges it explores
    ///   (about 2 log₂ n inferences a step of n versions; ``Step/chainedInference`` says why).
    ///
    /// - Parameters:
    ///   - store: the store to migrate, SQLite or XML (an XML store is read directly by the streamed
    ///     steps, through its index); only its metadata is read here.
    ///   - model: the versioned model, with the store's version among its versions.
    ///   - target: the target version's name; nil for the model's current version.
    ///   - mappings: the mapping models given, each one step (or a pass of one).
    ///   - policies: the policies the mappings name.
    ///   - options: chunk size, association storage, durability and the engine's switches.
    ///   - mappingLabels: What names each mapping in messages (its file), in the order of `mappings`.
    /// - Throws: ``/MoultEngine/MigrationError`` `.incompatibleStore` when no version matches the store (with each
    ///   version's differences), `.unusableMapping` when a given mapping fits no step (naming it and
    ///   why), `.noMigrationPath` when the target does not exist or a stretch cannot be inferred (with
    ///   the reasons), `.invalidMapping` when a given mapping does not fit its models.
    public init(
        store: URL, model: VersionedModel, to target: String? = nil, mappings: [MappingModel] = [],
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions(), mappingLabels: [String] = []
    ) throws {
        self.store = store
        self.model = model
        self.policies = policies
        self.options = options
        let metadata = try SourceStore.metadata(of: store)
        guard let source = model.version(matchingEntityHashes: metadata.entityHashes) else {
            throw MigrationError(
                .incompatibleStore,
                "no version of \(model.name) matches the store \(store.path):\n" + model.versionDifferences(from: metadata.entityHashes))
        }
        sourceVersion = source
        let targetVersion = try target.map { name in
            guard let version = model.version(named: name) else {
                throw MigrationError(
                    .noMigrationPath, "the model has no version '\(name)' (versions: \(model.versions.map(\.name).joined(separator: ", ")))")
            }
            return version
        } ?? model.current
        self.targetVersion = targetVersion
        let labels = mappings.indices.map { $0 < mappingLabels.count ? mappingLabels[$0] : "mapping \($0 + 1)" }
        chainPlan = ChainPlan(steps: try Self.chain(model: model, from: source, to: targetVersion, mappings: mappings, labels: labels))
    }

    /// The migrator of each step, given the store it reads.
    public func migrator(for step: Step, source: URL) -> StreamingMigrator {
        migrator(for: step, source: source, runRecord: nil)
    }

    /// The migrator of a step whose output records `runRecord` (the chain's last step: its identity).
    func migrator(for step: Step, source: URL, runRecord: String?) -> StreamingMigrator {
        var options = self.options
        options.runRecord = runRecord
        return StreamingMigrator(
            source: source, sourceModel: step.from.model, destinationModel: step.to.model, mappings: step.mappings,
            policies: policies, options: options)
    }

    /// Where the intermediate stores of a run into `output` live.
    public func stepsDirectory(for output: URL) -> URL {
        RunNames.steps(forOutput: output)
    }

    /// Runs every step; resumes an interrupted chain. A store already at the target version
    /// (``isUpToDate``) is left alone: nothing is written and no report is returned.
    ///
    /// - Parameters:
    ///   - output: the destination store; it must not exist, unless `resume` finds it is this migration's.
    ///   - resume: the caller means to finish an earlier run: an output that is exactly the finished
    ///     store of this migration (its plan-derived UUID says so) is then accepted as done, as when the
    ///     earlier run was killed after its last step but before it could report.
    ///   - progress: called after every chunk, with the step number.
    ///   - isCancelled: asked at chunk boundaries; true stops the run, resumable (`.interrupted`).
    ///   - losses: called before each step runs, with the step's number (1-based) and what it does not
    ///     carry, counted in the store it reads.
    ///   - events: the run's ``/MoultEngine/MigrationEvent``s, ending with `finished` or `failed` (a warning event
    ///     for each step that does not carry some data).
    /// - Returns: each step's report.
    /// - Throws: ``/MoultEngine/MigrationError``. A refused run (a missing policy, a work directory of another
    ///   migration, a validation failure) leaves no work directory it made behind; only a resumable
    ///   failure (interrupted, I/O) keeps them, for the next run.
    @discardableResult
    public func run(
        output: URL, resume: Bool = false, progress: ((MigrationProgress) -> Void)? = nil, isCancelled: () -> Bool = { false },
        losses: ((_ step: Int, _ losses: [DataLoss]) -> Void)? = nil, events: ((MigrationEvent) -> Void)? = nil
    ) throws -> [StreamingMigrator.Report] {
        guard let events else {
            return try runSteps(output: output, resume: resume, progress: progress, isCancelled: isCancelled, losses: losses, events: nil)
        }
        let start = ContinuousClock.now
        let seconds = { (ContinuousClock.now - start) / .seconds(1) }
        do {
            let reports = try runSteps(output: output, resume: resume, progress: progress, isCancelled: isCancelled, losses: losses, events: events)
            let outcome: MigrationEvent.Finished.Outcome = steps.isEmpty ? .alreadyCurrent : .migrated
            events(.finished(MigrationEvent.Finished(outcome: outcome, objects: reports.last?.objectCounts ?? [:], resumed: reports.contains(where: \.resumed), seconds: seconds())))
            return reports
        } catch {
            events(.failed(MigrationEvent.Failure(error, seconds: seconds())))
            throw error
        }
    }

    private func runSteps(
        output: URL, resume: Bool, progress: ((MigrationProgress) -> Void)?, isCancelled: () -> Bool,
        losses: ((_ step: Int, _ losses: [DataLoss]) -> Void)?, events: ((MigrationEvent) -> Void)?
    ) throws -> [StreamingMigrator.Report] {
        guard !steps.isEmpty else { return [] }
        // Every policy first: a missing one refuses the run before anything is made.
        try checkPolicies()
        // One run per destination: a second one fails here (busy), having touched nothing. (The last
        // step's migrator takes the same lock again, on this thread.)
        let lock = try RunFolder.claim(output, purpose: "migrating into it")
        defer { lock.release() }
        // A rerun of a finished migration with the same arguments, of the source as it was: its output
        // says so, nothing is written.
        let content = try sourceContent()
        let record = try runRecord(content: content)
        if isFinishedOutput(output, record: record) { return [] }
        let (directory, existed) = try claimStepsDirectory(for: output, resume: resume)
        let folder = RunFolder.steps(output)
        var loop = ChainLoop(
            chain: self, folder: folder,
            streamedResult: { offset in offset == steps.count - 1 ? output : RunNames.chainStep(number: offset + 1, to: steps[offset].to.name, in: directory) },
            sqlResult: { offset in offset == steps.count - 1 ? output : RunNames.chainStep(number: offset + 1, to: steps[offset].to.name, in: directory) })
        loop.lastRunRecord = record
        loop.sourceContent = content
        // The output is this migration's finished result when it records this run (these arguments, this content of the source).
        loop.isFinishedByDriver = { offset, result in
            offset == steps.count - 1 && (try? StoreMetadata(contentsOf: result).runRecord) == record
        }
        // An intermediate store may be made by SQL (an XML input is streamed: the SQL works on an SQLite store's copy).
        loop.script = { offset, input in
            guard offset < steps.count - 1, options.intermediateStepsBySQL, !SourceStore.isXML(input),
                case .sql(let script)? = try? chainPlan.inPlaceMethod(ofStep: offset)
            else { return nil }
            return script
        }
        var current = 0
        loop.willRun = { offset, input in
            current = offset
            reportLosses(of: steps[offset], offset: offset, in: input, losses: losses, events: events)
        }
        let outcome: ChainLoop.Outcome
        do {
            if steps.count > 1 {
                // The source's state when the chain began: a rerun never goes on from intermediate stores
                // made from another state of it (its content decides, not its times).
                var state = try StoreFileState(of: store)
                state.content = content
                try folder.beginOrResume(current: state, source: store)
            }
            outcome = try loop.run(progress: progress, isCancelled: isCancelled, events: events)
        } catch {
            throw failure(error, inStep: current, directory: directory, existed: existed)
        }
        RunFolder.remove(directory)
        return outcome.reports.map(\.report)
    }

    /// Claims the folder of a chain's intermediate stores for this run: a folder a killed run left
    /// before recording its chain is taken, one of another chain refused; an output already there is
    /// refused unless a run under way or asked to resume may own it; the folder and its chain's
    /// fingerprint are made for a chain of several steps.
    ///
    /// - Returns: the folder, and whether it was there.
    /// - Throws: ``/MoultEngine/MigrationError`` `.checkpointMismatch` (another chain's folder), `.outputExists`, `.io`.
    private func claimStepsDirectory(for output: URL, resume: Bool) throws -> (directory: URL, existed: Bool) {
        let manager = FileManager.default
        // The last step's migrator refuses an existing output, unless its own work directory says the
        // output is its finished result.
        let directory = stepsDirectory(for: output)
        let identity = directory.appending(path: "chain")
        let arguments = try chainFingerprintText()
        let fingerprint = RunArguments.hash(arguments)
        var existed = FileOperations.exists(directory.path)
        if steps.count > 1 && existed && !FileOperations.exists(identity.path) {
            // A run killed between making the folder and recording its chain there: the identity is
            // written before any step runs, so such a folder holds no work (at most the identity's own
            // temporary file). It is this run's to take.
            let entries = FileOperations.names(in: directory.path) ?? []
            if !entries.contains(where: { $0.hasSuffix(".sqlite") || $0.hasSuffix(RunNames.workSuffix) }) {
                RunFolder.remove(directory)
                existed = false
            }
        }
        if steps.count > 1 && existed {
            // The folder of another chain (another source, model, mappings or options) holds that
            // chain's resumable work: refuse rather than delete it.
            let recorded = FileOperations.contents(ofOwnFile: identity.path(percentEncoded: false)).flatMap { String(data: $0, encoding: .utf8) }
            guard recorded == fingerprint else {
                throw MigrationError(
                    .checkpointMismatch,
                    "\(directory.path) holds the work of a migration with \(RunArguments.sentence(recorded: RunArguments.recorded(in: directory), current: arguments)); "
                        + "run again with that run's arguments to finish it, or give it up with `moult abandon \(output.path)`")
            }
        }
        // Only a chain already under way may find its last step done (killed after that step's
        // cleanup, before the chain's); a single step always runs, so an existing output is refused.
        let chainUnderWay = steps.count > 1 && existed
        // An output already there is refused before any step runs (the last step would refuse it only
        // after the others), unless a run under way or asked to resume may own it.
        let lastWork = migrator(for: steps[steps.count - 1], source: store).workDirectory(for: output)
        if !resume, !chainUnderWay, FileOperations.exists(output.path), !FileOperations.exists(lastWork.path) {
            throw MigrationError(.outputExists, "\(output.path) already exists; Moult never overwrites a store")
        }
        if steps.count > 1 && !existed {
            let folder = RunFolder.steps(output)
            do {
                try folder.make()
                try folder.write(RunArguments.fileName, arguments)
                try folder.write(identity.lastPathComponent, fingerprint)
            } catch {
                folder.remove()
                throw MigrationError(.io, "cannot create \(directory.path): \(error.localizedDescription)")
            }
        }
        return (directory, existed)
    }

    /// Tells `losses` and `events` what a step does not carry, counted in the store it reads.
    private func reportLosses(
        of step: Step, offset: Int, in input: URL, losses: ((_ step: Int, _ losses: [DataLoss]) -> Void)?, events: ((MigrationEvent) -> Void)?
    ) {
        guard losses != nil || events != nil else { return }
        let found = dataLosses(of: step, in: input)
        losses?(offset + 1, found)
        if let events, !found.isEmpty {
            let what = found.map { loss in loss.what.property.map { "\(loss.what.entity).\($0)" } ?? loss.what.entity }
            events(.warning(MigrationEvent.Warning(
                step: offset + 1, message: "step \(offset + 1) (\(step.from.name) -> \(step.to.name)) does not carry: \(what.joined(separator: ", "))",
                notCarried: found)))
        }
    }

    /// What a chain's run throws when step `current` fails: the error classified, naming the step in
    /// a chain. A failure a resume could not fix leaves no work folder behind, nor does another
    /// migration's work found by a chain whose folder this run made.
    private func failure(_ error: any Error, inStep current: Int, directory: URL, existed: Bool) -> MigrationError {
        var failure = MigrationError.classifying(error)
        if steps.count > 1 {
            let step = steps[current]
            failure.message = "step \(current + 1) of \(steps.count) (\(step.from.name) → \(step.to.name)): " + failure.message
            if failure.code == .validationFailed, current > 0 {
                failure.message += " (the source objects named are those of the store step \(current) made, at \(step.from.name))"
            }
        }
        if steps.count > 1, failure.category != .interrupted, failure.category != .io, failure.code != .checkpointMismatch,
            failure.code != .sourceChanged || !existed
        {
            // Nothing a resume could fix: leave nothing behind.
            RunFolder.remove(directory)
        } else if steps.count > 1, !existed, failure.code == .checkpointMismatch {
            // A step found another migration's work at its own work folder (the last step's is
            // beside the output): the chain folder made by this run holds only this run's work.
            RunFolder.remove(directory)
        }
        return failure
    }

    // MARK: - Intermediate stores by SQL

    /// Checks that every policy the steps' mappings name can be had (registered, bound, or built in,
    /// and a built-in one fits its step's models), before anything runs.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.missingPolicy` naming every missing policy with its step and
    ///   entity mapping; the first other error of ``/MoultEngine/PolicyRegistry/resolve(_:source:destination:)``
    ///   (a built-in policy that cannot be read or does not fit), with its step.
    public func checkPolicies() throws {
        var missing: [(step: Int, error: MigrationError)] = []
        for (offset, step) in steps.enumerated() {
            for mapping in step.mappings.flatMap(\.orderedEntityMappings) {
                do {
                    _ = try policies.resolve(mapping, source: step.from.model, destination: step.to.model)
                } catch var error as MigrationError {
                    guard error.code == .missingPolicy else {
                        if steps.count > 1 { error.message = "step \(offset + 1) (\(step.from.name) → \(step.to.name)): " + error.message }
                        throw error
                    }
                    missing.append((offset, error))
                }
            }
        }
        guard var first = missing.first?.error else { return }
        if missing.count > 1 || steps.count > 1 {
            first.message = missing.map { item in
                "step \(item.step + 1) (\(steps[item.step].from.name) → \(steps[item.step].to.name)), entity mapping \(item.error.mapping ?? "?"): \(item.error.message)"
            }.joined(separator: "\n  ")
        }
        throw first
    }

    /// Identifies a chain: the source store, the steps with their mappings, and the options.
    /// What the output of this migration records (``/MoultEngine/MigrationOptions/runRecord``): the
    /// chain's fingerprint and the source's content (``/MoultStore/StoreContentDigest``), the same for
    /// every run of these arguments on this state of the store, so that outputs stay identical, and
    /// another for any other state of it, whatever its times say.
    func runRecord() throws -> String { try runRecord(content: sourceContent()) }

    func runRecord(content: StoreContentDigest) throws -> String {
        RunArguments.hash(try chainFingerprintText() + "source-content \(content.hex)\n")
    }

    /// The source's content digest, read once a run (one pass over the store's pages).
    func sourceContent() throws -> StoreContentDigest {
        do { return try StoreContentDigest(of: store) } catch { throw MigrationError.classifying(error) }
    }

    /// Whether `output` is the finished result of this migration (its metadata holds `record`, see
    /// ``runRecord()``: these arguments, this content of the source), and no run into it is under way.
    func isFinishedOutput(_ output: URL, record: String) -> Bool {
        let manager = FileManager.default
        guard FileOperations.exists(output.path), !FileOperations.exists(stepsDirectory(for: output).path),
            !FileOperations.exists(migrator(for: steps[steps.count - 1], source: store).workDirectory(for: output).path),
            let recorded = try? StoreMetadata(contentsOf: output).runRecord
        else { return false }
        return recorded == record
    }

    /// Whether `output`, an XML store, is the finished result of this migration: its metadata holds
    /// this run's record (`runRecord()`: these arguments, this content of the source), carried from
    /// the SQLite store it was written from.
    public func isFinished(xmlOutput output: URL) -> Bool {
        guard let recorded = try? XMLStoreReader(url: output).info.storeMetadata().runRecord, let record = try? runRecord() else { return false }
        return recorded == record
    }

    func chainFingerprint() throws -> String { RunArguments.hash(try chainFingerprintText()) }

    /// The text ``chainFingerprint()`` hashes (see ``/MoultEngine/RunArguments``).
    func chainFingerprintText() throws -> String {
        let metadata = try SourceStore.metadata(of: store)
        var text = "moult-chain/1\nsource \(metadata.storeUUID)\n"
        for (name, hash) in metadata.entityHashes.sorted(by: { $0.key < $1.key }) { text += "source-hash \(name) \(hash.hex)\n" }
        for step in steps {
            text += "step \(step.from.name) \(step.to.name)\n"
            for (name, hash) in step.to.model.entityVersionHashes().sorted(by: { $0.key < $1.key }) { text += "hash \(name) \(hash.hex)\n" }
            for mapping in step.mappings { text += "mapping \(mapping.jsonText())\n" }
        }
        text += "chunk-size \(options.chunkSize)\nassociations \(options.associations.rawValue)\nvalidate \(options.validate)\n"
        for partition in options.partitions { text += "partition \(partition)\n" }
        for (name, binding) in policies.boundNames { text += "policy \(name)=\(binding)\n" }
        return text
    }

    // MARK: - Data a step does not carry

    /// What a step does not carry, counted in the store it reads (`source`); the counts are nil when
    /// that store cannot be read (a later step's input before the steps before it have run).
    public func dataLosses(of step: Step, in source: URL?) -> [DataLoss] {
        let uncarried = step.uncarried
        guard !uncarried.isEmpty else { return [] }
        guard let source, FileOperations.exists(source.path),
            let opened = try? SourceStore.open(source, model: step.from.model, configuration: .init())
        else { return uncarried.map { DataLoss(what: $0, count: nil) } }
        defer { SourceStore.close(opened) }
        guard let sqlite = opened as? SQLiteStore else { return uncarried.map { DataLoss(what: $0, count: try? Self.count($0, reading: opened)) } }
        return uncarried.map { DataLoss(what: $0, count: try? Self.count($0, in: sqlite)) }
    }

    /// What ``count(_:in:)`` counts, in a store without SQL (an XML store): its objects read one by one.
    static func count(_ what: UncarriedData, reading store: any StoreReading) throws -> Int? {
        guard let entity = store.layout.entity(named: what.entity) else { return nil }
        guard let property = what.property, what.kind != .entity else { return try store.count(of: entity.name, includingSubentities: false) }
        let isToMany = entity.toMany(named: property) != nil
        guard isToMany || entity.attribute(named: property) != nil || entity.toOne(named: property) != nil else { return nil }
        let cursor = try store.objects(of: entity.name, includingSubentities: false, after: 0, through: nil, batchSize: 500)
        var (count, keys) = (0, [Int64]())
        func countRelated() throws {
            count += try store.toManyDestinations(property, of: entity.name, sources: keys).count
            keys.removeAll(keepingCapacity: true)
        }
        while let row = try cursor.next() {
            if !isToMany {
                if let value = row[property], !value.isNull { count += 1 }
                continue
            }
            keys.append(row.id.primaryKey)
            if keys.count == 500 { try countRelated() }
        }
        if !keys.isEmpty { try countRelated() }
        return count
    }

    /// How many objects (for an entity) or non-nil values (for a property) a store holds.
    static func count(_ what: UncarriedData, in store: SQLiteStore) throws -> Int? {
        guard let entity = store.layout.entity(named: what.entity) else { return nil }
        let counted: UncarriedCount
        switch what.kind {
        case .entity:
            counted = .objects
        case .attribute:
            guard let column = entity.attributes.first(where: { $0.name == what.property }) else { return nil }
            counted = .values(column: column.column)
        case .relationship:
            if let column = entity.toOneRelationships.first(where: { $0.name == what.property }) {
                counted = .values(column: column.column)
            } else if let toMany = entity.toManyRelationships.first(where: { $0.name == what.property }) {
                counted = .withDestinations(toMany.storage)
            } else {
                return nil
            }
        }
        return try store.database.count(counted, of: entity)
    }
}
