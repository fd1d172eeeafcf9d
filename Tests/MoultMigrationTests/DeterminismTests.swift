import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Chunk sizes and association tables change how a migration runs, never what it makes.
@Suite struct DeterminismTests {
    /// People steps whose source the generator makes: (source version, mapping file, target).
    static let steps: [(from: String, mapping: String, to: String)] = [("v2", "v2-to-v3", "v3"), ("v4", "v4-to-v5", "v5")]

    /// Every chunk size and association table gives the same destination, table by table.
    ///
    /// The chunk size and the association storage are part of the plan's fingerprint, from which the
    /// destination's store UUID is derived: across options the UUID differs, so these comparisons
    /// leave out `Z_METADATA`'s row and the metadata's UUID (every other metadata key is compared).
    /// Runs with the same options are compared whole, UUID included.
    @Test(arguments: steps)
    func optionsDoNotChangeTheDestination(step: (from: String, mapping: String, to: String)) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate(step.from, persons: 300, in: directory)
        let before = try checksum(source)
        let mapping = try People.mapping(step.mapping)
        var outputs: [(String, URL)] = []
        for chunkSize in [1, 7, 10_000] {
            for associations in MigrationOptions.AssociationStorage.allCases {
                let label = "chunk \(chunkSize), \(associations)"
                let output = directory.appending("\(chunkSize)-\(associations).sqlite")
                try People.migrate(
                    source, to: step.to, mappings: [mapping], options: MigrationOptions(chunkSize: chunkSize, associations: associations),
                    output: output)
                outputs.append((label, output))
            }
        }
        let (referenceLabel, reference) = outputs[0]
        for (label, output) in outputs.dropFirst() {
            try expectIdentical(reference, output, ignoringStoreUUID: true, "\(label) vs \(referenceLabel)")
        }
        // The same options twice: the same store, store UUID included.
        let again = directory.appending("again.sqlite")
        try People.migrate(source, to: step.to, mappings: [mapping], options: MigrationOptions(chunkSize: 1), output: again)
        try expectIdentical(reference, again, "chunk 1 run twice")
        let dump = try StoreDump(reference)
        #expect(dump.tables["Z_METADATA"]?.first?.contains(.string(dump.metadata.storeUUID)) == true)
        #expect(try checksum(source) == before)
    }
}
