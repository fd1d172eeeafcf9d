import Foundation
import MoultExpressions
import MoultModel
import MoultStore

/// Carries a migrated store's external binary data (see ``ExternalDataReference``): every file a
/// reference in the new store names is given to the output's own `.<name>_SUPPORT/_EXTERNAL_DATA/`,
/// as a hard link to the source's file where the file system allows it, else as a synced copy.
///
/// It runs once the new store is complete and before it is renamed into place (by
/// ``StreamingMigrator`` and by a chain's intermediate step made by SQL), so that a store at the output
/// path always finds its files. It is idempotent: a run killed half way through, or killed after it and
/// before the rename, is finished by running it again; a file already there with the source's bytes is
/// kept. What the step removed (an attribute, an entity, an object) has no reference in the new store,
/// so its files are not carried.
///
/// ```swift
/// let warnings = try ExternalDataCarrier.carry(store: partial, model: v2, source: sourceURL, output: outputURL)
/// ```
enum ExternalDataCarrier {
    /// What a carry did.
    struct Result: Sendable, Hashable {
        /// Files given to the output: linked, or copied.
        var linked = 0
        var copied = 0
        /// Files already there with the source's bytes (a resumed carry).
        var present = 0
        /// References the output keeps with no file: the source has none either, or names none.
        var warnings: [String] = []
    }

    /// Carries the files the references of the store at `store` (made with `model`) name, from beside
    /// `source` to beside `output`.
    ///
    /// - Parameters:
    ///   - store: the new store, wherever it is being made (its work folder).
    ///   - model: its model.
    ///   - source: the store the step read: the files are in its support folder.
    ///   - output: where the new store will be: the files go into its support folder.
    /// - Throws: ``MigrationError`` (`.io`, or `.interrupted` when the disk is full) when a file cannot be
    ///   linked or copied, or the store cannot be read.
    static func carry(store: URL, model: ObjectModel, source: URL, output: URL, links: Bool = true) throws -> Result {
        var result = Result()
        guard model.entities.contains(where: { entity in entity.attributes.contains { $0.allowsExternalBinaryDataStorage } }) else {
            return result
        }
        let manager = FileManager.default
        let folder = ExternalDataReference.folder(besideStore: output)
        var madeFolder = false
        var changed = false
        // The output's folders are looked at before anything in them is: through a link nothing is read,
        // linked or removed. The source's, when not its own, hold no file of it.
        if let problem = ExternalDataReference.foldersProblem(besideStore: output) {
            throw MigrationError(.io, "\(problem), not a folder Moult made or one of the store's: move it away and run again; nothing there was touched")
        }
        let sourceProblem = ExternalDataReference.foldersProblem(besideStore: source)
        do {
            let database = try SQLiteStore(url: store, model: model, mode: .readOnly)
            defer { database.database.close() }
            try database.forEachExternalReference { row in
                guard let reference = row.reference else {
                    result.warnings.append("\(row) holds an external reference that names no file; carried as it is")
                    return
                }
                let from = reference.url(besideStore: source)
                let to = reference.url(besideStore: output)
                let fromPath = from.path(percentEncoded: false), toPath = to.path(percentEncoded: false)
                guard sourceProblem == nil, ExternalDataReference.isPlainFile(fromPath) else {
                    let there = FileOperations.exists(fromPath) || FileOperations.isSymbolicLink(fromPath)
                    let why = sourceProblem.map { "is in a folder that is not the store's own (\($0)): never read" }
                        ?? (there ? "is not a plain file (a link, FIFO, device or folder: never read)" : "is missing from the source")
                    result.warnings.append(
                        "\(row): its external file \(reference.fileName) \(why) (\(fromPath)); "
                            + "the destination refers to it as the source does, with no file")
                    return
                }
                if FileOperations.exists(toPath) || FileOperations.isSymbolicLink(toPath) {
                    if !FileOperations.isSymbolicLink(toPath), try ExternalDataReference.filesHaveSameContent(from, to) {
                        result.present += 1
                        return
                    }
                    // Not the source's bytes (a copy cut short by a kill is never at this name; something
                    // else made it): the reference names the source's file.
                    FileOperations.remove(toPath)
                }
                if !madeFolder {
                    try makeFolder(ExternalDataReference.supportFolder(besideStore: output))
                    try makeFolder(folder)
                    madeFolder = true
                }
                changed = true
                if links, FileOperations.hardLink(fromPath, to: toPath) {
                    result.linked += 1
                } else {
                    // Another file system, or one without hard links (or a failure the copy will name).
                    // A name of Moult's own, replaced by the next try: a kill never leaves half a file at `to`.
                    let temporary = FileOperations.temporaryPath(for: toPath)
                    try FileOperations.copyFile(fromPath, toNew: temporary, durable: true)
                    try FileOperations.rename(temporary, to: toPath, durable: false)
                    result.copied += 1
                }
                FaultInjection.reach(.afterExternalFile)
            }
        } catch {
            throw MigrationError.classifying(error)
        }
        if changed {
            // The links, renames and folders made durable before the store is renamed into place.
            FileOperations.syncDirectory(folder.path(percentEncoded: false))
            FileOperations.syncDirectory(folder.deletingLastPathComponent().path(percentEncoded: false))
            FileOperations.syncDirectory(output.deletingLastPathComponent().path(percentEncoded: false))
        }
        return result
    }

    /// Makes a folder unless a folder (not a symbolic link) is already there.
    private static func makeFolder(_ url: URL) throws {
        let path = url.path(percentEncoded: false)
        if !FileOperations.isSymbolicLink(path), FileOperations.isFolder(path) {
            return
        }
        try FileOperations.makeNewDirectory(path)
    }
}

// MARK: - The hooks

extension StreamingMigrator {
    /// Carries the external files of the finished store at `partial` to beside `output` (see
    /// ``ExternalDataCarrier``), each reference with no file said as a warning event. Called before the
    /// store is renamed into place, on a first run and on a resumed one.
    /// In place (``externalDataHome``), nothing is carried: the files stay in the store's folder, and a
    /// reference whose file is not there is said as a warning all the same.
    func carryExternalData(of partial: URL, to output: URL, emitter: EventEmitter) throws {
        let result = try ExternalDataCarrier.carry(
            store: partial, model: destinationModel, source: externalDataSource, output: externalDataHome ?? output,
            links: options.linksExternalData)
        for warning in result.warnings { emitter.emit(.warning(MigrationEvent.Warning(message: warning))) }
    }

    /// Says, before the objects are copied, which values of attributes that stop allowing external
    /// storage refer to a file that is missing (they become nil; see ``ExternalDataConversion``).
    func warnAboutMissingInlinedFiles(_ session: Session, emitter: EventEmitter) throws {
        // A source of another store type than SQLite holds its values inline: no file to miss.
        guard let sqlSource = session.sqlSource else { return }
        var columns: [(entity: EntityLayout, attribute: AttributeColumn)] = []
        for mapping in session.mappings {
            guard let source = mapping.source, mapping.destination != nil else { continue }
            for (offset, conversion) in mapping.externalDataConversions.enumerated() where conversion == .inline {
                guard case .expression(let expression, _) = mapping.attributeValues[offset],
                    let key = ExternalDataConversion.copiedKey(expression.node), let attribute = source.attribute(named: key),
                    !columns.contains(where: { $0.entity.name == source.name && $0.attribute.name == attribute.name })
                else { continue }
                columns.append((source, attribute))
            }
        }
        let warnings = try ExternalDataConversion.missingFileWarnings(
            (sqlSource.layout, sqlSource.database), columns: columns,
            folder: ExternalDataReference.folder(besideStore: externalDataSource), destination: "the destination")
        for warning in warnings { emitter.emit(.warning(MigrationEvent.Warning(message: warning))) }
    }
}

extension ProgressiveMigration {
    /// Carries the external files of a chain's intermediate store made by SQL (at `made`, before it is
    /// renamed to `output`) from beside the step's `input`.
    func carryExternalData(of made: URL, step: Step, input: URL, output: URL, events: ((MigrationEvent) -> Void)?) throws {
        let result = try ExternalDataCarrier.carry(store: made, model: step.to.model, source: input, output: output, links: options.linksExternalData)
        for warning in result.warnings { events?(.warning(MigrationEvent.Warning(message: warning))) }
    }
}
