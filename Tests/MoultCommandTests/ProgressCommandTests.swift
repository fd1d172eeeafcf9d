import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 27, item 6: the progress display counts source objects per pass, shows validation and
/// finishing, and ends at 100 %.
@Suite struct ProgressCommandTests {
    @Test func theProgressLinesCountSourceObjectsShowEachStageAndEndAt100() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 500, in: directory)
        let result = try MoultProcess.run([
            "migrate", store.path, "--model", InPlaceCommandTests.model, "--to", "v3", "--mapping", InPlaceCommandTests.mapping("v2-to-v3"),
            "--output", directory.appending("o.sqlite").path, "--chunk-size", "100",
        ])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n").map(String.init)
        // Each person is one source object of the pass that reads it: 500, not the rows of every pass.
        #expect(lines.contains { $0.contains("create PersonToPerson (pass 2/4)") && $0.contains("/500 objects") }, "\(lines)")
        // No pass counts more objects than the 500 persons it reads, nor more done than it has.
        let counts = lines.compactMap { line -> (done: Int, of: Int)? in
            guard let range = line.range(of: #"(\d+)/(\d+) objects"#, options: .regularExpression) else { return nil }
            let parts = line[range].dropLast(" objects".count).split(separator: "/").compactMap { Int($0) }
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }
        #expect(!counts.isEmpty, "\(lines)")
        for count in counts { #expect(count.of <= 500 && count.done <= count.of, "\(count): \(lines)") }
        let validating = try #require(lines.firstIndex(of: "[step 1/1] validating"), "\(lines)")
        let finishing = try #require(lines.firstIndex(of: "[step 1/1] finishing"), "\(lines)")
        let done = try #require(lines.firstIndex { $0.hasPrefix("[step 1/1] done  100%") }, "\(lines)")
        #expect(validating < finishing && finishing < done)
        #expect(lines[..<validating].last?.contains("100%") == true, "the last chunk's line is at 100 %: \(lines)")
    }

    /// On a terminal (a pseudo-terminal made by util-linux's `script`), an error that stops the run
    /// starts on a line of its own, below the progress line it interrupts.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func anErrorOnATerminalStartsBelowTheProgressLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try InPlaceCommandTests.generate("2", persons: 3000, in: directory)
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript("UPDATE ZPERSON SET ZAGE = 'abc' WHERE Z_PK = 2500")
        database.close()
        let command = [
            MoultProcess.executable.path, "migrate", store.path, "--model", InPlaceCommandTests.model, "--to", "v3",
            "--output", directory.appending("o.sqlite").path, "--chunk-size", "100", "--no-bulk-sql",
        ].map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 65, "\(text)")
        let error = try #require(text.range(of: "moult: error: invalid store"), "\(text)")
        // What comes before the error is the end of a line, and the progress line was drawn.
        // (A terminal ends lines with "\r\n", one Character in Swift: compare scalars.)
        #expect(text[..<error.lowerBound].unicodeScalars.last == "\n", "\(text.debugDescription)")
        #expect(text.contains("\r\u{1B}[K[step 1/1] create"), "\(text.debugDescription)")
    }
}
