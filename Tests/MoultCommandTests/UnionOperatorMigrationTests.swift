import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 2, end to end: a mapping whose to-many value is
/// `$source.countries.@distinctUnionOfSets.moods` (the shape of objc.io's Moody 2 → Moody 3, which
/// the app's own tests migrate with Core Data) migrates, where it was refused (65).
@Suite struct UnionOperatorMigrationTests {
    @Test func continentsGetTheirCountriesMoods() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = Fixtures.packageRoot.appending(path: "Tests/ChainModels")
        let model = folder.appending(path: "Regions.xcdatamodeld")
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model.appending(path: "r1.xcdatamodel").path])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript(
            """
            INSERT INTO ZCONTINENT VALUES (1, 1, 1, 'Europe'), (2, 1, 1, 'Africa'), (3, 1, 1, 'Antarctica');
            INSERT INTO ZCOUNTRY VALUES (1, 2, 1, 1, 'France'), (2, 2, 1, 1, 'Italy'), (3, 2, 1, 2, 'Kenya'), (4, 2, 1, NULL, 'Atlantis');
            INSERT INTO ZMOOD VALUES (1, 3, 1, 1, 'calm'), (2, 3, 1, 1, 'glad'), (3, 3, 1, 2, 'keen'), (4, 3, 1, 3, 'warm'),
                (5, 3, 1, 4, 'lost'), (6, 3, 1, NULL, 'none');
            UPDATE Z_PRIMARYKEY SET Z_MAX = CASE Z_ENT WHEN 1 THEN 3 WHEN 2 THEN 4 ELSE 6 END;
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        database.close()

        let output = directory.appending("o.sqlite")
        let migrated = try MoultProcess.run([
            "migrate", store.path, "--model", model.path, "--mapping", folder.appending(path: "Regions-r1-to-r2.json").path, "--output", output.path,
            "--quiet",
        ])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        let result = try Database(url: output, mode: .readOnly)
        defer { result.close() }
        // Each mood's continent is its country's (the inverse of Continent.moods); a mood without a
        // country, or whose country has no continent, has none.
        let rows = try result.query(
            """
            SELECT m.ZNAME, IFNULL(k.ZNAME, '-') FROM ZMOOD m LEFT JOIN ZCONTINENT k ON k.Z_PK = m.ZCONTINENT ORDER BY m.ZNAME
            """
        ) { "\($0.string(at: 0) ?? "")|\($0.string(at: 1) ?? "")" }
        #expect(rows == ["calm|Europe", "glad|Europe", "keen|Europe", "lost|-", "none|-", "warm|Africa"])
    }
}
