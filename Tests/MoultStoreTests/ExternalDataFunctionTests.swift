import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `moult_external_mark` and `moult_external_inline`, the SQL forms of an attribute's
/// `allowsExternalBinaryDataStorage` turned on and off: they agree with the Swift forms the per-object
/// path uses (``ExternalDataReference/marked(_:)``, ``ExternalDataReference/inlined(_:folder:maxBytes:)``),
/// read files only from the connection's folder, and never follow a symbolic link.
@Suite struct ExternalDataFunctionTests {
    static let name = "6F1C2B3A-0000-4000-8000-000000000001"

    /// A connection with the functions registered on a folder holding one file, `name`, of 3 bytes.
    static func connection(_ directory: TemporaryDirectory) throws -> (Database, URL) {
        let folder = directory.appending("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data([7, 8, 9]).write(to: folder.appending(path: name))
        let database = try Database(url: directory.appending("t.sqlite"), mode: .create)
        try database.registerExternalDataFunctions(folder: folder)
        return (database, folder)
    }

    static func reference(_ name: String) -> [UInt8] { [0x02] + Array(name.utf8) + [0] }

    /// Each input through the SQL function and through its Swift form: both give the expected value.
    static func check(_ function: String, _ cases: [(Value, Value)], swift: (Value, URL) throws -> Value) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, folder) = try connection(directory)
        defer { database.close() }
        for (input, expected) in cases {
            #expect(try database.scalar("SELECT \(function)(?)", [input]) == expected, "\(function)(\(input))")
            #expect(try swift(input, folder) == expected, "\(function)(\(input)) in Swift")
        }
    }

    @Test func markPutsTheInlineMarkerBeforeTheBytes() throws {
        let cases: [(Value, Value)] = [
            (.data([0xCA, 0xFE]), .data([1, 0xCA, 0xFE])), (.data([]), .data([1])), (.data([2, 0x41, 0]), .data([1, 2, 0x41, 0])),
            (.string("ab"), .data([1, 0x61, 0x62])), (.null, .null), (.int(5), .int(5)),
        ]
        try Self.check("moult_external_mark", cases) { input, _ in
            switch input {
            case .data(let bytes): .data(ExternalDataReference.marked(bytes))
            case .string(let text): .data(ExternalDataReference.marked(Array(text.utf8)))
            default: input
            }
        }
    }

    @Test func inlineReadsTheFileOrDropsTheMarker() throws {
        let cases: [(Value, Value)] = [
            (.data([1, 0xCA, 0xFE]), .data([0xCA, 0xFE])), (.data([1]), .data([])), (.data(Self.reference(Self.name)), .data([7, 8, 9])),
            // No such file, or a reference naming no plain file: nil (the run says so); no marker: as it is.
            (.data(Self.reference("6F1C2B3A-0000-4000-8000-00000000FFFF")), .null), (.data(Self.reference("../t.sqlite")), .null),
            (.data([2, 0x41]), .null), (.data([0xCA, 0xFE]), .data([0xCA, 0xFE])), (.data([]), .data([])), (.null, .null), (.string("x"), .string("x")),
        ]
        try Self.check("moult_external_inline", cases) { input, folder in
            guard case .data(let bytes) = input, !bytes.isEmpty else { return input }
            return switch try ExternalDataReference.inlined(bytes, folder: folder) {
            case .bytes(let inlined): .data(inlined)
            case .missing: .null
            case .unchanged: input
            }
        }
    }

    /// A symbolic link in the folder (to a file outside it) is not read: as a missing file.
    @Test func inlineNeverFollowsASymbolicLink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, folder) = try Self.connection(directory)
        defer { database.close() }
        try Data("secret".utf8).write(to: directory.appending("outside"))
        let linked = "6F1C2B3A-0000-4000-8000-00000000AAAA"
        try FileManager.default.createSymbolicLink(at: folder.appending(path: linked), withDestinationURL: directory.appending("outside"))
        #expect(try database.scalar("SELECT moult_external_inline(?)", [.data(Self.reference(linked))]) == .null)
        #expect(try ExternalDataReference(fileName: linked)!.contents(in: folder) == nil)
    }

    /// A file larger than the value limit is refused, naming the limit, rather than read.
    @Test func aFileLargerThanTheLimitIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(count: (1 << 20) + 10).write(to: folder.appending(path: Self.name))
        let database = try Database(url: directory.appending("t.sqlite"), mode: .create, configuration: .init(maxValueBytes: 1 << 20))
        defer { database.close() }
        try database.registerExternalDataFunctions(folder: folder)
        #expect(throws: StoreError.self) { try database.scalar("SELECT moult_external_inline(?)", [.data(Self.reference(Self.name))]) }
        #expect(throws: StoreError.self) { try ExternalDataReference.inlined(Self.reference(Self.name), folder: folder, maxBytes: 1 << 20) }
    }

    /// A store's trigger or view cannot call them (`SQLITE_DIRECTONLY`): they read files.
    @Test func aStoresTriggerCannotCallThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, _) = try Self.connection(directory)
        defer { database.close() }
        try database.executeScript("CREATE TABLE t (v BLOB); CREATE VIEW w AS SELECT moult_external_inline(v) FROM t")
        try database.execute("INSERT INTO t VALUES (?)", [.data(Self.reference(Self.name))])
        #expect(throws: StoreError.self) { try database.scalar("SELECT * FROM w") }
    }
}
