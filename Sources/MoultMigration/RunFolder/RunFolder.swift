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
/// try folder.checkSource(record: "store-state", current: state, source: storeURL)
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
        for leftover in RunNames.beingRemoved(for: target) { try? FileOperations.removeTree(leftover) }
        return lock
    }

    // MARK: - The folder

    /// Whether the folder is there, as a folder.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when something else has its name (a symbolic
    ///   link, which would make the run write into another folder, or a file); nothing is changed.
    public func exists() throws -> Bool { try Self.exists(work) }

    static func exists(_ work: URL) throws -> Bool {
        var info = stat()
        guard lstat(work.path, &info) == 0 else {
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

    /// Makes the folder (one already there is used; a link or a file is refused).
    public func make() throws { try Self.make(work) }

    static func make(_ work: URL) throws {
        do throws(StoreError) {
            try FileOperations.makeNewDirectory(work.path(percentEncoded: false))
            return
        } catch {
            guard error.code == .alreadyExists, try exists(work) else {
                throw MigrationError(.io, "cannot create the work folder \(work.path): \(error.message)")
            }
        }
    }

    /// Removes the folder whole (see `remove(_:)`).
    public func remove() { Self.remove(work) }

    /// Removes a work folder so that no kill leaves half of it: it is renamed away first (one atomic
    /// step, after which it is gone as far as a resume can tell), then deleted. A leftover from a run
    /// killed while deleting is deleted by the next run. Nothing is removed by following a link: a
    /// link at the name is removed itself.
    static func remove(_ work: URL) {
        let trash = RunNames.removing(work)
        try? FileOperations.removeTree(trash)
        if (try? FileOperations.rename(work.path(percentEncoded: false), to: trash.path(percentEncoded: false), durable: false)) != nil {
            try? FileOperations.removeTree(trash)
        } else {
            try? FileOperations.removeTree(work)
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

    /// Writes the record named `name` whole (a temporary name, then a rename).
    func write(_ name: String, _ text: String, durable: Bool = true) throws {
        do {
            try FileOperations.writeAtomically(Data(text.utf8), to: record(name), durable: durable)
        } catch {
            throw MigrationError(.io, "cannot write in the work folder \(work.path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Removes the record named `name` (none there is fine).
    func removeRecord(_ name: String) { try? FileOperations.removeTree(record(name)) }

    /// Refuses to resume work made from another state of the source than the one at `source` now (the
    /// folder's record `name`, written when the work began).
    func checkSource(record name: String = sourceStateRecord, current: StoreFileState, source: URL) throws {
        let recorded = read(name).flatMap(StoreFileState.init(text:))
        let changes = recorded.map { current.differences(from: $0) } ?? ["no record of the source's state is in the work folder"]
        guard !changes.isEmpty else { return }
        throw MigrationError(
            .sourceChanged,
            "the source \(source.path) changed since the interrupted run whose work is in \(work.path) (\(changes.joined(separator: ", "))): "
                + "that work was made from another state of it and cannot be resumed; to start again, give that run up with `moult abandon` on the output (in place: on the store), which removes \(work.path)")
    }

    /// Checks the source against the record `name`, or writes the record when there is none yet (the
    /// run begins).
    func recordOrCheckSource(record name: String = sourceStateRecord, current: StoreFileState, source: URL) throws {
        if FileManager.default.fileExists(atPath: record(name).path) {
            try checkSource(record: name, current: current, source: source)
        } else {
            try write(name, current.text)
        }
    }
}
