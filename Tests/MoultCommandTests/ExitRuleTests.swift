import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// What each exit leaves, one rule (see "What a run promises"): a run refused with 64, 65, 66, 67 or
/// 73 leaves every file and folder beside the store byte for byte as it found it, whatever the path:
/// `--output`, in place by SQL or streamed, staged, XML in place and across types, and `convert`.
@Suite(.serialized) struct ExitRuleTests {
    static let model = Fixtures.peopleModel.path

    /// A path a run takes, from the store `s.EXT` in its folder.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case output, inPlace, inPlaceStreamed, staged, xmlInPlace, xmlToSQLite, sqliteToXML, convert

        var testDescription: String { rawValue }
        var storeIsXML: Bool { self == .xmlInPlace || self == .xmlToSQLite }
        var store: String { storeIsXML ? "s.xml" : "s.sqlite" }

        /// The command, `extra` arguments added (a cause of refusal).
        func arguments(_ folder: URL, extra: [String]) -> [String] {
            let store = folder.appending(path: store).path
            let output = folder.appending(path: self == .sqliteToXML || self == .convert ? "d.xml" : "d.sqlite").path
            switch self {
            case .output: return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v2", "--output", output, "--quiet"] + extra
            case .inPlace: return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v2", "--quiet"] + extra
            case .inPlaceStreamed:
                return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v3", "--mapping", Fixtures.peopleMapping("v2-to-v3").path, "--quiet"]
                    + extra
            case .staged: return ["migrate", store, "--model", ExitRuleTests.model, "--stages", folder.appending(path: "stages.json").path, "--quiet"] + extra
            case .xmlInPlace: return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v2", "--quiet"] + extra
            case .xmlToSQLite:
                return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v2", "--output", output, "--output-type", "sqlite", "--quiet"] + extra
            case .sqliteToXML:
                return ["migrate", store, "--model", ExitRuleTests.model, "--to", "v2", "--output", output, "--output-type", "xml", "--quiet"] + extra
            case .convert: return ["convert", store, "--to", "xml", "--output", output, "--model", ExitRuleTests.model] + extra
            }
        }
    }

    /// Why a run is refused.
    enum Cause: String, CaseIterable, CustomTestStringConvertible {
        /// 64: an option's value out of range.
        case usage
        /// 65: a mapping (or, for `convert`, a model) that is not one.
        case badInput
        /// 66: a model none of whose versions is the store's.
        case incompatible
        /// 67: an object breaking a rule of the version it is migrated to.
        case validation
        /// 73: another run holds the store's (or DEST's) lock.
        case busy

        var testDescription: String { rawValue }
        var exitCode: Int32 { [.usage: 64, .badInput: 65, .incompatible: 66, .validation: 67, .busy: 73][self]! }
    }

    /// Every path refused for every cause that applies to it leaves the folder as it found it.
    @Test(arguments: Path.allCases, Cause.allCases)
    func aRefusedRunLeavesEveryFileAsItFoundIt(path: Path, cause: Cause) throws {
        // `convert` checks no version's rules; a step by SQL (in place, or a lightweight stage) checks the
        // rules it can break, and v1 -> v2 can break none (a store already breaking one is migrated as it
        // is, as Core Data's migration in place does): the streamed paths check every object.
        if cause == .validation && [.convert, .inPlace, .staged].contains(path) { return }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.url
        let version = path == .inPlaceStreamed ? "2" : "1"
        let sqlite = try MigrateCommandTests.generate(version, persons: 60, in: directory, name: "s.sqlite")
        // A person aged 200 (the model allows 0…150): every version after the first refuses it.
        if cause == .validation { try MigrateCommandTests.sqlite3(sqlite, "UPDATE ZPERSON SET ZAGE = 200 WHERE Z_PK = 17") }
        if path.storeIsXML {
            let converted = try MoultProcess.run(["convert", sqlite.path, "--to", "xml", "--output", folder.appending(path: "s.xml").path, "--model", Self.model])
            #expect(converted.exitCode == 0, "\(converted.standardError)")
            try FileManager.default.removeItem(at: sqlite)
        }
        if path == .staged {
            try Data(#"{"stages": [{"lightweight": ["v1", "v2"]}]}"#.utf8).write(to: folder.appending(path: "stages.json"))
        }
        var extra: [String] = []
        var lock: RunLock?
        switch cause {
        case .usage: extra = path == .convert ? ["--to", "binary"] : ["--chunk-size", "0"]
        case .badInput:
            let bad = folder.appending(path: "bad.json")
            try Data("{ not json".utf8).write(to: bad)
            if path == .convert {
                extra = ["--model", bad.path]
            } else if path == .staged {
                try Data("{ not json".utf8).write(to: folder.appending(path: "stages.json"))
            } else {
                extra = ["--mapping", bad.path]
            }
        case .incompatible:
            extra = ["--model", Fixtures.url("wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld").path]
        case .validation: break
        case .busy:
            let target = path == .output || path == .xmlToSQLite || path == .sqliteToXML || path == .convert
                ? folder.appending(path: path == .sqliteToXML || path == .convert ? "d.xml" : "d.sqlite")
                : folder.appending(path: path.store)
            lock = try RunLock.acquire(for: target, purpose: "a test holding it")
        }
        defer { lock?.release() }
        let before = try StoreRegressionTests.snapshot(folder)
        let listed = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let result = try MoultProcess.run(path.arguments(folder, extra: extra))
        #expect(!result.terminatedBySignal)
        #expect(result.exitCode == cause.exitCode, "\(path) \(cause): \(result.standardError)")
        let after = try StoreRegressionTests.snapshot(folder)
        #expect(after.keys.sorted() == before.keys.sorted(), "\(path) \(cause): names changed")
        for (name, bytes) in before where !name.hasSuffix("-shm") {
            #expect(after[name] == bytes, "\(path) \(cause): \(name) changed")
        }
        // (Empty folders too: a work folder made and left empty is debris all the same.)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == listed, "\(path) \(cause): the folder's entries changed")
    }
}
