import Foundation
import MoultMigration
import MoultTestSupport
import Testing

/// The fault points are one list (``FaultPoint``): `moult fault-points` prints it, the harnesses check
/// their kill points against it, and `MOULT_FAULT` naming anything else is bad usage (64), not a run
/// that silently never stops.
@Suite struct FaultPointTests {
    @Test func theCommandListsEveryPointOnce() throws {
        let result = try MoultProcess.run(["fault-points"])
        #expect(result.exitCode == 0)
        let names = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(names == FaultPoint.names)
        #expect(Set(names).count == names.count)
        #expect(names.contains("after-sqlite-commit") && names.contains("inplace-change-rebuildTable") && !names.contains("inplace-change"))
        // Hidden: not in the help a user reads.
        #expect(!(try MoultProcess.run(["--help"])).standardOutput.contains("fault-points"))
    }

    @Test func anUnknownFaultPointIsBadUsage() throws {
        let result = try MoultProcess.run(["fault-points"], environment: ["MOULT_FAULT": "after-sqlite-comit:2"])
        #expect(result.exitCode == 64)
        #expect(result.standardError.contains("MOULT_FAULT names 'after-sqlite-comit', which is not a fault point"), "\(result.standardError)")
    }
}
