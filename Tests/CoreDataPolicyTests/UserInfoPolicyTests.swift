import CoreData
import Foundation
import MoultEngine
import MoultMapping
import MoultMigration
import MoultModel
import MoultTestSupport
import Testing

/// A policy that uniques makers through `NSMigrationManager.userInfo` as a lookup table (the other
/// implementation CoreDataPlus's `V2to3MakerPolicy` describes), written here: the same store at every
/// chunk size and after an interruption and a resume, because `userInfo` is recorded with each chunk.
final class MakerLookupPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let name = sInstance.value(forKey: "maker") as? String,
            let car = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
        else { return }
        var userInfo = manager.userInfo ?? [:]
        var makers = userInfo["makers"] as? [String: NSManagedObject] ?? [:]
        let maker = makers[name] ?? NSEntityDescription.insertNewObject(forEntityName: "Maker", into: manager.destinationContext)
        if makers[name] == nil {
            maker.setValue(name, forKey: "name")
            makers[name] = maker
        }
        var cars = maker.value(forKey: "cars") as? Set<NSManagedObject> ?? []
        cars.insert(car)
        maker.setValue(cars, forKey: "cars")
        userInfo["makers"] = makers
        userInfo["count"] = (userInfo["count"] as? Int ?? 0) + 1
        manager.userInfo = userInfo
    }
}

/// Keeps an instance of a class of its own in `userInfo`: Moult cannot record it with a chunk.
final class OpaqueStatePolicy: NSEntityMigrationPolicy {
    final class Tally {
        var count = 0
    }

    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        let tally = manager.userInfo?["tally"] as? Tally ?? Tally()
        tally.count += 1
        manager.userInfo = ["tally": tally]
    }
}

@Suite struct UserInfoPolicyTests {
    static let folder = PublicPolicyTests.sampleModel

    static func migration(_ source: URL, policy: NSEntityMigrationPolicy.Type, chunkSize: Int) throws -> ProgressiveMigration {
        var policies = PolicyRegistry()
        policies.register(policy, module: nil, as: "V2to3MakerPolicy")
        return try ProgressiveMigration(
            store: source, model: try VersionedModel(contentsOf: Fixtures.url("\(folder)/SampleModel.xcdatamodeld")), to: "SampleModel3",
            mappings: [try MappingModel(contentsOf: Fixtures.url("\(folder)/MappingModels/V2toV3.xcmappingmodel"))], policies: policies,
            options: MigrationOptions(chunkSize: chunkSize))
    }

    /// Chunks of 1, 37 and one chunk, and chunks of 5 interrupted after the 9th chunk and resumed in a
    /// new migration (a new manager, whose `userInfo` comes from the committed chunks): one store.
    @Test func aLookupTableInUserInfoSurvivesChunksAndAResume() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.folder)/Fixtures/SampleModel_V2.sqlite"))
        let cars = try StoreRows.query(source, "SELECT ZNUMBERPLATE, IFNULL(ZMAKER, '') FROM ZCAR ORDER BY ZNUMBERPLATE")
        var dumps: [String: [String]] = [:]
        for chunkSize in [1, 37, 10_000] {
            let output = directory.appending("v3-\(chunkSize).sqlite")
            try Self.migration(source, policy: MakerLookupPolicy.self, chunkSize: chunkSize).run(output: output)
            let made = try StoreRows.query(
                output, "SELECT ZCAR.ZNUMBERPLATE, IFNULL(ZMAKER.ZNAME, '') FROM ZCAR LEFT JOIN ZMAKER ON ZMAKER.Z_PK = ZCAR.ZCREATEDBY ORDER BY ZCAR.ZNUMBERPLATE")
            #expect(made == cars, "chunk size \(chunkSize)")
            #expect(try StoreRows.query(output, "SELECT COUNT(*) FROM ZMAKER") == [["10"]], "chunk size \(chunkSize)")
            dumps["\(chunkSize)"] = try StoreRows.dump(output)
        }
        #expect(dumps["1"] == dumps["10000"] && dumps["37"] == dumps["10000"])

        let resumed = directory.appending("v3-resumed.sqlite")
        var checks = 0
        #expect(throws: MigrationError.self) {
            try Self.migration(source, policy: MakerLookupPolicy.self, chunkSize: 5).run(output: resumed, isCancelled: {
                checks += 1
                return checks > 9
            })
        }
        #expect(!FileManager.default.fileExists(atPath: resumed.path), "interrupted: no output yet")
        try Self.migration(source, policy: MakerLookupPolicy.self, chunkSize: 5).run(output: resumed, resume: true)
        #expect(try StoreRows.dump(resumed) == dumps["10000"], "interrupted after 9 chunks and resumed: the same store")
    }

    /// A value Moult cannot record: the run goes on in its process (the same store as one chunk), and an
    /// interrupted run refuses to resume, saying why, rather than resume without it.
    @Test func aValueMoultCannotRecordRefusesTheResume() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try directory.copyStore(Fixtures.url("\(Self.folder)/Fixtures/SampleModel_V2.sqlite"))
        let whole = directory.appending("whole.sqlite")
        try Self.migration(source, policy: OpaqueStatePolicy.self, chunkSize: 10_000).run(output: whole)
        let chunked = directory.appending("chunked.sqlite")
        try Self.migration(source, policy: OpaqueStatePolicy.self, chunkSize: 7).run(output: chunked)
        #expect(try StoreRows.dump(chunked) == StoreRows.dump(whole))

        let interrupted = directory.appending("interrupted.sqlite")
        var checks = 0
        #expect(throws: MigrationError.self) {
            try Self.migration(source, policy: OpaqueStatePolicy.self, chunkSize: 7).run(output: interrupted, isCancelled: {
                checks += 1
                return checks > 4
            })
        }
        let error = try #require(throws: MigrationError.self) {
            try Self.migration(source, policy: OpaqueStatePolicy.self, chunkSize: 7).run(output: interrupted, resume: true)
        }
        #expect(error.code == .checkpointMismatch)
        #expect(error.message.contains("cannot be resumed") && error.message.contains("userInfo[\"tally\"] holds a Tally"), "\(error.message)")
    }
}
