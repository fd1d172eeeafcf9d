import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A destination holds no page of the engine's work tables (the mirrors of associations, the
/// checkpoint, the policies' state): it is no larger than the same rows written without them.
@Suite struct CompactDestinationTests {
    @Test(arguments: [("v2", "v2-to-v3", "v3"), ("v4", "v4-to-v5", "v5")])
    func noFreePageIsLeft(from: String, mapping: String, to: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(from, persons: 3_000, in: directory)
        let output = directory.appending("out.sqlite")
        try People.migrate(source, to: to, mappings: [try People.mapping(mapping)], options: MigrationOptions(chunkSize: 100), output: output)
        let database = try Database(url: output, mode: .readOnly)
        defer { database.close() }
        let pragma = { (name: String) in try database.query("PRAGMA \(name)") { $0.int64(at: 0) }.first ?? -1 }
        #expect(try pragma("freelist_count") == 0)
        // Core Data's own setting, kept: later deletions give their pages back too.
        #expect(try pragma("auto_vacuum") == 2)
        #expect(try pragma("page_count") > 0)
    }
}
