import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 1: in place on stores an older Core Data wrote, end to end through `moult`.
@Suite struct InPlaceOlderCoreDataTests {
    /// `regressions/fidelity/inplace-inline-unique-constraint-637`, run as its `cmd.sh` is written: a
    /// uniqueness constraint written as a table constraint (framework 637) no longer makes in place fail
    /// on `DROP COLUMN` (74): the table is rebuilt as p2 lays it out, both continents kept under their
    /// primary keys, `dummy` gone, `code` unique, the original kept as `s~.sqlite`, no work folder left.
    @Test func inlineUniqueConstraint637() throws {
        let run = try RegressionCase("fidelity", "inplace-inline-unique-constraint-637").run()
        defer { run.remove() }
        #expect(run.lines(containing: "--output: exit").first == "--output: exit 0", "\(run.output)")
        #expect(run.lines(containing: "in place: exit").first == "in place: exit 0", "\(run.output)")
        let listed = Set(run.output.split(separator: "\n").map(String.init))
        #expect(listed.isSuperset(of: ["s.sqlite", "s~.sqlite", "t.sqlite", "out.sqlite"]), "\(run.output)")
        #expect(!listed.contains { $0.contains("moult-inplace") || $0.hasSuffix(".moult-status") }, "\(run.output)")

        let store = run.scratch.appending(path: "w/s.sqlite")
        let database = try Database(url: store, mode: .readWrite)
        defer { database.close() }
        let rows = try database.query("SELECT Z_PK, ZCODE, ZNAME FROM ZCONTINENT ORDER BY Z_PK") {
            "\($0.int64(at: 0))|\($0.int64(at: 1))|\($0.string(at: 2) ?? "")"
        }
        #expect(rows == ["1|150|Europe", "2|2|Africa"])
        #expect(try database.columns(of: "ZCONTINENT").sorted() == ["ZCODE", "ZNAME", "Z_ENT", "Z_OPT", "Z_PK"])
        let declaration = try database.query("SELECT sql FROM sqlite_master WHERE name = 'ZCONTINENT'") { $0.string(at: 0) ?? "" }
        #expect(declaration.count == 1 && !declaration[0].uppercased().contains("CONSTRAINT"), "\(declaration)")
        // `code` is unique (p2's index), and a code used twice with another dummy (p1's constraint) is refused.
        #expect(throws: StoreError.self) {
            try database.execute("INSERT INTO ZCONTINENT (Z_PK, Z_ENT, Z_OPT, ZCODE, ZNAME) VALUES (3, 1, 1, 150, 'Again')")
        }
        // The store is at p2, as `--output` made its copy.
        let model = run.scratch.appending(path: "Places.xcdatamodeld")
        let inspected = try MoultProcess.run(["inspect", store.path, "--model", model.path])
        #expect(inspected.exitCode == 0 && inspected.standardOutput.contains("p2"), "\(inspected.standardOutput)\(inspected.standardError)")

        // `plan` on the copy `--output` read (still at p1, its constraint in place) names the constraint
        // and what the step does with it.
        let plan = try MoultProcess.run(["plan", run.scratch.appending(path: "w/t.sqlite").path, "--model", model.path])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(
            plan.standardOutput.contains("constraint ZCONTINENT: CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY): step 1: dropped"),
            "\(plan.standardOutput)")
        // `plan --sql` gives the SQL the run executes: the table rebuilt, no column dropped.
        let sql = try MoultProcess.run(["plan", run.scratch.appending(path: "w/t.sqlite").path, "--model", model.path, "--sql"])
        #expect(sql.exitCode == 0, "\(sql.standardError)")
        #expect(sql.standardOutput.contains("-- rebuildTable: ZCONTINENT from ZCONTINENT") && !sql.standardOutput.contains("DROP COLUMN"), "\(sql.standardOutput)")
    }

    /// A store holding an index named as the new version's index would be (a stale name an earlier
    /// migration left) is migrated, not refused with "index … already exists" (74): the new version's
    /// index takes the name, and is unique as p2 says.
    @Test func indexNamedAsTheNewVersionsIndex() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = directory.appending("Places.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.caseFolder.appending(path: "Places.xcdatamodeld"), to: model)
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model.appending(path: "p1.xcdatamodel").path])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript(
            """
            CREATE INDEX Z_Continent_UNIQUE_code ON ZCONTINENT (ZCODE);
            INSERT INTO ZCONTINENT (Z_PK, Z_ENT, Z_OPT, ZCODE, ZDUMMY, ZNAME) VALUES (1, 1, 1, 150, 0, 'Europe');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Continent';
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        database.close()

        let migrated = try MoultProcess.run(["migrate", store.path, "--model", model.path])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardError.contains("index Z_Continent_UNIQUE_code: step 1: dropped: the new version makes an index of that name"))
        let after = try Database(url: store, mode: .readOnly)
        defer { after.close() }
        let indexes = try after.query("SELECT sql FROM sqlite_master WHERE name = 'Z_Continent_UNIQUE_code'") { $0.string(at: 0) ?? "" }
        #expect(indexes.count == 1 && indexes[0].hasPrefix("CREATE UNIQUE INDEX"), "\(indexes)")
    }

    // MARK: - Support

    static var caseFolder: URL { RegressionCase("fidelity", "inplace-inline-unique-constraint-637").folder }
}
