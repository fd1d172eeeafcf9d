import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22's fidelity cases 3 and 4 (`regressions/fidelity/<folder>` of the shared regression folder,
/// models copied into `Tests/Fixtures/regressions/fidelity/<folder>`), end to end through `moult` as
/// each folder's `cmd.sh` runs them: in place and `--output` give the same rows, and Moult infers and
/// validates as Core Data does.
@Suite struct FidelityCommandTests {
    static let cases = Fixtures.packageRoot.appending(path: "Tests/Fixtures/regressions/fidelity")

    static func model(_ folder: String, _ name: String) -> String { cases.appending(path: "\(folder)/\(name).xcdatamodeld").path }

    /// `fidelity/required-to-many-empty`'s one Owner, with no items.
    static let lonelyOwner = """
                INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT) SELECT 1, Z_ENT, 1, 'nobody', 5 FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Owner';
                """

    /// Runs SQL on a store (made by `moult create`), as the cases' `sqlite3` lines do.
    static func execute(_ store: URL, _ sql: String) throws {
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        try database.executeScript(sql)
    }

    /// Every row of a query, its values joined by `|` (text as it is, a nil as `nil`).
    static func rows(_ store: URL, _ sql: String) throws -> [String] {
        let database = try Database(url: store, mode: .readOnly)
        defer { database.close() }
        return try database.query(sql) { statement in
            (0..<statement.columnCount).map { column in
                guard case .string(let text) = statement.value(at: column) else { return "\(statement.value(at: column))" }
                return text
            }.joined(separator: "|")
        }
    }

    static func run(_ arguments: [String]) throws -> MoultProcess.Result {
        try MoultProcess.run(arguments)
    }

    /// `moult create` at a version of a model, then rows inserted by SQL.
    static func store(_ url: URL, model: String, version: String, rows sql: String) throws -> URL {
        let created = try run(["create", url.path, "--model", model, "--model-version", version])
        try #require(created.exitCode == 0, "\(created.standardError)")
        try execute(url, sql)
        return url
    }

    /// A store migrated both ways: its copy in place, and the store itself into `--output`.
    struct BothWays {
        var output: URL, inPlace: URL
        var copied: MoultProcess.Result, migrated: MoultProcess.Result
    }

    static func migrateBothWays(_ source: URL, model: String, to version: String, in directory: TemporaryDirectory, quiet: Bool = true) throws -> BothWays {
        let inPlace = try directory.copyStore(source, as: "in-place.sqlite")
        let output = directory.appending("output.sqlite")
        let options = quiet ? ["--quiet"] : []
        let copied = try run(["migrate", source.path, "--model", model, "--to", version, "--output", output.path] + options)
        let migrated = try run(["migrate", inPlace.path, "--model", model, "--to", version] + options)
        return BothWays(output: output, inPlace: inPlace, copied: copied, migrated: migrated)
    }

    // MARK: - fidelity/inplace-new-derived-attribute

    /// `fidelity/inplace-new-derived-attribute`: v2 adds `Asset.derivedDevice = extra.device`. In place
    /// computes it for the existing rows as `--output` does (7, 9). Before: in place exited 0 leaving
    /// NULL in both rows while `--output` gave 7 and 9.
    @Test func inPlaceComputesANewDerivedAttribute() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Self.model("inplace-new-derived-attribute", "D")
        let source = try Self.store(
            directory.appending("v1.sqlite"), model: model, version: "v1",
            rows: """
                INSERT INTO ZEXTRA (Z_PK, Z_ENT, Z_OPT, ZDEVICE, ZASSET) VALUES (1, 2, 1, 7, 1), (2, 2, 1, 9, 2);
                INSERT INTO ZASSET (Z_PK, Z_ENT, Z_OPT, ZUUID, ZEXTRA) VALUES (1, 1, 1, 'a', 1), (2, 1, 1, 'b', 2), (3, 1, 1, 'c', NULL);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Asset';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Extra';
                """)
        let plan = try Self.run(["plan", source.path, "--model", model, "--to", "v2"])
        #expect(plan.standardOutput.contains("in place: by SQL"), "\(plan.standardOutput)")
        let both = try Self.migrateBothWays(source, model: model, to: "v2", in: directory)
        #expect(both.copied.exitCode == 0, "\(both.copied.standardError)")
        #expect(both.migrated.exitCode == 0, "\(both.migrated.standardError)")
        let (output, inPlace) = (both.output, both.inPlace)

        let query = "SELECT Z_PK, ZDERIVEDDEVICE FROM ZASSET ORDER BY Z_PK"
        #expect(try Self.rows(output, query) == ["1|7", "2|9", "3|nil"])
        #expect(try Self.rows(inPlace, query) == Self.rows(output, query))
        // The triggers keep it afterwards, in place too.
        try Self.execute(inPlace, "UPDATE ZEXTRA SET ZDEVICE = 11 WHERE Z_PK = 1")
        #expect(try Self.rows(inPlace, query) == ["1|11", "2|9", "3|nil"])
    }

    // MARK: - fidelity/required-to-many-empty

    /// `fidelity/required-to-many-empty`: `Owner.items` is a to-many without `optional="YES"` and
    /// without `minCount`; an Owner with no items migrates to v3 in place and with `--output` alike
    /// (before: `--output` failed validation, 67, while in place exited 0), and `infer` takes the new
    /// such to-many `Note.tags` of v2 (before: refused, 66).
    @Test func anEmptyNonOptionalToManyIsValid() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Self.model("required-to-many-empty", "R")
        let source = try Self.store(directory.appending("s.sqlite"), model: model, version: "v1", rows: Self.lonelyOwner)
        let both = try Self.migrateBothWays(source, model: model, to: "v3", in: directory)
        #expect(both.copied.exitCode == 0, "\(both.copied.standardError)")
        #expect(both.migrated.exitCode == 0, "\(both.migrated.standardError)")
        let (output, inPlace) = (both.output, both.inPlace)
        let query = "SELECT Z_PK, ZNAME, ZNICKNAME, ZAMOUNT FROM ZOWNER ORDER BY Z_PK"
        #expect(try Self.rows(output, query) == ["1|nobody|nil|5"])
        #expect(try Self.rows(inPlace, query) == Self.rows(output, query))

        let inferred = try Self.run(["infer", "--from", "v1", "--to", "v2", "--model", model])
        #expect(inferred.exitCode == 0, "\(inferred.standardError)")
        #expect(inferred.standardOutput.contains("NoneToTag"), "\(inferred.standardOutput)")
    }

    /// `fidelity/required-to-many-empty`, the other half: a `minCount` the model sets is enforced by
    /// both ways (67, naming the relationship), an empty to-many failing it.
    @Test func aMinimumCountIsEnforcedInPlaceAndInTheCopy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // v3 with `Owner.items` given minCount="1".
        let model = directory.appending("R.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.cases.appending(path: "required-to-many-empty/R.xcdatamodeld"), to: model)
        let v3 = model.appending(path: "v3.xcdatamodel/contents")
        let text = try String(contentsOf: v3, encoding: .utf8)
        let counted = text.replacingOccurrences(
            of: "<relationship name=\"items\" toMany=\"YES\"", with: "<relationship name=\"items\" toMany=\"YES\" minCount=\"1\"")
        try #require(counted != text)
        try counted.write(to: v3, atomically: true, encoding: .utf8)

        let source = try Self.store(directory.appending("s.sqlite"), model: model.path, version: "v1", rows: Self.lonelyOwner)
        let both = try Self.migrateBothWays(source, model: model.path, to: "v3", in: directory, quiet: false)
        for result in [both.copied, both.migrated] {
            #expect(result.exitCode == 67, "\(result.standardError)")
            #expect(result.standardError.contains("items"), "\(result.standardError)")
        }
    }

    // MARK: - fidelity/integer64-to-double

    /// `fidelity/integer64-to-double`: `Owner.amount` Integer 64 → Double is inferred (before: refused,
    /// 66, "lossy"), with a warning naming the attribute and the rounding beyond 2^53 in `infer` and
    /// `plan`; in place and `--output` carry the same REAL values, 2^53 + 1 rounded alike.
    @Test func integer64ToDoubleIsInferredWithAWarning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = Self.model("integer64-to-double", "R")
        let unchanged = try Self.run(["infer", "--from", "v1", "--to", "v3", "--model", model])
        #expect(unchanged.exitCode == 0, "\(unchanged.standardError)")
        let inferred = try Self.run(["infer", "--from", "v1", "--to", "v2", "--model", model])
        #expect(inferred.exitCode == 0, "\(inferred.standardError)")
        #expect(inferred.standardError.contains("Owner.amount"), "\(inferred.standardError)")
        #expect(inferred.standardError.contains("2^53"), "\(inferred.standardError)")

        let source = try Self.store(
            directory.appending("s.sqlite"), model: model, version: "v1",
            rows: """
                INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT) SELECT 1, Z_ENT, 1, 'one', 1 FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner';
                INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT) SELECT 2, Z_ENT, 1, 'big', 9007199254740993 FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner';
                INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT) SELECT 3, Z_ENT, 1, 'none', NULL FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner';
                INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT) SELECT 4, Z_ENT, 1, 'low', -9223372036854775807 FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner';
                INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZOWNER) SELECT 1, Z_ENT, 1, 'x', 1 FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 4 WHERE Z_NAME = 'Owner';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Item';
                """)
        let plan = try Self.run(["plan", source.path, "--model", model, "--to", "v2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect((plan.standardOutput + plan.standardError).contains("Owner.amount"), "\(plan.standardOutput)\(plan.standardError)")
        #expect((plan.standardOutput + plan.standardError).contains("2^53"), "\(plan.standardOutput)\(plan.standardError)")
        #expect(plan.standardOutput.contains("in place: by SQL"), "\(plan.standardOutput)")

        let both = try Self.migrateBothWays(source, model: model, to: "v2", in: directory)
        #expect(both.copied.exitCode == 0, "\(both.copied.standardError)")
        #expect(both.migrated.exitCode == 0, "\(both.migrated.standardError)")
        let (output, inPlace) = (both.output, both.inPlace)
        let query = "SELECT Z_PK, typeof(ZAMOUNT), ZAMOUNT FROM ZOWNER ORDER BY Z_PK"
        #expect(
            try Self.rows(output, query) == [
                "1|real|1.0", "2|real|\(Double(9_007_199_254_740_992))", "3|null|nil", "4|real|\(Double(-9_223_372_036_854_775_807))",
            ])
        #expect(try Self.rows(inPlace, query) == Self.rows(output, query))
        let verified = try Self.run(["verify", source.path, output.path, "--model", model, "--to", "v2"])
        #expect(verified.exitCode == 0, "\(verified.standardOutput)\(verified.standardError)")
    }
}
