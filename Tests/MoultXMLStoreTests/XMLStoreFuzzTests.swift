import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import MoultXMLStore
import Testing

/// The XML store reader on mutated stores: every input ends in objects or a categorized error (65),
/// never a trap, an uncategorized error or an input slower than 2 s. What reads is written back and
/// read again to the same objects.
@Suite struct XMLStoreFuzzTests {
    /// The seven fixture mapping models (Xcode's entities) and a store of every attribute type.
    static func corpus() throws -> [[UInt8]] {
        var corpus = try XMLTestModels.xcmappingFiles.map { Array(try Data(contentsOf: $0)) }
        let model = try XMLTestModels.everyKindModel()
        let layout = try StoreLayout(model: model)
        let directory = try TemporaryDirectory("xml-fuzz-corpus")
        defer { directory.remove() }
        let url = directory.appending("store.xml")
        try XMLStoreRoundTripTests.write(
            XMLStoreRoundTripTests.objects(layout: layout), to: url, layout: layout,
            info: XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: 120))
        corpus.append(Array(try Data(contentsOf: url)))
        return corpus
    }

    struct RoundTripMismatch: Error {}

    @Test func xmlStoreReaderNeverTrapsOrHangs() throws {
        let dictionary = [
            "<object type=\"ITEM\" id=\"z9\">", "</object>", " idrefs=\"z102 z103\"", "<attribute name=\"", "type=\"binary\">", "type=\"date\">",
            "type=\"decimal\">", "type=\"uuid\">", "</attribute>", "<relationship name=\"", "type=\"1/1\"", "type=\"0/0\"", "&lt;", "&#x0;", "&#xD800;",
            "&bogus;", "<![CDATA[", "]]>", "<!--", "-->", "<!DOCTYPE database [", "<?p?>", "<plist version=\"1.0\">", "<dict>", "<data>", "<key>",
            "<nextObjectID>", "z0", "z99999999999999999999", "1e400", "-0", "\u{FF}", "\r\n",
        ]
        let layouts = try [StoreLayout(model: XMLTestModels.xcodeMappingModel()), StoreLayout(model: XMLTestModels.everyKindModel())]
        let corpus = try Self.corpus()
        let directory = try TemporaryDirectory("xml-fuzz")
        defer { directory.remove() }
        let copy = directory.appending("again.xml")
        let report = Fuzzer(name: "XML store", corpus: corpus, dictionary: dictionary).run(smokeIterations: 150) { bytes in
            // The corpus' last store is of the every-kind model; the others of Xcode's.
            let layout = bytes.count < 8_000 || String(decoding: bytes.prefix(4096), as: UTF8.self).contains("ITEM") ? layouts[1] : layouts[0]
            let reader = try XMLStoreReader(bytes: bytes)
            try reader.bind(to: layout)
            var objects: [XMLStoreObject] = []
            while let object = try reader.next() {
                if objects.count < 200 { objects.append(object) }
            }
            _ = try reader.info.storeMetadata()
            guard objects.count < 200 else { return }
            // What reads must write and read back to the same header and objects.
            try? FileManager.default.removeItem(at: copy)
            let writer = try XMLStoreWriter(url: copy, layout: layout, info: reader.info)
            for object in objects { try writer.write(object) }
            try writer.finish(durable: false)
            let again = try XMLStoreReader(url: copy)
            try again.bind(to: layout)
            var readAgain: [XMLStoreObject] = []
            while let object = try again.next() { readAgain.append(object) }
            if readAgain != objects || again.info != reader.info { throw RoundTripMismatch() }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}
