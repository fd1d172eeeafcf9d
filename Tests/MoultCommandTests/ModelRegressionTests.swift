import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// The model inputs that crashed `moult` (issue 16), run end to end: each gets its documented exit code
/// and a message naming the file and what is wrong, never a signal or an internal error.
@Suite struct ModelRegressionTests {
    static let regressions = Fixtures.url("regressions/models")

    static func model(_ name: String) -> URL {
        regressions.appending(path: "\(name)/m.xcdatamodel", directoryHint: .isDirectory)
    }

    /// Runs `moult create` into a fresh folder, checking that nothing is left there when it fails.
    static func create(_ model: URL, extra: [String] = []) throws -> (MoultProcess.Result, store: URL, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let store = directory.appending("s.sqlite")
        let result = try MoultProcess.run(["create", store.path, "--model", model.path] + extra)
        #expect(!result.terminatedBySignal)
        if result.exitCode != 0 {
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty, "a refused create left files")
        }
        return (result, store, directory)
    }

    // MARK: - XML

    /// (folder, line, byte offset of the bad byte)
    static let invalidUTF8: [(String, Int, Int)] = [
        ("xml_invalid_utf8_attribute_name", 1, 8),
        ("xml_invalid_utf8_comment", 1, 12),
        ("xml_invalid_utf8_element_name", 1, 9),
        ("xml_invalid_utf8_elementdecl", 1, 24),
        ("xml_invalid_utf8_pi_target", 1, 3),
    ]

    @Test(arguments: invalidUTF8)
    func invalidUTF8IsBadInputWithItsPosition(_ name: String, _ line: Int, _ offset: Int) throws {
        let model = Self.model(name)
        let hash = try MoultProcess.run(["hash", model.path, "--json"])
        let (create, _, directory) = try Self.create(model)
        defer { directory.remove() }
        for result in [hash, create] {
            #expect(!result.terminatedBySignal && result.exitCode == 65, "\(result.exitCode): \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
            let message = result.standardError
            #expect(message.contains("\(name)/m.xcdatamodel/contents:\(line): invalid UTF-8"), "\(message)")
            #expect(message.contains("byte \(offset) (line \(line), column \(offset + 1))"), "\(message)")
        }
    }

    /// `xcmapping.xml` goes through the same check (without it, both inputs crash the process).
    @Test(arguments: [
        (Array("<object ".utf8) + [0xE9] + Array("/>".utf8), "byte 58 (line 3, column 9) is not UTF-8"),
        (Array("<?p?>".utf8), "a processing instruction with no data ('<?p?>') at byte 50 (line 3, column 1)"),
    ] as [([UInt8], String)])
    func mappingXMLIsCheckedToo(_ line: [UInt8], _ fragment: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = try CurrentVersionCommandTests.bundle(
            in: directory, currentVersion: "<dict><key>_XCCurrentVersionName</key><string>v1.xcdatamodel</string></dict>")
        let store = directory.appending("s.sqlite")
        #expect(try MoultProcess.run(["create", store.path, "--model", bundle.path]).exitCode == 0)
        let mapping = directory.appending("Bad.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        let xml = Array("<?xml version=\"1.0\" standalone=\"yes\"?>\n<database>\n".utf8) + line + Array("\n</database>\n".utf8)
        try Data(xml).write(to: mapping.appending(path: "xcmapping.xml"))
        let result = try MoultProcess.run(["plan", store.path, "--model", bundle.path, "--to", "v2", "--mapping", mapping.path])
        #expect(!result.terminatedBySignal && result.exitCode == 65, "\(result.exitCode): \(result.standardError)")
        #expect(result.standardError.contains("Bad.xcmappingmodel/xcmapping.xml at line 3: malformed mapping XML: \(fragment)"), "\(result.standardError)")
    }

    // MARK: - Names

    @Test(arguments: [
        ("sql_entity_name_space", "entity name 'A B'"),
        ("sql_entity_name_dot", "entity name 'A.B'"),
        ("sql_attr_name_quote", "attribute name 'A.b''"),
    ])
    func namesXcodeRefusesAreRefusedAtLoad(_ name: String, _ what: String) throws {
        let model = Self.model(name)
        let hash = try MoultProcess.run(["hash", model.path])
        let (create, _, directory) = try Self.create(model)
        defer { directory.remove() }
        for result in [hash, create] {
            #expect(result.exitCode == 65, "\(result.exitCode): \(result.standardError)")
            #expect(result.standardError.contains("\(name)/m.xcdatamodel/contents:1: invalid name: \(what) is not one Xcode accepts"), "\(result.standardError)")
        }
    }

    // MARK: - Indexes and limits

    @Test func fetchIndexWithAnOddNameIsWrittenQuoted() throws {
        let (result, store, directory) = try Self.create(Self.model("sql_fetchindex_name"))
        defer { directory.remove() }
        #expect(result.exitCode == 0, "\(result.standardError)")
        let schema = try SchemaReader.sql(of: store)
        #expect(schema.contains("CREATE INDEX \"Z_A_1.5\" ON ZA (ZX COLLATE BINARY ASC)"), "\(schema)")
    }

    @Test func fetchIndexWithNoElementIsRefusedByCreateNotByHash() throws {
        let model = Self.model("sql_fetchindex_empty")
        let (result, _, directory) = try Self.create(model)
        defer { directory.remove() }
        #expect(result.exitCode == 65, "\(result.standardError)")
        #expect(result.standardError.contains("sql_fetchindex_empty/m.xcdatamodel"), "\(result.standardError)")
        #expect(result.standardError.contains("the fetch index 'i' of entity 'A' has no elements"), "\(result.standardError)")
        #expect(try MoultProcess.run(["hash", model.path]).exitCode == 0)
    }

    @Test func sameUniquenessConstraintTwiceMakesOneIndex() throws {
        let (result, store, directory) = try Self.create(Self.model("sql_dup_uniqueness_constraint"))
        defer { directory.remove() }
        #expect(result.exitCode == 0, "\(result.standardError)")
        let indexes = try SchemaReader.sql(of: store).split(separator: "\n").filter { $0.contains("INDEX") }
        #expect(indexes == ["CREATE UNIQUE INDEX Z_A_UNIQUE_x ON ZA (ZX COLLATE BINARY ASC)"])
    }

    @Test func tooManyColumnsNamesSQLitesLimit() throws {
        let model = Self.model("sql_too_many_columns")
        let (result, _, directory) = try Self.create(model)
        defer { directory.remove() }
        #expect(result.exitCode == 65, "\(result.standardError)")
        for fragment in ["sql_too_many_columns/m.xcdatamodel", "2003 columns in table ZA", "column limit", "entity 'A'"] {
            #expect(result.standardError.contains(fragment), "missing '\(fragment)' in \(result.standardError)")
        }
        #expect(try MoultProcess.run(["hash", model.path]).exitCode == 0)
    }
}

/// The schema of a store, from `sqlite_master`.
enum SchemaReader {
    static func sql(of store: URL) throws -> String {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid") { $0.string(at: 0) ?? "" }
            .joined(separator: "\n")
    }
}
