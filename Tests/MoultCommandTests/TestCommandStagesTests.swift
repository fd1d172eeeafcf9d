import Foundation
import MoultModel
import MoultStore
import MoultTesting
import MoultTestSupport
import Testing

@testable import MoultCommand

/// Issue 39, item 3: `moult test --stages` tests the stages as stages. Every path runs them (a copy
/// staged in place, and a copy staged in place killed after a handler's commit and run again), and
/// each result is compared with what the handlers make of the source, worked out by the test itself.
///
/// `Dues` v1 → v2 makes `Room.dues` required and `Room.label` unique: a generated v1 store has nil dues
/// and duplicate labels, which a `willMigrate` must fill and delete before the lightweight step.
@Suite struct TestCommandStagesTests {
    static let dues = Fixtures.packageRoot.appending(path: "Tests/StagedModels/Dues.xcdatamodeld").path
    static let fill = #"{ "update": "Room", "where": "dues == nil", "set": { "dues": "0" } }"#
    static let deduplicate = #"{ "deleteDuplicates": "Room", "by": ["label"] }"#

    static func stages(_ operations: [String], in folder: TemporaryDirectory, named name: String = "stages.json") throws -> String {
        let text = #"{ "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [ "# + operations.joined(separator: ", ") + " ] } } ] }"
        let url = folder.appending(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static func test(_ stages: String?) throws -> MoultProcess.Result {
        try MoultProcess.run(["test", dues, "--objects", "150", "--seed", "1"] + (stages.map { ["--stages", $0] } ?? []))
    }

    /// The right stages pass on every path; the same store without them fails: the data needs the stages.
    @Test func aModelThatNeedsStagesPassesOnEveryPath() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let unstaged = try Self.test(nil)
        #expect(unstaged.exitCode == 67, "\(unstaged.standardOutput)\(unstaged.standardError)")
        #expect(unstaged.standardOutput.contains("output: FAILED"), "\(unstaged.standardOutput)")

        let staged = try Self.test(try Self.stages([Self.fill, Self.deduplicate], in: folder))
        let output = staged.standardOutput + staged.standardError
        #expect(staged.exitCode == 0, "\(output)")
        #expect(staged.standardOutput.contains("  staged: ok"), "\(output)")
        // The resumed path was stopped inside the handlers, not run whole.
        #expect(staged.standardOutput.contains("  staged, resumed: ok (stopped after the handlers' commit "), "\(output)")
        #expect(staged.standardOutput.contains("1 store, 2 paths: all passed"), "\(output)")
        // The duplicates the handler deletes on purpose are not a loss.
        #expect(!staged.standardOutput.contains("dropped"), "\(output)")
    }

    /// A handler that fills the dues but leaves the duplicate labels: v2's uniqueness refuses them, on
    /// every path, and the test names the path and the reason.
    @Test func aHandlerLeavingDuplicatesFails() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let result = try Self.test(try Self.stages([Self.fill], in: folder))
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 67, "\(output)")
        #expect(result.standardOutput.contains("  staged: FAILED: moult migrate exited"), "\(output)")
        #expect(result.standardOutput.contains("  staged, resumed: FAILED: moult migrate"), "\(output)")
        #expect(output.contains("label"), "\(output)")
    }

    /// A handler at a later version than the store's (People: a lightweight stage v1 → v2, then
    /// duplicate persons deleted at v2 before the mapped step to v3): the reference is migrated to v2 by
    /// an ordinary run first, and verify and the account take it from there with the custom stage's
    /// mapping. Both versions pass, the v1 store's resumed path stopped inside the handler.
    @Test func aHandlerAtALaterVersionIsAppliedWhereTheStagesRunIt() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let mappings = Fixtures.datasets.appending(path: "People/Mappings")
        let stages = folder.appending("stages.json")
        let text = #"{ "stages": [ { "lightweight": ["v1", "v2"] }, { "custom": { "from": "v2", "to": "v3", "mapping": "# + "\"\(mappings.appending(path: "v2-to-v3.json").path)\""
            + #", "willMigrate": [ { "deleteDuplicates": "Person", "by": ["name", "age"] } ] } } ] }"#
        try Data(text.utf8).write(to: stages)
        let result = try MoultProcess.run(
            ["test", Fixtures.peopleModel.path, "--to", "v3", "--version", "v1", "--version", "v2", "--mapping", mappings.appending(path: "v1-to-v2.json").path,
             "--mapping", mappings.appending(path: "v2-to-v3.json").path, "--stages", stages.path, "--objects", "120"])
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(result.standardOutput.contains("v1 → v3, generated (120 objects):\n  staged: ok\n  staged, resumed: ok (stopped after the handlers' commit 1, resumed)"), "\(output)")
        #expect(result.standardOutput.contains("2 stores, 4 paths: all passed"), "\(output)")
    }

    /// A handler that sets `now()` (Apple's example: nil creation dates filled before v2 makes them
    /// required): the staged children and the reference are given the same instant, so the values agree
    /// on every path, the resumed one included (its rerun keeps the first run's instant).
    @Test func aHandlerSettingNowAgreesWithTheReference() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let model = Fixtures.packageRoot.appending(path: "Tests/StagedModels/Attachments.xcdatamodeld").path
        let unstaged = try MoultProcess.run(["test", model, "--objects", "80"])
        #expect(unstaged.exitCode == 67, "\(unstaged.standardOutput)\(unstaged.standardError)")
        let stages = folder.appending("stages.json")
        try Data(#"{ "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [ { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()" } } ] } } ] }"#.utf8)
            .write(to: stages)
        let result = try MoultProcess.run(["test", model, "--objects", "80", "--stages", stages.path])
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(result.standardOutput.contains("  staged, resumed: ok (stopped after the handlers' commit 1, resumed)"), "\(output)")
        #expect(result.standardOutput.contains("1 store, 2 paths: all passed"), "\(output)")
    }

    // MARK: - Every operation in the reference

    static func test(_ stages: String, model: String = dues, objects: Int = 150, work: URL) throws -> MoultProcess.Result {
        try MoultProcess.run(["test", model, "--objects", String(objects), "--seed", "1", "--stages", stages, "--work", work.path])
    }

    /// A number a query of a store counts.
    static func count(_ sql: String, in store: URL) throws -> Int64 {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        guard case .int(let count)? = try database.scalar(sql) else { return -1 }
        return count
    }

    /// An `insert`: the reference makes the object as the stage does (its values, the model's defaults
    /// for the rest), so both staged paths pass; without it the staged results would hold one room
    /// more than the reference. The reference and the staged store each hold the new room.
    @Test func anInsertIsMadeInTheReference() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let insert = #"{ "insert": "Room", "values": { "label": "'moult: inserted'", "dues": "7" } }"#
        let work = folder.appending("work")
        let result = try Self.test(try Self.stages([Self.fill, Self.deduplicate, insert], in: folder), work: work)
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(result.standardOutput.contains("1 store, 2 paths: all passed"), "\(output)")
        let inserted = "SELECT COUNT(*) FROM ZROOM WHERE ZLABEL = 'moult: inserted' AND ZDUES = 7"
        #expect(try Self.count(inserted, in: work.appending(path: "1-v1/reference.sqlite")) == 1)
        #expect(try Self.count(inserted, in: work.appending(path: "1-v1/staged.sqlite")) == 1)
    }

    /// Raw `sql`: the reference runs the statement itself, on its own copy of the source, so a handler
    /// that renames every fifth room passes, and the reference holds the renamed rooms too.
    @Test func rawSQLRunsOnTheReferenceItself() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let sql = #"{ "sql": "UPDATE ZROOM SET ZLABEL = ZLABEL || ' (sql)' WHERE Z_PK % 5 = 0" }"#
        let work = folder.appending("work")
        let result = try Self.test(try Self.stages([Self.fill, Self.deduplicate, sql], in: folder), work: work)
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(result.standardOutput.contains("1 store, 2 paths: all passed"), "\(output)")
        #expect(!output.contains("leaves out"), "\(output)")
        let renamed = "SELECT COUNT(*) FROM ZROOM WHERE ZLABEL LIKE '% (sql)'"
        let inReference = try Self.count(renamed, in: work.appending(path: "1-v1/reference.sqlite"))
        #expect(inReference > 0)
        #expect(try Self.count(renamed, in: work.appending(path: "1-v1/staged.sqlite")) == inReference)
    }

    /// One update whose second assignment (by name) reads what the first sets: every value is evaluated
    /// on the object as it was before the update, in the staged run and in the reference alike, so the
    /// undated attachments are the ones marked (the run used to evaluate `size` after setting
    /// `dateCreated`, marking none, and the path failed against the reference).
    @Test func anUpdateReadsTheObjectBeforeItsAssignments() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let model = Fixtures.packageRoot.appending(path: "Tests/StagedModels/Attachments.xcdatamodeld").path
        let update = #"{ "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()", "size": "TERNARY(dateCreated == nil, 987654321, #size)" } }"#
        let stages = folder.appending("stages.json")
        try Data((#"{ "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [ "# + update + " ] } } ] }").utf8).write(to: stages)
        let work = folder.appending("work")
        let result = try Self.test(stages.path, model: model, objects: 80, work: work)
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 0, "\(output)")
        #expect(result.standardOutput.contains("1 store, 2 paths: all passed"), "\(output)")
        let source = work.appending(path: "v1-generated.sqlite")
        let undated = try Self.count("SELECT COUNT(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL", in: source)
        let marked = "SELECT COUNT(*) FROM ZATTACHMENT WHERE ZSIZE = 987654321"
        let markedBefore = try Self.count(marked, in: source)
        #expect(undated > 0)
        #expect(try Self.count(marked, in: work.appending(path: "1-v1/staged.sqlite")) == markedBefore + undated)
        #expect(try Self.count(marked, in: work.appending(path: "1-v1/reference.sqlite")) == markedBefore + undated)
    }

    /// A staged run that writes another value than the stages `moult test` was given say (the nil dues
    /// filled with 1 where the stages fill them with 0): the path's comparison with the reference at the
    /// target names an object that differs (a room, or an item by its room's dues). The same comparison of the test's own staged result finds none.
    @Test func aStagedRunWritingAnotherValueFailsThePath() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let work = folder.appending("work")
        let passed = try Self.test(try Self.stages([Self.fill, Self.deduplicate], in: folder), work: work)
        #expect(passed.exitCode == 0, "\(passed.standardOutput)\(passed.standardError)")
        let wrongFill = #"{ "update": "Room", "where": "dues == nil", "set": { "dues": "1" } }"#
        let mutatedStages = try Self.stages([wrongFill, Self.deduplicate], in: folder, named: "mutated.json")
        let mutated = try folder.copyStore(work.appending(path: "v1-generated.sqlite"), as: "mutated.sqlite")
        let run = try MoultProcess.run(["migrate", mutated.path, "--stages", mutatedStages, "--model", Self.dues, "--no-backup", "--quiet"])
        #expect(run.exitCode == 0, "\(run.standardOutput)\(run.standardError)")

        let v2 = try #require(try VersionedModel(contentsOf: URL(filePath: Self.dues)).version(named: "v2")).model
        let expected = try StoreSnapshot(url: work.appending(path: "1-v1/reference-target.sqlite"), model: v2)
        #expect(try PathRunner.difference(of: work.appending(path: "1-v1/staged.sqlite"), fromReference: expected, model: v2) == nil)
        let difference = try #require(try PathRunner.difference(of: mutated, fromReference: expected, model: v2))
        // The first object that differs is a room, or an item naming one, by its dues.
        #expect(difference.contains("dues="), "\(difference)")
    }
}
