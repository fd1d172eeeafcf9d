public import Foundation

/// Which of a run's file operations a test stops it before (`MOULT_FILE_CRASH`).
public enum KillPoints {
    /// The operations a run is stopped before, of the `count` an uninterrupted run makes: `most`
    /// spread evenly from the first to the last (a stop and a rerun are two processes each, and the
    /// suite has a time to keep), or every one with `MOULT_EVERY_KILL_POINT=1`. The random-kill harness
    /// (`Benchmarks/scripts/run-folder-harness.sh`) kills the same paths at random instants.
    public static func spread(_ count: Int, most: Int = 12) -> [Int] {
        guard count > 0 else { return [] }
        if ProcessInfo.processInfo.environment["MOULT_EVERY_KILL_POINT"] == "1" || count <= most { return Array(1...count) }
        return Array(Set((0..<most).map { 1 + $0 * (count - 1) / (most - 1) })).sorted()
    }
}
