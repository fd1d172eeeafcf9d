import Foundation
import MoultArchive
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

/// The model a store carries (`Z_MODELCACHE`), decoded: for every real store in the fixtures that
/// carries one, its entity hashes are the store's own metadata hashes.
@Suite struct ModelCacheTests {
    static let stores: [String] = {
        var result: [String] = []
        let root = Fixtures.root
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            // Photos.sqlite (FixtureLayoutTests) is left out: its cache's fetch index AlbumList.byAlbumsIndex
            // names a to-many relationship, which Moult's layout does not create, and Photos alters its own
            // schema (RADAR_* indexes, ZT_* triggers).
            guard url.pathExtension == "sqlite", !url.path.contains("/regressions/"), url.lastPathComponent != "Photos.sqlite" else { continue }
            result.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return result.sorted()
    }()

    /// The stores that carry a model: Core Data before framework 637 wrote none.
    static let cached: [String] = stores.filter { path in
        let count = (try? Database(url: Fixtures.url(path), mode: .readOnly)).flatMap { database in
            defer { database.close() }
            return try? database.scalar("SELECT COUNT(*) FROM Z_MODELCACHE")
        }
        return count == .int(1)
    }

    @Test func everyFixtureStoreIsFound() {
        #expect(Self.stores.count == 42)
        #expect(Self.cached.count == 30)
        // Those without one: the old stores of apptentive-ios (framework 419 to 519), CTDataStoreManager
        // (386), objc.io's issue 4 (419) and RestKit (419); CoreDataStack's (637) and apptentive's v6 (754)
        // carry one.
        #expect(Self.stores.filter { !Self.cached.contains($0) }.allSatisfy {
            ["apptentive__", "bignerdranch__", "ebf__", "objcio__", "RestKit__"].contains(where: $0.hasPrefix)
        })
    }

    @Test(arguments: cached)
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
        try NormalisedSchema.expectCreated(from: model, toMatch: database, path)
        #expect(fileFingerprint(url) == before)
    }

    /// The `_P` integer of every property record in every fixture cache is the bit layout of the
    /// MoultStore format article: 0x1 always, 0x2 optional, 0x4 read-only, 0x8 transient, 0x10/0x20/0x40/0x80
    /// when validation predicates, warnings, user info and a version hash modifier are absent, 0x100
    /// Spotlight, 0x200 external record, 0x400 ordered.
    @Test func propertyFlagsBitsExplainEveryRecord() throws {
        var records = 0
        var seen: Set<Int64> = []
        for path in Self.cached {
            let database = try Database(url: Fixtures.url(path), mode: .readOnly)
            defer { database.close() }
            guard case .data(let blob)? = try database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else {
                Issue.record("\(path) has no model cache")
                continue
            }
            let archive = try KeyedArchive(try RawDeflate.inflate(blob, limit: ModelCache.inflatedLimit))
            for uid in archive.objects.indices {
                guard case .dictionary(let fields) = archive.objects[uid], case .integer(let packed)? = fields["_P"] else { continue }
                func flag(_ key: String) -> Bool {
                    switch fields[key] {
                    case .bool(let value)?: value
                    case .integer(let value)?: value != 0
                    default: false
                    }
                }
                var expected: Int64 = 0x1
                if flag("NSIsOptional") { expected |= 0x2 }
                if flag("NSIsReadOnly") { expected |= 0x4 }
                if flag("NSIsTransient") { expected |= 0x8 }
                if fields["NSValidationPredicates"] == nil { expected |= 0x10 }
                if fields["NSValidationWarnings"] == nil { expected |= 0x20 }
                if fields["NSUserInfo"] == nil { expected |= 0x40 }
                if fields["NSVersionHashModifier"] == nil { expected |= 0x80 }
                if flag("NSIndexedBySpotlight") { expected |= 0x100 }
                if flag("NSIsStoredInTruth") { expected |= 0x200 }
                if flag("NSIsOrdered") { expected |= 0x400 }
                #expect(packed == expected, "\(path) #\(uid): _P \(packed), the keys say \(expected)")
                records += 1
                seen.insert(packed)
            }
        }
        #expect(records == 1320)
        // 1267 (0x400 | 243): an optional ordered to-many (apptentive-ios' attachments, framework 754).
        // 113 and 115 (0x80 clear): a required and an optional attribute with a version hash modifier
        // (DuckDuckGo's BookmarkEntity.uuid and .url, framework 1251 to 1333).
        #expect(seen == [241, 243, 193, 247, 249, 251, 191, 255, 1267, 113, 115])
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
