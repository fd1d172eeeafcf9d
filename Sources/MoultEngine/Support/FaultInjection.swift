import Foundation
import MoultStore

/// The named points of a migration where a test harness can make the process die, to prove that a
/// migration killed at any instant resumes to the same result (or, in place, leaves the store at one
/// version or the other). `moult`'s hidden `fault-points` command lists every name; the crash harnesses
/// (`Benchmarks/scripts/*crash-harness.sh`) take their points from it.
public enum FaultPoint: String, CaseIterable, Sendable {
    // A copy (`StreamingMigrator` and the engine), in the order a run reaches them.
    /// The new destination made, its checkpoint not yet.
    case storeCreated = "store-created"
    case chunkStart = "chunk-start"
    /// A chunk's rows written, nothing committed.
    case afterRows = "after-rows"
    /// Associations committed, the destination not.
    case afterLMDBCommit = "after-lmdb-commit"
    case afterSQLiteCommit = "after-sqlite-commit"
    /// Stage 2's set-wise links staged in their temporary table, then written.
    case setLinksStaged = "set-links-staged"
    case setLinksWritten = "set-links-written"
    /// Associations mirrored into the destination for the bulk SQL path; those left unwritten.
    case associationsMirrored = "associations-mirrored"
    case associationsUnwritten = "associations-unwritten"
    /// The relationships a pass leaves out, recorded.
    case relationshipsLeftOut = "relationships-left-out"
    case beforeFinish = "before-finish"
    /// One external binary data file carried beside the output (`ExternalDataCarrier`).
    case afterExternalFile = "after-external-file"
    /// The finished marker written, not yet renamed.
    case afterMarker = "after-marker"
    /// The output in place, the work directory not yet removed.
    case afterRename = "after-rename"
    // A chain into a new store.
    case chainStepCopied = "chain-step-copied"
    case chainStepMigrated = "chain-step-migrated"
    // In place.
    case inPlaceBackupCopied = "inplace-backup-copied"
    /// Before each kind of change of an SQL step: reached as `inplace-change-<kind>`
    /// (``/MoultStore/InPlaceChange/Kind``), one name per kind.
    case inPlaceChange = "inplace-change"
    case inPlaceStatement = "inplace-statement"
    case inPlaceForeignTriggers = "inplace-foreign-triggers"
    case inPlaceBeforeCommit = "inplace-before-commit"
    case inPlaceCleanupStatement = "inplace-cleanup-statement"
    case inPlaceBeforeSwap = "inplace-before-swap"
    case inPlaceAfterSwap = "inplace-after-swap"
    /// External binary data: the files no row will name recorded before the commit; the commit done,
    /// no file removed yet; one file removed.
    case inPlaceExternalRecorded = "inplace-external-recorded"
    case inPlaceBeforeExternalRemoval = "inplace-before-external-removal"
    case afterExternalRemoval = "after-external-removal"
    // Staged.
    case stagedPhase = "staged-phase"
    case stagedChunkStart = "staged-chunk-start"
    case stagedBeforeCommit = "staged-before-commit"
    case stagedAfterCommit = "staged-after-commit"
    case stagedBeforePutBack = "staged-before-put-back"
    case stagedFinished = "staged-finished"

    /// Every name a harness can give (`inplace-change` once per kind of change).
    public static var names: [String] {
        allCases.flatMap { point in
            point == .inPlaceChange ? InPlaceChange.Kind.allCases.map { "\(point.rawValue)-\($0.rawValue)" } : [point.rawValue]
        }
    }
}

/// Makes the process die at a ``FaultPoint``: armed by the command line (`MOULT_FAULT=<point>:<n>`, read
/// by `MoultCommand` only), the process sends itself SIGKILL the n-th time it reaches `<point>` (n
/// defaults to 1). Unarmed, a check is one comparison.
public enum FaultInjection {
    nonisolated(unsafe) private static var target: (point: String, count: Int)?

    /// `MOULT_FAULT` names no fault point.
    public struct UnknownPoint: Error, Sendable {
        public var message: String
    }

    /// Arms the fault `<point>[:<n>]`; an empty text disarms.
    ///
    /// - Throws: ``UnknownPoint`` for a point that is not one of ``FaultPoint/names``.
    public static func arm(_ specification: String) throws(UnknownPoint) {
        guard !specification.isEmpty else {
            target = nil
            return
        }
        let parts = specification.split(separator: ":", maxSplits: 1)
        let point = String(parts[0])
        guard FaultPoint.names.contains(point) else {
            throw UnknownPoint(message: "MOULT_FAULT names '\(point)', which is not a fault point (moult fault-points lists them)")
        }
        target = (point, parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }

    /// Dies here when this is the armed point and its count is reached.
    package static func reach(_ point: FaultPoint, _ qualifier: String? = nil) {
        guard var current = target else { return }
        guard current.point == (qualifier.map { "\(point.rawValue)-\($0)" } ?? point.rawValue) else { return }
        current.count -= 1
        target = current
        if current.count <= 0 {
            kill(getpid(), SIGKILL)
        }
    }
}
