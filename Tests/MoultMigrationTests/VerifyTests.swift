import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// `MigrationVerifier` (`moult verify`) on People v2 -> v3 destinations broken on purpose: each break
/// is found by its check, and named.
@Suite struct VerifyTests {
    /// A v2 store of 400 persons migrated to v3, and the migration.
    static func migrated(in directory: TemporaryDirectory) throws -> (ProgressiveMigration, URL) {
        let source = try People.generate("v2", persons: 400, in: directory)
        let output = directory.appending("v3.sqlite")
        let migration = try People.migrate(source, to: "v3", mappings: [People.mapping("v2-to-v3")], options: MigrationOptions(chunkSize: 64), output: output)
        return (migration, output)
    }

    static func verify(_ migration: ProgressiveMigration, _ destination: URL, sample: Int = 400) throws -> (VerificationReport, [VerificationFailure]) {
        let failures = Failures()
        let report = try MigrationVerifier(migration: migration, destination: destination, sampleSize: sample, seed: 5).run { failures.list.append($0) }
        return (report, failures.list)
    }

    static func execute(_ url: URL, _ sql: String) throws {
        let database = try Database(url: url, mode: .readWrite)
        defer { database.close() }
        try database.executeScript(sql)
    }

    @Test func anIntactDestinationPassesEveryCheck() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        let (report, failures) = try Self.verify(migration, output)
        #expect(failures.isEmpty, "\(failures)")
        #expect(report.checked[.count] == 2 && report.checked[.danglingKey] == 1 && report.checked[.metadata] == 2, "\(report)")
        // PersonToPerson samples every person (the sample is the whole source here); PersonToAddress
        // those with an address.
        #expect(report.sampled > 400, "\(report)")
    }

    @Test func aMissingRowIsFound() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        try Self.execute(output, "UPDATE ZPERSON SET ZADDRESS = NULL WHERE Z_PK = 7; DELETE FROM ZPERSON WHERE Z_PK = 7")
        let (report, failures) = try Self.verify(migration, output)
        #expect(report.failures[.count] == 1, "\(failures)")
        #expect(failures.contains { $0.check == .count && $0.message.contains("Person: 399 objects in the destination, 400 source objects") }, "\(failures)")
        // The person gone, the sample (every person) misses exactly one.
        #expect(report.failures[.sample] == 1, "\(failures)")
    }

    @Test func aDanglingKeyIsFound() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        try Self.execute(output, "UPDATE ZPERSON SET ZADDRESS = 987654 WHERE Z_PK = 3")
        let (report, failures) = try Self.verify(migration, output, sample: 0)
        #expect(report.failureCount == 1, "\(failures)")
        #expect(failures.first?.check == .danglingKey)
        #expect(failures.first?.message == "Person Z_PK 3.address points at Z_PK 987654, which is no Address", "\(failures)")
    }

    @Test func aWrongHashIsFound() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        // The destination's metadata says v2 (whose Person differs from v3's).
        let database = try Database(url: output, mode: .readWrite)
        var metadata = try StoreMetadata(reading: database)
        metadata.entityHashes = StoreMetadata(model: People.version("v2")).entityHashes
        try metadata.write(to: database)
        database.close()
        let (report, failures) = try Self.verify(migration, output, sample: 0)
        #expect((report.failures[.metadata] ?? 0) >= 1, "\(failures)")
        #expect(failures.allSatisfy { $0.check == .metadata }, "\(failures)")
        #expect(failures.contains { $0.message.contains("hash of Person") || $0.message.contains("no hash for Address") }, "\(failures)")
    }

    @Test func aChangedValueIsFoundByTheSample() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        try Self.execute(output, "UPDATE ZPERSON SET ZNAME = ZNAME || '!' WHERE Z_PK IN (10, 20)")
        let (report, failures) = try Self.verify(migration, output)
        #expect(report.failures[.sample] == 2 && report.failureCount == 2, "\(failures)")
        #expect(failures.allSatisfy { $0.message.contains("PersonToPerson makes of Person Z_PK") }, "\(failures)")
        // A small sample is seeded: the same objects each time.
        let (_, first) = try Self.verify(migration, output, sample: 3)
        let (_, second) = try Self.verify(migration, output, sample: 3)
        #expect(first == second)
    }

    @Test func aBrokenRuleIsFound() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (migration, output) = try Self.migrated(in: directory)
        try Self.execute(output, "UPDATE ZPERSON SET ZNAME = NULL WHERE Z_PK = 4")
        let (report, failures) = try Self.verify(migration, output, sample: 0)
        #expect(report.failures[.validation] == 1, "\(failures)")
        #expect(failures.first?.message.contains("Person Z_PK 4.name") == true, "\(failures)")
    }
}
