public import Foundation

/// Runs the built `moult` executable, for end-to-end tests of the command line.
public enum MoultProcess {
    /// What a run printed and how it ended.
    public struct Result: Sendable {
        public var exitCode: Int32
        public var standardOutput: String
        public var standardError: String
        /// Whether the process died of a signal (then ``exitCode`` is the signal's number).
        public var terminatedBySignal: Bool = false
    }

    /// The `moult` binary beside the test bundle (`.build/<config>/moult`).
    public static var executable: URL {
        let testBinary = URL(filePath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the tests run from `.build/<config>/MoultPackageTests.xctest`; on macOS from inside
        // `MoultPackageTests.xctest/Contents/MacOS`.
        while !FileManager.default.fileExists(atPath: directory.appending(path: "moult").path),
            directory.pathComponents.count > 1
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appending(path: "moult")
    }

    /// Runs `moult` with these arguments and waits for it to end.
    ///
    /// - Parameter environment: variables added to (or replacing) this process's environment, such as
    ///   `MOULT_FAULT`.
    public static func run(_ arguments: [String], currentDirectory: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes to the end before waiting, so a large output never blocks the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = error.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            exitCode: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self),
            terminatedBySignal: process.terminationReason == .uncaughtSignal)
    }
}
