import Crypto
public import Foundation
import MoultMapping
public import MoultModel
import MoultExpressions
import MoultStore

/// Migrates a store in place through stages, as Core Data's `NSStagedMigrationManager` does: lightweight
/// stages (versions migrated one to the next by inference) and custom stages (one step, by a mapping
/// model or inference, with a `willMigrate` handler run at the old version before it and a `didMigrate`
/// handler at the new version after it).
///
/// Everything is checked before anything is written (``init(store:model:stages:policies:options:keepsBackup:)``).
/// Each step runs as ``InPlaceMigration`` runs it (by SQL in one transaction when it can, else streamed
/// and swapped in); each handler's work is committed chunk by chunk. Where the migration is lives in the
/// store's metadata (``recordKey``), committed with each chunk, so a run killed at any instant, inside a
/// handler included, is resumed by running it again, and ends with the store an uninterrupted run makes.
///
/// ```swift
/// let migration = try StagedMigration(store: url, model: model, stages: [
///     .custom(from: "v1", to: "v2", willMigrate: StageHandler(operations: [
///         .update(entity: "Attachment", where: "dateCreated == nil", set: ["dateCreated": "now()"]),
///     ])),
/// ])
/// try migration.run()
/// ```
public struct StagedMigration {
    /// The metadata key of the record of a staged migration under way.
    public static let recordKey = "MoultStagedMigration"

    /// A stage, checked and resolved against the model.
    public struct PlannedStage: Sendable {
        public var stage: Stage
        /// "stage N" or the stage's label.
        public var label: String
        /// The versions the stage goes through: a lightweight stage's list; a custom stage's two.
        public var versions: [VersionedModel.Version]
        /// The stage's steps, one per pair of consecutive versions.
        public var steps: [ProgressiveMigration.Step]
        public var isCustom: Bool { if case .custom = stage.kind { true } else { false } }
        public var willMigrate: StageHandler? { if case .custom(let custom) = stage.kind { custom.willMigrate } else { nil } }
        public var didMigrate: StageHandler? { if case .custom(let custom) = stage.kind { custom.didMigrate } else { nil } }
    }

    /// What a run did.
    public struct Report: Sendable {
        /// The stages run (or finished) by this run, by index.
        public var stagesRun: [Int] = []
        /// Whether the run resumed an interrupted one.
        public var resumed = false
        /// Objects the handlers' chunks read.
        public var handlerObjects = 0
        /// Where the original was kept, if it was.
        public var backup: URL?
    }

    /// Where a run is, for a progress display.
    public struct Progress: Sendable {
        public var stage: Int
        public var stages: Int
        /// `willMigrate`, `didMigrate` or `step from → to`.
        public var activity: String
        /// Objects read so far by the current handler (0 for a step).
        public var objects: Int
    }

    public let store: URL
    public let model: VersionedModel
    public let stages: [PlannedStage]
    /// The version the store is at now.
    public let storeVersion: VersionedModel.Version?
    public var policies: PolicyRegistry
    public var options: MigrationOptions
    /// Keep the original as `NAME~.EXT` (made before anything is written).
    public var keepsBackup: Bool
    public var lockTimeout: Duration = .milliseconds(500)
    /// What `now()` gives in the handlers (``StageStore/now``): by default the instant the first run
    /// starts, recorded with the checkpoint so that a resumed run uses the same one.
    public var startDate: Date?
    let record: StagedRecord?
    let fingerprint: String

    /// The version the last stage ends at.
    public var targetVersion: VersionedModel.Version { stages[stages.count - 1].versions.last! }

    /// Whether the store is already at the last stage's version with no run under way: ``run(progress:isCancelled:)`` does nothing.
    public var isUpToDate: Bool { record == nil && storeVersion?.name == targetVersion.name }

    /// Whether a run was interrupted and this one resumes it.
    public var isResuming: Bool { record != nil }

    /// Checks the stages against the model and the store; nothing is written.
    ///
    /// - Throws: ``/MoultEngine/MigrationError``: what ``plan(_:model:policies:)`` throws; `.incompatibleStore` when
    ///   the store's version is not one a stage starts from (nor the last); `.checkpointMismatch` when
    ///   the store is in the middle of another staged migration.
    public init(
        store: URL, model: VersionedModel, stages: [Stage], policies: PolicyRegistry = PolicyRegistry(),
        options: MigrationOptions = MigrationOptions(), keepsBackup: Bool = true
    ) throws {
        self.store = store
        self.model = model
        self.policies = policies
        self.options = options
        self.keepsBackup = keepsBackup
        self.stages = try Self.plan(stages, model: model, policies: policies)
        fingerprint = Self.fingerprint(self.stages, model: model)
        let metadata = try StoreMetadata(contentsOf: store)
        storeVersion = model.version(matchingEntityHashes: metadata.entityHashes)
        if let value = metadata.additionalKeys[Self.recordKey] {
            guard let record = StagedRecord(value), record.stage < self.stages.count else {
                throw MigrationError(.checkpointMismatch, "the store's metadata key \(Self.recordKey) is not a staged-migration record Moult writes")
            }
            guard record.fingerprint == fingerprint else {
                throw MigrationError(
                    .checkpointMismatch,
                    "\(store.path) is in the middle of another staged migration (other stages, versions, mappings or handlers): finish it with its own stages, or restore the original kept as \((record.backup.map { URL(filePath: $0) } ?? RunNames.backup(of: store)).lastPathComponent)")
            }
            self.record = record
        } else {
            record = nil
            guard let storeVersion else {
                throw MigrationError(
                    .incompatibleStore,
                    "no version of \(model.name) matches the store \(store.path):\n" + model.versionDifferences(from: metadata.entityHashes))
            }
            if storeVersion.name != self.stages.last!.versions.last!.name && Self.start(of: storeVersion, in: self.stages) == nil {
                let path = self.stages.flatMap(\.versions).map(\.name)
                throw MigrationError(
                    .incompatibleStore,
                    "the store is at version \(storeVersion.name), which no stage migrates from (the stages go \(Self.unique(path).joined(separator: " → ")))")
            }
        }
    }

    /// Rolls back the unfinished transaction of a run killed while it wrote the store (its hot
    /// `-journal`, in rollback-journal mode), as a read-write connection does on its first read, so
    /// that the read-only reads of ``init(store:model:stages:policies:options:keepsBackup:)`` see the
    /// store as its last commit left it. Does nothing when no `-journal` is beside the store.
    ///
    /// ```swift
    /// try StagedMigration.rollBackUnfinishedTransaction(of: url)
    /// let migration = try StagedMigration(store: url, model: model, stages: stages)
    /// ```
    ///
    /// - Throws: `StoreError` when the store cannot be opened for writing (locked by
    ///   another process, read-only).
    public static func rollBackUnfinishedTransaction(of store: URL, timeout: Duration = .milliseconds(500)) throws {
        guard FileOperations.exists(store.path + "-journal") else { return }
        // Opening reads the schema: SQLite sees the hot journal and rolls it back.
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 1024, busyTimeout: timeout))
        database.close()
    }

    /// The path without the repeated version where consecutive stages join.
    static func unique(_ names: [String]) -> [String] {
        var result: [String] = []
        for name in names where result.last != name { result.append(name) }
        return result
    }

    /// The stage and phase a store at `version` starts in (the first stage it can start).
    static func start(of version: VersionedModel.Version, in stages: [PlannedStage]) -> (Int, StagedRecord.Phase)? {
        for (index, stage) in stages.enumerated() {
            if stage.isCustom {
                if stage.versions[0].name == version.name { return (index, .will) }
            } else if stage.versions.dropLast().contains(where: { $0.name == version.name })
                || (stage.versions.count == 1 && stage.versions[0].name == version.name)
            {
                return (index, .lightweight)
            }
        }
        return nil
    }

    /// Identifies a staged migration: its model's versions, its stages, their mappings and handlers.
    static func fingerprint(_ stages: [PlannedStage], model: VersionedModel) -> String {
        var text = "moult-staged/1\nmodel \(model.name)\n"
        for stage in stages {
            text += stage.isCustom ? "custom" : "lightweight"
            for version in stage.versions { text += " \(version.name)=\(VersionHashes.checksum(version.model.entityVersionHashes()))" }
            text += "\n"
            for step in stage.steps where !step.inferred {
                for mapping in step.mappings { text += "mapping \(mapping.jsonText())\n" }
            }
            for (which, handler) in [("will", stage.willMigrate), ("did", stage.didMigrate)] {
                guard let handler else { continue }
                text += "\(which) \(handler.name) resumable=\(handler.isResumable)\n"
                for operation in handler.operations ?? [] { text += "  \(operation)\n" }
            }
        }
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - Run

    /// Runs the stages from where the store is (or where an interrupted run stopped).
    ///
    /// - Parameters:
    ///   - progress: called after each handler chunk and before each step.
    ///   - isCancelled: checked between chunks; a cancelled run throws `.interrupted` and resumes later.
    /// - Throws: ``/MoultEngine/MigrationError``: `.interrupted` (resumable), `.io` (a lock held by another
    ///   process), what a step (``InPlaceMigration/run(progress:isCancelled:beforeStep:events:)``) or a handler throws. The store is
    ///   always at a version, with the record of where the migration is.
    @discardableResult
    public func run(progress: ((Progress) -> Void)? = nil, isCancelled: @escaping () -> Bool = { false }) throws -> Report {
        var report = Report(resumed: record != nil)
        if isUpToDate {
            return report
        }
        // One run per store: a second one fails here (busy), having touched nothing. (Its steps take the
        // same lock again, on this thread.)
        let lock = try RunFolder.claim(store, purpose: "migrating it in stages")
        defer { lock.release() }
        // The copy of the store this run made before writing anything: what a refused run puts back.
        var original: URL?
        do {
            try RunFiles.checkpoint(store, timeout: lockTimeout)
            var record: StagedRecord
            if let existing = self.record {
                record = existing
                let backup = existing.backup.map { URL(filePath: $0) } ?? RunNames.backup(of: store)
                if keepsBackup, FileOperations.exists(backup.path) { report.backup = backup }
            } else {
                guard let version = storeVersion, let (stage, phase) = Self.start(of: version, in: stages) else { return report }
                // Without a backup, a private copy, removed when the run ends.
                original = try keepsBackup ? Self.backupBeforeRecord(of: store) : RunFolder.copyBackup(of: store, to: Self.originalURL(for: store))
                try keepExternalData(of: original!, at: version)
                record = StagedRecord(fingerprint: fingerprint, stage: stage, phase: phase, now: startDate ?? Date())
                if keepsBackup { record.backup = original!.path }
                try writeRecord(record)
                if keepsBackup { Self.forgetBackupNote(of: store) }
            }
            while true {
                let stage = stages[record.stage]
                if report.stagesRun.last != record.stage { report.stagesRun.append(record.stage) }
                switch record.phase {
                case .lightweight:
                    for step in stage.steps where try currentVersion().name == step.from.name {
                        try runStep(step, stage: record.stage, progress: progress)
                    }
                    try expectVersion(stage.versions.last!, stage: stage)
                case .will:
                    try expectVersion(stage.versions[0], stage: stage)
                    if let handler = stage.willMigrate {
                        report.handlerObjects += try runHandler(handler, "willMigrate", at: stage.versions[0], record: record, progress: progress, isCancelled: isCancelled)
                    }
                    record = try advance(record) { $0.phase = .step }
                    continue
                case .step:
                    if try currentVersion().name == stage.versions[0].name { try runStep(stage.steps[0], stage: record.stage, progress: progress) }
                    try expectVersion(stage.versions[1], stage: stage)
                    record = try advance(record) { $0.phase = .did }
                    continue
                case .did:
                    try expectVersion(stage.versions[1], stage: stage)
                    if let handler = stage.didMigrate {
                        report.handlerObjects += try runHandler(handler, "didMigrate", at: stage.versions[1], record: record, progress: progress, isCancelled: isCancelled)
                    }
                }
                // The stage is done.
                guard record.stage + 1 < stages.count else { break }
                let next = record.stage + 1
                record = try advance(record) { record in
                    record.stage = next
                    record.phase = stages[next].isCustom ? .will : .lightweight
                }
            }
            try writeRecord(nil)
            // A step's work folder that a run killed after that step's swap left behind.
            _ = RunFolder.inPlace(store).cleanUp()
            FaultInjection.reach(.stagedFinished)
            if keepsBackup { report.backup = report.backup ?? original }
            // The private copy of a run without a backup (this one's or a killed one's).
            try? FileOperations.removeTree(Self.originalURL(for: store))
            ExternalDataBackup.remove(besideCopy: Self.originalURL(for: store))
            return report
        } catch {
            var classified = MigrationError.classifying(error)
            if let original, [.badInput, .incompatible, .validationFailed].contains(classified.category) {
                classified = putBack(original, after: classified)
            }
            throw classified
        }
    }

    // MARK: - The backup before the record

    /// The backup of a run that starts: its name is noted in the in-place work folder before the copy
    /// (as an in-place run notes its own), because the store's record, which names it afterwards, is
    /// written only once the copy is whole. A run killed between the two left a whole backup that no
    /// record names; run again, it takes that one instead of a second `NAME~2.EXT`, as long as the
    /// backup is still the store byte for byte (else a new one, under a free name).
    static func backupBeforeRecord(of store: URL) throws -> URL {
        let folder = RunFolder.inPlace(store)
        var target = folder.backupTarget()
        if FileOperations.exists(target.path) {
            if FileManager.default.contentsEqual(atPath: target.path, andPath: store.path) { return target }
            target = RunFolder.freeBackup(for: store)
        }
        do {
            try folder.recordBackup(target)
            return try RunFolder.copyBackup(of: store, to: target)
        } catch {
            forgetBackupNote(of: store)
            throw error
        }
    }

    /// Removes the note of ``backupBeforeRecord(of:)`` (and the work folder, when nothing else is in it).
    static func forgetBackupNote(of store: URL) {
        RunFolder.inPlace(store).forgetBackup()
    }

    // MARK: - A refused run

    /// `.NAME.moult-staged-original` beside the store: the copy a run without a backup makes of the
    /// store before writing, to put it back if the run is refused.
    static func originalURL(for store: URL) -> URL {
        RunNames.stagedOriginal(for: store)
    }

    /// Puts the copy made before this run wrote anything back in place of the store, so that a run
    /// refused for its input (a handler that fails on a row, a step refused by validation) leaves the
    /// store as it found it: no half-run handler, no record of the run, no backup.
    ///
    /// - Returns: `error` saying that nothing was changed, or, when the copy cannot be put back, what
    ///   the store holds now and where the copy is.
    private func putBack(_ original: URL, after error: MigrationError) -> MigrationError {
        var error = error
        do {
            // The WAL emptied into the main file, so that no frame of this run applies to the copy.
            try RunFiles.checkpoint(store, timeout: lockTimeout)
            FaultInjection.reach(.stagedBeforePutBack)
            try restoreExternalData(of: original)
            try RunFiles.rename(original, to: store)
            ExternalDataBackup.remove(besideCopy: original)
            // Refused before its record named the backup, the run still had its name noted.
            Self.forgetBackupNote(of: store)
            error.message += "\nnothing was changed: the store is as it was before the run (no backup kept)"
        } catch let failure {
            error.message += "\nthe store could not be put back as it was (\(failure)): the original is kept as \(original.path)"
        }
        return error
    }

    private func currentVersion() throws -> VersionedModel.Version {
        let metadata = try StoreMetadata(contentsOf: store)
        guard let version = model.version(matchingEntityHashes: metadata.entityHashes) else {
            throw MigrationError(.incompatibleStore, "the store \(store.path) is at no version of \(model.name) in the middle of a staged migration")
        }
        return version
    }

    private func expectVersion(_ version: VersionedModel.Version, stage: PlannedStage) throws {
        let current = try currentVersion()
        guard current.name == version.name else {
            throw MigrationError(
                .incompatibleStore, "\(stage.label) expects the store at version \(version.name), but it is at \(current.name) (changed by another program during the migration?)")
        }
    }

    /// Moves the record to its next phase, in one transaction.
    private func advance(_ record: StagedRecord, _ change: (inout StagedRecord) -> Void) throws -> StagedRecord {
        var next = record
        change(&next)
        next.operation = 0
        next.after = 0
        next.inserted = [:]
        try writeRecord(next)
        FaultInjection.reach(.stagedPhase)
        return next
    }

    /// Writes (or, nil, removes) the record, in one transaction.
    private func writeRecord(_ record: StagedRecord?) throws {
        let database = try Database(url: store, mode: .readWrite, configuration: .init(pageCacheKiB: 1024, busyTimeout: lockTimeout))
        defer { database.close() }
        if options.durable { try database.setSynchronous(.full) }
        do {
            try database.transaction(.immediate) {
                var metadata = try StoreMetadata(reading: database)
                metadata.additionalKeys[Self.recordKey] = record?.propertyList
                try metadata.write(to: database)
            }
        } catch let error as StoreError where error.code == .locked {
            throw MigrationError(.io, "another process holds a lock on \(store.path)", underlying: error)
        }
    }

    private func runStep(_ step: ProgressiveMigration.Step, stage: Int, progress: ((Progress) -> Void)?) throws {
        progress?(Progress(stage: stage + 1, stages: stages.count, activity: "step \(step.from.name) → \(step.to.name)", objects: 0))
        let chain = try ProgressiveMigration(
            store: store, model: model, to: step.to.name, mappings: step.inferred ? [] : step.mappings, policies: policies, options: options,
            mappingLabels: step.mappingLabels)
        guard chain.sourceVersion.name == step.from.name, chain.steps.count == 1 else {
            throw MigrationError(.incompatibleStore, "the store is at \(chain.sourceVersion.name), not \(step.from.name), for the step to \(step.to.name)")
        }
        try chain.checkPolicies()
        var inPlace = try InPlaceMigration(chain: chain, keepsBackup: false)
        inPlace.lockTimeout = lockTimeout
        try inPlace.run()
    }

    /// Runs a handler on the store at `version`; returns the objects its chunks read.
    private func runHandler(
        _ handler: StageHandler, _ which: String, at version: VersionedModel.Version, record: StagedRecord, progress: ((Progress) -> Void)?,
        isCancelled: @escaping () -> Bool
    ) throws -> Int {
        let opened = try SQLiteStore(url: store, model: version.model, mode: .readWrite, configuration: .init(pageCacheKiB: options.pageCacheKiB, busyTimeout: lockTimeout))
        defer { opened.database.close() }
        // Each chunk is a commit: synced only with `durable`. In WAL mode a commit otherwise waits for
        // no sync (a power loss may undo the last chunks, with their checkpoint, and the run resumes
        // before them); a rollback journal keeps SQLite's own setting, which its safety needs. The log
        // is moved into the store every 64 MiB, as the streaming engine does, not every 4 MB: each
        // move syncs both files.
        if options.durable { try opened.database.setSynchronous(.full) }
        if try opened.database.isInWALMode() {
            if !options.durable { try opened.database.setSynchronous(.normal) }
            try opened.database.setWALCheckpointBytes(options.walLimitBytes)
        }
        let checkpoint = StagedCheckpoint(record)
        if !handler.isResumable { checkpoint.restartHandler() }
        var objects = 0
        let stage = record.stage
        let store = StageStore(
            store: opened, version: version, checkpoint: checkpoint, chunkSize: options.chunkSize, isCancelled: isCancelled,
            progress: { read in
                objects += read
                progress?(Progress(stage: stage + 1, stages: stages.count, activity: which, objects: objects))
            })
        do {
            try handler.body(store)
        } catch var error as MigrationError {
            error.message = "\(stages[stage].label), \(which) (\(handler.name)): " + error.message
            throw error
        } catch is CancellationError {
            // A cancelled handler is interrupted, not refused: its committed chunks stay, a rerun resumes.
            throw MigrationError(.interrupted, "\(stages[stage].label), \(which) (\(handler.name)) was cancelled: run again to resume")
        } catch {
            throw MigrationError(.evaluationFailed, "\(stages[stage].label), \(which) (\(handler.name)) failed", underlying: error)
        }
        return objects
    }
}
