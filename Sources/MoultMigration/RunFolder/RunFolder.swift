public import Foundation
public import MoultStore

/// The folder a run keeps beside its target (an output, or a store migrated in place) and everything
/// the drivers do with it: claiming the target's lock, making and finding the folder, the records
/// written into it (the source's identity, the backup's name), resuming from them or refusing, and
/// removing the folder whole. Every driver (`--output`, in place, staged, a chain's steps, XML runs)
/// goes through one, so that what one run records the next finds, whichever driver it is.
///
/// The names are ``/MoultStore/RunNames``'; the records are small files, each written under a
/// temporary name and renamed into place, so that a kill leaves a record whole or absent.
///
/// ```swift
/// let folder = RunFolder.inPlace(storeURL)          // …/.People.sqlite.moult-inplace
/// let lock = try folder.claim(purpose: "migrating it in place")
/// defer { lock.release() }
/// try folder.beginOrResume(record: "store-state", current: state, source: storeURL)
/// ```
public struct RunFolder: Sendable, Hashable {
    /// What the run writes.
    public enum Kind: Sendable, Hashable {
        /// A new store at an output (`NAME.moult` beside it).
        case output
        /// The store itself, in place (`.NAME.moult-inplace` beside it).
        case inPlace
    }

    /// The output, or the store migrated in place.
    public let target: URL
    public let kind: Kind
    /// The folder itself.
    public let work: URL

    /// The run folder of a run into `output`.
    public static func output(_ output: URL) -> RunFolder { RunFolder(target: output, kind: .output, work: RunNames.work(forOutput: output)) }

    /// The folder of a chain's intermediate stores, for a run into `output`.
    public static func steps(_ output: URL) -> RunFolder { RunFolder(target: output, kind: .output, work: RunNames.steps(forOutput: output)) }

    /// The run folder of a run in place on `store`.
    public static func inPlace(_ store: URL) -> RunFolder { RunFolder(target: store, kind: .inPlace, work: RunNames.inPlaceWork(for: store)) }

    // MARK: - Claiming

    /// Takes the target's run lock (see ``/MoultStore/RunLock``): one run per target. Busy is
    /// ``/MoultEngine/MigrationError/Code/busy``, and nothing was touched.
    public func claim(purpose: String) throws -> RunLock { try Self.claim(target, purpose: purpose) }

    /// Takes the run lock of any target a driver writes (a chain's output before its steps run), then
    /// finishes removing any work folder of the target that a kill left on its way out
    /// (``/MoultStore/RunNames/beingRemoved(for:)``: work given up, whichever run gave it up).
    static func claim(_ target: URL, purpose: String) throws -> RunLock {
        let lock: RunLock
        do {
            lock = try RunLock.acquire(for: target, purpose: purpose)
        } catch {
            throw MigrationError.classifying(error)
        }
        for leftover in RunNames.beingRemoved(for: target) { removeRecorded(leftover) }
        return lock
    }

    // MARK: - The folder

    /// Whether the folder is there, as a folder.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when something else has its name (a symbolic
    ///   link, which would make the run write into another folder, or a file); nothing is changed.
    public func exists() throws -> Bool { try Self.exists(work) }

    static func exists(_ work: URL) throws -> Bool {
        guard let info = FileOperations.attributes(work.path) else {
            if errno == ENOENT { return false }
            throw MigrationError(.io, "cannot examine the work folder \(work.path): \(String(cString: strerror(errno))); nothing was changed")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            let what = info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "not a folder"
            throw MigrationError(
                .io, "the work folder \(work.path) is \(what), not a folder Moult made: move it away and run again; nothing was changed")
        }
        return true
    }

    /// Makes the folder (one already there is used; a link or a file is refused), with its record of
    /// what it holds (`made`, the record of the entries its run makes in it), empty.
    public func make() throws { try Self.make(work) }

    static func make(_ work: URL) throws {
        do throws(StoreError) {
            try FileOperations.makeNewDirectory(work.path(percentEncoded: false))
        } catch {
            guard error.code == .alreadyExists, try exists(work) else {
                throw MigrationError(.io, "cannot create the work folder \(work.path): \(error.message)")
            }
            return
        }
        // (A kill before the record leaves an empty folder, which a removal removes as it is.)
        try RunFolder(target: work, kind: .output, work: work).recordEntries([])
    }

    // MARK: - What the folder holds

    /// The record of the folder's own entries: the name of each one a run makes in it, written there
    /// before it is made. A removal removes these and nothing else (``remove(_:)``).
    static let madeRecord = "made"

    /// The names the folder's record holds; nil when it has none (a folder an earlier release made, or
    /// one a kill left before its record).
    static func recorded(in work: URL) -> [String]? {
        guard let data = FileOperations.contents(ofOwnFile: work.appending(path: madeRecord).path(percentEncoded: false)) else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Records entries of the folder before they are made: each a single name in it (with the files that
    /// come with it, ``/MoultStore/RunNames/companions(of:)``). Already recorded names are recorded once.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when the record cannot be written (nothing is made then).
    func recordEntries(_ names: [String]) throws {
        precondition(names.allSatisfy { !$0.isEmpty && !$0.contains("/") && $0 != "." && $0 != ".." }, "an entry of a run folder is one name in it")
        let known = Self.recorded(in: work)
        let added = names.filter { name in !(known ?? []).contains(name) }
        guard known == nil || !added.isEmpty else { return }
        // (Into the folder itself: never through a link, or a file, at its name.)
        guard try Self.exists(work) else {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): it is not there")
        }
        let text = ((known ?? []) + added).map { $0 + "\n" }.joined()
        do {
            try FileOperations.writeAtomically(Data(text.utf8), to: work.appending(path: Self.madeRecord), durable: true)
        } catch {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// The entry `name` of the folder, recorded first (``recordEntries(_:)``).
    func entry(_ name: String) throws -> URL {
        try recordEntries([name])
        return work.appending(path: name)
    }

    /// Removes the folder (see `remove(_:)`).
    public func remove() { Self.remove(work) }

    /// Removes a work folder so that no kill leaves half of it: it is renamed away first (one atomic
    /// step, after which it is gone as far as a resume can tell), then what its record names is removed,
    /// then the folder itself when nothing else is in it (``removeRecorded(_:)``). A leftover from a run
    /// killed while removing is removed by the next run that claims the target. Nothing is removed by
    /// following a link: a link at the name is removed itself.
    static func remove(_ work: URL) {
        let trash = RunNames.removing(work)
        removeRecorded(trash)
        if (try? FileOperations.rename(work.path(percentEncoded: false), to: trash.path(percentEncoded: false), durable: false)) != nil {
            removeRecorded(trash)
        } else {
            removeRecorded(work)
        }
    }

    /// Removes what the record of the folder at `work` names (each entry with the files that come with
    /// it, and the run folders kept for it, each by its own record), then the record, then the folder
    /// when nothing else is in it. What Moult did not make stays, and so does the folder holding it.
    /// A folder with no record (an earlier release's) is removed by the names Moult gives a work
    /// folder's entries (``/MoultStore/RunNames/isWorkEntry(_:)``), never anything else in it. A link
    /// or a file at `work` is removed itself.
    ///
    /// - Returns: the names left in the folder, which Moult did not make (empty when it is gone).
    @discardableResult
    public static func removeRecorded(_ work: URL) -> [String] {
        guard let info = FileOperations.attributes(work.path(percentEncoded: false)) else { return [] }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            FileOperations.remove(work.path(percentEncoded: false))
            return []
        }
        let names = recorded(in: work) ?? (FileOperations.names(in: work.path(percentEncoded: false)) ?? []).filter(RunNames.isWorkEntry)
        for name in names { removeEntry(work.appending(path: name)) }
        removeEntry(work.appending(path: madeRecord))
        if FileOperations.removeEmptyDirectory(work.path(percentEncoded: false)) { return [] }
        return (FileOperations.names(in: work.path(percentEncoded: false)) ?? []).sorted()
    }

    /// Removes an entry Moult made and what comes with it: the run folders kept for it (each by its own
    /// record), its companions, then the entry (a run folder by its record, any other folder, such as an
    /// association table's or a store's support folder, whole).
    private static func removeEntry(_ entry: URL) {
        for folder in RunNames.workFolders(of: entry) {
            removeRecorded(RunNames.removing(folder))
            removeRecorded(folder)
        }
        for companion in RunNames.companions(of: entry) { try? FileOperations.removeTree(companion) }
        if recorded(in: entry) != nil || RunNames.isWorkFolder(entry.lastPathComponent) {
            removeRecorded(entry)
        } else {
            try? FileOperations.removeTree(entry)
        }
    }

    // MARK: - Records

    /// The record of the source's state a run's work was made from (a step's work folder).
    static let sourceStateRecord = "source-state"

    /// The record named `name` in the folder.
    func record(_ name: String) -> URL { work.appending(path: name) }

    /// The text of the record named `name`, nil when there is none (or it is empty).
    func read(_ name: String) -> String? {
        guard let data = FileOperations.contents(ofOwnFile: record(name).path(percentEncoded: false)), let text = String(data: data, encoding: .utf8), !text.isEmpty
        else { return nil }
        return text
    }

    /// Writes the record named `name` whole (a temporary name, then a rename), recorded as an entry first.
    func write(_ name: String, _ text: String, durable: Bool = true) throws {
        let url = try entry(name)
        do {
            try FileOperations.writeAtomically(Data(text.utf8), to: url, durable: durable)
        } catch {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Removes the record named `name` (none there is fine).
    func removeRecord(_ name: String) { try? FileOperations.removeTree(record(name)) }
}
