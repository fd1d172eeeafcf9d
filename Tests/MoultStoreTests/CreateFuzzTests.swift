import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// Mutated models all the way to a created store: a model that reads gets a layout and a store, or a
/// bad-input error (65); never SQL that SQLite refuses (an internal error, exit 1), which is a finding.
///
/// The suite runs a seeded smoke; `MOULT_FUZZ_ITERATIONS` runs a long one (CONTRIBUTING.md, "Fuzzing:
/// model XML and .xccurrentversion").
@Suite struct CreateFuzzTests {
    @Test func mutatedModelsCreateStoresOrAreRefused() throws {
        var corpus: [[UInt8]] = []
        for root in [Fixtures.root, Fixtures.datasets] {
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            var urls: [URL] = []
            while let url = enumerator?.nextObject() as? URL {
                if url.lastPathComponent == "contents" { urls.append(url) }
            }
            for url in urls.sorted(by: { $0.path < $1.path }) { corpus.append(Array(try Data(contentsOf: url))) }
        }
        let tokens = [
            "<entity name=\"", "parentEntity=\"", "<attribute name=\"", "attributeType=\"String\"", "attributeType=\"Integer 64\"",
            "<relationship name=\"", "destinationEntity=\"", "inverseName=\"", "inverseEntity=\"", "toMany=\"YES\"",
            "ordered=\"YES\"", "indexed=\"YES\"", "transient=\"YES\"", "<fetchIndex name=\"", "<fetchIndexElement property=\"",
            "order=\"descending\"", "<uniquenessConstraint><constraint value=\"", "</uniquenessConstraint>", "\"/>", "</entity>",
            "Z_PK", "Z_ENT", "Order", "Select", "_1", "2",
        ]
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var count = 0
        let report = Fuzzer(name: "model to store", corpus: corpus, dictionary: tokens).run(smokeIterations: 300) { bytes in
            let model = try ObjectModel(xcodeContents: Data(bytes), path: "fuzz/contents")
            count += 1
            let url = directory.appending("s\(count).sqlite")
            defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
            let store = try SQLiteStore.create(at: url, model: model)
            store.database.close()
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] > 0, "\(report)")
    }
}
