import Foundation

/// Named points of the migration where a test harness can make the process die, to prove that a
/// migration killed at any instant resumes to the same result.
///
/// Set `MOULT_FAULT=<point>:<n>` and the process sends itself SIGKILL the n-th time it reaches
/// `<point>` (n defaults to 1). Points: `store-created` (the new destination made, its checkpoint
/// not yet), `chunk-start`, `after-rows` (a chunk's rows written, nothing
/// committed), `after-lmdb-commit` (associations committed, destination not), `after-sqlite-commit`,
/// `before-finish`, `after-marker` (finished marker written, not yet renamed), `after-external-file` (one
/// external binary data file carried beside the output, see `ExternalDataCarrier`), `after-rename` (output
/// in place, work directory not yet removed); in place, `inplace-external-recorded` (the external files the
/// step leaves without a reference recorded, the step not committed), `inplace-before-external-removal`
/// (committed, no file removed yet) and `after-external-removal` (one more file removed). Unset, a check is
/// one comparison.
enum FaultInjection {
    nonisolated(unsafe) private static var target: (point: String, count: Int)? = {
        guard let value = ProcessInfo.processInfo.environment["MOULT_FAULT"], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }()

    /// Dies here when this is the point and the count is reached.
    static func reach(_ point: String) {
        guard var current = target, current.point == point else { return }
        current.count -= 1
        target = current
        if current.count <= 0 {
            kill(getpid(), SIGKILL)
        }
    }
}
