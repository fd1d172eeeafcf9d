import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The model a store carries (`Z_MODELCACHE`), decoded: for every real store in the fixtures, its
/// entity hashes are the store's own metadata hashes.
@Suite struct ModelCacheTests {
    static let stores: [String] = {
        var result: [String] = []
        let root = Fixtures.root
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "sqlite", !url.path.contains("/regressions/") else { continue }
            result.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return result.sorted()
    }()

    @Test func everyFixtureStoreIsFound() {
        #expect(Self.stores.count == 15)
    }

    @Test(arguments: stores)
    func decodedHashesAreTheStoresOwn(_ path: String) throws {
        let url = Fixtures.url(path)
        let before = fileFingerprint(url)
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        let model = try #require(try ModelCache.model(in: database), "\(path) carries no model")
        let metadata = try StoreMetadata(reading: database)
        #expect(model.entityVersionHashes() == metadata.entityHashes, "\(path)")
        #expect(model.entitiesWithUncomputableHash == [])
        // And the store Moult creates from it has the real store's schema (persistent history aside),
        // fetch indexes included: SampleModel_V2's cache carries Car's byMakerAndNumberPlate.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let created = try SQLiteStore.create(at: directory.appending("s.sqlite"), model: model)
        defer { created.database.close() }
        let ours = try NormalisedSchema(created.database)
        var theirs = try NormalisedSchema(database)
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        theirs.tables = theirs.tables.filter { !history.contains($0.key) }
        theirs.indexes = theirs.indexes.filter { index in !history.contains { index.contains(" ON \($0) ") } }
        #expect(ours.tables == theirs.tables, "\(path)")
        #expect(ours.indexes == theirs.indexes, "\(path)")
        #expect(fileFingerprint(url) == before)
    }

    /// SampleModel2's cache holds the derived `pagesCount` as the function `count:` of `pages`: it is
    /// read back as Xcode writes it, and the rebuilt XML model of Tests/RebuiltModels is this model.
    @Test func fetchIndexesAreRead() throws {
        let database = try Database(url: Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite"), mode: .readOnly)
        defer { database.close() }
        let model = try #require(try ModelCache.model(in: database))
        let index = try #require(model.entity(named: "Car")?.fetchIndexes.first)
        #expect(index.name == "byMakerAndNumberPlate")
        #expect(index.elements.map(\.property) == ["maker", "numberPlate"])
        #expect(index.partialIndexPredicate == nil && !index.isRTree)
    }

    @Test func derivedExpressionReadsAsXcodeWritesIt() throws {
        let database = try Database(url: Fixtures.url(DerivedAttributeTests.storePath), mode: .readOnly)
        defer { database.close() }
        let model = try #require(try ModelCache.model(in: database))
        #expect(model.attribute(named: "pagesCount", of: "Book")?.derivationExpression == "pages.@count")
        #expect(model.entity(named: "Writer")?.isAbstract == true)
        let rebuilt = try DerivedAttributeTests.model()
        #expect(model.entityVersionHashes() == rebuilt.entityVersionHashes())
        #expect(try StoreLayout(model: model).schemaSQL == StoreLayout(model: rebuilt).schemaSQL)
    }

    /// Raw DEFLATE: stored blocks written by Moult read back, and damaged data is an error, not a trap.
    @Test func deflateRoundTripAndDamage() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        #expect(try RawDeflate.inflate(RawDeflate.storedBlocks(bytes), limit: 1 << 20) == bytes)
        #expect(try RawDeflate.inflate(RawDeflate.storedBlocks([]), limit: 10) == [])
        #expect(throws: RawDeflate.Failure.self) { try RawDeflate.inflate(RawDeflate.storedBlocks(bytes), limit: 1000) }
        let real = try Database(url: Fixtures.url(DerivedAttributeTests.storePath), mode: .readOnly)
        defer { real.close() }
        guard case .data(let blob)? = try real.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE") else {
            Issue.record("no model cache")
            return
        }
        for cut in stride(from: 0, to: blob.count, by: 97) {
            #expect(throws: StoreError.self) { try ModelCache.model(compressed: Array(blob[..<cut])) }
        }
        var flipped = blob
        for position in stride(from: 3, to: blob.count, by: 211) {
            flipped[position] ^= 0x5A
            // Either it still decodes to some model, or it is a categorized error (65).
            do { _ = try ModelCache.model(compressed: flipped) } catch { #expect(error.category == .badInput) }
        }
    }
}
