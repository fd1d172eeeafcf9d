import MoultTestSupport
import Testing

@Suite struct HelpTests {
    @Test func helpListsExitCodes() throws {
        let result = try MoultProcess.run(["--help"])
        #expect(result.exitCode == 0)
        for code in ["64", "65", "66", "67", "74", "75"] {
            #expect(result.standardOutput.contains("  \(code) "), "exit code \(code) missing from --help")
        }
    }

    @Test func unknownOptionIsBadUsage() throws {
        let result = try MoultProcess.run(["hash", "--no-such-option"])
        #expect(result.exitCode == 64)
    }
}
