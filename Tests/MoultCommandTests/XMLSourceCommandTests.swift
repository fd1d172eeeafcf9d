import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// `moult migrate --output` from an XML store reads it directly, through its index (no SQLite copy of
/// the source), and makes what the same store's SQLite form makes: with a filter, with partitions, with
/// to-many, ordered and many-to-many relationships. A damaged XML source is refused with its line.
@Suite struct XMLSourceCommandTests {
    static let model = MigrateCommandTests.model

    /// Migrates `store` into `output` in `directory`; returns the output and what the run printed on standard error.
    static func migrate(
        _ store: URL, model: String = model, to version: String, _ output: String, in directory: TemporaryDirectory, _ extra: [String] = []
    ) throws -> (URL, String) {
        let url = directory.appending(output)
        let arguments = ["migrate", store.path, "--model", model, "--to", version, "--output", url.path, "--chunk-size", "25"] + extra
        let result = try MoultProcess.run(arguments)
        #expect(result.exitCode == 0, "moult \(arguments.joined(separator: " ")): \(result.standardError)")
        return (url, result.standardError)
    }

    /// The same store as XML, by `moult convert`.
    static func xml(of store: URL, model: String = model, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.appending(store.deletingPathExtension().lastPathComponent + ".xml")
        let result = try MoultProcess.run(["convert", store.path, "--to", "xml", "--output", url.path, "--model", model])
        #expect(result.exitCode == 0, "\(result.standardError)")
        return url
    }

    /// The People v2 → v3 mapping with its filter as `age > 1`, written in `directory`.
    static func filteredMapping(in directory: TemporaryDirectory) throws -> String {
        let mapping = URL(filePath: MigrateCommandTests.mapping("v2-to-v3"))
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: mapping)) as? [String: Any])
        var mappings = try #require(object["entityMappings"] as? [[String: Any]])
        for index in mappings.indices where mappings[index]["name"] as? String == "PersonToPerson" { mappings[index]["filter"] = "age > 1" }
        object["entityMappings"] = mappings
        let url = directory.appending("filtered.json")
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        return url.path
    }

    static let cases: [(name: String, partitions: [String], filtered: Bool)] = [
        ("plain", [], false), ("partitioned", [#"name BEGINSWITH "A""#, #"age > 30"#], false), ("filtered", [], true),
    ]

    @Test(arguments: cases.indices)
    func anXMLSourceIsReadDirectlyAndMakesWhatItsSQLiteFormMakes(index: Int) throws {
        let (name, partitions, filtered) = Self.cases[index]
        let directory = try TemporaryDirectory("xml-source-\(name)")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 140, in: directory)
        let sourceXML = try Self.xml(of: source, in: directory)
        let mapping = filtered ? try Self.filteredMapping(in: directory) : MigrateCommandTests.mapping("v2-to-v3")
        let extra = ["--mapping", mapping] + partitions.flatMap { ["--partition", $0] }
        let (expected, _) = try Self.migrate(source, to: "v3", "sqlite.sqlite", in: directory, extra + ["--quiet"])
        let (direct, said) = try Self.migrate(sourceXML, to: "v3", "xml.sqlite", in: directory, extra + ["--output-type", "sqlite"])
        #expect(said.contains("read directly, without an SQLite copy"), "\(said)")
        let rows = try XMLStoreCommandTests.rows(expected, version: "v3")
        #expect(rows.count > (filtered ? 10 : 140))
        #expect(try XMLStoreCommandTests.rows(direct, version: "v3") == rows)
        // An XML output from the XML source: the same objects again.
        let (xmlOutput, _) = try Self.migrate(sourceXML, to: "v3", "xml-again.xml", in: directory, extra + ["--quiet"])
        let expectedXML = try Self.xml(of: expected, in: directory)
        #expect(try XMLStoreCommandTests.objects(xmlOutput, version: "v3") == XMLStoreCommandTests.objects(expectedXML, version: "v3"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".moult") }.isEmpty)
    }

    /// A model whose lists hold their items in order (an ordered to-many), items carry tags (a
    /// many-to-many), and each list has an owner with several lists (a one-to-many); v2 adds an attribute.
    static func listsModel(in directory: TemporaryDirectory) throws -> (URL, VersionedModel) {
        func version(_ note: Bool) throws -> ObjectModel {
            try ObjectModel {
                Entity("Owner") { Attribute("name", .string); Relationship("lists", toMany: "List", inverse: "owner") }
                Entity("List") {
                    Attribute("title", .string)
                    Relationship("owner", to: "Owner", inverse: "lists")
                    Relationship("items", toMany: "Item", inverse: "list").ordered()
                }
                Entity("Item") {
                    Attribute("text", .string)
                    if note { Attribute("note", .string) }
                    Relationship("list", to: "List", inverse: "items")
                    Relationship("tags", toMany: "Tag", inverse: "items")
                }
                Entity("Tag") { Attribute("label", .string); Relationship("items", toMany: "Item", inverse: "tags") }
            }
        }
        let versioned = try VersionedModel(
            name: "Lists", versions: [.init(name: "v1", model: try version(false)), .init(name: "v2", model: try version(true))], currentVersionName: "v2")
        let url = directory.appending("Lists.xcdatamodeld")
        try versioned.write(to: url)
        return (url, versioned)
    }

    /// A v1 store of the lists model: items added to their lists out of key order.
    static func listsStore(_ model: ObjectModel, at url: URL) throws {
        let store = try SQLiteStore.create(at: url, model: model)
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            let owners = try (0..<3).map { try writer.insert("Owner", values: [.string("owner \($0)")], primaryKey: nil) }
            let tags = try (0..<4).map { try writer.insert("Tag", values: [.string("tag \($0)")], primaryKey: nil) }
            for list in 0..<12 {
                let id = try writer.insert("List", values: [.string("list \(list)"), .object(owners[list % 3])], primaryKey: nil)
                var items: [ObjectID] = []
                for item in 0..<(list % 5) {
                    let made = try writer.insert("Item", values: [.string("item \(list).\(item)"), .null], primaryKey: nil)
                    try writer.relate("tags", made, to: Array(tags.prefix((list + item) % 4)))
                    items.append(made)
                }
                try writer.relate("items", id, to: items.reversed())
            }
        }
    }

    @Test func toManyOrderedAndManyToManyRelationshipsFromAnXMLSource() throws {
        let directory = try TemporaryDirectory("xml-source-lists")
        defer { directory.remove() }
        let (modelURL, versioned) = try Self.listsModel(in: directory)
        let v1 = try #require(versioned.version(named: "v1")).model
        let source = directory.appending("lists.sqlite")
        try Self.listsStore(v1, at: source)
        let sourceXML = try Self.xml(of: source, model: modelURL.path, in: directory)
        let (expected, _) = try Self.migrate(source, model: modelURL.path, to: "v2", "a.sqlite", in: directory, ["--quiet"])
        let (direct, said) = try Self.migrate(sourceXML, model: modelURL.path, to: "v2", "b.sqlite", in: directory, ["--output-type", "sqlite"])
        #expect(said.contains("read directly"), "\(said)")
        let v2 = try #require(versioned.version(named: "v2")).model
        let (a, b) = (try SQLiteStore(url: expected, model: v2), try SQLiteStore(url: direct, model: v2))
        defer {
            a.database.close()
            b.database.close()
        }
        for (entity, relationship) in [("Owner", "lists"), ("List", "items"), ("Item", "tags"), ("Tag", "items")] {
            let keys = (1...40).map(Int64.init)
            let want = try a.toManyDestinations(relationship, of: entity, sources: keys)
            #expect(!want.isEmpty)
            #expect(try b.toManyDestinations(relationship, of: entity, sources: keys) == want, "\(entity).\(relationship)")
        }
        // The ordered relationship kept the reversed order it was given (the fourth list has three items).
        let items = try b.toManyDestinations("items", of: "List", sources: [4])[4]?.map(\.primaryKey) ?? []
        #expect(items.count == 3 && items == items.sorted(by: >))
        let rows = try XMLStoreCommandTests.rows(expected, version: "v2", model: modelURL.path)
        #expect(rows.count == 3 + 12 + 21 + 4)
        #expect(try XMLStoreCommandTests.rows(direct, version: "v2", model: modelURL.path) == rows)
    }

    @Test func aDamagedXMLSourceIsRefusedWithItsLineAndLeavesNoOutput() throws {
        let directory = try TemporaryDirectory("xml-source-damaged")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("2", persons: 60, in: directory)
        let text = try String(contentsOf: try Self.xml(of: source, in: directory), encoding: .utf8)
        // Cut inside the objects: the header, and so the store's version, reads.
        let cut = directory.appending("cut.xml")
        try Data(text.prefix(text.count * 2 / 3).utf8).write(to: cut)
        for type in ["sqlite", "xml"] {
            let output = directory.appending("out.\(type)")
            let result = try MoultProcess.run(
                ["migrate", cut.path, "--model", Self.model, "--to", "v3", "--mapping", MigrateCommandTests.mapping("v2-to-v3"), "--output", output.path,
                 "--output-type", type, "--quiet"])
            #expect(result.exitCode == 65, "\(result.standardError)")
            let located = result.standardError.range(of: "cut.xml:").map { result.standardError[$0.upperBound...].first?.isNumber == true }
            #expect(located == true, "\(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            // Nor a work folder: a refused run leaves every file as it found it.
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("moult") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    /// `moult verify` across a chain that starts and ends in XML: People v1 as an XML store, migrated
    /// through three steps (v1 → v2 → v3 → v4, the SQLite work in between) into an XML store, checked
    /// against the XML source with every object sampled; the same output with one person's name changed
    /// fails (67), naming the attribute.
    @Test func verifyChecksAChainFromAnXMLStoreToAnXMLStore() throws {
        let directory = try TemporaryDirectory("xml-chain-verify")
        defer { directory.remove() }
        let source = try MigrateCommandTests.generate("1", persons: 60, in: directory)
        let sourceXML = try Self.xml(of: source, in: directory)
        let mappings = ["v1-to-v2", "v2-to-v3", "v3-to-v4"].flatMap { ["--mapping", MigrateCommandTests.mapping($0)] }
        let (output, _) = try Self.migrate(sourceXML, to: "v4", "v4.xml", in: directory, mappings + ["--quiet"])
        #expect(try String(contentsOf: output, encoding: .utf8).hasPrefix("<?xml"))
        let verify = { (destination: URL) in
            try MoultProcess.run(["verify", sourceXML.path, destination.path, "--model", Self.model, "--to", "v4", "--sample", "100000"] + mappings)
        }
        let verified = try verify(output)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")

        // One person's name changed in the XML output: no longer what the chain makes of its source.
        var text = try String(contentsOf: output, encoding: .utf8)
        let name = try #require(text.range(of: #"<attribute name="name" type="string">"#))
        text.insert(contentsOf: "Changed ", at: name.upperBound)
        let changed = directory.appending("changed.xml")
        try text.write(to: changed, atomically: true, encoding: .utf8)
        let refused = try verify(changed)
        #expect(refused.exitCode == 67, "\(refused.standardOutput)\(refused.standardError)")
        #expect((refused.standardOutput + refused.standardError).contains("name"), "\(refused.standardOutput)")
    }
}

