import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

/// The archives of the fixture mapping models and the fixture stores' metadata, as fuzzing corpora.
enum FixtureArchives {
    /// Every `.xcmappingmodel`'s `xcmapping.xml` under `Tests/Fixtures` small enough to seed a fuzzer
    /// (`Fixtures.fuzzSeedLimit`: all but XCServerCoreData's two), by path relative to it.
    static let mappingFiles: [String] = {
        let root = Fixtures.root.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".xcmappingmodel/xcmapping.xml"), Fixtures.isFuzzSeed(Fixtures.url(path)) { result.append(path) }
        }
        return result.sorted()
    }()

    /// The base64 binary attributes of a mapping file (`<attribute name="KEY" type="binary">…`), decoded.
    static func binaryAttributes(_ file: String, named name: String? = nil) -> [[UInt8]] {
        let text = (try? String(contentsOf: Fixtures.url(file), encoding: .utf8)) ?? ""
        var result: [[UInt8]] = []
        var rest = Substring(text)
        while let start = rest.range(of: "<attribute name=\"") {
            rest = rest[start.upperBound...]
            guard let nameEnd = rest.firstIndex(of: "\"") else { break }
            let attributeName = rest[..<nameEnd]
            guard let open = rest.range(of: "type=\"binary\">"), let close = rest.range(of: "</attribute>"), open.upperBound <= close.lowerBound,
                rest[..<open.lowerBound].firstIndex(of: ">") == nil
            else { continue }
            if name == nil || attributeName == name! {
                if let data = Data(base64Encoded: String(rest[open.upperBound..<close.lowerBound]), options: .ignoreUnknownCharacters) {
                    result.append(Array(data))
                }
            }
            rest = rest[close.upperBound...]
        }
        return result
    }

    /// The embedded models (`sourcemodeldata`, `destinationmodeldata`) of every fixture mapping model.
    static let embeddedModels: [[UInt8]] = mappingFiles.flatMap {
        binaryAttributes($0, named: "sourcemodeldata") + binaryAttributes($0, named: "destinationmodeldata")
    }

    /// Every archive of every fixture mapping model (models, value expressions, user info).
    static let allArchives: [[UInt8]] = mappingFiles.flatMap { binaryAttributes($0) }
}

@Suite struct PropertyListFuzzTests {
    /// `Z_METADATA.Z_PLIST` of each fixture store (extracted to `Tests/Fixtures/fuzz-corpus/store-metadata`).
    static let storeMetadataCorpus: [[UInt8]] = {
        let folder = Fixtures.url("fuzz-corpus/store-metadata")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".bplist") }.sorted()
        return names.compactMap { try? Array(Data(contentsOf: folder.appending(path: $0))) }
    }()

    static let dictionary = [
        "bplist00", "$archiver", "NSKeyedArchiver", "$objects", "$top", "root", "$class", "$classname", "$null",
        "NS.objects", "NS.keys", "NSStoreModelVersionHashes", "\u{A1}\u{00}", "\u{D1}", "\u{80}", "\u{5F}\u{13}",
    ]

    @Test func corporaAreTheFixtures() {
        #expect(Self.storeMetadataCorpus.count >= 10)
        #expect(FixtureArchives.mappingFiles.count == 20)
        #expect(FixtureArchives.embeddedModels.count == 40)
    }

    /// Binary property lists: the fixture stores' metadata and every archive of the fixture mapping
    /// models. Each input is read; one that reads is written and read back to an equal value.
    @Test func binaryPropertyListReaderNeverTrapsOrHangs() {
        let corpus = Self.storeMetadataCorpus + FixtureArchives.allArchives
        let report = Fuzzer(name: "binary property list", corpus: corpus, dictionary: Self.dictionary).run(smokeIterations: 400) { bytes in
            // Compared as written bytes (deterministic, and NaN-safe where `==` is not).
            let written = try PropertyListValue(binaryPropertyList: bytes).binaryPropertyList()
            if try PropertyListValue(binaryPropertyList: written).binaryPropertyList() != written {
                throw RoundTripMismatch(description: "a property list read back different from what was written (\(bytes.count) bytes)")
            }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.inputs >= 400)
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(report.exitCodes[65, default: 0] > 0)
    }

    /// Keyed archives of Xcode's design-time model (as embedded in mapping models), decoded to a model
    /// and hashed.
    @Test func designModelDecoderNeverTrapsOrHangs() {
        let corpus = FixtureArchives.embeddedModels
        let dictionary = Self.dictionary + ["XDPMEntity", "XDPMAttribute", "XDPMRelationship", "XD_PRK_inverseRelationship", "_general"]
        let report = Fuzzer(name: "design-time model archive", corpus: corpus, dictionary: dictionary).run(smokeIterations: 300) { bytes in
            _ = try ObjectModel(xcodeDesignArchive: bytes).entityVersionHashes()
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(report.exitCodes[65, default: 0] > 0)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}

/// A property list that did not survive a write and a read: a finding (uncategorized on purpose).
struct RoundTripMismatch: Error, CustomStringConvertible {
    var description: String
}
