import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 37's "Must show": every subcommand run in a folder seeded with symbolic links, hard links and
/// FIFOs at the names Moult reads or writes beside its stores (companions where a store has none, support
/// folders and `_EXTERNAL_DATA` entries, backup names, run folders, locks, status files, outputs), each
/// link leading to a victim outside the folder. After each run, by a listing with content hashes, the
/// victims are as they were and so is every file of the folder that is not the run's own; no run hangs.
/// The runs may be refused (a non-zero exit): what counts is that nothing outside changed.
@Suite struct NothingOutsideTests {
    static let model = Fixtures.url("regressions/faults/external-symlink-followed-out-of-store/E.xcdatamodeld").path
    static let mappingModel = Fixtures.url(
        "wibosco__CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration1to2.xcmappingmodel").path
    /// The external references the seeded stores hold: a plain file, then two names seeded with traps.
    static let references = ["AAAAAAAA-0000-4000-8000-000000000001", "AAAAAAAA-0000-4000-8000-000000000002", "AAAAAAAA-0000-4000-8000-000000000003"]

    /// One run: its arguments (relative to the seeded folder, where it runs) and the stems of the names
    /// that are its own (its store, output and their Moult names), which it may change.
    struct Case: Sendable, CustomStringConvertible {
        var arguments: [String]
        var owns: [String]
        var description: String { arguments.joined(separator: " ") }
    }

    static let toV2 = ["--model", model, "--to", "v2", "--quiet"]

    static let cases: [Case] = [
        Case(arguments: ["migrate", "src.sqlite", "--output", "out1.sqlite"] + toV2, owns: ["out1"]),
        Case(arguments: ["migrate", "src.sqlite", "--output", "out2.sqlite"] + toV2, owns: ["out2"]),
        Case(arguments: ["migrate", "src.sqlite", "--output", "out3.sqlite"] + toV2, owns: ["out3"]),
        Case(arguments: ["migrate", "src.sqlite", "--output", "chain.sqlite", "--model", model, "--to", "v3", "--quiet"], owns: ["chain"]),
        Case(arguments: ["migrate", "backup.sqlite"] + toV2, owns: ["backup"]),
        Case(arguments: ["migrate", "workdir.sqlite"] + toV2, owns: ["workdir"]),
        Case(arguments: ["migrate", "lockhard.sqlite"] + toV2, owns: ["lockhard"]),
        Case(arguments: ["migrate", "companions.sqlite"] + toV2, owns: ["companions"]),
        Case(arguments: ["migrate", "ext.sqlite"] + toV2, owns: ["ext"]),
        Case(arguments: ["migrate", "staged.sqlite", "--model", model, "--stages", "stages.json", "--quiet"], owns: ["staged"]),
        Case(arguments: ["verify", "src.sqlite", "verified.sqlite", "--model", model, "--to", "v2"], owns: ["verified.sqlite.moult-"]),
        Case(arguments: ["inspect", "insp.sqlite"], owns: ["insp.sqlite.moult-"]),
        Case(arguments: ["plan", "src.sqlite", "--model", model, "--to", "v2"], owns: ["src.sqlite.moult-"]),
        Case(arguments: ["convert", "src.sqlite", "--to", "xml", "--model", model, "--output", "conv.xml"], owns: ["conv"]),
        Case(arguments: ["test", model, "--objects", "3", "--version", "v1", "--junit", "junit.xml"], owns: ["junit"]),
        Case(arguments: ["generate", "gen.sqlite", "--model", model, "--model-version", "v1", "--objects", "5"], owns: ["gen"]),
        Case(arguments: ["create", "new.sqlite", "--model", model, "--model-version", "v1"], owns: ["new"]),
        Case(arguments: ["finish", "fin.sqlite", "--model", model], owns: ["fin"]),
        Case(arguments: ["status", "out2.sqlite"], owns: []),
        Case(arguments: ["status", "backup.sqlite"], owns: []),
        Case(arguments: ["status", "out3.sqlite"], owns: []),
        Case(arguments: ["hash", model], owns: []),
        Case(arguments: ["infer", "--model", model, "--from", "v1", "--to", "v2"], owns: []),
        Case(arguments: ["mapping", "convert", mappingModel, "--to", "json", "--output", "map.json"], owns: ["map.json"]),
        Case(arguments: ["model", "extract", "src.sqlite", "--output", "extracted.xcdatamodel"], owns: ["extracted"]),
        Case(arguments: ["fleet", "migrate", "--manifest", "fleet.jsonl", "--quiet"], owns: ["fleet"]),
        Case(arguments: ["fleet", "migrate", "--manifest", "fifo.jsonl", "--quiet"], owns: ["fifo.jsonl"]),
    ]

    /// What is put at a name: a symbolic link to a victim (`file.txt`, or `folder` with files), a hard
    /// link to a victim file of its own, or a FIFO.
    enum Trap: Sendable {
        case link(String)
        case hardLink
        case fifo
    }

    /// The traps, by the name each is put at in the folder where the cases run.
    static let traps: [(String, Trap)] = [
        // Outputs: support and work folders, companions, status files and their temporary names, locks.
        (".out1_SUPPORT", .link("folder")), ("out1.sqlite.moult", .link("folder")),
        ("out2.sqlite-wal", .link("file.txt")), ("out2.sqlite-shm", .hardLink),
        ("out2.sqlite.moult-status.json", .link("file.txt")), (".out2.sqlite.moult-status.json.moult-tmp", .link("file.txt")),
        ("out3.sqlite.moult-lock", .hardLink), ("out3.sqlite.moult-status.json", .fifo),
        ("chain.sqlite.moult-steps", .link("folder")),
        // In place: backup names and their support folder, the work folder, the lock, companions the
        // store has none of, `_EXTERNAL_DATA` entries, a staged run's names.
        ("backup~.sqlite", .link("file.txt")), (".backup~_SUPPORT", .link("folder")),
        ("backup.sqlite.moult-status.json", .link("file.txt")),
        (".workdir.sqlite.moult-inplace", .link("folder")),
        ("lockhard.sqlite.moult-lock", .hardLink),
        ("companions.sqlite-journal", .fifo), ("companions.sqlite-wal", .link("file.txt")), ("companions.sqlite-shm", .hardLink),
        (".ext_SUPPORT/_EXTERNAL_DATA/" + references[1], .link("file.txt")), (".ext_SUPPORT/_EXTERNAL_DATA/" + references[2], .fifo),
        (".ext_SUPPORT/_EXTERNAL_DATA/zz-folder", .link("folder")),
        ("staged~.sqlite", .hardLink), (".staged.sqlite.moult-staged-original", .link("file.txt")),
        // What the other commands read or write.
        ("verified.sqlite-journal", .link("file.txt")),
        ("insp.sqlite-wal", .link("file.txt")), ("insp.sqlite-shm", .fifo),
        ("src.sqlite.moult-lock", .link("file.txt")),
        (".conv.xml.moult-convert", .link("file.txt")), (".conv_SUPPORT", .link("folder")),
        (".junit.xml.moult-tmp", .link("file.txt")),
        (".gen_SUPPORT", .link("folder")), ("gen.sqlite-wal", .fifo),
        ("new.sqlite-journal", .link("file.txt")),
        ("fin.sqlite.moult-lock", .link("file.txt")), ("fin.sqlite-journal", .hardLink),
        ("map.json", .link("file.txt")),
        ("extracted.xcdatamodel", .link("folder")),
        ("fleet.jsonl.results.jsonl", .link("file.txt")), ("fleet~.sqlite", .hardLink), ("fifo.jsonl.results.jsonl", .fifo),
    ]

    // MARK: - The seeded folder

    /// The scratch folder: `run/`, where every case runs, and `victims/`, what the traps lead to.
    struct Seeded {
        let directory: TemporaryDirectory
        var run: URL { directory.appending("run") }
        var victims: URL { directory.appending("victims") }
        var count = 0

        /// A symbolic link at `name` (in `run/`) to `victim` (in `victims/`).
        func link(_ name: String, to victim: String) throws {
            try FileManager.default.createSymbolicLink(at: run.appending(path: name), withDestinationURL: victims.appending(path: victim))
        }

        /// A hard link at `name` to a victim file of its own.
        mutating func hardLink(_ name: String) throws {
            count += 1
            let victim = victims.appending(path: "hard-\(count).txt")
            try Data("another program's file \(count)\n".utf8).write(to: victim)
            try FileManager.default.linkItem(at: victim, to: run.appending(path: name))
        }

        func fifo(_ name: String) {
            #expect(mkfifo(run.appending(path: name).path, 0o644) == 0, "mkfifo \(name)")
        }

        /// A copy of `base.sqlite` and its support folder as `name.sqlite`.
        func store(_ name: String) throws {
            let manager = FileManager.default
            try manager.copyItem(at: run.appending(path: "base.sqlite"), to: run.appending(path: "\(name).sqlite"))
            try manager.copyItem(at: run.appending(path: ".base_SUPPORT"), to: run.appending(path: ".\(name)_SUPPORT"))
        }
    }

    /// Runs `moult` in `folder`, its output kept in `logs`; stopped (SIGTERM, then SIGKILL) after
    /// `seconds`. Returns its exit status, whether it had to be stopped, and its standard error.
    static func run(_ arguments: [String], in folder: URL, logs: URL, seconds: Double = 40) throws -> (status: Int32, hung: Bool, errors: String) {
        let process = Process()
        process.executableURL = MoultProcess.executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let log = logs.appending(path: "\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        let hung = process.isRunning
        if hung {
            process.terminate()
            let grace = Date().addingTimeInterval(3)
            while process.isRunning, Date() < grace { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        let errors = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (process.terminationStatus, hung, errors)
    }

    /// The base store (model E, v1): three rows, one with an external file, two whose external names are
    /// seeded with traps in the stores that need them.
    static func makeBase(in run: URL, logs: URL) throws {
        let made = try Self.run(["create", "base.sqlite", "--model", model, "--model-version", "v1"], in: run, logs: logs)
        #expect(made.status == 0, "\(made.errors)")
        let database = try Database(url: run.appending(path: "base.sqlite"), mode: .readWrite)
        defer { database.close() }
        for (index, name) in references.enumerated() {
            let reference = Data([2]) + Data(name.utf8) + Data([0])
            try database.execute(
                "INSERT INTO ZBLOB (Z_PK, Z_ENT, Z_OPT, ZDATA, ZNAME) VALUES (?, 1, 1, ?, ?)", [.int(Int64(index + 1)), .data(Array(reference)), .string("row \(index)")])
        }
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = 1")
        let external = run.appending(path: ".base_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        for name in references { try Data("bytes of \(name)".utf8).write(to: external.appending(path: name)) }
    }

    static func seed() throws -> Seeded {
        var seeded = Seeded(directory: try TemporaryDirectory("moult-outside"))
        let manager = FileManager.default
        let (run, victims) = (seeded.run, seeded.victims)
        let logs = seeded.directory.appending("logs")
        for folder in [run, victims, logs, victims.appending(path: "folder/_EXTERNAL_DATA")] {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data("another program's file\n".utf8).write(to: victims.appending(path: "file.txt"))
        try Data("a thesis\n".utf8).write(to: victims.appending(path: "folder/thesis.txt"))
        try Data("notes\n".utf8).write(to: victims.appending(path: "folder/_EXTERNAL_DATA/\(references[1])"))
        try Data("someone's notes beside the stores\n".utf8).write(to: run.appending(path: "notes.txt"))

        try makeBase(in: run, logs: logs)
        for name in ["src", "backup", "workdir", "lockhard", "companions", "ext", "staged", "insp", "fin", "fleet"] { try seeded.store(name) }
        // A clean destination for verify, and a store whose clean-up is pending for finish.
        let verified = try Self.run(["migrate", "src.sqlite", "--output", "verified.sqlite"] + toV2, in: run, logs: logs)
        #expect(verified.status == 0, "\(verified.errors)")
        let deferred = try Self.run(["migrate", "fin.sqlite", "--model", model, "--to", "v3", "--defer-cleanup", "--no-backup", "--quiet"], in: run, logs: logs)
        #expect(deferred.status == 0, "\(deferred.errors)")
        try Data(#"{ "stages": [ { "custom": { "from": "v1", "to": "v2" } } ] }"#.utf8).write(to: run.appending(path: "stages.json"))
        let manifest = Data(#"{"store": "fleet.sqlite", "model": "\#(model)", "to": "v2"}"#.utf8 + Data("\n".utf8))
        try manifest.write(to: run.appending(path: "fleet.jsonl"))
        try manifest.write(to: run.appending(path: "fifo.jsonl"))

        let external = ".ext_SUPPORT/_EXTERNAL_DATA/"
        try manager.removeItem(at: run.appending(path: external + references[1]))
        try manager.removeItem(at: run.appending(path: external + references[2]))
        for (name, trap) in traps {
            switch trap {
            case .link(let victim): try seeded.link(name, to: victim)
            case .hardLink: try seeded.hardLink(name)
            case .fifo: seeded.fifo(name)
            }
        }
        return seeded
    }

    // MARK: - The test

    @Test func noRunChangesAnythingOutsideItsOwnFiles() throws {
        let seeded = try Self.seed()
        defer { seeded.directory.remove() }
        let logs = seeded.directory.appending("logs")
        var statuses: [String] = []
        for testCase in Self.cases {
            let victims = NamedOutputsTests.listing(seeded.victims)
            let others = Self.others(of: testCase, in: NamedOutputsTests.listing(seeded.run))
            let result = try Self.run(testCase.arguments, in: seeded.run, logs: logs)
            statuses.append("\(result.status) \(testCase)")
            #expect(!result.hung, "\(testCase) hung: \(result.errors)")
            #expect(NamedOutputsTests.listing(seeded.victims) == victims, "\(testCase) changed a victim: \(result.errors)")
            let after = Self.others(of: testCase, in: NamedOutputsTests.listing(seeded.run))
            #expect(after == others, "\(testCase) changed what is not its own: \(Self.difference(others, after))\n\(result.errors)")
        }
        // Runs that meet no trap do their work (the folder holds what they need); the others may be refused.
        for command in ["hash", "infer", "plan"] {
            #expect(statuses.contains { $0.hasPrefix("0 \(command) ") }, "\(statuses.joined(separator: "\n"))")
        }
        // A results file that is no plain file of Moult's own: refused (74) before any store is migrated.
        #expect(statuses.contains("74 fleet migrate --manifest fifo.jsonl --quiet"), "\(statuses.joined(separator: "\n"))")
        print(statuses.joined(separator: "\n"))
    }

    /// The entries of a listing that are not the case's own.
    static func others(of testCase: Case, in listing: [String: String]) -> [String: String] {
        listing.filter { entry in !testCase.owns.contains { entry.key.contains($0) } }
    }

    static func difference(_ before: [String: String], _ after: [String: String]) -> String {
        let keys = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        return keys.map { "\($0): \(before[$0] ?? "-") → \(after[$0] ?? "-")" }.joined(separator: "; ")
    }
}
