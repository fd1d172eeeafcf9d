public import Foundation

/// Every name Moult gives the files and folders it keeps beside a store or an output: the one place
/// those names are spelled. A driver, the command line and `moult status` ask here, so that what one
/// writes the others find, and a clean-up removes only names Moult makes.
///
/// | name | beside | what |
/// |---|---|---|
/// | `NAME.moult-lock` | the store or output | the run's lock (``RunLock``) |
/// | `NAME.moult/` | an output | a step's work folder: its partial store, checkpoint, associations |
/// | `NAME.moult-steps/` | an output | a chain's intermediate stores, each with its `step-N-V.sqlite.moult/` and `.finished` record |
/// | `NAME.moult-status.json` | an output or store | the run's last status, for `moult status` |
/// | `NAME.moult-copy` | an output | the copy of a store already at the target version, being written |
/// | `.NAME.moult-inplace/` | a store | in place: the steps' results and their `.finished` records, the source's state, the backup's note |
/// | `.NAME.moult-staged-original` | a store | a staged run's copy of the store, when it keeps no backup |
/// | `.NAME.moult-xml/`, `.NAME.moult-xml-done/` | an XML store or output | an XML run's work, and the same folder on its way out |
/// | `.NAME.moult-convert` | a `convert` output | the conversion being written |
/// | `.NAME.moult-tmp`, `NAME.moult-tmp` | any file Moult writes | a file being written, renamed over its name when whole |
/// | `.NAME.removing` | a work folder | the folder on its way out, removed whole |
/// | `.NAME-moult-UUID.EXT` | a store or model a command makes | the result being written (`create`, `generate`, `model extract`) |
/// | `NAME~.EXT`, `NAME~2.EXT`… | a store | the original an in-place migration keeps (Core Data's name) |
///
/// Each work folder holds `made`, the record of the entries its run makes in it, each written there before
/// it is made: a removal removes those (with their ``companions(of:)`` and the work folders of runs into
/// them) and nothing else; ``isWorkEntry(_:)`` says which names a folder without that record (an earlier
/// release's) may lose.
///
/// ```swift
/// let work = RunNames.inPlaceWork(for: storeURL)      // …/.People.sqlite.moult-inplace
/// let backup = RunNames.backup(of: storeURL)           // …/People~.sqlite
/// ```
public enum RunNames {
    /// A step's work folder beside its output: `NAME.moult`.
    public static func work(forOutput output: URL) -> URL { sibling(output, output.lastPathComponent + workSuffix) }

    /// The suffix of a step's work folder (`step-2-v3.sqlite.moult` in a chain's folder).
    public static let workSuffix = ".moult"

    /// A chain's folder of intermediate stores beside its output: `NAME.moult-steps`.
    public static func steps(forOutput output: URL) -> URL { sibling(output, output.lastPathComponent + ".moult-steps") }

    /// The status file of a run into `output` (or in place on it): `NAME.moult-status.json`.
    public static func status(for output: URL) -> URL { sibling(output, output.lastPathComponent + ".moult-status.json") }

    /// The lock file of a target: `NAME.moult-lock`.
    public static func lock(for target: URL) -> URL { sibling(target, target.lastPathComponent + ".moult-lock") }

    /// The copy of a store already at the target version, before it is renamed to `output`: `NAME.moult-copy`.
    public static func upToDateCopy(for output: URL) -> URL { sibling(output, output.lastPathComponent + ".moult-copy") }

    /// An in-place run's work folder: `.NAME.moult-inplace`.
    public static func inPlaceWork(for store: URL) -> URL { sibling(store, ".\(store.lastPathComponent).moult-inplace") }

    /// A staged run's private copy of the store, when it keeps no backup: `.NAME.moult-staged-original`.
    public static func stagedOriginal(for store: URL) -> URL { sibling(store, ".\(store.lastPathComponent).moult-staged-original") }

    /// An XML run's work folder (`.NAME.moult-xml`), and the name it takes on its way out (`-done`).
    public static func xmlWork(for target: URL) -> URL { sibling(target, ".\(target.lastPathComponent).moult-xml") }
    public static func xmlWorkDone(for target: URL) -> URL { sibling(target, ".\(target.lastPathComponent).moult-xml-done") }

    /// The store `convert` writes before it is renamed to `output`: `.NAME.moult-convert`.
    public static func conversion(for output: URL) -> URL { sibling(output, ".\(output.lastPathComponent).moult-convert") }

    /// The temporary name a file is written under before it is renamed over `path`: `.NAME.moult-tmp`.
    public static func temporary(for path: String) -> String {
        let url = URL(filePath: path)
        return sibling(url, ".\(url.lastPathComponent).moult-tmp").path(percentEncoded: false)
    }

    /// A unique name beside `target` that a command writes its whole result under before renaming it
    /// there (`create`, `generate`, `model extract`): `.NAME-moult-UUID.EXT`, the extension kept so that
    /// what reads it by its name (a store's support folder, a model folder) finds what it expects.
    public static func uniqueTemporary(for target: URL) -> URL {
        let ext = target.pathExtension
        let name = ".\(target.deletingPathExtension().lastPathComponent)-moult-\(UUID().uuidString)" + (ext.isEmpty ? "" : ".\(ext)")
        return sibling(target, name)
    }

    /// The temporary name a backup is made under, beside it: `NAME~.EXT.moult-tmp`.
    public static func temporaryBackup(for backup: URL) -> URL { sibling(backup, backup.lastPathComponent + ".moult-tmp") }

    /// A work folder on its way out, renamed so that it is only ever removed whole: `.NAME.removing`.
    public static func removing(_ work: URL) -> URL { sibling(work, ".\(work.lastPathComponent).removing") }

    /// The names the work folders of `target` take on their way out (``removing(_:)``): any folder
    /// found under one of them is a run's work given up, left by a kill while it was being deleted.
    public static func beingRemoved(for target: URL) -> [URL] { workFolders(of: target).map(removing) }

    /// Every work folder a run keeps for `target`, whichever run it is.
    public static func workFolders(of target: URL) -> [URL] {
        [work(forOutput: target), steps(forOutput: target), inPlaceWork(for: target), xmlWork(for: target), xmlWorkDone(for: target)]
    }

    /// What an interrupted run may have left for `target` (a store migrated in place, or an output):
    /// its work folders, status file, temporary names and folders on their way out, in no order. The
    /// backup is not among them: it is the user's original, kept.
    public static func leftBehind(by target: URL) -> [URL] {
        let folders = workFolders(of: target)
        return folders + folders.map(removing) + [
            status(for: target), upToDateCopy(for: target), conversion(for: target), URL(filePath: temporary(for: target.path(percentEncoded: false))),
            ExternalDataReference.supportFolder(besideStore: conversion(for: target)),
        ]
    }

    /// `NAME~.EXT` beside the store: Core Data's name for the original kept by a migration; with a
    /// `number` above 1, `NAME~2.EXT`, `NAME~3.EXT`…: the names of the originals later migrations keep.
    public static func backup(of store: URL, number: Int = 1) -> URL {
        let name = store.lastPathComponent
        let mark = number > 1 ? "~\(number)" : "~"
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return sibling(store, name + mark) }
        return sibling(store, name[..<dot] + mark + name[dot...])
    }

    /// A step's result in an in-place work folder: `V1-to-V2.sqlite`, or `V1-to-V2.by-sql.sqlite` for a
    /// step run by SQL on a copy.
    public static func inPlaceStep(from: String, to: String, bySQL: Bool, in work: URL) -> URL {
        work.appending(path: "\(from)-to-\(to)\(bySQL ? ".by-sql" : "").sqlite")
    }

    /// A chain's intermediate store in its folder beside the output (``steps(forOutput:)``): `step-N-V.sqlite`.
    public static func chainStep(number: Int, to version: String, in steps: URL) -> URL {
        steps.appending(path: "step-\(number)-\(version).sqlite")
    }

    /// The name of the record, in a run folder, that a step's result there is finished: `RESULT.finished`.
    public static func finishedRecord(for result: URL) -> String { result.lastPathComponent + ".finished" }

    /// The copy a step run by SQL works on, renamed to `output` when it is finished: `NAME.copying`.
    public static func copying(for output: URL) -> URL { sibling(output, output.lastPathComponent + ".copying") }

    /// The files that come with an entry Moult makes in a work folder, beside it: a store's companions
    /// (`-wal`, `-shm`, `-journal`) and support folder, the temporary names it is written under, its
    /// lock, status, copy and `.finished` record, and the backups a run in place on it keeps (each with
    /// its support folder). The work folders of runs into it are ``workFolders(of:)``.
    public static func companions(of entry: URL) -> [URL] {
        let stores = [entry, copying(for: entry), conversion(for: entry), upToDateCopy(for: entry)]
        var names = stores.flatMap { store in
            ["-wal", "-shm", "-journal"].map { URL(filePath: store.path(percentEncoded: false) + $0) } + [ExternalDataReference.supportFolder(besideStore: store)]
        }
        names += stores.dropFirst()
        names += [
            URL(filePath: temporary(for: entry.path(percentEncoded: false))), lock(for: entry), status(for: entry),
            sibling(entry, finishedRecord(for: entry)),
        ]
        var number = 1
        while number < 1000, case let backup = backup(of: entry, number: number), FileOperations.exists(backup.path(percentEncoded: false)) {
            names += [backup, temporaryBackup(for: backup), ExternalDataReference.supportFolder(besideStore: backup)]
            number += 1
        }
        return names
    }

    /// Whether `name` is one Moult gives an entry of a work folder (a record, a store, an association
    /// table, or what comes with one of them): how a work folder an earlier release made, which has no
    /// record of its entries, is removed without touching anything else in it.
    public static func isWorkEntry(_ name: String) -> Bool {
        let fixed: Set = [
            "made", "arguments", "chain", "backup", "source-state", "store-state", "finished", "associations", "external-data-removals",
            "original.xml", "source.sqlite", "destination.sqlite", "destination.creating.sqlite",
        ]
        var base = name
        if base.hasPrefix("."), base.hasSuffix(".moult-tmp") || base.hasSuffix("_SUPPORT") || base.hasSuffix(".moult-convert") || base.hasSuffix(".removing")
            || base.hasSuffix(".moult-inplace") || base.hasSuffix(".moult-xml") || base.hasSuffix(".moult-xml-done")
        {
            base.removeFirst()
        }
        for suffix in [
            "-wal", "-shm", "-journal", ".moult-tmp", ".moult-lock", ".moult-status.json", ".moult-steps", ".moult-copy", ".moult-convert", ".moult-inplace",
            ".moult-xml-done", ".moult-xml", ".moult", ".copying", ".finished", ".removing", "_SUPPORT",
        ] where base.hasSuffix(suffix) {
            base.removeLast(suffix.count)
        }
        return fixed.contains(base) || base.hasPrefix("store-state-") || base.hasSuffix(".sqlite") || base.hasSuffix(".xml")
    }

    /// Whether `name` is a run's work folder (a step's, a chain's, an in-place or XML run's, or one on its
    /// way out): removed by its own record, never whole.
    public static func isWorkFolder(_ name: String) -> Bool {
        [workSuffix, ".moult-steps", ".moult-inplace", ".moult-xml", ".moult-xml-done", ".removing"].contains { name.hasSuffix($0) }
    }

    private static func sibling(_ url: URL, _ name: String) -> URL { url.deletingLastPathComponent().appending(path: name) }
}
