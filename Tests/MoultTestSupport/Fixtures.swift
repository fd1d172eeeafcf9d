public import Foundation
public import MoultModel

/// Locates the real Core Data files copied into `Tests/Fixtures` (see its README and LICENSE files)
/// and the scenario data in `Datasets/`.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this file's path so that tests run from any working directory.
    public static let root: URL = URL(filePath: #filePath)
        .deletingLastPathComponent()  // MoultTestSupport
        .deletingLastPathComponent()  // Tests
        .appending(path: "Fixtures", directoryHint: .isDirectory)

    /// The package's root folder.
    public static let packageRoot: URL = root.deletingLastPathComponent().deletingLastPathComponent()

    /// `Datasets/` at the package's root.
    public static let datasets: URL = packageRoot.appending(path: "Datasets", directoryHint: .isDirectory)

    /// A file or folder under `Tests/Fixtures`.
    /// The largest fixture file a fuzzer takes as a seed. A fuzzed input is read whole at every
    /// iteration: XCServerCoreData's two mapping models (3.5 MB each, their models archived in them)
    /// would make each fuzz suite many times slower, and hold no construct the smaller ones lack.
    public static let fuzzSeedLimit = 1 << 20

    /// Whether a fixture file is small enough to seed a fuzzer (`fuzzSeedLimit`).
    public static func isFuzzSeed(_ file: URL) -> Bool {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int else { return false }
        return size <= fuzzSeedLimit
    }

    public static func url(_ relativePath: String) -> URL {
        root.appending(path: relativePath)
    }

    /// A People mapping by name (`v2-to-v3`): those of `Datasets/People/Mappings`, and
    /// `v4-to-v5-builtin`, the v4 → v5 mapping with the built-in policy, kept apart in
    /// `Datasets/People/BuiltinPolicy` so that the Mappings folder holds one mapping per step.
    public static func peopleMapping(_ name: String) -> URL {
        name == "v4-to-v5-builtin"
            ? datasets.appending(path: "People/BuiltinPolicy/v4-to-v5.json") : datasets.appending(path: "People/Mappings/\(name).json")
    }

    /// The People scenario's versioned model.
    public static var peopleModel: URL {
        datasets.appending(path: "People/People.xcdatamodeld", directoryHint: .isDirectory)
    }
}

/// A directory under the system's temporary folder, removed when `remove()` is called.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    /// Creates a fresh, empty directory.
    public init(_ label: String = "moult-test") throws {
        url = FileManager.default.temporaryDirectory
            .appending(path: "\(label)-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func appending(_ component: String) -> URL { url.appending(path: component) }

    /// Copies a fixture store, with its `-wal` and `-shm` companions when present, into this directory.
    ///
    /// Tests open the copy, so that a fixture is never touched.
    public func copyStore(_ fixture: URL, as name: String? = nil) throws -> URL {
        let destination = url.appending(path: name ?? fixture.lastPathComponent)
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(filePath: fixture.path + suffix)
            guard manager.fileExists(atPath: from.path) else { continue }
            let to = URL(filePath: destination.path + suffix)
            try? manager.removeItem(at: to)
            try manager.copyItem(at: from, to: to)
        }
        return destination
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

// MARK: - Models written for tests

extension VersionedModel {
    /// Writes the model as an `.xcdatamodeld` folder (``VersionedModel/xcodeFiles()``), for a test: the
    /// library's own writes go through `MoultStore`'s `FileOperations.writeFolder(_:at:)`.
    public func write(to url: URL) throws {
        for file in xcodeFiles() {
            let target = url.appending(path: file.path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try file.contents.write(to: target, options: .atomic)
        }
    }
}
