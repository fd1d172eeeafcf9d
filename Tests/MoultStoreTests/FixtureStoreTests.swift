import Foundation
import MoultModel
import MoultTestSupport
import Testing

@testable import MoultStore

@Suite struct FixtureStoreTests {
    @Test func fixturesAreFound() {
        #expect(FixtureStore.all.count >= 12)
    }

    /// The schema Moult creates for a model equals the one Core Data created for it (order ignored).
    /// Core Data before framework 637 (apptentive-ios' stores of 419 to 519, CTDataStoreManager's of 386,
    /// objc.io's of 419) made no `Z_MODELCACHE` table and no index on a many-to-many join table; Moult
    /// lays a store out as today's Core Data does, so those two are set aside for such a store.
    @Test(arguments: FixtureStore.all)
    func schemaEqualsCoreData(_ fixture: FixtureStore) throws {
        let version = try fixture.loadVersion()
        let directory = try TemporaryDirectory("moult-schema")
        defer { directory.remove() }
        let before = fileFingerprint(fixture.storeURL)
        var coreData = try NormalisedSchema(Database(url: fixture.storeURL, mode: .readOnly))
        let created = try SQLiteStore.create(at: directory.appending("new.sqlite"), model: version.model)
        var moult = try NormalisedSchema(created.database)
        if let framework = try StoreMetadata(contentsOf: fixture.storeURL).frameworkVersion, framework < 637 {
            #expect(coreData.tables["Z_MODELCACHE"] == nil)
            moult.tables["Z_MODELCACHE"] = nil
            let joinTables = Set(moult.tables.keys.filter { $0.wholeMatch(of: /Z_[0-9]+[A-Z0-9_]+/) != nil })
            moult.indexes = moult.indexes.filter { index in !joinTables.contains { index.contains(" ON \($0) (") } }
        }
        let (coreDataOnly, moultOnly) = try Self.indexedAttributeIndexes(coreData: coreData.indexes, moult: moult.indexes, model: version.model)
        coreData.indexes.subtract(coreDataOnly)
        moult.indexes.subtract(moultOnly)
        #expect(moult.tables == coreData.tables, "tables differ for \(fixture)")
        #expect(moult.indexes == coreData.indexes, "indexes differ for \(fixture)")
        #expect(fileFingerprint(fixture.storeURL) == before, "the fixture was modified")
    }

    /// The one difference set aside, named (not yet Moult's layout): an attribute Core Data treats as
    /// indexed, `indexed="YES"` or the only element of one of its entity's fetch indexes. Core Data
    /// from framework 836 on gives it an index of its own, `Z_<Entity>_<attribute>` on the column
    /// `COLLATE BINARY ASC` (XCServerCoreData 2.0.0 and 2.0.1 at 836 and 851, DuckDuckGo's bookmarks
    /// and sync metadata at 1251 to 1338: their caches hold it as a fetch index named after the
    /// attribute), where framework 754 and older named it `<TABLE>_<COLUMN>_INDEX`, and where Moult
    /// makes the latter for `indexed="YES"` and nothing for a one-element fetch index. Returns the
    /// indexes of that kind only Core Data has, and Moult's `<TABLE>_<COLUMN>_INDEX` for an indexed
    /// attribute when Core Data has the other name instead.
    static func indexedAttributeIndexes(coreData: Set<String>, moult: Set<String>, model: ObjectModel) throws -> (Set<String>, Set<String>) {
        let layout = try StoreLayout(model: model)
        var coreDataOnly: Set<String> = [], moultOnly: Set<String> = []
        for entity in model.entities {
            guard let table = layout.entity(named: entity.name) else { continue }
            let soleElements = entity.fetchIndexes.compactMap { index in
                index.elements.count == 1 && index.elements[0].expression == nil ? index.elements[0].property : nil
            }
            for attribute in entity.attributes where attribute.isIndexed || soleElements.contains(attribute.name) {
                guard let column = table.column(for: attribute.name) else { continue }
                let modern = "CREATE INDEX Z_\(entity.name)_\(attribute.name) ON \(table.table) (\(column) COLLATE BINARY ASC)"
                let classic = "CREATE INDEX \(table.table)_\(column)_INDEX ON \(table.table) (\(column))"
                guard coreData.contains(modern), !moult.contains(modern) else { continue }
                coreDataOnly.insert(modern)
                if attribute.isIndexed && moult.contains(classic) && !coreData.contains(classic) { moultOnly.insert(classic) }
            }
        }
        return (coreDataOnly, moultOnly)
    }

    /// Metadata reads without modifying anything, with every key, and the store's version is found.
    @Test(arguments: FixtureStore.all)
    func metadataNamesTheVersion(_ fixture: FixtureStore) throws {
        let before = fileFingerprint(fixture.storeURL)
        let metadata = try StoreMetadata(contentsOf: fixture.storeURL)
        #expect(fileFingerprint(fixture.storeURL) == before, "the fixture was modified")
        #expect(metadata.storeType == "SQLite")
        #expect(metadata.hashesVersion == 3)
        #expect(metadata.additionalKeys["_NSAutoVacuumLevel"] == .string("2"))
        #expect(!metadata.entityHashes.isEmpty)
        let versioned = try VersionedModel(contentsOf: fixture.modelURL)
        #expect(versioned.version(matchingEntityHashes: metadata.entityHashes)?.model == (try fixture.loadVersion()).model)
        if let digest = metadata.hashesDigest { #expect(digest == VersionHashes.digest(metadata.entityHashes)) }
        if let checksum = metadata.checksum { #expect(checksum == VersionHashes.checksum(metadata.entityHashes)) }
    }

    /// Every object of every entity reads with typed values; counts equal a plain SQL count.
    @Test(arguments: FixtureStore.all)
    func everyObjectReads(_ fixture: FixtureStore) throws {
        let before = fileFingerprint(fixture.storeURL)
        let version = try fixture.loadVersion()
        let store = try SQLiteStore(url: fixture.storeURL, model: version.model)
        for entity in store.layout.entities {
            let cursor = try store.objects(of: entity.name, includingSubentities: false, batchSize: 7)
            var count = 0
            var last: Int64 = 0
            while let row = try cursor.next() {
                #expect(row.id.entity == entity.number)
                #expect(row.id.primaryKey > last)
                last = row.id.primaryKey
                #expect(row.values.count == row.shape.names.count)
                count += 1
            }
            let plain = try store.database.scalar("SELECT COUNT(*) FROM \(entity.table) WHERE Z_ENT = \(entity.number)")
            #expect(plain == .int(Int64(count)), "\(entity.name) in \(fixture)")
            #expect(try store.count(of: entity.name, includingSubentities: false) == count)
        }
        #expect(fileFingerprint(fixture.storeURL) == before, "the fixture was modified")
    }

    @Test func spotValuesSampleModelV1() throws {
        let fixture = try #require(FixtureStore.all.first { $0.store.hasSuffix("SampleModel_V1.sqlite") })
        let store = try SQLiteStore(url: fixture.storeURL, model: try fixture.loadVersion().model)
        #expect(try store.count(of: "Car") == 125)
        // Car has sub-entities: including them reads every row of ZCAR.
        let plain = try store.database.scalar("SELECT COUNT(*) FROM ZCAR")
        #expect(plain == .int(125))
        let people = try store.objects(of: "Person")
        let first = try #require(try people.next())
        #expect(first.id == ObjectID(entity: 4, primaryKey: 1))
        guard case .uuid = try #require(first["id"]) else {
            Issue.record("Person.id should read as a UUID, got \(String(describing: first["id"]))")
            return
        }
        guard case .date(let updated) = try #require(first["updatedAt"]) else {
            Issue.record("Person.updatedAt should read as a date")
            return
        }
        let raw = try store.database.scalar("SELECT ZUPDATEDAT FROM ZPERSON WHERE Z_PK = 1")
        #expect(raw == .double(updated.timeIntervalSinceReferenceDate))
        // Cars point at their owner; the owner's cars come back in one query.
        let cars = try store.objects(of: "Car", condition: SQLCondition("ZOWNER IS NOT NULL"))
        let car = try #require(try cars.next())
        guard case .object(let owner) = try #require(car["owner"]) else {
            Issue.record("Car.owner should be an object id")
            return
        }
        #expect(owner.entity == 4)
        let destinations = try store.toManyDestinations("cars", of: "Person", sources: [owner.primaryKey])
        #expect(destinations[owner.primaryKey]?.contains(car.id) == true)
    }

    @Test func spotValuesWiboscoPosts() throws {
        let fixture = try #require(FixtureStore.all.first { $0.store.hasSuffix("Migration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite") && $0.store.hasPrefix("wibosco__CoreDataMigration-Example/") })
        let store = try SQLiteStore(url: fixture.storeURL, model: try fixture.loadVersion().model)
        let cursor = try store.objects(of: "Post", after: 10, through: 20, condition: SQLCondition("ZPOSTID IS NOT NULL"))
        var keys: [Int64] = []
        while let post = try cursor.next() {
            keys.append(post.id.primaryKey)
            if case .string = try #require(post["postID"]) {} else { Issue.record("postID should be a string") }
        }
        #expect(keys.allSatisfy { $0 > 10 && $0 <= 20 })
        #expect(!keys.isEmpty)
    }
}
