import Foundation
import MoultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 39: a `moult test` whose binary is replaced while it runs starts every child from the binary it
/// runs, not from the file now at its path, so one test never mixes two releases.
@Suite struct TestCommandReplacedBinaryTests {
    /// `moult test` runs from a copy of the built binary, held (`MOULT_TEST_HOLD`) after it has started and
    /// before its first child; meanwhile a script that writes a marker and exits 1 is renamed onto the
    /// copy's path, as `make install` or a `mv` would replace it. Released, the test starts its children
    /// (`migrate` on every path, `verify`): it passes, and the script never ran.
    @Test func childrenStartFromTheRunningBinaryAfterItsPathIsReplaced() throws {
        let folder = try TemporaryDirectory("moult-replaced-binary")
        defer { folder.remove() }
        let binary = folder.appending("bin/moult")
        try FileManager.default.createDirectory(at: binary.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: MoultProcess.executable, to: binary)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary.path)
        let marker = folder.appending("impostor-ran")
        let impostor = folder.appending("bin/impostor")
        try Data("#!/bin/sh\necho \"$0 $*\" >> '\(marker.path)'\nexit 1\n".utf8).write(to: impostor)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: impostor.path)
        let hold = folder.appending("hold")
        #expect(mkfifo(hold.path, 0o600) == 0)
        let outputFile = folder.appending("out.txt")
        try Data().write(to: outputFile)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "test", Fixtures.peopleModel.path, "--to", "v3", "--version", "v2", "--mapping",
            Fixtures.datasets.appending(path: "People/Mappings").path, "--objects", "30", "--seed", "1",
            "--work", folder.appending("work").path,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["MOULT_TEST_HOLD": hold.path]) { $1 }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // Opening the FIFO for writing succeeds once the test has opened it for reading: it is then
        // running from the copy and has started no child.
        var writer: Int32 = -1
        while writer < 0 && process.isRunning {
            writer = open(hold.path, O_WRONLY | O_NONBLOCK)
            if writer < 0 { Thread.sleep(forTimeInterval: 0.02) }
        }
        try #require(writer >= 0, "moult test ended before its first child: \(String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self))")
        #expect(rename(impostor.path, binary.path) == 0)
        #expect(try String(contentsOf: binary, encoding: .utf8).hasPrefix("#!/bin/sh"))
        close(writer)
        process.waitUntilExit()

        let text = try String(contentsOf: outputFile, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("all passed"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "a child started from the replaced path: \((try? String(contentsOf: marker, encoding: .utf8)) ?? "")")
    }
}
