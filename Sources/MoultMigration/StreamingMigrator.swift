import Crypto
public import Foundation
public import MoultMapping
public import MoultModel
import MoultAssociations
import MoultExpressions
import MoultStore
import MoultXMLStore

/// Runs one migration step (one source model, one destination model, one or more mapping models) in
/// chunks, checkpointed, into a new destination store.
///
/// The destination is built in a work directory beside the output (`<output>.moult/`): the partial
/// store, its checkpoint, and the association table. Each chunk commits its rows and its checkpoint in
/// one destination transaction, after its association transaction. When everything is written and
/// validated, the destination gets its metadata, is renamed into place atomically, and the work
/// directory is removed. Until then nothing exists at the output path.
///
/// A migration interrupted for any reason (killed, cancelled, disk full) resumes from its last
/// committed chunk when run again with the same source, models, mappings and options, and ends with a
/// store identical to that of a migration never interrupted: same objects, primary keys,
/// relationships and metadata. A work directory made for anything else is refused.
///
/// ```swift
/// let migrator = try StreamingMigrator(
///     source: storeURL, sourceModel: v2, destinationModel: v3, mappings: [mapping],
///     options: MigrationOptions(chunkSize: 10_000))
/// print(try migrator.plan())
/// let report = try migrator.run(output: destinationURL) { progress in print(progress.fraction) }
/// ```
public final class StreamingMigrator {
    /// What the engine migrates for this step.
    public private(set) var job: MigrationJob
    public var sourceURL: URL { job.sourceURL }
    public var sourceModel: ObjectModel { job.sourceModel }
    public var destinationModel: ObjectModel { job.destinationModel }
    public var mappingModels: [MappingModel] { job.mappingModels }
    public var policies: PolicyRegistry { job.policies }
    public var options: MigrationOptions { job.options }
    /// In place: the store whose support folder holds the external binary data files of this step's
    /// source (the step reads a copy in the work folder) and will hold its output's (the output is
    /// renamed to it). Files are then read there and not carried; nil: beside the source, carried beside
    /// the output (see ``ExternalDataCarrier``).
    var externalDataHome: URL? {
        get { job.externalDataHome }
        set { job.externalDataHome = newValue }
    }
    /// The source's content digest when the caller has just read it (a chain's first step, whose store
    /// the chain read for its run record): the run's start records it instead of reading the store again.
    /// A source written between the two reads is still refused, by the check before the rename.
    var knownSourceContent: StoreContentDigest?
    /// The store beside which the source's external files are.
    var externalDataSource: URL { job.externalDataSource }

    /// What a run did.
    public struct Report: Sendable {
        public var plan: MigrationPlan
        /// Whether the run continued an interrupted one.
        public var resumed: Bool
        /// Chunks executed by this run (a resumed run skips those already committed).
        public var chunksRun: Int
        /// Objects per destination entity (sub-entities counted on their own).
        public var objectCounts: [String: Int]
        public var validationFailures: Int
    }

    /// Prepares a step; nothing is read or written yet.
    public init(
        source: URL, sourceModel: ObjectModel, destinationModel: ObjectModel, mappings: [MappingModel],
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions()
    ) {
        job = MigrationJob(
            sourceURL: source, sourceModel: sourceModel, destinationModel: destinationModel, mappingModels: mappings, policies: policies,
            options: options)
    }

    // MARK: - Plan

    /// The plan: passes, chunks and estimated rows, computed from the source without migrating.
    public func plan() throws -> MigrationPlan {
        let source = try openSource()
        let session = try Session(job: job, source: source, destination: nil)
        return try session.makePlan()
    }

    // MARK: - Run

    /// Runs the step into `output`, resuming an interrupted run of the same step when one is found.
    ///
    /// - Parameters:
    ///   - output: where the finished store goes; must not exist.
    ///   - progress: called after every chunk.
    ///   - isCancelled: polled between chunks; when it returns true the run stops with an
    ///     ``/MoultEngine/MigrationError/Code/interrupted`` error, resumable.
    ///   - events: the run's ``/MoultEngine/MigrationEvent``s (plan, stages, chunks), as they happen.
    /// - Throws: ``/MoultEngine/MigrationError``: `.outputExists`, `.incompatibleStore`, `.invalidMapping`,
    ///   `.checkpointMismatch`, `.validationFailed`, `.interrupted` (resumable), or an underlying error.
    @discardableResult
    public func run(
        output: URL, progress: ((MigrationProgress) -> Void)? = nil, isCancelled: () -> Bool = { false },
        events: ((MigrationEvent) -> Void)? = nil
    ) throws -> Report {
        let emitter = EventEmitter(events: events, progress: progress)
        let paths = RunPaths(work: workDirectory(for: output), output: output)

        // One run per destination: a second one fails here, having touched nothing.
        let lock = try RunFolder.claim(output, purpose: "migrating into it")
        defer { lock.release() }
        try? FileOperations.removeTree(RunNames.removing(paths.work))
        let source = try openSource()
        // The source's identity, its content included: a resume, and the swap, go on only from the same store.
        var sourceState = try StoreFileState(of: sourceURL, content: knownSourceContent == nil)
        if let knownSourceContent { sourceState.content = knownSourceContent }
        let arguments = try job.fingerprintText(source: source)
        let fingerprint = RunArguments.hash(arguments)
        let mismatch = { self.mismatch(paths.work, arguments: arguments) }

        // A run that died after the destination was complete: finish the swap.
        if let report = try finishSwap(paths, source: source, fingerprint: fingerprint, sourceState: sourceState, mismatch: mismatch, emitter: emitter) {
            return report
        }
        guard !FileOperations.exists(output.path) else { throw outputExists(output) }

        // Resume, or start afresh.
        let destination: SQLiteStore
        var resumed = false
        switch try resumable(paths, fingerprint: fingerprint, sourceState: sourceState, mismatch: mismatch) {
        case .resume(let store):
            (destination, resumed) = (store, true)
        case .finalized:
            // Finalized, but the marker was not written: it is now; swap.
            return try run(output: output, progress: progress, isCancelled: isCancelled, events: events)
        case .startAgain:
            destination = try newDestination(paths, source: source, fingerprint: fingerprint, arguments: arguments, sourceState: sourceState)
        }
        return try migrate(
            into: destination, paths, source: source, fingerprint: fingerprint, sourceState: sourceState, resumed: resumed, emitter: emitter,
            isCancelled: isCancelled)
    }

    /// The files of a run into an output: the work directory, the partial destination in it, the
    /// marker of a finished destination.
    struct RunPaths {
        var work: URL
        var output: URL
        var partial: URL { work.appending(path: "destination.sqlite") }
        /// The step's run folder (its work folder, which a chain may place elsewhere than beside the output).
        var folder: RunFolder { RunFolder(target: output, kind: .output, work: work) }
        var marker: URL { work.appending(path: "finished") }
        /// The partial store being created, with its checkpoint, before it takes the partial's name.
        var creating: URL { work.appending(path: "destination.creating.sqlite") }
        /// The association table's folder.
        var associations: URL { work.appending(path: "associations") }
    }

    /// What a run finds of an earlier one in its work directory.
    enum Resumable {
        /// A destination with this run's checkpoint: resume it.
        case resume(SQLiteStore)
        /// A finished destination whose marker was not written: the marker is written now.
        case finalized
        /// Nothing to resume.
        case startAgain
    }

    /// Finishes the swap of a run that died after its destination was complete (its marker written);
    /// nil when there is no marker. The marker's run must be this one, and the source the one it read
    /// (``RunFolder/resumption(of:source:state:record:otherRun:)``): a destination made from another
    /// state of the source is never put in place.
    private func finishSwap(
        _ paths: RunPaths, source: any StoreReading, fingerprint: String, sourceState: StoreFileState, mismatch: () -> MigrationError,
        emitter: EventEmitter
    ) throws -> Report? {
        let (work, partial, marker, output) = (paths.work, paths.partial, paths.marker, paths.output)
        let manager = FileManager.default
        guard let data = FileOperations.contents(ofOwnFile: marker.path(percentEncoded: false)), let recorded = String(data: data, encoding: .utf8) else { return nil }
        let earlier = RunFolder.Earlier(work: .finished, sameArguments: recorded == fingerprint)
        guard try paths.folder.resumption(of: earlier, source: sourceURL, state: sourceState, otherRun: mismatch) == .finish else { return nil }
        if FileOperations.exists(partial.path) {
            guard !FileOperations.exists(output.path) else { throw outputExists(output) }
            try carryExternalData(of: partial, to: output, emitter: emitter)
            try rename(partial, to: output)
        }
        FaultInjection.reach(.afterRename)
        RunFolder.remove(work)
        let plan = try Session(job: job, source: source, destination: nil).makePlan(fingerprint: fingerprint)
        let finished = try SQLiteStore(url: output, model: destinationModel, mode: .readOnly, configuration: databaseConfiguration)
        defer { finished.database.close() }
        let counts = try Session.objectCounts(in: finished)
        return Report(plan: plan, resumed: true, chunksRun: 0, objectCounts: counts, validationFailures: 0)
    }

    /// Reads what an earlier run left in the work directory (a destination with this run's checkpoint,
    /// or another's; a finished one whose marker was not written; nothing to go on from) and lets the
    /// run folder's rule decide (``RunFolder/resumption(of:source:state:record:otherRun:)``): resume it,
    /// write the marker and swap, or start again. Another migration's work, or work made from another
    /// state of the source, is refused, never deleted.
    private func resumable(
        _ paths: RunPaths, fingerprint: String, sourceState: StoreFileState, mismatch: () -> MigrationError
    ) throws -> Resumable {
        let (partial, marker) = (paths.partial, paths.marker)
        guard FileOperations.exists(partial.path) else { return .startAgain }
        var earlier = RunFolder.Earlier(work: .none)
        // Whose work it is: its checkpoint's fingerprint, or, for a finished store (its checkpoint is
        // dropped when it is finalized), its plan-derived UUID.
        if let database = try? Database(url: partial, mode: .readOnly) {
            let hasCheckpoint = (try? database.tableExists(Checkpoint.table)) == true
            let recorded = hasCheckpoint ? try? Checkpoint.fingerprint(in: database) : nil
            database.close()
            if let recorded, recorded != fingerprint { earlier = RunFolder.Earlier(work: .underWay, sameArguments: false) }
            if !hasCheckpoint, let metadata = try? StoreMetadata(contentsOf: partial), metadata.storeUUID != Self.storeUUID(fingerprint) {
                earlier = RunFolder.Earlier(work: .finished, sameArguments: false)
            }
        }
        // A partial store that does not open as a Core Data store cannot hold a checkpoint (the store
        // and its checkpoint appear together, by a rename): nothing to go on from.
        var store: SQLiteStore?
        if earlier.sameArguments == nil, let opened = try? SQLiteStore(url: partial, model: destinationModel, mode: .readWrite, configuration: databaseConfiguration) {
            store = opened
            if try opened.database.tableExists(Checkpoint.table) {
                let recorded = try Checkpoint.fingerprint(in: opened.database)
                // (Associations kept in memory died with the process: nothing to go on from.)
                if recorded != fingerprint || options.associations != .memory {
                    earlier = RunFolder.Earlier(work: .underWay, sameArguments: recorded == fingerprint)
                }
            } else if try Self.isFinalized(opened, uuid: Self.storeUUID(fingerprint)) {
                earlier = RunFolder.Earlier(work: .finished, sameArguments: true)
            }
        }
        let decision: RunFolder.Resumption
        do {
            decision = try paths.folder.resumption(of: earlier, source: sourceURL, state: sourceState, otherRun: mismatch)
        } catch {
            store?.database.close()
            throw error
        }
        switch decision {
        case .resume:
            return .resume(store!)
        case .finish:
            // Finalized, but the marker was not written: write it and swap.
            store?.database.close()
            try writeMarker(marker, fingerprint: fingerprint)
            return .finalized
        case .startAfresh:
            store?.database.close()
            return .startAgain
        }
    }

    /// A new destination in a new work directory: the plan first (a mapping that does not compile or
    /// names a missing policy fails before anything is written), then the store and its checkpoint.
    private func newDestination(
        _ paths: RunPaths, source: any StoreReading, fingerprint: String, arguments: String, sourceState: StoreFileState
    ) throws -> SQLiteStore {
        let (work, partial) = (paths.work, paths.partial)
        // The plan first: a mapping that does not compile or names a missing policy fails here,
        // before anything is written.
        let plan = try Session(job: job, source: source, destination: nil).makePlan(fingerprint: fingerprint)
        RunFolder.remove(work)
        do {
            try FileOperations.makeDirectories(work.deletingLastPathComponent().path(percentEncoded: false))
            // A new folder of its own (never one a symbolic link at its name points to).
            try FileOperations.makeNewDirectory(work.path(percentEncoded: false))
        } catch {
            throw MigrationError(.io, "cannot create the work directory \(work.path): \(error)")
        }
        // Everything the run makes in the folder, recorded before it is made: what a removal removes.
        try paths.folder.recordEntries([
            RunArguments.fileName, paths.creating.lastPathComponent, partial.lastPathComponent, paths.marker.lastPathComponent, paths.associations.lastPathComponent,
        ])
        // What this run was given, for a later run with other arguments to name what differs.
        try FileOperations.writeAtomically(Data(arguments.utf8), to: work.appending(path: RunArguments.fileName), durable: options.durable)
        // The store and its checkpoint are made under another name and renamed together, so that a
        // store under the partial's name always has its checkpoint. The final UUID is written only
        // when the store is complete: a store holding it and no checkpoint is a finished one.
        let creating = paths.creating
        let metadata = StoreMetadata(model: destinationModel, storeUUID: Self.storeUUID("pending " + fingerprint))
        let created = try SQLiteStore.create(at: creating, model: destinationModel, metadata: metadata, configuration: databaseConfiguration)
        FaultInjection.reach(.storeCreated)
        try created.database.write {
            try created.database.createTables([Checkpoint.createSQL, PolicyState.createSQL])
            try Checkpoint.start(plan, in: created.database)
        }
        try created.database.checkpointWAL()
        created.database.close()
        try RunFiles.sync(creating)
        try paths.folder.write(RunFolder.sourceStateRecord, sourceState.text)
        try rename(creating, to: partial)
        return try SQLiteStore(url: partial, model: destinationModel, mode: .readWrite, configuration: databaseConfiguration)
    }

    /// Runs the plan into `store` from its checkpoint, validates, finishes and swaps it in.
    private func migrate(
        into store: SQLiteStore, _ paths: RunPaths, source: any StoreReading, fingerprint: String, sourceState: StoreFileState, resumed: Bool,
        emitter: EventEmitter, isCancelled: () -> Bool
    ) throws -> Report {
        let (work, partial, marker, output) = (paths.work, paths.partial, paths.marker, paths.output)
        try store.database.setSynchronous(options.durable ? .full : .off)

        let associations: any AssociationTable
        switch options.associations {
        case .lmdb:
            associations = try LMDBAssociationTable(directory: paths.associations, syncOnCommit: options.durable)
        case .memory:
            associations = InMemoryAssociationTable()
        }
        defer { associations.close() }

        let session: Session
        let plan: MigrationPlan
        var position: Checkpoint.Position
        do {
            session = try Session(job: job, source: source, destination: store, associations: associations)
            plan = try Checkpoint.plan(in: store.database)
            position = try Checkpoint.position(in: store.database)
        } catch {
            // A policy no longer registered: keep the progress of an interrupted run (the fix may be to
            // register the policy and resume); a fresh run has nothing worth keeping.
            store.database.close()
            associations.close()
            if !resumed { RunFolder.remove(work) }
            throw MigrationError.classifying(error)
        }

        // Another program writing to the source while it is read would give a destination that no state
        // of the source had: its files are looked at between chunks, and once more before the end.
        var sourceWritten: [String] = []
        let watchSource = {
            if sourceWritten.isEmpty, let now = try? StoreFileState(of: self.sourceURL) { sourceWritten = now.differences(from: sourceState) }
            return !sourceWritten.isEmpty
        }
        do {
            emitter.emit(.plan(MigrationEvent.Plan(plan: plan, resumed: resumed)))
            try warnAboutMissingInlinedFiles(session, emitter: emitter)
            let report: ((MigrationProgress) -> Void)? = emitter.isEmpty ? nil : { emitter.report($0) }
            let chunksRun: Int
            do {
                chunksRun = try session.execute(plan, from: &position, progress: report, isCancelled: { watchSource() || isCancelled() })
            } catch {
                // (The stop this check asked for is not the cause worth naming.)
                if watchSource() { throw sourceChangedWhileRead(sourceWritten, underlying: MigrationError.classifying(error).code == .interrupted ? nil : error) }
                throw error
            }
            let failures = try session.validateAndEnd(plan, position: &position, progress: report)
            if watchSource() { throw sourceChangedWhileRead(sourceWritten, underlying: nil) }
            // The cheap signs can miss an edit whose times were put back: the content decides, once more.
            let changed = try StoreFileState(of: sourceURL, content: true).differences(from: sourceState)
            if !changed.isEmpty { throw sourceChangedWhileRead(changed, underlying: nil) }
            FaultInjection.reach(.beforeFinish)
            emitter.enter(.finishing, total: plan.estimatedRows)
            try session.finalize(plan, uuid: Self.storeUUID(fingerprint))
            let counts = try session.objectCounts()
            store.database.close()
            try RunFiles.sync(partial)
            try writeMarker(marker, fingerprint: fingerprint)
            FaultInjection.reach(.afterMarker)
            try carryExternalData(of: partial, to: output, emitter: emitter)
            try rename(partial, to: output)
            FaultInjection.reach(.afterRename)
            associations.close()
            RunFolder.remove(work)
            emitter.enter(.done, total: plan.estimatedRows)
            return Report(plan: plan, resumed: resumed, chunksRun: chunksRun, objectCounts: counts, validationFailures: failures)
        } catch {
            var failure = MigrationError.classifying(error)
            // LMDB on some filesystems (tmpfs among them) reports a full disk as EIO from its commit:
            // an I/O error while the work directory's filesystem has no room left is a full disk.
            if failure.category == .io, RunFiles.isNearlyFull(work) {
                failure = MigrationError(
                    .interrupted, "the disk is full; free some space and run the same command again to resume", underlying: error)
            }
            // Close in every case (rolling back an unfinished chunk), so that a run resumed in this
            // same process finds the destination unlocked.
            store.database.close()
            associations.close()
            if (failure.category != .interrupted && failure.category != .io) || failure.code == .sourceChangedWhileRead {
                // Nothing a resume could fix: leave nothing behind.
                RunFolder.remove(work)
            }
            throw failure
        }
    }

    /// Whether `output` is the finished store of this step: a store whose UUID is the one this step
    /// derives from its plan (any other file at `output` is not ours to skip or overwrite).
    func isFinishedOutput(_ output: URL) -> Bool {
        guard let metadata = try? StoreMetadata(contentsOf: output), let source = try? openSource(),
            let fingerprint = try? fingerprint(source: source)
        else { return false }
        SourceStore.close(source)
        return metadata.storeUUID == Self.storeUUID(fingerprint)
    }

    /// The work directory of a run into `output`.
    public func workDirectory(for output: URL) -> URL {
        options.workDirectory ?? RunNames.work(forOutput: output)
    }

    // MARK: - Helpers

    var databaseConfiguration: Database.Configuration {
        Database.Configuration(pageCacheKiB: options.pageCacheKiB, maxValueBytes: options.maxValueBytes)
    }

    /// The source, of either store type (see `SourceStore`): an XML store is read directly, through its index.
    private func openSource() throws -> any StoreReading {
        let metadata = try SourceStore.metadata(of: sourceURL)
        let differences = sourceModel.hashDifferences(from: metadata.entityHashes)
        guard differences.isEmpty else {
            throw MigrationError(
                .incompatibleStore,
                "the store \(sourceURL.path) was not made with the source model of this mapping:\n  "
                    + differences.map(\.description).joined(separator: "\n  "))
        }
        return try SourceStore.open(sourceURL, model: sourceModel, configuration: databaseConfiguration)
    }

    func fingerprint(source: any StoreReading) throws -> String { try job.fingerprint(source: source) }

    /// The destination's store UUID, derived from the plan so that a resumed run and an uninterrupted
    /// one write the same metadata.
    static func storeUUID(_ fingerprint: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(("store-uuid " + fingerprint).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return uuid.uuidString
    }

    static func isFinalized(_ store: SQLiteStore, uuid: String) throws -> Bool {
        (try? store.metadata().storeUUID) == uuid
    }

    /// The refusal of another run's work, naming what differs when that run recorded its arguments.
    private func mismatch(_ work: URL, arguments: String) -> MigrationError {
        MigrationError(
            .checkpointMismatch,
            "the work directory \(work.path) holds a migration with \(RunArguments.sentence(recorded: RunArguments.recorded(in: work), current: arguments)); "
                + "run again with that run's arguments to finish it, or give it up with `moult abandon` on the output (in place: on the store)")
    }

    private func sourceChangedWhileRead(_ changes: [String], underlying: (any Error)?) -> MigrationError {
        MigrationError(
            .sourceChangedWhileRead,
            "another program wrote to the source \(sourceURL.path) while it was read (\(changes.joined(separator: ", "))): "
                + "no destination was made, since it would hold no state the source ever had; run again when nothing writes to it "
                + "(quit the app, or migrate a copy)",
            underlying: underlying)
    }

    private func outputExists(_ output: URL) -> MigrationError {
        MigrationError(.outputExists, "\(output.path) already exists; Moult never overwrites a store")
    }

    private func writeMarker(_ marker: URL, fingerprint: String) throws {
        do {
            try FileOperations.writeAtomically(Data(fingerprint.utf8), to: marker, durable: true)
        } catch {
            throw MigrationError(.io, "cannot write \(marker.path): \(error)")
        }
    }

    private func rename(_ from: URL, to: URL) throws {
        do {
            try FileOperations.rename(from.path(percentEncoded: false), to: to.path(percentEncoded: false), durable: true)
        } catch {
            throw MigrationError(.io, "cannot move the finished store to \(to.path) (\(error.message)); it is in \(from.path)")
        }
    }

}

@available(*, unavailable)
extension StreamingMigrator: Sendable {}
