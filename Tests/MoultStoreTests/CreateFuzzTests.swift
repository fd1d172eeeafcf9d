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
        // No fixture has derived attributes or partial indexes: a seed of our own with each form, so
        // that the derivation and partial-index readers and the SQL made from them are reached.
        corpus.append(Array(Self.derivedSeed.utf8))
        let seedDirectory = try TemporaryDirectory()
        defer { seedDirectory.remove() }
        let seeded = try SQLiteStore.create(
            at: seedDirectory.appending("seed.sqlite"), model: ObjectModel(xcodeContents: Data(Self.derivedSeed.utf8), path: "seed/contents"))
        // The seed reaches what it is for: the derived attributes' triggers and a partial index.
        #expect(try seeded.database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'Z_DA_%'") != .int(0))
        #expect(try seeded.database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql LIKE '%WHERE%'") == .int(1))
        seeded.database.close()
        let tokens = [
            "<entity name=\"", "parentEntity=\"", "<attribute name=\"", "attributeType=\"String\"", "attributeType=\"Integer 64\"",
            "<relationship name=\"", "destinationEntity=\"", "inverseName=\"", "inverseEntity=\"", "toMany=\"YES\"",
            "ordered=\"YES\"", "indexed=\"YES\"", "transient=\"YES\"", "<fetchIndex name=\"", "<fetchIndexElement property=\"",
            "order=\"descending\"", "<uniquenessConstraint><constraint value=\"", "</uniquenessConstraint>", "\"/>", "</entity>",
            "Z_PK", "Z_ENT", "Order", "Select", "_1", "2",
            "derived=\"YES\" derivationExpression=\"", "partialIndexPredicate=\"", "@count", "@sum.", "lowercase:(", "canonical:(",
            "now()", " != nil", " AND ", ".",
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

    static let derivedSeed = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="bookCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@count"/>
                <attribute name="pages" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@sum.pages"/>
                <attribute name="key" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
                <attribute name="lower" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(name)"/>
                <attribute name="touched" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
                <fetchIndex name="byName">
                    <fetchIndexElement property="name" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            <entity name="Book" representedClassName="Book" syncable="YES">
                <attribute name="pages" optional="YES" attributeType="Integer 64"/>
                <attribute name="authorName" optional="YES" attributeType="String" derived="YES" derivationExpression="author.name"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
                <fetchIndex name="byPages" partialIndexPredicate="pages != nil">
                    <fetchIndexElement property="pages" type="Binary" order="descending"/>
                </fetchIndex>
            </entity>
        </model>
        """
}
