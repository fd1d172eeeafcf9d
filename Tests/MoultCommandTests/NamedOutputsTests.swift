import Foundation
import MoultTestSupport
import Testing

/// Outputs the user names (issue 37, item 4): no command writes a file the user named over the store it
/// reads, a file of that store, another of its outputs, or a file with other names (hard links): each is
/// refused (64) naming the paths, before anything is written, and the folder is as it was, byte for byte.
/// A FIFO given to `--events` or `--metrics` is written to and stays a FIFO.
@Suite struct NamedOutputsTests {
    /// A command line run in a folder holding `s.sqlite` (People v2), `d.sqlite` (People v3, DEST of
    /// `verify`), `other.txt` and `linked.txt` (one file, two names): `$` stands for the folder, and
    /// what stderr must contain.
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var says: [String]
        var testDescription: String { arguments.prefix(1).joined() + " " + arguments.dropFirst().filter { $0.hasPrefix("-") }.joined(separator: " ") }
    }

    static let model = FaultCommandTests.model
    static let chain = ["--model", model, "--to", "v3", "--mapping", FaultCommandTests.mapping("v2-to-v3")]
    static let toV3 = chain + ["--quiet"]

    static let cases: [Case] = [
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--output", "$/s.sqlite"], says: ["--output $/s.sqlite", "STORE $/s.sqlite"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--output", "$/s.sqlite-wal"], says: ["--output $/s.sqlite-wal", "STORE $/s.sqlite"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--output", "$/n.sqlite", "--metrics", "$/n.sqlite-journal"], says: ["--metrics $/n.sqlite-journal", "--output $/n.sqlite"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--events", "$/e.txt", "--metrics", "$/e.txt"], says: ["--metrics $/e.txt", "--events $/e.txt"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--output", "$/n.sqlite", "--events", "$/linked.txt"], says: ["--events $/linked.txt", "2 names"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--output", "$/linked.txt"], says: ["--output $/linked.txt", "2 names"]),
        Case(arguments: ["migrate", "$/s.sqlite"] + toV3 + ["--metrics", "$/s~.sqlite"], says: ["--metrics $/s~.sqlite", "STORE $/s.sqlite"]),
        Case(arguments: ["verify", "$/s.sqlite", "$/d.sqlite"] + chain + ["--events", "$/d.sqlite"], says: ["--events $/d.sqlite", "DEST $/d.sqlite"]),
        Case(arguments: ["verify", "$/s.sqlite", "$/d.sqlite"] + chain + ["--metrics", "$/s.sqlite-shm"], says: ["--metrics $/s.sqlite-shm", "STORE"]),
        Case(arguments: ["plan", "$/s.sqlite"] + chain + ["--metrics", "$/s.sqlite"], says: ["--metrics $/s.sqlite", "STORE $/s.sqlite"]),
        Case(arguments: ["convert", "$/s.sqlite", "--to", "xml", "--model", model, "--output", "$/s.sqlite-wal"], says: ["--output $/s.sqlite-wal", "STORE $/s.sqlite"]),
        Case(arguments: ["convert", "$/s.sqlite", "--to", "xml", "--model", model, "--output", "$/linked.txt"], says: ["--output $/linked.txt", "2 names"]),
        Case(arguments: ["test", model, "--objects", "5", "--fixtures", "$/fx", "--junit", "$/fx/report.xml"], says: ["--junit $/fx/report.xml", "--fixtures $/fx"]),
        Case(arguments: ["test", model, "--objects", "5", "--freeze", "$/fx"] + ["--fixtures", "$/fx"], says: ["--freeze $/fx", "--fixtures $/fx"]),
        Case(arguments: ["test", model, "--objects", "5", "--work", "$/w", "--junit", "$/w/r.xml"], says: ["--junit $/w/r.xml", "--work $/w"]),
        Case(arguments: ["test", model, "--objects", "5", "--junit", "$/linked.txt"], says: ["--junit $/linked.txt", "2 names"]),
        Case(arguments: ["generate", "$/linked.txt", "--model", model, "--objects", "5"], says: ["STORE $/linked.txt", "2 names"]),
        Case(arguments: ["create", "$/linked.txt", "--model", model], says: ["STORE $/linked.txt", "2 names"]),
        Case(arguments: ["model", "extract", "$/m.xcdatamodel", "--output", "$/m.xcdatamodel"], says: ["--output $/m.xcdatamodel", "STORE $/m.xcdatamodel"]),
    ]

    /// The folder's files, each with its kind and a hash of its content (a link: its target), not
    /// following links.
    static func listing(_ folder: URL) -> [String: String] {
        var listed: [String: String] = [:]
        let manager = FileManager.default
        for name in (manager.subpaths(atPath: folder.path) ?? []) {
            let path = folder.appending(path: name).path
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                var hash: UInt64 = 0xcbf2_9ce4_8422_2325
                for byte in (manager.contents(atPath: path) ?? Data()) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
                listed[name] = "file \(info.st_nlink) \(String(hash, radix: 16))"
            case S_IFLNK: listed[name] = "link " + ((try? manager.destinationOfSymbolicLink(atPath: path)) ?? "?")
            case S_IFDIR: listed[name] = "folder"
            case S_IFIFO: listed[name] = "fifo"
            default: listed[name] = "other"
            }
        }
        return listed
    }

    /// The folder every case runs in.
    static func seeded() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 30, in: directory, name: "s.sqlite")
        let destination = directory.appending("d.sqlite")
        let made = try MoultProcess.run(["migrate", store.path] + toV3 + ["--output", destination.path])
        #expect(made.exitCode == 0, "\(made.standardError)")
        try FileManager.default.copyItem(at: store, to: directory.appending("m.xcdatamodel"))
        try Data("someone else's\n".utf8).write(to: directory.appending("other.txt"))
        try FileManager.default.linkItem(at: directory.appending("other.txt"), to: directory.appending("linked.txt"))
        let fixtures = directory.appending("fx")
        let frozen = try MoultProcess.run(["test", model, "--objects", "5", "--version", "v1", "--freeze", fixtures.path])
        #expect(frozen.exitCode == 0, "\(frozen.standardError)")
        try FileManager.default.createDirectory(at: directory.appending("w"), withIntermediateDirectories: false)
        return directory
    }

    @Test(arguments: cases)
    func anOutputOverWhatTheRunUsesIsRefused(_ testCase: Case) throws {
        let directory = try Self.seeded()
        defer { directory.remove() }
        let folder = directory.url.path
        let before = Self.listing(directory.url)
        let run = try MoultProcess.run(testCase.arguments.map { $0.replacingOccurrences(of: "$", with: folder) })
        #expect(run.exitCode == 64, "\(run.standardError)")
        for text in testCase.says {
            let expected = text.replacingOccurrences(of: "$", with: folder)
            #expect(run.standardError.contains(expected), "\(expected) in \(run.standardError)")
        }
        #expect(Self.listing(directory.url) == before, "the folder changed: \(run.standardError)")
    }

    /// `--events` and `--metrics` naming FIFOs: the run writes its events and metrics through them (a
    /// reader on the other end) and both are FIFOs still.
    @Test func aFIFOIsWrittenToNeverReplaced() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 30, in: directory, name: "s.sqlite")
        var read: [String: Pipe] = [:]
        var readers: [Process] = []
        for name in ["events", "metrics"] {
            let fifo = directory.appending(name).path
            #expect(mkfifo(fifo, 0o600) == 0)
            let reader = Process()
            reader.executableURL = URL(filePath: "/bin/cat")
            reader.arguments = [fifo]
            let pipe = Pipe()
            reader.standardOutput = pipe
            try reader.run()
            read[name] = pipe
            readers.append(reader)
        }
        let run = try MoultProcess.run(
            ["migrate", store.path] + Self.toV3 + ["--output", directory.appending("d.sqlite").path]
                + ["--events", directory.appending("events").path, "--metrics", directory.appending("metrics").path])
        #expect(run.exitCode == 0, "\(run.standardError)")
        let events = String(decoding: read["events"]!.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let metrics = String(decoding: read["metrics"]!.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        for reader in readers { reader.waitUntilExit() }
        #expect(events.contains("\"finished\""), "\(events.prefix(300))")
        #expect(metrics.contains("# TYPE"), "\(metrics.prefix(300))")
        let listed = Self.listing(directory.url)
        #expect(listed["events"] == "fifo" && listed["metrics"] == "fifo", "\(listed)")
        #expect(!listed.keys.contains { $0.contains("moult-tmp") }, "\(listed)")
    }
}
