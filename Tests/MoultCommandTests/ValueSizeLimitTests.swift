import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// `--max-value-size BYTES` (issue 37, item 5): a string of exactly BYTES is taken and one byte more is
/// refused (65), on every path that reads or writes values, at a limit far under 1 MiB; the refusal
/// names `--max-value-size` only in a command that has it.
@Suite struct ValueSizeLimitTests {
    static let limit = 1000

    /// A People v2 store whose person 7 has a street of `bytes` bytes.
    static func store(streetBytes bytes: Int, in directory: TemporaryDirectory, name: String = "s.sqlite") throws -> URL {
        let store = try StoreRegressionTests.generatePeople(version: 2, persons: 60, in: directory, name: name)
        try FaultCommandTests.sql(store, "UPDATE ZPERSON SET ZSTREET = '\(String(repeating: "x", count: bytes))' WHERE Z_PK = 7")
        return store
    }

    /// The long street's byte count in a SQLite store: a person's at v2, an address's at v3.
    static func streetBytes(_ store: URL) throws -> Int? {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        let table = try database.query("SELECT name FROM sqlite_master WHERE name = 'ZADDRESS'") { $0.string(at: 0) }.first ?? "ZPERSON"
        return try database.query("SELECT length(CAST(ZSTREET AS BLOB)) FROM \(table ?? "ZPERSON") WHERE ZSTREET LIKE 'xxx%'") { Int($0.int64(at: 0)) }.first
    }

    /// The ways `migrate` reads and writes values: the bulk copy in SQL, object by object, in place.
    static let migrations: [[String]] = [["--output", "d.sqlite"], ["--output", "d.sqlite", "--no-bulk-sql"], ["--no-backup"]]

    @Test(arguments: migrations)
    func migrateTakesExactlyTheLimit(_ path: [String]) throws {
        for (bytes, expected) in [(Self.limit, Int32(0)), (Self.limit + 1, Int32(65))] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try Self.store(streetBytes: bytes, in: directory)
            let arguments = path.map { $0.hasSuffix(".sqlite") ? directory.appending($0).path : $0 }
            let run = try MoultProcess.run(["migrate", store.path] + FaultCommandTests.toV3 + arguments + ["--max-value-size", "\(Self.limit)"])
            #expect(run.exitCode == expected, "\(path) \(bytes) bytes: \(run.standardError)")
            let written = path.first == "--output" ? directory.appending("d.sqlite") : store
            if expected == 0 {
                #expect(try Self.streetBytes(written) == bytes, "\(path)")
            } else {
                #expect(run.standardError.contains("a value of \(bytes) bytes, more than the limit of \(Self.limit) bytes"), "\(run.standardError)")
                #expect(run.standardError.contains("raise it with --max-value-size"), "\(run.standardError)")
                #expect(!FileManager.default.fileExists(atPath: directory.appending("d.sqlite").path))
            }
        }
    }

    /// `convert` has the option with the same meaning, both ways; a store read as XML by `migrate` too.
    @Test func convertAndAnXMLSourceTakeExactlyTheLimit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(streetBytes: Self.limit, in: directory)
        let xml = directory.appending("s.xml")
        let back = directory.appending("back.sqlite")
        // Each way: one byte under the value is refused, with nothing written; the value's own size converts.
        for (from, to, type) in [(store, xml, "xml"), (xml, back, "sqlite")] {
            for (limit, expected) in [(Self.limit - 1, Int32(65)), (Self.limit, Int32(0))] {
                let run = try MoultProcess.run(
                    ["convert", from.path, "--to", type, "--output", to.path, "--model", FaultCommandTests.model, "--max-value-size", "\(limit)"])
                #expect(run.exitCode == expected, "to \(type), limit \(limit): \(run.standardError)")
                if expected == 65 {
                    #expect(run.standardError.contains("a value of \(Self.limit) bytes"), "\(run.standardError)")
                    #expect(run.standardError.contains("raise it with --max-value-size"), "\(run.standardError)")
                    #expect(!FileManager.default.fileExists(atPath: to.path))
                }
            }
        }
        #expect(try Self.streetBytes(back) == Self.limit)

        // migrate --output reads an XML source directly.
        for (limit, expected) in [(Self.limit - 1, Int32(65)), (Self.limit, Int32(0))] {
            let output = directory.appending("m-\(limit).sqlite")
            let run = try MoultProcess.run(["migrate", xml.path] + FaultCommandTests.toV3 + ["--output", output.path, "--max-value-size", "\(limit)"])
            #expect(run.exitCode == expected, "XML source, limit \(limit): \(run.standardError)")
        }
    }

    /// A limit of 0 or less is bad usage (64): there is no setting without a limit.
    @Test func aLimitUnderOneByteIsBadUsage() throws {
        let run = try MoultProcess.run(["convert", "s.sqlite", "--to", "xml", "--output", "s.xml", "--model", FaultCommandTests.model, "--max-value-size", "0"])
        #expect(run.exitCode == 64 && run.standardError.contains("--max-value-size must be at least 1"), "\(run.standardError)")
    }
}
