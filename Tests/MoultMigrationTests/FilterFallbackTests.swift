import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A filter the pushdown compiler turns into SQL that SQLite then refuses (an expression tree deeper
/// than SQLite's 1,000 levels) is evaluated in Swift instead: the migration makes the same store as
/// with the equivalent short filter, which runs in SQL.
@Suite struct FilterFallbackTests {
    /// The v2 → v3 mapping with the address mapping's filter replaced.
    static func mapping(filter: String) throws -> MappingModel {
        var mapping = try People.mapping("v2-to-v3")
        let index = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToAddress" })
        mapping.entityMappings[index].filterPredicate = filter
        return mapping
    }

    static let short = "(street != nil OR state != nil) AND age >= 30 AND age < 70"

    /// The same condition written with 1,200 terms: each term repeats one of the short filter's.
    static let long: String = {
        var terms = ["(street != nil OR state != nil)"]
        for index in 0..<1_200 { terms.append(index.isMultiple(of: 2) ? "age >= 30" : "age < 70") }
        return terms.joined(separator: " AND ")
    }()

    @Test(arguments: [true, false])
    func sameStoreWhenSQLiteRefusesTheFilter(bulkSQL: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 400, in: directory)
        let options = MigrationOptions(chunkSize: 70, bulkSQL: bulkSQL)

        // Where each filter runs: the long one pushes down, but SQLite cannot prepare it.
        for (filter, inSQL) in [(Self.short, true), (Self.long, false)] {
            let migrator = StreamingMigrator(
                source: source, sourceModel: People.version("v2"), destinationModel: People.version("v3"),
                mappings: [try Self.mapping(filter: filter)], policies: People.policies, options: options)
            let plan = try migrator.plan()
            let address = try #require(plan.mappings.first { $0.name == "PersonToAddress" })
            #expect(address.filterInSQL == inSQL, "\(filter.prefix(60))")
        }

        let viaSQL = directory.appending("sql.sqlite")
        let viaSwift = directory.appending("swift.sqlite")
        try People.migrate(source, to: "v3", mappings: [try Self.mapping(filter: Self.short)], options: options, output: viaSQL)
        try People.migrate(source, to: "v3", mappings: [try Self.mapping(filter: Self.long)], options: options, output: viaSwift)
        // The mappings' texts differ, so the derived store UUIDs do; every row is the same.
        try expectIdentical(viaSQL, viaSwift, ignoringStoreUUID: true, "short filter in SQL vs long filter in Swift")
        let addresses = try #require(try StoreDump(viaSwift).tables["ZADDRESS"]).count
        #expect(addresses > 0 && addresses < 400)
    }
}
