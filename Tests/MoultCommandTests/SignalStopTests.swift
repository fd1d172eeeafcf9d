import Foundation
import MoultTestSupport
import Testing

/// SIGTERM and SIGINT end a run with 75 even when it is blocked in I/O, where it never reaches a chunk
/// boundary (issue 37, item 3): here, opening `--events` FIFO that nothing reads. No timing is asserted;
/// the 60 s limit only keeps a hang from holding the suite.
@Suite struct SignalStopTests {
    /// Whether a thread of `pid` is inside `openat` (x86-64's system call 257; on another machine the
    /// test waits its fixed second instead).
    static func isOpening(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? ""
            return text.hasPrefix("257 ")
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalEndsARunBlockedInIOWith75(signal: Int32) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 30, in: directory, name: "s.sqlite")
        let fifo = directory.appending("events").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let process = Process()
        process.executableURL = MoultProcess.executable
        process.arguments = ["migrate", store.path] + NamedOutputsTests.toV3 + ["--output", directory.appending("d.sqlite").path, "--events", fifo]
        process.standardError = FileHandle.nullDevice
        try process.run()
        var waited = 0
        while !Self.isOpening(process.processIdentifier), waited < 200 {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 1
        }
        Thread.sleep(forTimeInterval: 0.2)
        kill(process.processIdentifier, signal)
        var guardTime = 0
        while process.isRunning, guardTime < 600 {
            Thread.sleep(forTimeInterval: 0.1)
            guardTime += 1
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("the run did not end after the signal (killed after 60 s)")
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 75, "\(process.terminationReason.rawValue) \(process.terminationStatus)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("d.sqlite").path))
    }
}
