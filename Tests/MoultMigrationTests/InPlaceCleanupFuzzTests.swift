import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// The pending clean-up a store's metadata lists is input like any other: `moult finish` and a later
/// in-place migration read it. Random records must end in success or a categorized error, and never
/// drop what the store's version uses.
@Suite struct InPlaceCleanupFuzzTests {
    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    @Test func forgedCleanupRecordsNeverDropWhatTheVersionUses() throws {
        let v1 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("obsolete", .string)
            }
            Entity("Retired") { Attribute("note", .string) }
        }
        let v2 = try ObjectModel {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("code", .string).indexed()
            }
        }
        let model = try VersionedModel(name: "Cleanup", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let template = directory.appending("template.sqlite")
        let store = try SQLiteStore.create(at: template, model: v1)
        let writer = try store.makeWriter()
        try writer.write {
            for i in 0..<3 { try writer.insert("Item", ["name": .string("i\(i)"), "obsolete": .string("o")]) }
            try writer.insert("Retired", ["note": .string("r")])
        }
        store.database.close()
        var migration = try InPlaceMigration(store: template, model: model, to: "v2", keepsBackup: false)
        migration.defersCleanup = true
        try migration.run()
        let layout = try StoreLayout(model: v2)
        #expect(try InPlaceMigration.pendingCleanup(in: StoreMetadata(contentsOf: template)).count == 3)
        // The raw records, the version line first.
        let records = try #require(try StoreMetadata(contentsOf: template).additionalKeys[InPlaceMigration.pendingCleanupKey]?.arrayValue)
            .compactMap(\.stringValue)
        #expect(records.count == 4)

        let fuzzer = Fuzzer(
            name: "pending clean-up records", corpus: [Array(records.joined(separator: "\n").utf8)],
            dictionary: ["drop-table ", "drop-column ", "create-index ", "ZITEM", "ZNAME", "ZCODE", "Z_PK", "Z_PRIMARYKEY", "Z_METADATA",
                "sqlite_master", "\"", ";", " ", "\n", "ZITEM_ZCODE_INDEX", "ZRETIRED"])
        var count = 0
        let report = fuzzer.run(smokeIterations: 150) { bytes in
            count += 1
            let url = directory.appending("case-\(count).sqlite")
            try FileManager.default.copyItem(at: template, to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let database = try Database(url: url, mode: .readWrite)
            var metadata = try StoreMetadata(reading: database)
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            metadata.additionalKeys[InPlaceMigration.pendingCleanupKey] = .array(lines.map { .string(String($0)) })
            try database.execute("DELETE FROM Z_METADATA")
            try metadata.write(to: database)
            database.close()
            defer {
                // Whatever happened, the version's tables and columns are there and the store is whole.
                if let check = try? Database(url: url, mode: .readOnly) {
                    let columns = (try? check.columns(of: "ZITEM")) ?? []
                    let whole = (try? check.scalar("PRAGMA integrity_check")) == .string("ok")
                    let numbering = (try? check.tableExists("Z_PRIMARYKEY")) == true
                    check.close()
                    if !(columns.contains("ZNAME") && columns.contains("ZCODE") && whole && numbering) {
                        Issue.record("records \(lines) left ZITEM with \(columns), integrity \(whole), Z_PRIMARYKEY \(numbering)")
                    }
                }
            }
            try InPlaceMigration.finishPendingCleanup(of: url, layout: layout)
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        // Both outcomes happen: records done, and records refused as bad input.
        #expect(report.exitCodes[0, default: 0] > 0 && report.exitCodes[65, default: 0] > 0, "\(report)")
    }
}
