import Foundation
import MoultTestSupport
import Testing

/// Issue 39: the mutation test of `moult test` itself (Benchmarks/scripts/mutation-test.sh), 20 seeded
/// mappings that each lose data in one way (a filter, an attribute left out, a wrong expression, a
/// relationship left out) must fail, and 20 right ones must pass. The long run is 200 of each.
@Suite struct MutationScriptTests {
    @Test func twentyLossyMappingsFailAndTwentyRightOnesPass() throws {
        let work = try TemporaryDirectory("mutation-test")
        defer { work.remove() }
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = [
            Fixtures.packageRoot.appending(path: "Benchmarks/scripts/mutation-test.sh").path, "--count", "20", "--objects", "24", "--jobs", "4",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["MOULT_BINARY": MoultProcess.executable.path, "BENCH_WORK": work.url.path]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("lossy: 20 of 20 failed as they must; right: 20 of 20 passed; wrong: 0; skipped: 0"), "\(output)")
        for kind in ["filter:", "attribute:", "expression:", "relationship:"] {
            #expect(output.split(separator: "\n").filter { $0.hasPrefix("lossy ") && $0.contains(kind) }.count == 5, "\(kind)\n\(output)")
        }
    }
}
