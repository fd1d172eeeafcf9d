public import Foundation

/// A case of the shared regression folders, copied into `Tests/Fixtures/regressions/<group>/<name>`
/// with its `cmd.sh` and `expected.txt`, run as its `cmd.sh` is written: from a scratch copy of the
/// folder, with `MOULT` naming the `moult` beside the test bundle (its `moult-people` sibling is there
/// too) and `MOULT_ROOT` a root made for the run, whose `Datasets` is the package's and whose
/// `.build/release` holds the test build's binaries (some cases name `$ROOT/.build/release/moult-people`).
///
/// ```swift
/// let run = try RegressionCase("faults", "fleet-results-migrated-twice").run()
/// #expect(run.output.contains("0 migrated, 10 already migrated"))
/// ```
public struct RegressionCase: Sendable {
    /// The case's folder in the project's fixtures.
    public let folder: URL

    public init(_ group: String, _ name: String) {
        folder = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/\(group)/\(name)", directoryHint: .isDirectory)
    }

    /// What the script printed (standard output and standard error, in the order they were written),
    /// and how it ended.
    public struct Run: Sendable {
        public var output: String
        public var exitCode: Int32
        /// The scratch copy the script ran in (removed by ``remove()``): its work files, to look at.
        public var scratch: URL

        public func remove() { try? FileManager.default.removeItem(at: scratch.deletingLastPathComponent()) }

        /// The lines of the output that contain `text`.
        public func lines(containing text: String) -> [String] {
            output.split(separator: "\n").map(String.init).filter { $0.contains(text) }
        }
    }

    /// Runs `sh cmd.sh` in a scratch copy of the case's folder.
    ///
    /// - Parameter environment: variables added to the script's environment.
    public func run(environment: [String: String] = [:]) throws -> Run {
        let base = FileManager.default.temporaryDirectory.appending(path: "moult-case-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let scratch = base.appending(path: folder.lastPathComponent, directoryHint: .isDirectory)
        try FileManager.default.copyItem(at: folder, to: scratch)
        let root = base.appending(path: "root", directoryHint: .isDirectory)
        let release = root.appending(path: ".build/release", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: release, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: root.appending(path: "Datasets"), withDestinationURL: Fixtures.datasets)
        for tool in [MoultProcess.Tool.moult, .people] {
            try FileManager.default.createSymbolicLink(at: release.appending(path: tool.rawValue), withDestinationURL: MoultProcess.executable(tool))
        }
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        process.arguments = [scratch.appending(path: "cmd.sh").path]
        process.currentDirectoryURL = root
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["MOULT": MoultProcess.executable.path, "MOULT_ROOT": root.path].merging(environment) { $1 }) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(output: String(decoding: data, as: UTF8.self), exitCode: process.terminationStatus, scratch: scratch)
    }
}
