import Foundation
import MoultTestSupport
import Testing

/// The XML paths and `convert`, stopped before their file operations in turn (`MOULT_FILE_CRASH`;
/// twelve spread over the run, or all: `KillPoints.spread`) and run again until they exit 0: each ends
/// with the files an uninterrupted run makes (the output's bytes, the backup's, the folder's entries),
/// nothing stray. The random-kill harness (`Benchmarks/scripts/run-folder-harness.sh`) kills the same
/// paths at random instants.
@Suite(.serialized) struct XMLKillPointTests {
    static let model = Fixtures.peopleModel.path

    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case xmlInPlace, xmlToSQLite, xmlToXML, sqliteToXML, convert
        var testDescription: String { rawValue }
    }

    /// The path's input in `directory` and its command.
    static func prepare(_ path: Path, in directory: TemporaryDirectory) throws -> [String] {
        let sqlite = try MigrateCommandTests.generate("1", persons: 40, in: directory, name: "s.sqlite")
        if path == .xmlInPlace || path == .xmlToSQLite || path == .xmlToXML {
            let converted = try MoultProcess.run(["convert", sqlite.path, "--to", "xml", "--output", directory.appending("s.xml").path, "--model", model])
            #expect(converted.exitCode == 0, "\(converted.standardError)")
            try FileManager.default.removeItem(at: sqlite)
        }
        return arguments(path, in: directory)
    }

    /// A copy of `template`'s files (a path's input, made once) in `directory`, and the path's command there.
    static func prepare(_ path: Path, in directory: TemporaryDirectory, from template: TemporaryDirectory) throws -> [String] {
        for name in try FileManager.default.contentsOfDirectory(atPath: template.url.path) {
            try FileManager.default.copyItem(at: template.appending(name), to: directory.appending(name))
        }
        return arguments(path, in: directory)
    }

    /// The path's command on its input in `directory`.
    static func arguments(_ path: Path, in directory: TemporaryDirectory) -> [String] {
        let sqlite = directory.appending("s.sqlite")
        let xml = directory.appending("s.xml")
        switch path {
        case .xmlInPlace: return ["migrate", xml.path, "--model", model, "--to", "v2", "--chunk-size", "10", "--quiet"]
        case .xmlToSQLite:
            return ["migrate", xml.path, "--model", model, "--to", "v2", "--output", directory.appending("d.sqlite").path, "--output-type", "sqlite",
                    "--chunk-size", "10", "--quiet"]
        case .xmlToXML:
            return ["migrate", xml.path, "--model", model, "--to", "v2", "--output", directory.appending("d.xml").path, "--chunk-size", "10", "--quiet"]
        case .sqliteToXML:
            return ["migrate", sqlite.path, "--model", model, "--to", "v2", "--output", directory.appending("d.xml").path, "--output-type", "xml",
                    "--chunk-size", "10", "--quiet"]
        case .convert: return ["convert", sqlite.path, "--to", "xml", "--output", directory.appending("d.xml").path, "--model", model]
        }
    }

    /// The folder's entries and the bytes of every file but an SQLite store's (whose pages may be laid
    /// out otherwise after a resume), compared by its rows and metadata (`sqlite3 .dump`) instead.
    static func state(of directory: TemporaryDirectory) throws -> [String: String] {
        var state: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where name != "trace" {
            let url = directory.appending(name)
            if name.hasSuffix(".sqlite") {
                state[name] = try dump(url)
            } else if name.hasSuffix("-wal") || name.hasSuffix("-shm") {
                state[name] = "companion"
            } else {
                state[name] = try MigrateCommandTests.digest(url)
            }
        }
        return state
    }

    /// Every row of a store, as `sqlite3 .dump` writes it.
    static func dump(_ url: URL) throws -> String {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-readonly", url.path, ".dump"]
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: Path.allCases)
    func killedBeforeAnyFileOperationEndsAsTheUninterruptedRun(path: Path) throws {
        let template = try TemporaryDirectory()
        defer { template.remove() }
        _ = try Self.prepare(path, in: template)
        let whole = try TemporaryDirectory()
        defer { whole.remove() }
        let wholeArguments = try Self.prepare(path, in: whole, from: template)
        let trace = whole.appending("trace")
        let uninterrupted = try MoultProcess.run(wholeArguments, environment: ["MOULT_FILE_TRACE": trace.path])
        #expect(uninterrupted.exitCode == 0, "\(uninterrupted.standardError)")
        let expected = try Self.state(of: whole)
        let count = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").count
        #expect(count >= 2, "\(path): the run writes through its file operations")
        for operation in KillPoints.spread(count) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let arguments = try Self.prepare(path, in: directory, from: template)
            let killed = try MoultProcess.run(arguments, environment: ["MOULT_FILE_CRASH": "\(operation)"])
            #expect(killed.terminatedBySignal || killed.exitCode == 0, "\(path), operation \(operation): \(killed.standardError)")
            var finished = try MoultProcess.run(arguments)
            for _ in 0..<3 where finished.exitCode == 75 { finished = try MoultProcess.run(arguments) }
            #expect(finished.exitCode == 0, "\(path), killed at operation \(operation): \(finished.standardError)")
            #expect(try Self.state(of: directory) == expected, "\(path), killed at operation \(operation)")
        }
    }

    /// A run stopped after it made the XML store's SQLite copy, then the store written by another
    /// program (here: replaced by another store of the same version), then the same command: the work
    /// was made from the old content, so the rerun is refused (65) and changes nothing; given up with
    /// `moult abandon`, the next run migrates what the store holds now. Before, the rerun migrated the
    /// stale copy over the store, exit 0.
    @Test(arguments: [Path.xmlInPlace, .xmlToXML])
    func aResumeAfterTheXMLStoreChangedIsRefused(path: Path) throws {
        // Where the run's first work takes its name in its folder (in place: the SQLite copy; into DEST:
        // the SQLite destination, the XML being read directly), from an uninterrupted run's trace.
        let traced = try TemporaryDirectory()
        defer { traced.remove() }
        let trace = traced.appending("trace")
        let whole = try MoultProcess.run(try Self.prepare(path, in: traced), environment: ["MOULT_FILE_TRACE": trace.path])
        #expect(whole.exitCode == 0, "\(whole.standardError)")
        let operations = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        let copied = try #require(
            operations.firstIndex { $0.hasPrefix("rename ") && ($0.hasSuffix("/source.sqlite") || $0.hasSuffix("/destination.sqlite")) })

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let arguments = try Self.prepare(path, in: directory)
        let store = directory.appending("s.xml")
        let other = try MigrateCommandTests.generate("1", persons: 30, in: directory, name: "other.sqlite")
        let otherXML = directory.appending("other.xml")
        let converted = try MoultProcess.run(["convert", other.path, "--to", "xml", "--output", otherXML.path, "--model", Self.model])
        #expect(converted.exitCode == 0, "\(converted.standardError)")
        // (Operations are counted from 1: that rename is operation `copied + 1`.)
        let killed = try MoultProcess.run(arguments, environment: ["MOULT_FILE_CRASH": "\(copied + 2)"])
        #expect(killed.terminatedBySignal, "\(killed.standardError)")
        try FileManager.default.removeItem(at: store)
        try FileManager.default.copyItem(at: otherXML, to: store)
        // (The killed run's lock file, which nobody holds, is taken over and removed as any run does.)
        let lock = "/\(path == .xmlInPlace ? "s.xml" : "d.xml").moult-lock"
        let before = try Self.tree(of: directory.url).filter { $0.key != lock }
        let refused = try MoultProcess.run(arguments)
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("changed since the interrupted run"), "\(refused.standardError)")
        #expect(try Self.tree(of: directory.url).filter { $0.key != lock } == before, "a refused rerun changes nothing")
        let target = path == .xmlInPlace ? store : directory.appending("d.xml")
        let abandoned = try MoultProcess.run(["abandon", target.path])
        #expect(abandoned.exitCode == 0, "\(abandoned.standardError)")
        let finished = try MoultProcess.run(arguments)
        #expect(finished.exitCode == 0, "\(finished.standardError)")
        let inspected = try MoultProcess.run(["inspect", target.path, "--model", Self.model])
        #expect(inspected.standardOutput.contains(" 30 objects"), "the store's content now: \(inspected.standardOutput)")
    }

    /// Every file under `folder`, by its path in it, with its bytes' digest (a folder: its name alone).
    static func tree(of folder: URL) throws -> [String: String] {
        var tree: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isDirectoryKey])
        while let url = enumerator?.nextObject() as? URL {
            let name = String(url.path.dropFirst(folder.path.count))
            let isFolder = try url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory == true
            tree[name] = isFolder ? "folder" : try MigrateCommandTests.digest(url)
        }
        return tree
    }
}
