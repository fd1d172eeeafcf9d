import Foundation
import MoultMapping
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

    // MARK: - Chains

    /// A chain's verification, without the checks of `People.migrate` (for destinations broken after).
    static func chain(_ source: URL, to target: String, _ mappings: [MappingModel], output: URL) throws -> ProgressiveMigration {
        let migration = try ProgressiveMigration(store: source, model: People.model, to: target, mappings: mappings, policies: People.policies)
        try migration.run(output: output)
        return migration
    }

    @Test func aChainOverAnInferredStepIsCountedAndSampled() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // v1 -> v2 inferred, v2 -> v3 by the mapping.
        let source = try People.generate("v1", persons: 300, in: directory)
        let output = directory.appending("v3.sqlite")
        let migration = try Self.chain(source, to: "v3", [People.mapping("v2-to-v3")], output: output)
        #expect(migration.steps.count == 2 && migration.steps[0].inferred)
        let (report, failures) = try Self.verify(migration, output, sample: 50)
        #expect(failures.isEmpty, "\(failures)")
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        // Person and Address (none: v1 persons have no street or state) are counted.
        #expect(report.checked[.count] == 2, "\(report)")
        #expect(report.sampled == 50, "\(report)")

        // A person gone: its count and its sample miss it.
        try Self.execute(output, "DELETE FROM ZPERSON WHERE Z_PK = 9")
        let (_, broken) = try Self.verify(migration, output, sample: 300)
        #expect(broken.contains { $0.check == .count && $0.message == "Person: 299 objects in the destination, 300 made from the source by replaying v1 → v2 → v3" }, "\(broken)")
        #expect(broken.filter { $0.check == .sample }.count == 1, "\(broken)")
        #expect(broken.contains { $0.message.contains("what PersonToPerson (v1 → v2), PersonToPerson (v2 → v3) make of Person Z_PK 9") }, "\(broken)")
    }

    @Test func aChainThroughFiltersFindsAChangedValueAndAMissingObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 400, in: directory)
        let output = directory.appending("v4.sqlite")
        let migration = try Self.chain(source, to: "v4", [People.mapping("v2-to-v3"), People.mapping("v3-to-v4")], output: output)
        let (report, failures) = try Self.verify(migration, output, sample: 400)
        #expect(failures.isEmpty, "\(failures)")
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        // Address, Adult, Child: each count re-evaluated through both steps' filters.
        #expect(report.checked[.count] == 3, "\(report)")
        let graph = try ObjectGraph(output, model: People.version("v4"))
        #expect(report.sampled == graph.counts.values.reduce(0, +), "every object is sampled: \(report), \(graph.counts)")

        try Self.execute(output, "UPDATE ZPERSON SET ZNAME = ZNAME || '?' WHERE Z_PK = (SELECT MIN(Z_PK) FROM ZPERSON WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Child'))")
        try Self.execute(output, "DELETE FROM ZADDRESS WHERE Z_PK = (SELECT MAX(Z_PK) FROM ZADDRESS)")
        let (broken, list) = try Self.verify(migration, output, sample: 400)
        #expect(broken.failures[.count] == 1 && list.contains { $0.message.hasPrefix("Address: \(graph.counts["Address"]! - 1) objects in the destination") }, "\(list)")
        // The changed child at least (an address's values may be another's too).
        #expect((broken.failures[.sample] ?? 0) >= 1, "\(list)")
        #expect(list.contains { $0.message.contains("no Child in the destination holds what PersonToPerson (v2 → v3), PersonToChild (v3 → v4) make of Person Z_PK") }, "\(list)")
    }

    @Test func aChainToV5SaysWhichCountsItCannotReplay() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v1", persons: 250, in: directory)
        let output = directory.appending("v5.sqlite")
        let mappings = try ["v2-to-v3", "v3-to-v4", "v4-to-v5-builtin"].map(People.mapping)
        let migration = try Self.chain(source, to: "v5", mappings, output: output)
        #expect(migration.steps.count == 4)
        let (report, failures) = try Self.verify(migration, output, sample: 40)
        #expect(failures.isEmpty, "\(failures)")
        #expect(report.checked[.count] == 3, "Address, Adult, Child: \(report)")
        #expect(
            report.skipped == [
                "the count of Company: the entity mapping AdultToCompany (v4 → v5) runs a policy",
                "the count of School: the entity mapping ChildToSchool (v4 → v5) runs a policy",
            ], "\(report.skipped)")
        #expect(report.sampled > 0)
    }

    /// One step whose value goes through a relationship (`$source.address.state`): replayed, so those
    /// objects are compared too, and a wrong value is found.
    @Test func aOneStepValueThroughARelationshipIsCompared() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let v2 = try People.generate("v2", persons: 300, in: directory)
        let v3 = directory.appending("v3.sqlite")
        try People.migrate(v2, to: "v3", mappings: [People.mapping("v2-to-v3")], output: v3)
        let data = try Data(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v3-to-v4.json"))
        let text = try #require(String(data: data, encoding: .utf8)).replacingOccurrences(
            of: "{ \"name\": \"companyName\" }", with: "{ \"name\": \"companyName\", \"value\": \"$source.address.state\" }")
        #expect(text.contains("$source.address.state"))
        let output = directory.appending("v4.sqlite")
        let migration = try People.migrate(v3, to: "v4", mappings: [try MappingModel(json: Data(text.utf8))], output: output)
        #expect(migration.steps.count == 1)
        let (report, failures) = try Self.verify(migration, output, sample: 300)
        #expect(failures.isEmpty && report.skipped.isEmpty, "\(failures) \(report.skipped)")
        #expect(report.checked[.count] == 3 && report.sampled > 300, "\(report)")
        try Self.execute(output, "UPDATE ZPERSON SET ZCOMPANYNAME = 'Nowhere' WHERE ZCOMPANYNAME IS NOT NULL AND Z_PK = (SELECT MIN(Z_PK) FROM ZPERSON WHERE ZCOMPANYNAME IS NOT NULL)")
        let (broken, list) = try Self.verify(migration, output, sample: 300)
        #expect(broken.failures == [.sample: 1], "\(list)")
        #expect(list.first?.message.contains("what PersonToAdult (v3 → v4) makes of Person Z_PK") == true, "\(list)")
    }

    /// A later step's filter goes through relationships of the intermediate objects: the replay
    /// follows those their mapping sets, and names the one it cannot (set from the inverse side only).
    @Test func aFilterThroughIntermediateRelationshipsIsReplayedOrNamed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 300, in: directory)
        func mapping(_ name: String, _ edit: (inout [String: Any]) -> Void) throws -> MappingModel {
            let data = try Data(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/\(name).json"))
            var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            edit(&object)
            return try MappingModel(json: try JSONSerialization.data(withJSONObject: object))
        }
        func filter(_ adult: String) -> (inout [String: Any]) -> Void {
            { object in
                var entities = object["entityMappings"] as! [[String: Any]]
                entities[1]["filter"] = "age >= 18 AND (\(adult))"
                entities[2]["filter"] = "age < 18 OR NOT (\(adult))"
                object["entityMappings"] = entities
            }
        }
        // Person.address (set by PersonToPerson): followed.
        let throughAddress = try mapping("v3-to-v4", filter("address.state != nil"))
        let output = directory.appending("v4.sqlite")
        let migration = try Self.chain(source, to: "v4", [People.mapping("v2-to-v3"), throughAddress], output: output)
        let (report, failures) = try Self.verify(migration, output, sample: 300)
        #expect(failures.isEmpty && report.skipped.isEmpty, "\(failures) \(report.skipped)")
        #expect(report.checked[.count] == 3)
        try Self.execute(output, "UPDATE ZPERSON SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Child') WHERE Z_PK = (SELECT MIN(Z_PK) FROM ZPERSON WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Adult'))")
        let (moved, _) = try Self.verify(migration, output, sample: 0)
        #expect(moved.failures[.count] == 2, "an adult became a child: \(moved)")

        // Address.residents, which v2 -> v3 no longer sets from its own side: named, not guessed.
        let withoutResidents = try mapping("v2-to-v3") { object in
            var entities = object["entityMappings"] as! [[String: Any]]
            entities[1]["relationships"] = nil
            object["entityMappings"] = entities
        }
        let throughResidents = try mapping("v3-to-v4", filter("address.residents.@count >= 1"))
        let second = directory.appending("v4-residents.sqlite")
        let limited = try Self.chain(source, to: "v4", [withoutResidents, throughResidents], output: second)
        let (limitedReport, limitedFailures) = try Self.verify(limited, second, sample: 300)
        #expect(limitedFailures.isEmpty, "\(limitedFailures)")
        let reason = "Address.residents of v2 → v3 is set only from its inverse address, by PersonToPerson"
        #expect(limitedReport.skipped.contains("the count of Adult: \(reason)"), "\(limitedReport.skipped)")
        #expect(limitedReport.skipped.contains("the count of Child: \(reason)"), "\(limitedReport.skipped)")
        #expect(limitedReport.skipped.contains("the sample through PersonToAdult (v3 → v4): \(reason)"), "\(limitedReport.skipped)")
        #expect(limitedReport.skipped.contains("the sample through PersonToChild (v3 → v4): \(reason)"), "\(limitedReport.skipped)")
        #expect(limitedReport.skipped.count == 4, "\(limitedReport.skipped)")
        // Still sampled: the addresses.
        #expect(limitedReport.sampled > 0)
        #expect(limitedReport.checked[.count] == 1, "Address still counted: \(limitedReport)")

        // From a v3 store: the filter reads source objects of two entities (persons, their addresses,
        // their residents), whose primary keys overlap; v4 -> v5 then runs the built-in policies.
        let v3 = directory.appending("v3.sqlite")
        try People.migrate(source, to: "v3", mappings: [People.mapping("v2-to-v3")], output: v3)
        let third = directory.appending("v5.sqlite")
        let fromV3 = try Self.chain(v3, to: "v5", [throughResidents, People.mapping("v4-to-v5-builtin")], output: third)
        let (v5Report, v5Failures) = try Self.verify(fromV3, third, sample: 300)
        #expect(v5Failures.isEmpty, "\(v5Failures)")
        #expect(v5Report.checked[.count] == 3 && v5Report.skipped.count == 2, "\(v5Report)")
    }

    // MARK: - Relationships (Tests/VerifyModels/Badges)

    static let badges = Fixtures.packageRoot.appending(path: "Tests/VerifyModels/Badges.xcdatamodeld", directoryHint: .isDirectory)

    /// A v1 Badges store (four owners, three with a badge; two stickers; three tags, related many to
    /// many) migrated to v2 by `moult migrate`; the source, the destination and the verify command.
    static func badgesMigrated(in directory: TemporaryDirectory) throws -> (URL, URL, [String]) {
        let model = try VersionedModel(contentsOf: badges)
        let source = directory.appending("badges-v1.sqlite")
        let store = try SQLiteStore.create(at: source, model: model.version(named: "v1")!.model)
        let writer = try store.makeWriter()
        let ownerNumber = store.layout.entity(named: "Owner")!.number
        let badgeNumber = store.layout.entity(named: "Badge")!.number
        try writer.write {
            let tags = try (0..<3).map { try writer.insert("Tag", ["label": .string("t\($0)")]) }
            for index in 0..<4 {
                let owner = try writer.allocatePrimaryKey(for: "Owner")
                var values: [String: Value] = ["name": .string("o\(index)")]
                if index < 3 {
                    let badge = try writer.allocatePrimaryKey(for: "Badge")
                    try writer.insert("Badge", ["label": .string("b\(index)"), "owner": .object(ObjectID(entity: ownerNumber, primaryKey: owner))], primaryKey: badge)
                    values["badge"] = .object(ObjectID(entity: badgeNumber, primaryKey: badge))
                }
                let id = try writer.insert("Owner", values, primaryKey: owner)
                try writer.relate("tags", id, to: tags.enumerated().filter { ($0.offset + index) % 2 == 0 }.map(\.element))
            }
            for index in 0..<2 { try writer.insert("Sticker", ["label": .string("s\(index)")]) }
        }
        store.database.close()
        let output = directory.appending("badges-v2.sqlite")
        let migrate = try MoultProcess.run(["migrate", source.path, "--model", badges.path, "--to", "v2", "--output", output.path, "--quiet"])
        #expect(migrate.exitCode == 0, "\(migrate.standardError)")
        return (source, output, ["verify", source.path, output.path, "--model", badges.path, "--to", "v2"])
    }

    /// Runs `moult verify` on a copy of the destination broken by `sql`: exit 67, and the failures it
    /// prints (`FAIL check: message`).
    static func brokenBadges(_ sql: String, in directory: TemporaryDirectory, _ name: String) throws -> [String] {
        let (_, output, command) = try badgesMigrated(in: directory)
        let good = try MoultProcess.run(command)
        #expect(good.exitCode == 0, "\(good.standardOutput)\(good.standardError)")
        try execute(output, sql)
        let bad = try MoultProcess.run(command)
        #expect(bad.exitCode == 67, "\(name): \(bad.exitCode) \(bad.standardOutput)\(bad.standardError)")
        return bad.standardOutput.split(separator: "\n").map(String.init).filter { $0.hasPrefix("FAIL ") }
    }

    @Test func anInverseThatDoesNotPointBackExits67() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // o0's badge becomes o1's: o0 -> b1, whose owner is o1; and b0 still names o0.
        let failures = try Self.brokenBadges(
            "UPDATE ZOWNER SET ZBADGE = (SELECT ZBADGE FROM ZOWNER WHERE ZNAME = 'o1') WHERE ZNAME = 'o0'", in: directory, "inverse")
        #expect(failures.count == 2 && failures.allSatisfy { $0.hasPrefix("FAIL inverse: ") }, "\(failures)")
        #expect(failures.contains { $0.contains(".badge is Badge Z_PK") && $0.contains("whose owner does not point back") }, "\(failures)")
        #expect(failures.contains { $0.hasPrefix("FAIL inverse: Badge Z_PK") && $0.contains("whose badge does not point back") }, "\(failures)")
    }

    @Test func joinTableRowsWithAnOrphanKeyOnEachSideExit67() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let layout = try StoreLayout(model: try VersionedModel(contentsOf: Self.badges).version(named: "v2")!.model)
        guard case .joinTable(let table, let ownerColumn, let tagColumn, _) = layout.entity(named: "Owner")!.toMany(named: "tags")!.storage else {
            Issue.record("Owner.tags is not stored in a join table")
            return
        }
        let failures = try Self.brokenBadges(
            """
            INSERT INTO \(table) (\(ownerColumn), \(tagColumn)) VALUES (999, (SELECT MIN(Z_PK) FROM ZTAG));
            INSERT INTO \(table) (\(ownerColumn), \(tagColumn)) VALUES ((SELECT MIN(Z_PK) FROM ZOWNER), 998);
            """, in: directory, "join table")
        #expect(failures.count == 2 && failures.allSatisfy { $0.hasPrefix("FAIL orphan: the join table \(table) of ") }, "\(failures)")
        #expect(failures.contains { $0.hasSuffix("names Owner Z_PK 999, which does not exist") }, "\(failures)")
        #expect(failures.contains { $0.hasSuffix("names Tag Z_PK 998, which does not exist") }, "\(failures)")
    }

    @Test func aKeyNamingARowOfTheWrongEntityExits67() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // o3 has no badge; it is given a sticker's key (a row of Badge's table, of another entity).
        let failures = try Self.brokenBadges(
            "UPDATE ZOWNER SET ZBADGE = (SELECT Z_PK FROM ZTHING WHERE ZLABEL = 's0') WHERE ZNAME = 'o3'", in: directory, "wrong entity")
        #expect(failures.contains { $0.hasPrefix("FAIL dangling-key: Owner Z_PK") && $0.contains(".badge points at Z_PK") && $0.hasSuffix(", which is no Badge") }, "\(failures)")
        #expect(failures.allSatisfy { $0.hasPrefix("FAIL dangling-key: ") || $0.hasPrefix("FAIL validation: ") }, "\(failures)")
    }
}
