import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 37, item 1: a run holds the store's folder (and DEST's) from its start to its end. A run is
/// stopped at an operation of its own (`MOULT_FILE_PAUSE`), the store's folder is renamed away and a
/// symbolic link to another folder, or another folder, is put at its old name; then the run goes on. The
/// other folder holds a copy of the same store and support folder, so a run that went by the path would
/// find a store there to work on. By a listing with content hashes, nothing in the other folder is
/// created, changed or removed; the run completes in the folder it holds, where the store is then at the
/// new version; no message names `/proc/self/fd`.
@Suite struct HeldFolderTests {
    static let model = NothingOutsideTests.model
    static let toV2 = ["--model", model, "--to", "v2"]

    /// The scratch folder: `stores/` (the store `base.sqlite`, model E v1, with its `.base_SUPPORT`) and
    /// `other/`, a copy of it with a file of someone else's.
    struct Scene {
        let directory: TemporaryDirectory
        var stores: URL { directory.appending("stores") }
        var moved: URL { directory.appending("moved") }
        var other: URL { directory.appending("other") }
        var logs: URL { directory.appending("logs") }
        var fifo: URL { directory.appending("pause") }
    }

    static func scene() throws -> Scene {
        let scene = Scene(directory: try TemporaryDirectory("moult-held"))
        let manager = FileManager.default
        for folder in [scene.stores, scene.logs] { try manager.createDirectory(at: folder, withIntermediateDirectories: true) }
        try NothingOutsideTests.makeBase(in: scene.stores, logs: scene.logs)
        try manager.copyItem(at: scene.stores, to: scene.other)
        try Data("someone's notes\n".utf8).write(to: scene.other.appending(path: "notes.txt"))
        #expect(mkfifo(scene.fifo.path, 0o600) == 0)
        return scene
    }

    /// How many operations of the syscall room a run makes (`MOULT_FILE_TRACE`), on a scene of its own.
    static func operations(_ arguments: (Scene) -> [String]) throws -> Int {
        let scene = try scene()
        defer { scene.directory.remove() }
        let trace = scene.directory.appending("trace")
        let result = try MoultProcess.run(arguments(scene), environment: ["MOULT_FILE_TRACE": trace.path])
        #expect(result.exitCode == 0, "\(result.standardError)")
        let lines = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
        return lines.split(separator: "\n").count
    }

    /// What to put at the store folder's old name once it is renamed away.
    enum Swap: CustomStringConvertible {
        /// A symbolic link to `other/`.
        case link
        /// `other/` itself, renamed there.
        case folder

        var description: String { self == .link ? "a symbolic link" : "another folder" }
    }

    /// Runs `moult arguments`, stopped just before its operation number `pause`; there, `stores/` is renamed
    /// to `moved/` and `swap` put at its old name; then the run goes on to its end. Returns the exit status,
    /// what it printed, and whether it reached the stop (a run that ends before it is not stopped).
    static func runSwapped(_ arguments: [String], pause: Int, swap: Swap, in scene: Scene) throws -> (status: Int32, output: String, stopped: Bool) {
        let process = Process()
        process.executableURL = MoultProcess.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["MOULT_FILE_PAUSE": "\(pause):\(scene.fifo.path)"]) { $1 }
        let log = scene.logs.appending(path: "\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process.standardOutput = handle
        process.standardError = handle
        let fifo = scene.fifo.path
        // A run that ends before its stop would leave the opening below waiting for a reader: its end
        // opens the FIFO for reading, which lets the opening return.
        process.terminationHandler = { _ in
            let reader = open(fifo, O_RDONLY | O_NONBLOCK)
            if reader >= 0 { close(reader) }
        }
        try process.run()
        // Returns once the run has opened the FIFO for reading: it is at its stop, and stays there
        // until the FIFO is closed.
        let writer = open(fifo, O_WRONLY)
        let stopped = process.isRunning
        if stopped {
            let manager = FileManager.default
            try manager.moveItem(at: scene.stores, to: scene.moved)
            switch swap {
            case .link: try manager.createSymbolicLink(at: scene.stores, withDestinationURL: scene.other)
            case .folder: try manager.moveItem(at: scene.other, to: scene.stores)
            }
        }
        if writer >= 0 { close(writer) }
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: log, encoding: .utf8)) ?? "", stopped)
    }

    /// The version of the model the store at `url` is at.
    static func version(of url: URL) throws -> String? {
        let versioned = try VersionedModel(contentsOf: URL(filePath: model))
        return versioned.version(matchingEntityHashes: try StoreMetadata(contentsOf: url).entityHashes)?.name
    }

    /// One run stopped at operation `pause` with `swap`: the other folder unchanged, the run completed in
    /// the folder it holds.
    static func check(_ arguments: (Scene) -> [String], inPlace: Bool, pause: Int, swap: Swap) throws {
        let scene = try scene()
        defer { scene.directory.remove() }
        let before = NamedOutputsTests.listing(scene.other)
        let run = try runSwapped(arguments(scene), pause: pause, swap: swap, in: scene)
        let label = "\(arguments(scene).joined(separator: " ")), stopped at operation \(pause), \(swap) at stores/"
        #expect(run.stopped, "\(label): the run ended before its stop\n\(run.output)")
        let otherNow = swap == .link ? scene.other : scene.stores
        let after = NamedOutputsTests.listing(otherNow)
        #expect(after == before, "\(label) changed the other folder: \(NothingOutsideTests.difference(before, after))\n\(run.output)")
        #expect(run.status == 0, "\(label): exit \(run.status)\n\(run.output)")
        #expect(!run.output.contains("/proc/self"), "\(label): a message names a descriptor's path\n\(run.output)")
        // Completed where the run looked: the store (or DEST) there at v2, nothing of the run's own left.
        let migrated = scene.moved.appending(path: inPlace ? "base.sqlite" : "out.sqlite")
        #expect(try version(of: migrated) == "v2", "\(label): \(migrated.path) is not at v2\n\(run.output)")
        if !inPlace { #expect(try version(of: scene.moved.appending(path: "base.sqlite")) == "v1", "\(label): the source changed") }
        let leftovers = NamedOutputsTests.listing(scene.moved).keys.filter { $0.contains(".moult-") }
        #expect(leftovers.isEmpty, "\(label) left \(leftovers.sorted())")
    }

    static func inPlace(_ scene: Scene) -> [String] {
        ["migrate", scene.stores.appending(path: "base.sqlite").path] + toV2
    }

    static func output(_ scene: Scene) -> [String] {
        ["migrate", scene.stores.appending(path: "base.sqlite").path, "--output", scene.stores.appending(path: "out.sqlite").path] + toV2
    }

    /// In place, and into `--output` (DEST beside the store), each stopped at its first operation, a third
    /// of the way and half way.
    @Test(arguments: [true, false], [Swap.link, .folder])
    func aRunStaysInTheFolderItHolds(inPlace: Bool, swap: Swap) throws {
        let arguments = inPlace ? Self.inPlace : Self.output
        let count = try Self.operations(arguments)
        #expect(count > 6, "the run made \(count) operations")
        for pause in Set([1, count / 3, count / 2]) {
            try Self.check(arguments, inPlace: inPlace, pause: pause, swap: swap)
        }
    }

    /// A refusal in a held folder names the file by its path, never by the descriptor's.
    @Test func aRefusalNamesTheStoresPath() throws {
        let scene = try Self.scene()
        defer { scene.directory.remove() }
        try FileManager.default.createSymbolicLink(
            at: scene.stores.appending(path: "base.sqlite-wal"), withDestinationURL: scene.other.appending(path: "notes.txt"))
        let result = try MoultProcess.run(Self.inPlace(scene))
        #expect(result.exitCode != 0)
        #expect(result.standardError.contains(scene.stores.appending(path: "base.sqlite-wal").path), "\(result.standardError)")
        #expect(!result.standardError.contains("/proc/self"), "\(result.standardError)")
    }
}
