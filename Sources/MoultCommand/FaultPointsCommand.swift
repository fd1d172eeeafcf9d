import ArgumentParser
import MoultMigration

/// `moult fault-points`: every name `MOULT_FAULT` takes, one per line (hidden; for the crash harnesses).
struct FaultPointsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fault-points", abstract: "List the fault points a crash harness can stop a run at (MOULT_FAULT=<point>[:<n>]).",
        shouldDisplay: false)

    func run() {
        for name in FaultPoint.names { print(name) }
    }
}
