import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22's fidelity regressions, end to end through the `moult` executable.
@Suite struct FidelityRegressionTests {
    /// `regressions/fidelity/entity-numbering-case`: Core Data numbers entities in `caseInsensitiveCompare`
    /// order, so `create` numbers ComputedAssetAttributes (c-o-m-p-u-t-e-d) 1 and ComputeSyncAttributes
    /// (c-o-m-p-u-t-e-s) 2, where byte order ('S' < 'd') gave the reverse; and a store numbered so, as
    /// Photos 14.6 and later are, is read, not refused (65).
    @Test func entityNumberingCase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = directory.appending("O.xcdatamodel")
        try FileManager.default.copyItem(at: Fixtures.url("regressions/fidelity/entity-numbering-case/O.xcdatamodel"), to: model)
        let store = directory.appending("o.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", model.path])
        #expect(created.exitCode == 0, "\(created.standardError)")

        let database = try Database(url: store, mode: .readWrite)
        let rows = try database.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT") { "\($0.int64(at: 0))|\($0.string(at: 1) ?? "")" }
        #expect(rows == ["1|ComputedAssetAttributes", "2|ComputeSyncAttributes"])
        try database.executeScript(
            """
            INSERT INTO ZCOMPUTEDASSETATTRIBUTES (Z_PK, Z_ENT, Z_OPT, ZB) VALUES (1, 1, 1, 'b');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 1;
            PRAGMA wal_checkpoint(TRUNCATE)
            """)
        database.close()

        let inspected = try MoultProcess.run(["inspect", store.path, "--model", model.path, "--json"])
        #expect(inspected.exitCode == 0, "\(inspected.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(inspected.standardOutput.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [String: [String: Int]])
        #expect(entities["ComputedAssetAttributes"]?["count"] == 1)
        #expect(entities["ComputeSyncAttributes"]?["count"] == 0)
    }
}
