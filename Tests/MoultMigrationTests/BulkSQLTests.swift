import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Stage 1 inside SQLite (`INSERT … SELECT` per chunk) and stage 2's keys-only reads make the same
/// store as the per-object path, byte for byte in every table and the metadata.
@Suite struct BulkSQLTests {
    static let steps: [(from: String, mapping: String?, to: String)] = [
        ("v1", nil, "v2"), ("v2", "v2-to-v3", "v3"), ("v3", "v3-to-v4", "v4"), ("v4", "v4-to-v5", "v5"),
    ]

    @Test(arguments: steps)
    func sameStoreEitherWay(step: (from: String, mapping: String?, to: String)) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 500, in: directory)
        let mappings = try step.mapping.map { [try People.mapping($0)] } ?? []
        let bulk = directory.appending("bulk.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        try People.migrate(source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: 37), output: bulk)
        try People.migrate(
            source, to: step.to, mappings: mappings, options: MigrationOptions(chunkSize: 37, bulkSQL: false), output: perObject)
        try expectIdentical(bulk, perObject, "\(step.from) -> \(step.to): bulk SQL vs per object")
    }

    /// A mapping whose attribute is computed (not a plain copy) or whose filter runs in Swift takes the
    /// per-object path for that mapping only; the store is the same.
    @Test func computedValuesStayInSwift() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        var mapping = try People.mapping("v2-to-v3")
        let index = try #require(mapping.entityMappings.firstIndex { $0.name == "PersonToPerson" })
        mapping.entityMappings[index].attributeMappings = mapping.entityMappings[index].attributeMappings.map { property in
            var property = property
            if property.name == "name" { property.valueExpression = "uppercase:($source.name)" }
            return property
        }
        mapping.entityMappings[index].filterPredicate = "name MATCHES '.*a.*'"
        let bulk = directory.appending("bulk.sqlite")
        let perObject = directory.appending("per-object.sqlite")
        try People.migrate(source, to: "v3", mappings: [mapping], options: MigrationOptions(chunkSize: 50), output: bulk)
        try People.migrate(source, to: "v3", mappings: [mapping], options: MigrationOptions(chunkSize: 50, bulkSQL: false), output: perObject)
        try expectIdentical(bulk, perObject, "computed values")
        let dump = try StoreDump(bulk)
        let names = try #require(dump.tables["ZPERSON"]).count
        #expect(names > 0 && names < 300)
    }
}
