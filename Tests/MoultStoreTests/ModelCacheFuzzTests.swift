import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The model-cache decoder must survive any bytes: the `Z_MODELCACHE` of the 15 fixture stores as
/// corpus, mutated; each input is decoded, hashed and laid out, and whatever decodes is written again by
/// ``ModelCache/encoded(_:)`` and must read back to the same hashes. A long run:
/// `MOULT_FUZZ_ITERATIONS=1000000 MOULT_FUZZ_SEED=1 swift test --skip-build --filter ModelCacheFuzzTests`.
@Suite struct ModelCacheFuzzTests {
    /// Each fixture store's `Z_MODELCACHE.Z_CONTENT`, compressed as stored.
    static let compressed: [[UInt8]] = ModelCacheTests.stores.compactMap { path in
        guard let database = try? Database(url: Fixtures.url(path), mode: .readOnly) else { return nil }
        defer { database.close() }
        guard case .data(let blob)? = try? database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE") else { return nil }
        return blob
    }

    static let dictionary = [
        "bplist00", "$archiver", "NSKeyedArchiver", "$objects", "$top", "root", "$class", "$classname", "$null", "NS.objects",
        "NS.keys", "NSEntities", "NSEntityName", "NSSuperentity", "NSProperties", "NSPropertyName", "NSAttributeType",
        "NSIsOptional", "NSMaxCount", "NSUnderlyingProperty", "_NSDestinationEntityName", "_NSInverseRelationshipName",
        "NSDerivationExpression", "NSKnownKeysDictionary1", "values", "emptyToken", "count:", "\u{10}", "\u{11}", "\u{13}",
    ]

    /// A model Moult wrote that it cannot read back to the same hashes: a finding, never an exit code.
    struct RewriteMismatch: Error, CustomStringConvertible {
        var description: String
    }

    static func decode(_ compressed: [UInt8]) throws {
        let model = try ModelCache.model(compressed: compressed)
        let hashes = model.entityVersionHashes()
        _ = try StoreLayout(model: model).schemaSQL
        // Whatever the decoder accepts, the writer writes back (or declines) and the decoder reads again.
        guard let written = try? ModelCache.encoded(model) else { return }
        do {
            let again = try ModelCache.model(compressed: written)
            guard again.entityVersionHashes() == hashes else { throw RewriteMismatch(description: "the rewritten cache hashes differently") }
        } catch let error as RewriteMismatch {
            throw error
        } catch {
            throw RewriteMismatch(description: "the rewritten cache does not decode: \(error)")
        }
    }

    /// Mutations of the inflated archives (the keyed archive and its binary property list), stored
    /// again as DEFLATE: what the decoder walks.
    @Test func archiveDecoderNeverTrapsOrHangs() throws {
        let corpus = try Self.compressed.map { try RawDeflate.inflate($0, limit: ModelCache.inflatedLimit) }
        #expect(corpus.count == 15)
        let report = Fuzzer(name: "model cache archive", corpus: corpus, dictionary: Self.dictionary).run(smokeIterations: 300) { bytes in
            try Self.decode(RawDeflate.storedBlocks(bytes))
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= corpus.count)
        #expect(report.exitCodes[65, default: 0] > 0)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    /// Mutations of the compressed bytes: what the inflater reads.
    @Test func inflaterNeverTrapsOrHangs() {
        let report = Fuzzer(name: "model cache DEFLATE", corpus: Self.compressed).run(smokeIterations: 300) { bytes in
            try Self.decode(bytes)
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= Self.compressed.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}
