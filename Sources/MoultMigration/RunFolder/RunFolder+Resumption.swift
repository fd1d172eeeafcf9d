public import Foundation
import MoultStore

/// The one rule by which a run goes on from what an earlier one left in its run folder, whichever
/// driver runs it (a streamed run into an output, a chain's steps, a run in place, an XML run):
///
/// 1. No work there: start afresh.
/// 2. Work of another migration (other arguments, another plan): refuse, and never delete it. The user
///    finishes it with that run's arguments, or gives it up with `moult abandon`.
/// 3. Work made from another state of the source than the one there now (its content decides; times and
///    sizes never make the check pass): refuse. This is checked before a resume and before a swap, so
///    neither goes on from, nor puts in place, work made from a store that has changed since.
/// 4. Otherwise: finish (only the swap is left) or resume.
///
/// A driver reads its own entries to say what is there (``Earlier``), since each keeps different work
/// (a partial store with its checkpoint, a step's result, an XML store's SQLite copy); what to do about
/// it is decided here, once. A refusal changes nothing: the work stays for a rerun or for `moult abandon`.
///
/// ```swift
/// let earlier = RunFolder.Earlier(work: partialExists ? .underWay : .none, sameArguments: recorded == fingerprint)
/// switch try folder.resumption(of: earlier, source: sourceURL, state: state, otherRun: { mismatch }) {
/// case .startAfresh: …
/// case .resume: …
/// case .finish: …
/// }
/// ```
extension RunFolder {
    /// What an earlier run left in the folder, as the driver that reads it finds it.
    struct Earlier {
        /// How far the earlier run's work got.
        enum Work {
            /// None: nothing a run could go on from (no folder, or only records of a run that made nothing yet).
            case none
            /// Work under way, to resume.
            case underWay
            /// Finished work of which only the last move (a swap, a rename) is left.
            case finished
        }

        var work: Work
        /// Whether the work is this migration's (its arguments, its plan); nil when the driver cannot tell
        /// (the source's identity still decides).
        var sameArguments: Bool?
    }

    /// What the run does with what it found.
    enum Resumption: Equatable {
        case startAfresh
        case resume
        case finish
    }

    /// Decides what a run does with an earlier one's work (the rule above).
    ///
    /// - Parameters:
    ///   - record: the record of the source's state the earlier run wrote when its work began.
    ///   - otherRun: the refusal of another migration's work, in the driver's words (what differs).
    /// - Throws: ``/MoultEngine/MigrationError`` `.checkpointMismatch` (another migration's work) or
    ///   `.sourceChanged` (work made from another state of the source); nothing is changed.
    func resumption(
        of earlier: Earlier, source: URL, state: StoreFileState, record: String = sourceStateRecord, otherRun: () -> MigrationError
    ) throws -> Resumption {
        if earlier.work == .none { return .startAfresh }
        if earlier.sameArguments == false { throw otherRun() }
        try checkSource(record: record, current: state, source: source)
        return earlier.work == .finished ? .finish : .resume
    }

    /// Begins, or goes on with, work recorded against the source's state: when the record is there (an
    /// earlier run's work), the source must be the one that work was made from (``resumption(of:source:state:record:otherRun:)``);
    /// when it is not, it is written (the run begins).
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.sourceChanged`, or `.io` when the record cannot be written.
    func beginOrResume(record name: String = sourceStateRecord, current: StoreFileState, source: URL) throws {
        let earlier = Earlier(work: read(name) == nil ? .none : .underWay)
        if try resumption(of: earlier, source: source, state: current, record: name, otherRun: anotherMigration) == .startAfresh {
            try write(name, current.text)
        }
    }

    /// The refusal of another migration's work, when the driver has no words of its own for what differs.
    func anotherMigration() -> MigrationError {
        MigrationError(
            .checkpointMismatch,
            "the work folder \(work.path) holds another migration's work: run again with that run's arguments to finish it, or give it up with `moult abandon` on the output (in place: on the store)")
    }

    /// Refuses work made from another state of the source than the one at `source` now (the folder's
    /// record `name`, written when the work began). A folder with work and no record (an earlier
    /// release's, or one whose record was removed) is refused too: nothing says what it was made from.
    func checkSource(record name: String = sourceStateRecord, current: StoreFileState, source: URL) throws {
        let recorded = read(name).flatMap(StoreFileState.init(text:))
        let changes = recorded.map { current.differences(from: $0) } ?? ["no record of the source's state is in the work folder"]
        guard !changes.isEmpty else { return }
        throw MigrationError(
            .sourceChanged,
            "the source \(source.path) changed since the interrupted run whose work is in \(work.path) (\(changes.joined(separator: ", "))): "
                + "that work was made from another state of it and cannot be resumed; to start again, give that run up with `moult abandon` on the output (in place: on the store), which removes \(work.path)")
    }
}

extension RunFolder {
    /// The work folders of `target` that a finished run could not remove because they hold files Moult
    /// did not make (kept under their `.removing` name, ``/MoultStore/RunNames/removing(_:)``), with those files' names.
    /// A run says so when it ends: its own work is gone, and what is left is someone else's.
    public static func keptFolders(of target: URL) -> [(folder: URL, names: [String])] {
        RunNames.beingRemoved(for: target).compactMap { folder in
            guard (try? exists(folder)) == true else { return nil }
            let names = (FileOperations.names(in: folder.path(percentEncoded: false)) ?? []).sorted()
            return names.isEmpty ? nil : (folder, names)
        }
    }
}
