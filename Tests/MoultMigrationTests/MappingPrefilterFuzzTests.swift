import Foundation
import MoultMapping
import MoultMigration
import MoultTestSupport
import Testing

/// `MappingDiscovery.namesNoneOf`, the byte search that leaves another model's mapping models unread,
/// on the fixtures' `xcmapping.xml` and mutations of them: each fixture is left out for a model of none
/// of its entities; no input traps; and a mapping model that reads is never left out for a model that
/// holds one of the entities its entity mappings name.
@Suite struct MappingPrefilterFuzzTests {
    struct LeftOutItsOwnEntities: Error {}

    @Test func namesNoneOfNeverLeavesOutAMappingOfTheModel() throws {
        var corpus: [[UInt8]] = []
        let enumerator = FileManager.default.enumerator(at: Fixtures.url(""), includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent == "xcmapping.xml", !url.path.contains("/regressions/"), Fixtures.isFuzzSeed(url) {
                corpus.append(Array(try Data(contentsOf: url)))
            }
        }
        corpus.sort { $0.count < $1.count }
        #expect(corpus.count >= 10, "the fixtures' mapping models")
        // Each fixture is another model's for a model of none of its entities.
        let seeds = try TemporaryDirectory("mapping-prefilter-seeds")
        defer { seeds.remove() }
        for (index, seed) in corpus.enumerated() {
            let bundle = seeds.appending("\(index).xcmappingmodel")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data(seed).write(to: bundle.appending(path: "xcmapping.xml"))
            #expect(MappingDiscovery.namesNoneOf(["NoSuchEntityAnywhere"], in: bundle), "fixture \(index) would be read")
        }
        // An attribute written otherwise than Xcode writes it (single quotes), which an XML parser
        // reads all the same: the file is not judged, so not left out for the entity it names.
        let book = Fixtures.url("objcio__issue-4-core-data-migration/BookMigration/Model1_to_Model2.xcmappingmodel/xcmapping.xml")
        let quoted = seeds.appending("quoted.xcmappingmodel")
        try FileManager.default.createDirectory(at: quoted, withIntermediateDirectories: true)
        let text = try String(contentsOf: book, encoding: .utf8)
        let first = try #require(text.range(of: #"name="sourcename""#))
        // (The first entity mapping's destination name too, the same entity's in this file.)
        var rewritten = text.replacingCharacters(in: first, with: "name='sourcename'")
        rewritten = rewritten.replacingCharacters(in: try #require(rewritten.range(of: #"name="destinationname""#)), with: "name='destinationname'")
        try Data(rewritten.utf8).write(to: quoted.appending(path: "xcmapping.xml"))
        let after = text[first.upperBound...]
        let valueStart = try #require(after.firstIndex(of: ">"))
        let own = String(after[after.index(after: valueStart)...].prefix { $0 != "<" })
        #expect(try MappingModel(contentsOf: quoted).entityMappings.contains { $0.sourceEntityName == own }, "the parser reads it")
        #expect(!MappingDiscovery.namesNoneOf([own], in: quoted), "\(own) is named in single quotes")
        let directory = try TemporaryDirectory("mapping-prefilter-fuzz")
        defer { directory.remove() }
        let bundle = directory.appending("m.xcmappingmodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let dictionary = ["name=\"sourcename\"", "name=\"destinationname\"", "<attribute ", "</attribute>", ">", "<", "&amp;", "\u{FF}", "Person"]
        let report = Fuzzer(name: "mapping prefilter", corpus: corpus, dictionary: dictionary).run(smokeIterations: 120) { bytes in
            try Data(bytes).write(to: bundle.appending(path: "xcmapping.xml"))
            _ = MappingDiscovery.namesNoneOf(["NoSuchEntityAnywhere"], in: bundle)
            guard let mapping = try? MappingModel(contentsOf: bundle) else { return }
            let own = Set(mapping.entityMappings.flatMap { [$0.sourceEntityName, $0.destinationEntityName].compactMap { $0 } })
            // A mapping that reads is never left out for a model holding any one of its entities.
            for name in own where MappingDiscovery.namesNoneOf([name], in: bundle) { throw LeftOutItsOwnEntities() }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
    }
}
