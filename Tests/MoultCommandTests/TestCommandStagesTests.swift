import Foundation
import MoultTestSupport
import Testing

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

    static func stages(_ operations: [String], in folder: TemporaryDirectory) throws -> String {
        let text = #"{ "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [ "# + operations.joined(separator: ", ") + " ] } } ] }"
        let url = folder.appending("stages.json")
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

    /// A handler that also deletes rooms in raw SQL, which the test does not model: its result holds
    /// fewer rooms than the handlers' documented operations leave, and the test fails on it.
    @Test func aHandlerDroppingObjectsItShouldNotFails() throws {
        let folder = try TemporaryDirectory("moult-test-stages")
        defer { folder.remove() }
        let drop = #"{ "sql": "DELETE FROM ZROOM WHERE Z_PK % 5 = 0" }"#
        let result = try Self.test(try Self.stages([Self.fill, Self.deduplicate, drop], in: folder))
        let output = result.standardOutput + result.standardError
        #expect(result.exitCode == 67, "\(output)")
        #expect(result.standardError.contains("the reference leaves out"), "\(output)")
        #expect(result.standardOutput.contains("  staged: FAILED: moult verify exited 67"), "\(output)")
        #expect(result.standardOutput.contains("Room"), "\(output)")
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
}
