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

    /// The executables the package builds.
    public enum Tool: String, Sendable {
        /// `moult`: no policy class compiled in.
        case moult = "moult"
        /// `moult-people`: moult with the People policies and the People generator (Datasets/People/CLI).
        case people = "moult-people"
        /// The documentation's Swift examples (Examples/DocExamples).
        case docExamples = "doc-examples"
    }

    /// The `moult` binary beside the test bundle (`.build/<config>/moult`).
    public static var executable: URL { executable(.moult) }

    /// A binary of the package beside the test bundle (`.build/<config>/<name>`).
    public static func executable(_ tool: Tool) -> URL {
        let testBinary = URL(filePath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the tests run from `.build/<config>/MoultPackageTests.xctest`; on macOS from inside
        // `MoultPackageTests.xctest/Contents/MacOS`.
        while !FileManager.default.fileExists(atPath: directory.appending(path: tool.rawValue).path),
            directory.pathComponents.count > 1
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appending(path: tool.rawValue)
    }

    /// Runs `moult` (or another of the package's tools) with these arguments and waits for it to end.
    ///
    /// - Parameter environment: variables added to (or replacing) this process's environment, such as
    ///   `MOULT_FAULT`.
    public static func run(
        _ arguments: [String], tool: Tool = .moult, currentDirectory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Result {
        try run(executable(tool), arguments, currentDirectory: currentDirectory, environment: environment)
    }

    /// Runs any program (`/usr/bin/env` with `python3` and a script, say) with these arguments and waits
    /// for it to end, its standard output and standard error read apart.
    public static func run(
        _ executable: URL, _ arguments: [String], currentDirectory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Result {
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
