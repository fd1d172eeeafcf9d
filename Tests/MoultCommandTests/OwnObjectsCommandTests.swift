import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// Issue 22, item 6, through `moult`: on Apple's Photos 10.15.1 store, `plan` and an in-place `migrate`
/// agree (by SQL), and what the store holds beyond its model is kept and said.
@Suite struct OwnObjectsCommandTests {
    /// A versioned model of Photos' model twice, the second with one more attribute on Keyword.
    static func photosModel(in directory: TemporaryDirectory) throws -> URL {
        let bundle = directory.appending("Photos.xcdatamodeld")
        let contents = try String(contentsOf: Fixtures.url("osxphotos__Photos-10.15.1/Photos.xcdatamodel/contents"), encoding: .utf8)
        let entity = try #require(contents.range(of: "<entity name=\"Keyword\""))
        let end = try #require(contents[entity.upperBound...].firstIndex(of: ">"))
        var v2 = contents
        v2.insert(contentsOf: "\n<attribute name=\"note\" optional=\"YES\" attributeType=\"String\"/>", at: contents.index(after: end))
        for (name, text) in [("v1", contents), ("v2", v2)] {
            let folder = bundle.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folder.appending(path: "contents"))
        }
        return bundle
    }

    @Test func planAndMigrateAgreeOnAPhotosLibrary() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try Self.photosModel(in: directory).path
        let store = try directory.copyStore(Fixtures.url("osxphotos__Photos-10.15.1/Photos.sqlite")).path
        let plan = try MoultProcess.run(["plan", store, "--model", model, "--to", "v2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("in place: by SQL, schema only"), "\(plan.standardOutput.prefix(400))")
        #expect(plan.standardOutput.contains("kept: 4 tables (Z_RT_GenericAsset_boundedByRect, ACHANGE, ATRANSACTION, ATRANSACTIONSTRING)"))
        #expect(plan.standardOutput.contains("kept: 59 triggers"))
        let migrate = try MoultProcess.run(["migrate", store, "--model", model, "--to", "v2"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        #expect(migrate.standardOutput.contains("step 1: v1 -> v2 (inferred mapping): by SQL"), "\(migrate.standardOutput)")
        let count = try FidelityCommandTests.rows(URL(filePath: store), "SELECT count(*) FROM sqlite_master WHERE name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') OR type = 'trigger'")
        #expect(count == ["62"])
        let backup = directory.appending("Photos~.sqlite").path
        let verify = try MoultProcess.run(["verify", backup, store, "--model", model, "--to", "v2"])
        #expect(verify.exitCode == 0, "\(verify.standardOutput) \(verify.standardError)")
    }
}
