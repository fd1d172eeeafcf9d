import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 37, item 1: a run holds the store's folder (and DEST's) from its start to its end. A run (in
/// place, into `--output`, staged, `convert`) is stopped at an operation of its own (`MOULT_FILE_PAUSE`),
/// the store's folder is renamed away and a symbolic link to another folder, or another folder, is put at
/// its old name; then the run goes on. The other folder holds a copy of the same store and support
/// folder, so a run that went by the path would find a store there to work on. By a listing with content
/// hashes, nothing in the other folder is created, changed or removed; the run completes in the folder it
/// holds, where its result is; no message names `/proc/self/fd`.
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
        try Data(#"{ "stages": [ { "custom": { "from": "v1", "to": "v2" } } ] }"#.utf8).write(to: scene.directory.appending("stages.json"))
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

    /// The runs stopped and swapped: in place, into `--output` (DEST beside the store), staged in place,
    /// and `convert` into an XML store beside it.
    enum Kind: CaseIterable, CustomStringConvertible {
        case inPlace, output, staged, convert

        var description: String { "\(self == .inPlace ? "in place" : self == .output ? "--output" : self == .staged ? "staged" : "convert")" }

        func arguments(_ scene: Scene) -> [String] {
            let store = scene.stores.appending(path: "base.sqlite").path
            switch self {
            case .inPlace: return ["migrate", store] + toV2
            case .output: return ["migrate", store, "--output", scene.stores.appending(path: "out.sqlite").path] + toV2
            case .staged: return ["migrate", store, "--model", model, "--stages", scene.directory.appending("stages.json").path]
            case .convert: return ["convert", store, "--to", "xml", "--model", model, "--output", scene.stores.appending(path: "conv.xml").path]
            }
        }

        /// What the run made, in the folder it held (`moved/`), as it should be.
        func checkMade(in folder: URL, _ label: String, _ output: String) throws {
            let (store, out, xml) = (folder.appending(path: "base.sqlite"), folder.appending(path: "out.sqlite"), folder.appending(path: "conv.xml"))
            switch self {
            case .inPlace, .staged:
                #expect(try version(of: store) == "v2", "\(label): \(store.path) is not at v2\n\(output)")
            case .output:
                #expect(try version(of: out) == "v2", "\(label): \(out.path) is not at v2\n\(output)")
                #expect(try version(of: store) == "v1", "\(label): the source changed")
            case .convert:
                let text = (try? String(contentsOf: xml, encoding: .utf8)) ?? ""
                #expect(text.contains("<database"), "\(label): \(xml.path) is no XML store\n\(output)")
                #expect(try version(of: store) == "v1", "\(label): the source changed")
            }
        }
    }

    /// One run stopped at operation `pause` with `swap`: the other folder unchanged, the run completed in
    /// the folder it holds, nothing of its own left there.
    static func check(_ kind: Kind, pause: Int, swap: Swap) throws {
        let scene = try scene()
        defer { scene.directory.remove() }
        let before = NamedOutputsTests.listing(scene.other)
        let arguments = kind.arguments(scene)
        let run = try runSwapped(arguments, pause: pause, swap: swap, in: scene)
        let label = "\(arguments.joined(separator: " ")), stopped at operation \(pause), \(swap) at stores/"
        #expect(run.stopped, "\(label): the run ended before its stop\n\(run.output)")
        let otherNow = swap == .link ? scene.other : scene.stores
        let after = NamedOutputsTests.listing(otherNow)
        #expect(after == before, "\(label) changed the other folder: \(NothingOutsideTests.difference(before, after))\n\(run.output)")
        #expect(run.status == 0, "\(label): exit \(run.status)\n\(run.output)")
        #expect(!run.output.contains("/proc/self"), "\(label): a message names a descriptor's path\n\(run.output)")
        try kind.checkMade(in: scene.moved, label, run.output)
        let leftovers = NamedOutputsTests.listing(scene.moved).keys.filter { $0.contains(".moult-") }
        #expect(leftovers.isEmpty, "\(label) left \(leftovers.sorted())")
    }

    /// Each kind of run, stopped at its first operation, a third of the way and half way.
    @Test(arguments: Kind.allCases, [Swap.link, .folder])
    func aRunStaysInTheFolderItHolds(kind: Kind, swap: Swap) throws {
        let count = try Self.operations(kind.arguments)
        #expect(count >= 4, "\(kind) made \(count) operations")
        for pause in Set([1, count / 3, count / 2]) {
            try Self.check(kind, pause: pause, swap: swap)
        }
    }

    /// A refusal in a held folder names the file by its path, never by the descriptor's.
    @Test func aRefusalNamesTheStoresPath() throws {
        let scene = try Self.scene()
        defer { scene.directory.remove() }
        try FileManager.default.createSymbolicLink(
            at: scene.stores.appending(path: "base.sqlite-wal"), withDestinationURL: scene.other.appending(path: "notes.txt"))
        let result = try MoultProcess.run(Kind.inPlace.arguments(scene))
        #expect(result.exitCode != 0)
        #expect(result.standardError.contains(scene.stores.appending(path: "base.sqlite-wal").path), "\(result.standardError)")
        #expect(!result.standardError.contains("/proc/self"), "\(result.standardError)")
    }
}
