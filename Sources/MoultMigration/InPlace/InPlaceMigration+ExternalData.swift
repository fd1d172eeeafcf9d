import Foundation
import MoultMapping
import MoultModel
import MoultStore

// MARK: - Values whose format changes, by SQL

/// External binary data in place (see the `ExternalBinaryStorage` article of MoultStore): the files stay
/// in the store's own `.<name>_SUPPORT/_EXTERNAL_DATA/` (a reference keeps its name, and the store its
/// name); a step by SQL converts the values of an attribute whose `allowsExternalBinaryDataStorage`
/// changes where they stand; the files no row refers to once the step has committed are removed then,
/// as Core Data removes them; the backup `NAME~.EXT` gets a support folder of its own.
extension InPlaceMigration {
    /// The step's script with, last, the conversion of every Binary Data column whose attribute's
    /// `allowsExternalBinaryDataStorage` changes (``ExternalDataConversionSite/change``).
    static func convertingExternalData(
        _ script: InPlaceScript, old: StoreLayout, new: StoreLayout, correspondence: LayoutCorrespondence
    ) -> InPlaceScript {
        let sites = old.externalDataConversions(to: new, correspondence: correspondence)
        var converting = script
        converting.changes += sites.map(\.change)
        return converting
    }
}

/// What a step by SQL says of external data it inlines.
extension SQLSteps {
    /// Says, through `warn`, which values of the step's input (what `database` holds before the step) its
    /// SQL will find no file for, as their attribute stops allowing external storage: they become nil.
    /// A store whose schema is not the step's layout says nothing here (it is streamed, which says it).
    static func warnAboutMissingInlinedFiles(_ step: ProgressiveMigration.Step, database: Database, folder: URL, warn: (String) -> Void) {
        guard case .success(let correspondence) = step.mapping.layoutCorrespondence(source: step.from.model, destination: step.to.model),
            let old = try? StoreLayout(model: step.from.model), let new = try? StoreLayout(model: step.to.model)
        else { return }
        let sources = old.externalDataConversions(to: new, correspondence: correspondence).filter { $0.conversion == .inline }.flatMap(\.sources)
        let columns = sources.compactMap { source in
            old.entity(named: source.entity).flatMap { entity in entity.attribute(named: source.attribute).map { (entity, $0) } }
        }
        let warnings = try? ExternalDataConversion.missingFileWarnings(
            (old, database), columns: columns, folder: folder, destination: "version \(step.to.name)")
        warnings?.forEach(warn)
    }
}

// MARK: - Around the commit

extension InPlaceMigration {
    /// Before the run changes the store: the files the store names (nil when its version has no attribute
    /// that allows external storage), its backup (when there is, or will be, one) given their links.
    func externalDataBeforeChanging(backup: URL?) throws -> Set<String>? {
        let model = chain.sourceVersion.model
        guard let before = try ExternalDataBackup.names(of: chain.store, model: model) else { return nil }
        if let backup { try ExternalDataBackup.keep(of: chain.store, model: model, for: backup, referenced: before, links: chain.options.linksExternalData) }
        return before
    }

    /// Runs a chain of SQL steps (`run`, given what to do before the transaction commits) so that the
    /// files the committed store no longer names are recorded before the commit and removed after it.
    func keepingExternalData(backup: URL?, folder: RunFolder, _ run: (_ beforeCommit: (Database) throws -> Void) throws -> Bool) throws -> Bool {
        let before = try externalDataBeforeChanging(backup: backup)
        var referenced: Set<String>?
        let ran = try run { database in
            guard let before else { return }
            referenced = try ExternalDataBackup.recordRemovals(before: before, committing: database, at: chain.targetVersion.model, work: folder.work)
        }
        if ran, let referenced { ExternalDataBackup.completeRemovals(of: chain.store, work: folder.work, referenced: referenced) }
        return ran
    }

    /// Swaps the chain's `result` in (`swap`) so that the files it no longer names are recorded before
    /// the swap and removed after it; the backup the swap keeps gets its links first.
    func keepingExternalData(swapping result: URL, backup: URL?, folder: RunFolder, _ swap: () throws -> Void) throws {
        let kept = keepsBackup ? backup ?? folder.backupTarget() : nil
        // Its name noted before its support folder is made: a rerun after a kill takes the same name
        // (a name whose support folder is there is otherwise not free).
        if let kept, backup == nil { try folder.recordBackup(kept) }
        var referenced: Set<String>?
        if let before = try externalDataBeforeChanging(backup: kept) {
            let database = try Database(url: result, mode: .readOnly)
            defer { database.close() }
            referenced = try ExternalDataBackup.recordRemovals(before: before, committing: database, at: chain.targetVersion.model, work: folder.work)
        }
        try swap()
        if let referenced { ExternalDataBackup.completeRemovals(of: chain.store, work: folder.work, referenced: referenced) }
    }
}

