public import Foundation
public import MoultModel
import MoultStore
public import MoultXMLStore

/// A migration whose source or destination is a Core Data XML store: the driver that puts the XML
/// around an SQLite migration, and the run folder it keeps for that.
///
/// The engine reads an XML source directly when the run streams into `--output` (`readsXMLDirectly`);
/// otherwise (in place, or a store already at the target version) the source is first streamed into an
/// SQLite copy in the run's work folder (`.DEST.moult-xml/`, or `.STORE.moult-xml/` in place), and the
/// SQLite migration runs from it. An XML destination is migrated into an SQLite store in that folder,
/// then streamed out to DEST (under a temporary name, renamed into place). In place on an XML store
/// writes a new file, the original kept as `NAME~.xml` (the first free name) unless the run keeps no
/// backup. A run stopped anywhere resumes: the copy is made once, the SQLite migration resumes from its
/// own run folder, and the XML is written again.
///
/// The SQLite migration itself is the caller's (``run(isUpToDate:isFinished:refused:note:migrate:)``'s `migrate`): the
/// command line runs its own, with its reports, lock, source identity and resume, on the paths this
/// driver gives it.
public struct XMLStoreRun {
    /// The store the user gave.
    public let store: URL
    /// DEST, nil in place.
    public let output: URL?
    /// The source's type, and the type written.
    public let source: StoreType
    public let target: StoreType
    /// The model (an `.xcdatamodeld`, `.momd` or `.xcdatamodel`).
    public let model: URL
    /// In place: whether the original is kept as `NAME~.xml`.
    public let keepsBackup: Bool
    /// The value size limit of both conversions (``/MoultEngine/MigrationOptions/maxValueBytes``).
    public var maxValueBytes = Database.Configuration.defaultMaxValueBytes

    public init(store: URL, output: URL?, source: StoreType, target: StoreType, model: URL, keepsBackup: Bool) {
        self.store = store
        self.output = output
        self.source = source
        self.target = target
        self.model = model
        self.keepsBackup = keepsBackup
    }

    /// What the SQLite migration inside the run is given.
    public struct SQLiteRun: Sendable {
        /// The store it reads: the user's (an XML store read directly, or an SQLite store), or the
        /// SQLite copy of an XML store in the work folder.
        public var source: URL
        /// The store it writes: DEST, or an SQLite store in the work folder when DEST is XML.
        public var output: URL
        /// Whether the engine reads the XML source itself (no SQLite copy).
        public var readsXMLDirectly: Bool
        /// Whether an earlier run of this one left its work folder (the SQLite migration resumes).
        public var resuming: Bool
    }

    /// How a run ended.
    public enum Outcome: Sendable {
        /// In place on a store already at the target version: nothing was written.
        case upToDateInPlace
        /// DEST is already this migration's finished XML store (a run stopped after renaming it into place).
        case alreadyFinished
        /// Migrated; `written` says what XML store was written, when DEST (or the store in place) is XML.
        case migrated(written: Written?)
    }

    /// An XML store the run wrote.
    public struct Written: Sendable {
        public var url: URL
        public var version: String
        public var objects: Int
        /// In place: the original's backup.
        public var backup: URL?
    }

    /// The place the run writes: DEST, or the store itself in place.
    public var final: URL { output ?? store }
    /// The run's work folder, and the name it takes on its way out.
    var work: URL { RunNames.xmlWork(for: final) }
    var finished: URL { RunNames.xmlWorkDone(for: final) }
    /// In place, the original linked into the work folder first: a run resumed after the new file was
    /// renamed over the store still keeps the original as `NAME~.xml`, not the new file.
    var original: URL { work.appending(path: "original.xml") }
    /// The XML source's SQLite copy, and the SQLite destination of an XML target.
    var sqliteCopy: URL { work.appending(path: "source.sqlite") }
    var sqliteDestination: URL { target == .xml ? work.appending(path: "destination.sqlite") : final }

    /// Runs it.
    ///
    /// - Parameters:
    ///   - isUpToDate: whether the store is already at the target version.
    ///   - isFinished: whether an XML store at DEST is this migration's finished result (its metadata
    ///     records this migration of this content of the source): a run killed after renaming DEST into
    ///     place and removing its work folder, before it ended, is done.
    ///   - refused: whether an error of `migrate` is a refusal (bad usage, bad input, no path, broken
    ///     rules): a run refused leaves nothing of its own (a work folder it made is removed); a stopped
    ///     run's is kept for its rerun.
    ///   - note: what the run says of its XML source (read directly, or through its SQLite copy).
    ///   - migrate: the SQLite migration, on the paths given.
    public func run(
        isUpToDate: () throws -> Bool, isFinished: (URL) -> Bool = { _ in false }, refused: (any Error) -> Bool, note: (String) -> Void = { _ in },
        migrate: (SQLiteRun) async throws -> Void
    ) async throws -> Outcome {
        // One run per store and per DEST, the XML's as the SQLite's: a second one is busy here, having
        // made nothing. (The SQLite migration inside takes the same lock again when it writes DEST.)
        let lock = try RunFolder.claim(final, purpose: output == nil ? "migrating it in place" : "migrating into it")
        defer { lock.release() }
        let wasFinished = FileOperations.exists(finished.path(percentEncoded: false))
        RunFolder.removeRecorded(finished)
        if output == nil, source == .xml, try isUpToDate() {
            // In place on a store already at the target version: nothing is written, its backup and the
            // store stay as they are. (A run stopped after its new file was renamed over the store, its
            // backup made before, left its work folder: removed whole.)
            removeWork()
            return .upToDateInPlace
        }
        if output != nil, target == .xml, FileOperations.exists(final.path(percentEncoded: false)) {
            // A run stopped after renaming DEST into place, before removing its work folder, is done.
            guard wasFinished || FileOperations.exists(work.path(percentEncoded: false)) || isFinished(final) else {
                throw XMLStoreError(.alreadyExists, "a file is already there; Moult does not overwrite it", path: final.path(percentEncoded: false))
            }
            removeWork()
            return .alreadyFinished
        }
        // A work folder left by a stopped run: its migration is resumed, or, when it had finished (its
        // SQLite destination is there), accepted as done and only the XML is written again; by the run
        // folder's rule, only from the state of the store its work was made from (the SQLite copy, the
        // original kept for the backup).
        let folderFound = try RunFolder.exists(work)
        let folder = RunFolder(target: final, kind: output == nil ? .inPlace : .output, work: work)
        let state = try Self.state(of: store)
        let made = [original, sqliteCopy, work.appending(path: "destination.sqlite")]
        let hasWork = folderFound && (folder.read(RunFolder.sourceStateRecord) != nil || made.contains { FileOperations.exists($0.path(percentEncoded: false)) })
        let resumption = try folder.resumption(of: .init(work: hasWork ? .underWay : .none), source: store, state: state, otherRun: folder.anotherMigration)
        try RunFolder.make(work)
        // What the run makes in its folder, recorded before it is made (the SQLite runs into these
        // stores keep their own folders beside them, removed with them), and the state of the store
        // it is made from.
        try folder.recordEntries(made.map(\.lastPathComponent))
        if resumption == .startAfresh { try folder.write(RunFolder.sourceStateRecord, state.text) }
        do {
            let written = try await run(resuming: folderFound, isUpToDate: isUpToDate, note: note, migrate: migrate)
            removeWork()
            return .migrated(written: written)
        } catch {
            if !folderFound, refused(error) { RunFolder.remove(work) }
            throw error
        }
    }

    /// The state of the store a run reads, its content included (an XML store's bytes, an SQLite
    /// store's pages): what a resumed run must find again.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when the store cannot be read.
    static func state(of store: URL) throws -> StoreFileState {
        do {
            return try StoreFileState(of: store, content: true)
        } catch {
            throw MigrationError.classifying(error)
        }
    }

    /// The work folder removed: renamed to its `-done` name first (after which a rerun knows the run
    /// finished), then what it recorded removed (``RunFolder/removeRecorded(_:)``).
    private func removeWork() {
        if (try? FileOperations.rename(work.path(percentEncoded: false), to: finished.path(percentEncoded: false), durable: false)) != nil {
            RunFolder.removeRecorded(finished)
        }
    }

    private func run(
        resuming: Bool, isUpToDate: () throws -> Bool, note: (String) -> Void, migrate: (SQLiteRun) async throws -> Void
    ) async throws -> Written? {
        let inPlace = output == nil
        if inPlace, keepsBackup, !FileOperations.exists(original.path(percentEncoded: false)) {
            if !FileOperations.hardLink(store.path(percentEncoded: false), to: original.path(percentEncoded: false)) {
                try FileOperations.copyFile(store.path(percentEncoded: false), toNew: original.path(percentEncoded: false), durable: true)
            }
        }
        var sqlite = SQLiteRun(source: store, output: sqliteDestination, readsXMLDirectly: false, resuming: resuming)
        if source == .xml {
            sqlite.readsXMLDirectly = try readsXMLDirectly(isUpToDate: isUpToDate)
            if sqlite.readsXMLDirectly {
                note("\(store.path(percentEncoded: false)) is a Core Data XML store: read directly, without an SQLite copy")
            } else {
                try Self.sqliteCopy(ofXML: store, model: model, at: sqliteCopy, maxValueBytes: maxValueBytes)
                sqlite.source = sqliteCopy
                note("\(store.path(percentEncoded: false)) is a Core Data XML store: migrated through its SQLite copy \(sqliteCopy.path(percentEncoded: false))")
            }
        }
        try await migrate(sqlite)
        guard target == .xml, FileOperations.exists(sqliteDestination.path(percentEncoded: false)) else { return nil }
        return try writeXML()
    }

    /// Whether the engine reads the XML source itself (see ``/MoultXMLStore/XMLStore``): a streamed run
    /// (`--output`) of a store not already at the target version, unless a stopped run began from the
    /// store's SQLite copy (it resumes as it began). In place, and a store already at the target version
    /// (its output is a copy of it), go through the copy.
    private func readsXMLDirectly(isUpToDate: () throws -> Bool) throws -> Bool {
        guard output != nil, !FileOperations.exists(sqliteCopy.path(percentEncoded: false)) else { return false }
        return try !isUpToDate()
    }

    /// Streams the migrated SQLite store out to the XML destination (in place: over the store, the
    /// original kept as `NAME~.EXT` first).
    private func writeXML() throws -> Written {
        let versioned = try VersionedModel(contentsOf: model, requiringCurrentVersion: false)
        let metadata = try StoreMetadata(contentsOf: sqliteDestination)
        guard let version = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
            throw MigrationError(.incompatibleStore, "the migrated store \(sqliteDestination.path) matches no version of \(versioned.name)")
        }
        let inPlace = output == nil
        var backup: URL?
        if inPlace, keepsBackup {
            // A backup is never replaced: this run's takes the first free name (`NAME~.xml`, else
            // `NAME~2.xml`…), noted in the work folder before it is made, so that a resumed run makes the same.
            let folder = RunFolder(target: final, kind: .inPlace, work: work)
            let chosen = folder.backupTarget()
            try folder.recordBackup(chosen)
            if !FileOperations.exists(chosen.path(percentEncoded: false)) {
                let temporary = RunNames.temporaryBackup(for: chosen).path(percentEncoded: false)
                FileOperations.remove(temporary)
                if !FileOperations.hardLink(original.path(percentEncoded: false), to: temporary) {
                    try FileOperations.copyFile(original.path(percentEncoded: false), toNew: temporary, durable: true)
                }
                try FileOperations.rename(temporary, to: chosen.path(percentEncoded: false), durable: true)
            }
            backup = chosen
        }
        let count = try XMLStoreConversion.xml(
            from: sqliteDestination, model: version.model, to: final, replacing: inPlace, configuration: .init(maxValueBytes: maxValueBytes))
        return Written(url: final, version: version.name, objects: count, backup: backup)
    }

    // MARK: - An XML store's SQLite copy

    /// The version of a model whose entity hashes are an XML store's.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` (`.incompatibleStore`, exit 66) when no version matches.
    public static func version(ofXML store: URL, in versioned: VersionedModel) throws -> VersionedModel.Version {
        let metadata = try XMLStoreReader(url: store).info.storeMetadata()
        guard let version = versioned.version(matchingEntityHashes: metadata.entityHashes) else {
            throw MigrationError(
                .incompatibleStore,
                "no version of \(versioned.name) matches the XML store \(store.path(percentEncoded: false)):\n"
                    + versioned.versionDifferences(from: metadata.entityHashes))
        }
        return version
    }

    /// Converts an XML store into an SQLite store at `destination` (its model version found by its
    /// hashes), unless a finished copy is already there (a resumed run); a value over `maxValueBytes` is refused.
    public static func sqliteCopy(ofXML store: URL, model: URL, at destination: URL, maxValueBytes: Int? = nil) throws {
        guard !FileOperations.exists(destination.path(percentEncoded: false)) else { return }
        let versioned = try VersionedModel(contentsOf: model, requiringCurrentVersion: false)
        let version = try version(ofXML: store, in: versioned)
        try XMLStoreConversion.sqlite(from: store, model: version.model, to: destination, configuration: .init(maxValueBytes: maxValueBytes ?? Database.Configuration.defaultMaxValueBytes))
    }
}
