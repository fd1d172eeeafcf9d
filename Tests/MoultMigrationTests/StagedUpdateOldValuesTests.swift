import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 39: every value of one staged `update` is evaluated on the object as it was before the update
/// (as SQL's `UPDATE … SET`; StagesFileFormat.md), tested on the stage run itself (`StageStore.run`,
/// through ``StagedMigration``) rather than only through `moult test`. Staged runs take SQLite stores
/// only (`moult migrate --stages` refuses the others): these stores are SQLite, in WAL mode and with a
/// rollback journal (the run commits its chunks differently in each).
///
/// Each update sets a key that another of its values reads, the reader's name sorting after the key it
/// reads (the order the assignments are compiled in), so an update that set its keys one by one, each
/// read after the one before was written, would give the new value where these expect the old.
@Suite struct StagedUpdateOldValuesTests {
    /// v1: `Pair` {left, right, tally, total, ownerName, owner → Owner}; v2 adds `Pair.note`.
    static let model: VersionedModel = {
        func version(note: Bool) throws -> ObjectModel {
            try ObjectModel {
                Entity("Owner") {
                    Attribute("name", .string)
                    Relationship("pairs", toMany: "Pair", inverse: "owner").deleteRule(.nullify)
                }
                Entity("Pair") {
                    Attribute("left", .string)
                    Attribute("right", .string)
                    Attribute("tally", .integer64)
                    Attribute("total", .integer64)
                    Attribute("ownerName", .string)
                    if note { Attribute("note", .string) }
                    Relationship("owner", to: "Owner", inverse: "pairs").deleteRule(.nullify)
                }
            }
        }
        return try! VersionedModel(name: "Pairs", versions: [.init(name: "v1", model: version(note: false)), .init(name: "v2", model: version(note: true))])
    }()

    static let owners = ["ada", "grace", "edsger"]

    /// A v1 store of `count` pairs: pair i is {L<i>, R<i>, tally i, total 0}, owned by `owners[i % 3]`,
    /// but every fifth has no owner; with `journal` (`DELETE`), in that journal mode instead of WAL.
    static func store(_ count: Int, in directory: TemporaryDirectory, journal: String? = nil) throws -> URL {
        let url = directory.appending("pairs.sqlite")
        let store = try SQLiteStore.create(at: url, model: model.version(named: "v1")!.model)
        defer { store.database.close() }
        let writer = try store.makeWriter()
        try writer.write {
            let owners = try Self.owners.map { try writer.insert("Owner", ["name": .string($0)]) }
            for index in 0..<count {
                try writer.insert("Pair", [
                    "left": .string("L\(index)"), "right": .string("R\(index)"), "tally": .int(Int64(index)), "total": .int(0),
                    "owner": index % 5 == 0 ? .null : .object(owners[index % 3]),
                ])
            }
        }
        if let journal {
            try store.database.executeScript("PRAGMA journal_mode = \(journal)")
            #expect(try !store.database.isInWALMode())
        }
        return url
    }

    /// One pair as the store holds it.
    struct Pair: Equatable, CustomStringConvertible {
        var left: String?
        var right: String?
        var tally: Int64?
        var total: Int64?
        var ownerName: String?
        var hasOwner: Bool

        var description: String { "{\(left ?? "nil"), \(right ?? "nil"), \(tally.map(String.init) ?? "nil"), \(total.map(String.init) ?? "nil"), \(ownerName ?? "nil"), owner: \(hasOwner)}" }
    }

    /// Every pair, in the order they were inserted.
    static func pairs(_ url: URL) throws -> [Pair] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT ZLEFT, ZRIGHT, ZTALLY, ZTOTAL, ZOWNERNAME, ZOWNER FROM ZPAIR ORDER BY Z_PK") { row in
            func integer(_ index: Int) -> Int64? {
                if case .int(let value) = row.value(at: index) { return value }
                return nil
            }
            return Pair(
                left: row.string(at: 0), right: row.string(at: 1), tally: integer(2), total: integer(3), ownerName: row.string(at: 4),
                hasOwner: row.value(at: 5) != .null)
        }
    }

    /// The name of pair `index`'s owner in the v1 store.
    static func ownerName(_ index: Int) -> String? { index % 5 == 0 ? nil : owners[index % 3] }

    static func migrate(_ url: URL, _ operations: [StageOperation], chunkSize: Int) throws {
        let stages = [StagedMigration.Stage.custom(from: "v1", to: "v2", willMigrate: StageHandler(operations: operations))]
        try StagedMigration(store: url, model: model, stages: stages, options: MigrationOptions(chunkSize: chunkSize), keepsBackup: false).run()
    }

    /// Two strings swapped, a number that reads the old value of one incremented beside it, and a to-one
    /// cleared beside a value that reads a property through it: every value reads the object as it was,
    /// in chunks of one object, of several, and all in one; in WAL mode and with a rollback journal.
    @Test(arguments: [1, 4, 1_000], [nil, "DELETE"])
    func everyValueReadsTheObjectAsItWasBeforeTheUpdate(chunkSize: Int, journal: String?) throws {
        let directory = try TemporaryDirectory("moult-staged-old-values")
        defer { directory.remove() }
        let url = try Self.store(25, in: directory, journal: journal)
        try Self.migrate(url, [
            .update(entity: "Pair", where: nil, set: [
                "left": "right", "right": "left", "tally": "tally + 1", "total": "tally * 10", "owner": "nil", "ownerName": "owner.name",
            ])
        ], chunkSize: chunkSize)
        let expected = (0..<25).map { index in
            Pair(left: "R\(index)", right: "L\(index)", tally: Int64(index) + 1, total: Int64(index) * 10, ownerName: Self.ownerName(index), hasOwner: false)
        }
        #expect(try Self.pairs(url) == expected)
        #expect(try StagedMigrationTests.version(of: url, in: Self.model) == "v2")
    }

    /// The predicate is evaluated on the object before the update too, whether SQLite runs it (`tally <
    /// 10`) or Swift does (through the to-one: `owner.name == "ada"`); the objects it does not match keep
    /// every value.
    @Test(arguments: ["tally < 10", "owner.name == \"ada\""])
    func thePredicateReadsTheObjectAsItWasBeforeTheUpdate(_ predicate: String) throws {
        let matches: (Int) -> Bool = predicate.hasPrefix("tally") ? { $0 < 10 } : { Self.ownerName($0) == "ada" }
        let directory = try TemporaryDirectory("moult-staged-old-values")
        defer { directory.remove() }
        let url = try Self.store(25, in: directory)
        try Self.migrate(url, [
            .update(entity: "Pair", where: predicate, set: ["tally": "tally + 100", "total": "tally", "owner": "nil", "ownerName": "owner.name"])
        ], chunkSize: 4)
        let expected = (0..<25).map { index in
            matches(index)
                ? Pair(left: "L\(index)", right: "R\(index)", tally: Int64(index) + 100, total: Int64(index), ownerName: Self.ownerName(index), hasOwner: false)
                : Pair(left: "L\(index)", right: "R\(index)", tally: Int64(index), total: 0, ownerName: nil, hasOwner: index % 5 != 0)
        }
        #expect(try Self.pairs(url) == expected)
        #expect(expected.contains { $0.tally! >= 100 } && expected.contains { $0.tally! < 100 })
    }

    /// A constant beside a value that reads the key the constant sets: the update cannot run as one SQL
    /// statement of constants, and the reader gets the old value.
    @Test func aConstantBesideAReaderOfItsKey() throws {
        let directory = try TemporaryDirectory("moult-staged-old-values")
        defer { directory.remove() }
        let url = try Self.store(25, in: directory)
        try Self.migrate(url, [.update(entity: "Pair", where: nil, set: ["tally": "7", "total": "tally"])], chunkSize: 4)
        let pairs = try Self.pairs(url)
        #expect(pairs.map(\.tally) == Array(repeating: 7, count: 25))
        #expect(pairs.map(\.total) == (0..<25).map { Int64($0) })
    }

    /// Two updates in a row: the second reads what the first wrote (a value that needs another one's
    /// new value is a second update, as the format says).
    @Test func aSecondUpdateReadsWhatTheFirstWrote() throws {
        let directory = try TemporaryDirectory("moult-staged-old-values")
        defer { directory.remove() }
        let url = try Self.store(25, in: directory)
        try Self.migrate(url, [
            .update(entity: "Pair", where: nil, set: ["tally": "tally + 1"]),
            .update(entity: "Pair", where: nil, set: ["total": "tally * 10"]),
        ], chunkSize: 4)
        #expect(try Self.pairs(url).map(\.total) == (0..<25).map { (Int64($0) + 1) * 10 })
    }

    /// Stopped between two chunks of the update and run again: the chunks committed before the stop are
    /// not updated twice, those after it read their own old values, and the store is the one an
    /// uninterrupted run leaves.
    @Test func anUpdateStoppedBetweenChunksAndResumedReadsTheOldValues() throws {
        let directory = try TemporaryDirectory("moult-staged-old-values")
        defer { directory.remove() }
        let count = 3_500
        let source = try Self.store(count, in: directory)
        let stages = [
            StagedMigration.Stage.custom(
                from: "v1", to: "v2",
                willMigrate: StageHandler(operations: [.update(entity: "Pair", where: nil, set: ["left": "right", "right": "left", "tally": "tally + 1", "total": "tally * 10"])]))
        ]
        let resumed = try StagedMigrationTests.interruptedAndResumed(source, model: Self.model, stages: stages, after: 2, in: directory) { stopped in
            // Stopped: the first two chunks (1,000 objects each) updated, the rest not yet.
            let pairs = try Self.pairs(stopped)
            #expect(pairs[1_999].left == "R1999" && pairs[2_000].left == "L2000")
        }
        let pairs = try Self.pairs(resumed)
        #expect(pairs.map(\.left) == (0..<count).map { "R\($0)" })
        #expect(pairs.map(\.right) == (0..<count).map { "L\($0)" })
        #expect(pairs.map(\.tally) == (0..<count).map { Int64($0) + 1 })
        #expect(pairs.map(\.total) == (0..<count).map { Int64($0) * 10 })
    }
}
