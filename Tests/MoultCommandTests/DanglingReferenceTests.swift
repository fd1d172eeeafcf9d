import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 6: a to-one naming an object that does not exist is kept on every SQLite path where
/// the objects it would name keep their keys, as Core Data's lightweight migration keeps it; the
/// warnings count them by relationship, before the run and after it with what became of them, and
/// `moult verify` accepts a destination that keeps the source's value.
///
/// wibosco's real `CoreDataMigration_Example_3.sqlite` (MIT) with one `Color` deleted: post 20 still
/// names it (a required one-to-one, written in stage 2 object by object). People v3 stores (made by
/// `moult-people`) with two persons' address set to a key no address has: a to-one written with its
/// row, in bulk or object by object.
@Suite struct DanglingReferenceTests {
    static let fixture = PlanJudgesTheStoreTests.fixture
    static let model = PlanJudgesTheStoreTests.model
    static let counted = "the store holds 1 to-one reference naming an object that does not exist (Post.color: 1)"
    static let keptOne = "of the 1 to-one reference naming an object that does not exist, 1 was kept (Post.color: 1)"

    static func store(in directory: TemporaryDirectory) throws -> URL {
        let store = try directory.copyStore(fixture, as: "dangling.sqlite")
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        #expect(try database.scalar("SELECT COUNT(*) FROM ZPOST WHERE ZCOLOR = 5") == .int(1))
        try database.executeScript("DELETE FROM ZCOLOR WHERE Z_PK = 5; PRAGMA wal_checkpoint(TRUNCATE)")
        return store
    }

    /// Post 20's color, read from a store.
    static func color(in store: URL) throws -> Value? {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.scalar("SELECT ZCOLOR FROM ZPOST WHERE Z_PK = 20")
    }

    /// `moult verify SOURCE DEST` (inferred, to the model's current version): exit 0 and the kept key noted.
    static func expectVerified(_ source: URL, _ destination: URL, model: String = model, arguments: [String] = []) throws {
        let verified = try MoultProcess.run(["verify", source.path, destination.path, "--model", model] + arguments)
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
        #expect(verified.standardOutput.contains("kept from the source: "), "\(verified.standardOutput)")
    }

    // MARK: - wibosco: a required one-to-one

    @Test func inPlaceBySQLKeepsItAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains(": by SQL"), "\(migrated.standardOutput)")
        #expect(migrated.standardError.contains(Self.counted), "\(migrated.standardError)")
        #expect(migrated.standardError.contains(Self.keptOne), "\(migrated.standardError)")
        #expect(try Self.color(in: store) == .int(5))
        try Self.expectVerified(RunNames.backup(of: store), store)
    }

    /// A staged run (`--stages`, one lightweight stage, in place) keeps it and says so, as in place does.
    @Test func aStagedRunKeepsItAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let stages = directory.appending("stages.json")
        try Data(#"{"stages": [{"lightweight": ["CoreDataMigration_Example 3", "CoreDataMigration_Example 4"]}]}"#.utf8).write(to: stages)
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--stages", stages.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("through 1 stage(s)"), "\(migrated.standardOutput)")
        #expect(migrated.standardError.contains(Self.counted), "\(migrated.standardError)")
        #expect(migrated.standardError.contains(Self.keptOne), "\(migrated.standardError)")
        #expect(try Self.color(in: store) == .int(5))
        try Self.expectVerified(RunNames.backup(of: store), store)
    }

    /// `--output`, in bulk and object by object: the value is kept (Color's keys are kept), the
    /// required to-one passes validation, and verify accepts it.
    @Test(arguments: [[], ["--no-bulk-sql"]])
    func outputKeepsIt(_ options: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let output = directory.appending("out.sqlite")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--output", output.path] + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardError.contains(Self.counted), "\(migrated.standardError)")
        #expect(migrated.standardError.contains(Self.keptOne), "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("set to nil"), "\(migrated.standardError)")
        #expect(try Self.color(in: output) == .int(5))
        try Self.expectVerified(store, output)
        // Only the source's own value is accepted: another key naming nothing fails verify.
        try MigrateCommandTests.sqlite3(output, "UPDATE ZPOST SET ZCOLOR = 987654 WHERE Z_PK = 20")
        let broken = try MoultProcess.run(["verify", store.path, output.path, "--model", Self.model])
        #expect(broken.exitCode == 67, "\(broken.standardOutput)\(broken.standardError)")
        #expect(broken.standardOutput.contains("FAIL dangling-key: Post Z_PK 20.color points at Z_PK 987654, which is no Color"), "\(broken.standardOutput)")
    }

    /// A store without one says nothing, and verify notes nothing kept.
    @Test func aCleanStoreSaysNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clean = try directory.copyStore(Self.fixture, as: "clean.sqlite")
        let output = directory.appending("clean-out.sqlite")
        let migrated = try MoultProcess.run(["migrate", clean.path, "--model", Self.model, "--output", output.path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(!migrated.standardError.contains("does not exist"), "\(migrated.standardError)")
        let verified = try MoultProcess.run(["verify", clean.path, output.path, "--model", Self.model])
        #expect(verified.exitCode == 0 && !verified.standardOutput.contains("kept from the source"), "\(verified.standardOutput)")
    }

    /// A required to-one whose target is renumbered (Color fed from two source hierarchies: a second
    /// mapping makes colors from posts, here none) cannot keep the value: set to nil, it fails the
    /// required relationship's validation (67), naming the object, and nothing is written, as for any
    /// nil. (Core Data's lightweight migration keeps the value and validates nothing; only a mapping
    /// that renumbers the target, which lightweight migration never does, gets here.)
    @Test func aRequiredOneWhoseTargetIsRenumberedFailsValidation() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.store(in: directory)
        let inferred = try MoultProcess.run([
            "infer", "--model", Self.model, "--from", "CoreDataMigration_Example 3", "--to", "CoreDataMigration_Example 4", "--json",
        ])
        #expect(inferred.exitCode == 0, "\(inferred.standardError)")
        let mapping = try Self.adding(
            ["name": "PostToColor", "type": "transform", "source": "Post", "destination": "Color", "order": 3, "filter": "postID == \"none\"",
             "attributes": [["name": "hex", "value": "$source.postID"]]],
            to: Data(inferred.standardOutput.utf8), at: directory.appending("renumbered.json"))
        let output = directory.appending("out.sqlite")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model, "--mapping", mapping.path, "--output", output.path])
        #expect(migrated.exitCode == 67, "\(migrated.standardError)")
        #expect(migrated.standardError.contains(Self.counted), "\(migrated.standardError)")
        #expect(migrated.standardError.contains("Post Z_PK 20.color: required relationship is nil"), "\(migrated.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A JSON mapping model with one more entity mapping, written to `file`.
    static func adding(_ entityMapping: [String: Any], to mapping: Data, at file: URL) throws -> URL {
        var json = try #require(try JSONSerialization.jsonObject(with: mapping) as? [String: Any])
        json["entityMappings"] = try #require(json["entityMappings"] as? [[String: Any]]) + [entityMapping]
        try JSONSerialization.data(withJSONObject: json).write(to: file)
        return file
    }

    // MARK: - People: a to-one written with its row

    static let people = Fixtures.peopleModel.path
    static let keptTwo = "of the 2 to-one references naming an object that does not exist, 2 were kept ("

    /// A People v3 store whose persons 3 and 8 name address 9999, which does not exist.
    static func peopleStore(in directory: TemporaryDirectory) throws -> URL {
        let store = try MigrateCommandTests.generate("v3", persons: 60, in: directory, name: "people.sqlite")
        try MigrateCommandTests.sqlite3(store, "UPDATE ZPERSON SET ZADDRESS = 9999 WHERE Z_PK IN (3, 8)")
        return store
    }

    /// The persons (of any sub-entity) naming address 9999.
    static func danglingPersons(in store: URL) throws -> [Int64] {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT Z_PK FROM ZPERSON WHERE ZADDRESS = 9999 ORDER BY Z_PK") { $0.int64(at: 0) }
    }

    /// Migrates a People store (`destination`: `--output`, or in place when it is the store itself)
    /// through `mappings` with `options`, and expects exit 0, both dangling addresses counted and kept
    /// in the destination, and `moult verify` to pass against `original`. Returns the run's output.
    @discardableResult
    static func expectPeopleKept(_ store: URL, into destination: URL, against original: URL, mappings: [String], options: [String] = [])
        throws -> String
    {
        let output = destination == store ? [] : ["--output", destination.path]
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", people] + output + mappings + options)
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(
            migrated.standardError.contains("the store holds 2 to-one references naming an object that does not exist (Person.address: 2)"),
            "\(migrated.standardError)")
        #expect(migrated.standardError.contains(keptTwo), "\(migrated.standardError)")
        #expect(try danglingPersons(in: destination) == [3, 8])
        try expectVerified(original, destination, model: people, arguments: mappings)
        return migrated.standardOutput
    }

    static let v3ToV4 = ["--to", "v4", "--mapping", MigrateCommandTests.mapping("v3-to-v4")]

    /// v3 → v4 through its mapping model into `--output`: Address keeps its keys, so each person's
    /// address 9999 is kept, whichever path writes it (the bulk copy from the mirror, the per-object
    /// insert, stage 2 by set writes or object by object).
    @Test(arguments: [[], ["--no-bulk-sql"], ["--to-ones-in-stage2"], ["--to-ones-in-stage2", "--per-object-stage2"]])
    func peopleOutputKeepsItOnEveryPath(_ options: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.peopleStore(in: directory)
        try Self.expectPeopleKept(store, into: directory.appending("v4.sqlite"), against: store, mappings: Self.v3ToV4, options: options)
    }

    /// In place through the mapping model: the step streams, then is swapped in, and keeps the value.
    @Test func peopleInPlaceStreamedKeepsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.peopleStore(in: directory)
        let output = try Self.expectPeopleKept(store, into: store, against: RunNames.backup(of: store), mappings: Self.v3ToV4)
        #expect(output.contains("streamed, then swapped in"), "\(output)")
    }

    /// A chain, v3 → v4 → v5 through the mapping models (the built-in policy's v4 → v5): the
    /// intermediate store keeps the value, so the second step sees it and keeps it again.
    @Test func aChainKeepsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.peopleStore(in: directory)
        let mappings = ["--to", "v5", "--mapping", MigrateCommandTests.mapping("v3-to-v4"), "--mapping", MigrateCommandTests.mapping("v4-to-v5-builtin")]
        let output = try Self.expectPeopleKept(store, into: directory.appending("v5.sqlite"), against: store, mappings: mappings)
        #expect(output.contains("2 step(s)"), "\(output)")
    }

    /// A to-one looked up by its source relationship (`destinationInstancesForSourceRelationshipNamed:`,
    /// as inference writes it for a hierarchy of several entities) keeps it too.
    @Test func aSourceRelationshipLookupKeepsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.peopleStore(in: directory)
        let text = try String(contentsOf: URL(filePath: MigrateCommandTests.mapping("v3-to-v4")), encoding: .utf8)
        let direct = #"\"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"AddressToAddress\""#
        #expect(text.contains(direct))
        let mapping = directory.appending("v3-to-v4-by-relationship.json")
        let byRelationship = #"\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"address\""#
        try text.replacingOccurrences(of: direct, with: byRelationship).write(to: mapping, atomically: true, encoding: .utf8)
        try Self.expectPeopleKept(store, into: directory.appending("v4.sqlite"), against: store, mappings: ["--to", "v4", "--mapping", mapping.path])
    }

    /// A step that gives the addresses new keys (Address fed from two source hierarchies: a second
    /// mapping makes addresses from persons, here none) cannot keep the value: it is set to nil, and
    /// the warning says so.
    @Test func aStepThatRenumbersTheTargetSetsItToNil() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.peopleStore(in: directory)
        let mapping = try Self.adding(
            ["name": "PersonToAddress", "type": "transform", "source": "Person", "destination": "Address", "order": 4, "filter": "age < 0",
             "attributes": [["name": "street", "value": "$source.name"]]],
            to: Data(contentsOf: URL(filePath: MigrateCommandTests.mapping("v3-to-v4"))), at: directory.appending("v3-to-v4-renumbered.json"))
        let output = directory.appending("v4.sqlite")
        let migrated = try MoultProcess.run([
            "migrate", store.path, "--model", Self.people, "--output", output.path, "--to", "v4", "--mapping", mapping.path,
        ])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(
            migrated.standardError.contains(
                "of the 2 to-one references naming an object that does not exist, none was kept; 2 were set to nil: a streamed step gave the objects they would name new primary keys"),
            "\(migrated.standardError)")
        #expect(try Self.danglingPersons(in: output).isEmpty)
        let database = try Database(url: output, mode: .readOnly)
        defer { database.close() }
        #expect(try database.scalar("SELECT COUNT(*) FROM ZPERSON WHERE Z_PK IN (3, 8) AND ZADDRESS IS NULL") == .int(2))
    }
}
