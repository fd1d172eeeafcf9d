import Foundation
import MoultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 39, item 6: a `moult test` that is stopped (SIGTERM, SIGINT) stops its child `moult`, and a
/// child whose `moult test` is gone (killed) stops itself.
@Suite(.serialized) struct TestCommandStopTests {
    /// Starts a `moult test` long enough to be caught with a child running; returns it and the child's pid.
    static func startWithAChild(in folder: TemporaryDirectory) throws -> (Process, Int32) {
        let process = Process()
        process.executableURL = MoultProcess.executable(.people)
        process.arguments = [
            "test", Fixtures.peopleModel.path, "--to", "v3", "--version", "v2", "--mapping",
            Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json").path, "--objects", "20000", "--work", folder.appending("work").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let child = Self.child(of: process.processIdentifier) { return (process, child) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        throw CancellationError()
    }

    /// A process whose parent is `parent`, found in /proc.
    static func child(of parent: Int32) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { continue }
            if status.split(separator: "\n").contains("PPid:\t\(parent)"), !status.contains("State:\tZ") { return pid }
        }
        return nil
    }

    static func isGone(_ pid: Int32, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            // A zombie (exited, not yet reaped by its parent) is gone too.
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            if kill(pid, 0) != 0 || status.contains("State:\tZ") { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aStoppedTestStopsItsChild(signal: Int32) throws {
        let folder = try TemporaryDirectory("moult-test-stop")
        defer { folder.remove() }
        let (process, child) = try Self.startWithAChild(in: folder)
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        #expect(Self.isGone(child, within: 4), "the child moult \(child) is still running")
    }

    @Test func aChildWhoseTestIsKilledStopsItself() throws {
        let folder = try TemporaryDirectory("moult-test-stop")
        defer { folder.remove() }
        let (process, child) = try Self.startWithAChild(in: folder)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(Self.isGone(child, within: 4), "the child moult \(child) is still running after its moult test was killed")
    }
}
