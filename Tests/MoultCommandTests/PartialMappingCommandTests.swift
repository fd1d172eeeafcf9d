import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// Partial mappings end to end (issue 41, item 4): `plan` names each entity mapping given or
/// inferred, a rest that cannot be inferred is refused (66), `moult test` runs a partial step by
/// every path, staged included, each result verified, and a partial step that needs no policy runs in
/// place by SQL, as `plan` says, into the store `--output` makes.
@Suite struct PartialMappingCommandTests {
    static let model = MigrateCommandTests.model

    /// People v4 → v5 giving only `entityMappings` of the whole hand-written mapping
    /// (`Datasets/People/BuiltinPolicy/v4-to-v5.json`), the rest inferred.
    static func partialV4ToV5(giving names: Set<String>, in directory: TemporaryDirectory) throws -> String {
        let whole = Fixtures.datasets.appending(path: "People/BuiltinPolicy/v4-to-v5.json")
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: whole)) as? [String: Any])
        let mappings = try #require(root["entityMappings"] as? [[String: Any]])
        root["entityMappings"] = mappings.filter { names.contains($0["name"] as? String ?? "") }.map { $0.filter { $0.key != "order" } }
        root["inferRest"] = true
        let url = directory.appending("partial-v4-to-v5.json")
        try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]).write(to: url)
        return url.path
    }

    @Test func planNamesEachEntityMappingGivenOrInferred() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("4", persons: 60, in: directory)
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany"], in: directory)

        let text = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", partial])
        #expect(text.exitCode == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("step 1: v4 -> v5 (\(partial))"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("\n  given: AdultToCompany\n"), "\(text.standardOutput)")
        #expect(
            text.standardOutput.contains("\n  inferred: AddressToAddress, AdultToAdult, ChildToChild, PersonToPerson, NoneToSchool\n"),
            "\(text.standardOutput)")

        let json = try MoultProcess.run(["plan", source.path, "--model", Self.model, "--to", "v5", "--mapping", partial, "--json"])
        #expect(json.exitCode == 0, "\(json.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let step = try #require((root["steps"] as? [[String: Any]])?.first)
        #expect(step["inferred"] as? Bool == false)
        let entityMappings = try #require(step["entityMappings"] as? [[String: Any]])
        let origins = Dictionary(uniqueKeysWithValues: entityMappings.map { ($0["name"] as? String ?? "", $0["inferred"] as? Bool) })
        #expect(origins == [
            "AddressToAddress": true, "AdultToAdult": true, "ChildToChild": true, "AdultToCompany": false, "PersonToPerson": true,
            "NoneToSchool": true,
        ])
        let school = try #require(entityMappings.first { $0["name"] as? String == "NoneToSchool" })
        #expect(school["source"] is NSNull && school["destination"] as? String == "School")
    }

    /// v3 → v4 with only Address given: Person becomes abstract, which inference cannot carry.
    @Test func aRestThatCannotBeInferredIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("3", persons: 20, in: directory)
        let partial = directory.appending("partial.json")
        try Data(
            #"""
            {"format": "moult-mapping/1", "source": {"name": "v3"}, "destination": {"name": "v4"}, "inferRest": true,
             "entityMappings": [{"name": "AddressToAddress", "type": "copy", "source": "Address", "destination": "Address"}]}
            """#.utf8
        ).write(to: partial)
        let output = directory.appending("out.sqlite")
        let result = try MoultProcess.run([
            "migrate", source.path, "--model", Self.model, "--to", "v4", "--mapping", partial.path, "--output", output.path, "--quiet",
        ])
        #expect(result.exitCode == 66, "\(result.standardOutput) \(result.standardError)")
        #expect(result.standardError.contains(partial.path) && result.standardError.contains("partial mapping"), "\(result.standardError)")
        #expect(result.standardError.contains("entity Person"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// `moult test`: into a new store, in place, stopped and resumed; then staged and staged resumed.
    /// Every path verified and agreeing.
    @Test func moultTestRunsAPartialStepByEveryPath() throws {
        let directory = try TemporaryDirectory("moult-test-partial")
        defer { directory.remove() }
        let partial = try Self.partialV4ToV5(giving: ["AdultToCompany", "ChildToSchool"], in: directory)
        let paths = try MoultProcess.run(["test", Self.model, "--to", "v5", "--version", "v4", "--mapping", partial, "--objects", "80"])
        #expect(paths.exitCode == 0, "\(paths.standardOutput)\(paths.standardError)")
        #expect(paths.standardOutput.contains("1 store, 3 paths: all passed"), "\(paths.standardOutput)")

        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"custom": {"from": "v4", "to": "v5", "mapping": "\#(partial)"}}]}"#.utf8).write(to: stages)
        let staged = try MoultProcess.run([
            "test", Self.model, "--to", "v5", "--version", "v4", "--mapping", partial, "--stages", stages.path, "--objects", "80",
        ])
        #expect(staged.exitCode == 0, "\(staged.standardOutput)\(staged.standardError)")
        #expect(staged.standardOutput.contains("1 store, 2 paths: all passed"), "\(staged.standardOutput)")
    }

    // MARK: - In place by SQL

    /// Author becomes Writer without a renaming identifier (inference would drop the authors and
    /// their links); Book gains an attribute; Shelf is unchanged. The partial mapping gives Author →
    /// Writer alone, with plain values, and its `books` through the inferred `BookToBook`.
    static func library() throws -> VersionedModel {
        let v1 = try ObjectModel(versionIdentifier: "1") {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("born", .integer32)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("year", .integer16)
                Relationship("author", to: "Author", inverse: "books")
                Relationship("shelves", toMany: "Shelf", inverse: "books")
            }
            Entity("Shelf") {
                Attribute("label", .string)
                Relationship("books", toMany: "Book", inverse: "shelves").ordered()
            }
        }
        let v2 = try ObjectModel(versionIdentifier: "2") {
            Entity("Writer") {
                Attribute("name", .string)
                Attribute("born", .integer32)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("year", .integer16)
                Attribute("isbn", .string)
                Relationship("author", to: "Writer", inverse: "books")
                Relationship("shelves", toMany: "Shelf", inverse: "books")
            }
            Entity("Shelf") {
                Attribute("label", .string)
                Relationship("books", toMany: "Book", inverse: "shelves").ordered()
            }
        }
        return try VersionedModel(name: "Library", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
    }

    static let libraryPartial = #"""
        {
          "format": "moult-mapping/1", "source": { "name": "v1" }, "destination": { "name": "v2" }, "inferRest": true,
          "entityMappings": [
            {
              "name": "AuthorToWriter", "type": "transform", "source": "Author", "destination": "Writer",
              "attributes": [ { "name": "name", "value": "$source.name" }, { "name": "born", "value": "$source.born" } ],
              "relationships": [
                { "name": "books", "value": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"BookToBook\", $source.books)" }
              ]
            }
          ]
        }
        """#

    /// A store's rows, table by table, with every key replaced by what it names (an object's own
    /// values), read with the `sqlite3` shell: equal for two stores whose objects and links are the
    /// same, whatever their keys.
    static func libraryContent(_ store: URL) throws -> [String: [String]] {
        let queries = [
            "ZWRITER": "SELECT w.ZNAME, w.ZBORN FROM ZWRITER w",
            "ZBOOK": "SELECT b.ZTITLE, b.ZYEAR, b.ZISBN, w.ZNAME, w.ZBORN FROM ZBOOK b LEFT JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR",
            "ZSHELF": "SELECT s.ZLABEL FROM ZSHELF s",
            "Z_1SHELVES": """
                SELECT b.ZTITLE, b.ZYEAR, s.ZLABEL, j.Z_FOK_1BOOKS FROM Z_1SHELVES j JOIN ZBOOK b ON b.Z_PK = j.Z_1BOOKS
                JOIN ZSHELF s ON s.Z_PK = j.Z_2SHELVES
                """,
            "Z_ENT": "SELECT 'ZBOOK', Z_ENT FROM ZBOOK UNION ALL SELECT 'ZSHELF', Z_ENT FROM ZSHELF UNION ALL SELECT 'ZWRITER', Z_ENT FROM ZWRITER",
        ]
        var content: [String: [String]] = [:]
        for (table, sql) in queries {
            let process = Process()
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments = ["sqlite3", "-readonly", "-separator", "|", "-nullvalue", "<nil>", store.path, sql]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
            content[table] = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).sorted()
        }
        return content
    }

    /// The partial step needs no policy: `plan` says it runs in place by SQL, the run does, and the
    /// store it leaves is the one the same step makes with `--output` (table by table, keys aside);
    /// `verify` passes on both.
    @Test func aPartialStepWithoutPolicyRunsInPlaceBySQL() throws {
        let directory = try TemporaryDirectory("moult-partial-in-place")
        defer { directory.remove() }
        let model = directory.appending("Library.xcdatamodeld")
        try Self.library().write(to: model)
        let source = directory.appending("library.sqlite")
        let generated = try MoultProcess.run(["generate", source.path, "--model", model.path, "--model-version", "v1", "--objects", "240", "--seed", "9"])
        #expect(generated.exitCode == 0, "\(generated.standardError)")
        let partial = directory.appending("partial.json")
        try Data(Self.libraryPartial.utf8).write(to: partial)
        let arguments = ["--model", model.path, "--to", "v2", "--mapping", partial.path]

        let plan = try MoultProcess.run(["plan", source.path] + arguments)
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("\n  given: AuthorToWriter\n") && plan.standardOutput.contains("inferred: BookToBook, ShelfToShelf"), "\(plan.standardOutput)")
        #expect(plan.standardOutput.contains("  in place: by SQL, rows copied inside SQLite"), "\(plan.standardOutput)")

        let streamed = directory.appending("streamed.sqlite")
        let copy = try MoultProcess.run(["migrate", source.path] + arguments + ["--output", streamed.path, "--quiet"])
        #expect(copy.exitCode == 0, "\(copy.standardError)")
        let inPlace = try directory.copyStore(source, as: "in-place.sqlite")
        let run = try MoultProcess.run(["migrate", inPlace.path] + arguments)
        #expect(run.exitCode == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("v1 -> v2 (\(partial.path)): by SQL"), "planned by SQL, run by SQL: \(run.standardOutput)")

        let expected = try Self.libraryContent(streamed)
        #expect(expected["ZWRITER"]?.isEmpty == false && expected["Z_1SHELVES"]?.isEmpty == false, "the generated store has writers and shelved books")
        #expect(expected["ZBOOK"]?.contains { !$0.hasSuffix("|<nil>|<nil>") } == true, "books keep their authors")
        let found = try Self.libraryContent(inPlace)
        for table in expected.keys.sorted() { #expect(found[table] == expected[table], "\(table): in place vs --output") }

        let backup = directory.appending("in-place~.sqlite")
        for (original, migrated) in [(source, streamed), (backup, inPlace)] {
            let verify = try MoultProcess.run(["verify", original.path, migrated.path] + arguments)
            #expect(verify.exitCode == 0, "verify \(migrated.lastPathComponent): \(verify.standardOutput)\(verify.standardError)")
        }
    }
}
