import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
@testable import MoultXMLStore
import Testing

/// The XML store reader on mutated stores: every input ends in objects or a categorized error (65),
/// never a trap, an uncategorized error or an input slower than 2 s. What reads is written back and
/// read again to the same objects.
@Suite struct XMLStoreFuzzTests {
    /// The seven fixture mapping models (Xcode's entities) and a store of every attribute type.
    static func corpus() throws -> [[UInt8]] {
        var corpus = try XMLTestModels.xcmappingFiles.filter(Fixtures.isFuzzSeed).map { Array(try Data(contentsOf: $0)) }
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

    /// The reading of a store a few bytes at a time is not its reading whole (an uncategorized error:
    /// the harness reports it as a finding).
    struct ChunkedReadingDiffers: Error {
        var whole: String
        var chunked: String
    }

    /// A store's objects (the first 200) and header, read whole or a few bytes at a time.
    static func read(_ bytes: [UInt8], layout: StoreLayout, chunkSize: Int? = nil) throws -> ([XMLStoreObject], XMLStoreInfo) {
        let reader = try chunkSize.map { try XMLStoreReader(bytes: bytes, chunkSize: $0) } ?? XMLStoreReader(bytes: bytes)
        try reader.bind(to: layout)
        var objects: [XMLStoreObject] = []
        while let object = try reader.next() {
            if objects.count < 200 { objects.append(object) }
        }
        return (objects, reader.info)
    }

    /// Fragments of the format the mutations insert.
    static let dictionary = [
        "<object type=\"ITEM\" id=\"z9\">", "</object>", " idrefs=\"z102 z103\"", "<attribute name=\"", "type=\"binary\">", "type=\"date\">",
            "type=\"decimal\">", "type=\"uuid\">", "</attribute>", "<relationship name=\"", "type=\"1/1\"", "type=\"0/0\"", "&lt;", "&#x0;", "&#xD800;",
            "&bogus;", "<![CDATA[", "]]>", "<!--", "-->", "<!DOCTYPE database [", "<?p?>", "<plist version=\"1.0\">", "<dict>", "<data>", "<key>",
        "<nextObjectID>", "z0", "z99999999999999999999", "1e400", "-0", "\u{FF}", "\r\n",
    ]

    /// The layout a fuzzed input is read with: the corpus' last store is of the every-kind model; the
    /// others of Xcode's.
    static func layout(for bytes: [UInt8], _ layouts: [StoreLayout]) -> StoreLayout {
        bytes.count < 8_000 || String(decoding: bytes.prefix(4096), as: UTF8.self).contains("ITEM") ? layouts[1] : layouts[0]
    }

    @Test func xmlStoreReaderNeverTrapsOrHangs() throws {
        let dictionary = Self.dictionary
        let layouts = try [StoreLayout(model: XMLTestModels.xcodeMappingModel()), StoreLayout(model: XMLTestModels.everyKindModel())]
        let corpus = try Self.corpus()
        let directory = try TemporaryDirectory("xml-fuzz")
        defer { directory.remove() }
        let copy = directory.appending("again.xml")
        let report = Fuzzer(name: "XML store", corpus: corpus, dictionary: dictionary).run(smokeIterations: 150) { bytes in
            let layout = Self.layout(for: bytes, layouts)
            // Read as from a file a few bytes at a time (every token crosses a block's end): the same
            // objects, or the same error. A token that runs past the bytes held is read again from its
            // start once more arrive, so a long one (a mapping model's embedded model: 200 KB of
            // base64) costs its length squared over the chunk: inputs over 16 KiB are read 4 KiB or so
            // at a time. (A file is read in blocks that double while a token is unfinished.)
            let chunkSize = bytes.count <= 16_384 ? 1 + bytes.count % 13 : 4_093 + bytes.count % 13
            let chunked = Result { try Self.read(bytes, layout: layout, chunkSize: chunkSize) }
            let whole = Result { try Self.read(bytes, layout: layout) }
            switch (whole, chunked) {
            case (.success(let a), .success(let b)) where a.0 == b.0 && a.1 == b.1: break
            case (.failure(let a), .failure(let b)) where "\(a)" == "\(b)": break
            default: throw ChunkedReadingDiffers(whole: "\(whole)", chunked: "\(chunked)")
            }
            let (objects, info) = try whole.get()
            _ = try info.storeMetadata()
            guard objects.count < 200 else { return }
            // What reads must write and read back to the same header and objects.
            try? FileManager.default.removeItem(at: copy)
            let writer = try XMLStoreWriter(url: copy, layout: layout, info: info)
            for object in objects { try writer.write(object) }
            try writer.finish(durable: false)
            let again = try XMLStoreReader(url: copy)
            try again.bind(to: layout)
            var readAgain: [XMLStoreObject] = []
            while let object = try again.next() { readAgain.append(object) }
            if readAgain != objects || again.info != info { throw RoundTripMismatch() }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    /// The index path (`XMLStore`): a mutated store is indexed, then every entity is read through the
    /// store protocol (its objects in key order, with and without sub-entities, its count, its chunk
    /// boundaries, the destinations of its to-manys). Every input ends in rows or a categorized error.
    @Test func xmlStoreIndexNeverTrapsOrHangs() throws {
        let layouts = try [StoreLayout(model: XMLTestModels.xcodeMappingModel()), StoreLayout(model: XMLTestModels.everyKindModel())]
        let corpus = try Self.corpus()
        let report = Fuzzer(name: "XML store index", corpus: corpus, dictionary: Self.dictionary).run(smokeIterations: 150) { bytes in
            let store = try XMLStore(bytes: bytes, layout: Self.layout(for: bytes, layouts))
            _ = try store.metadata()
            _ = try store.primaryKeyMaxima()
            for entity in store.layout.entities {
                var keys: [Int64] = []
                for subentities in [false, true] {
                    let cursor = try store.objects(of: entity.name, includingSubentities: subentities, after: 0, through: nil, batchSize: 64)
                    var read = 0
                    while let row = try cursor.next() {
                        read += 1
                        if subentities { keys.append(row.id.primaryKey) }
                    }
                    guard read == (try store.count(of: entity.name, includingSubentities: subentities)) else { throw RoundTripMismatch() }
                }
                guard keys == keys.sorted() else { throw RoundTripMismatch() }
                let cuts = try store.keyBoundaries(of: entity.name, chunkSize: 3)
                guard cuts.boundaries.count * 3 + cuts.remainderCount == (try store.count(of: entity.name, includingSubentities: false)) else {
                    throw RoundTripMismatch()
                }
                for toMany in entity.toManyRelationships { _ = try store.toManyDestinations(toMany.name, of: entity.name, sources: keys) }
            }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}
