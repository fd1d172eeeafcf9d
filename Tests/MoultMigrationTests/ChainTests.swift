import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Small models of Tests/Fixtures/Chain, and stores of them written row by row.
enum ChainModels {
    static func model(_ name: String) throws -> VersionedModel {
        try VersionedModel(contentsOf: Fixtures.packageRoot.appending(path: "Tests/ChainModels/\(name).xcdatamodeld"))
    }

    /// A store of `version` holding one `Person` per row: column name (without the `Z`) → value.
    static func store(
        _ model: VersionedModel, _ version: String, rows: [[String: Value]], in directory: TemporaryDirectory, name: String = "source.sqlite"
    ) throws -> URL {
        let url = directory.appending(name)
        let store = try SQLiteStore.create(at: url, model: model.version(named: version)!.model)
        let entity = store.layout.entity(named: "Person")!
        try store.database.write {
            for (offset, row) in rows.enumerated() {
                let columns = row.keys.sorted()
                let sql = "INSERT INTO \(entity.table) (Z_PK, Z_ENT, Z_OPT\(columns.map { ", Z\($0.uppercased())" }.joined())) VALUES (?, ?, 1\(String(repeating: ", ?", count: columns.count)))"
                try store.database.execute(sql, [.int(Int64(offset + 1)), .int(Int64(entity.number))] + columns.map { row[$0]! })
            }
            try store.database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Person'", [.int(Int64(rows.count))])
        }
        store.database.close()
        return url
    }

    /// Every person's values of these columns, by Z_PK.
    static func values(_ url: URL, _ columns: [String]) throws -> [[Value]] {
        let database = try Database(url: url, mode: .readOnly)
        defer { database.close() }
        return try database.query("SELECT \(columns.map { "Z\($0.uppercased())" }.joined(separator: ", ")) FROM ZPERSON ORDER BY Z_PK") { row in
            columns.indices.map { row.value(at: $0) }
        }
    }
}

/// How a migration's chain is made: each given mapping matched by content to one step or refused;
/// stretches without a mapping inferred directly, as Core Data does; migrations to older versions.
@Suite struct ChainTests {
    // MARK: - Direct inference

    /// An attribute removed in v2 and added back in v3: Core Data infers v1 -> v3 directly and keeps
    /// the values; a chain v1 -> v2 -> v3 would lose them.
    @Test func anAttributeThatComesBackKeepsItsValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let source = try ChainModels.store(
            model, "v1", rows: [["name": .string("Ada"), "nickname": .string("countess")], ["name": .string("Alan"), "nickname": .null]],
            in: directory)
        let migration = try ProgressiveMigration(store: source, model: model, to: "v3")
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name)" } == ["v1->v3"])
        #expect(migration.steps[0].inferred && migration.steps[0].chainedInference == nil)
        let output = directory.appending("v3.sqlite")
        try migration.run(output: output)
        #expect(try ChainModels.values(output, ["name", "nickname"]) == [[.string("Ada"), .string("countess")], [.string("Alan"), .null]])
    }

    /// v1 -> v4 is inferable directly while v3 -> v4 alone is not: the store migrates in one step
    /// (refused before, when every version was a step).
    @Test func aDirectInferenceNeedsNoInferableStepBetween() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Stretch")
        #expect(throws: MappingError.self) { try MappingModel.inferred(from: "v3", to: "v4", in: model) }
        let source = try ChainModels.store(model, "v1", rows: [["name": .string("Grace")]], in: directory)
        let migration = try ProgressiveMigration(store: source, model: model)
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name)" } == ["v1->v4"])
        let output = directory.appending("v4.sqlite")
        try migration.run(output: output)
        #expect(try ChainModels.values(output, ["name", "code"]) == [[.string("Grace"), .null]])
        // From v3, there is no way.
        let v3 = try ChainModels.store(model, "v3", rows: [["name": .string("Grace"), "code": .string("x")]], in: directory, name: "v3.sqlite")
        let error = try #require(throws: MigrationError.self) { try ProgressiveMigration(store: v3, model: model) }
        #expect(error.code == .noMigrationPath && error.category.exitCode == 66)
        #expect(error.description.contains("code"), "\(error)")
    }

    /// Where the direct inference is impossible and the chain is possible, the chain is used and says
    /// why.
    @Test func aChainOfInferredStepsOnlyWhereDirectInferenceIsImpossible() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Retyped")
        let source = try ChainModels.store(model, "v1", rows: [["name": .string("Edsger"), "score": .string("12")]], in: directory)
        let migration = try ProgressiveMigration(store: source, model: model, to: "v3")
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name)" } == ["v1->v2", "v2->v3"])
        let note = try #require(migration.steps[0].chainedInference)
        #expect(note.contains("v1 → v3 cannot be inferred directly") && note.contains("score"), "\(note)")
        #expect(migration.steps[1].chainedInference == note)
        let output = directory.appending("v3.sqlite")
        try migration.run(output: output)
        #expect(try ChainModels.values(output, ["name", "score"]) == [[.string("Edsger"), .null]])
        // `moult verify` replays both inferred steps: the person counted, and its values found.
        let failures = Failures()
        let report = try MigrationVerifier(migration: migration, destination: output).run { failures.list.append($0) }
        #expect(report.passed && report.skipped.isEmpty && report.checked[.count] == 1 && report.sampled == 1, "\(report) \(failures.list)")
        try VerifyTests.execute(output, "UPDATE ZPERSON SET ZNAME = 'Dijkstra'")
        let changed = try MigrationVerifier(migration: migration, destination: output).run { _ in }
        #expect(changed.failures == [.sample: 1], "\(changed)")
    }

    // MARK: - Older versions

    /// Core Data does not order versions: a migration to an older version runs when it can be
    /// inferred (here it drops `email`, and says so).
    @Test func aMigrationToAnOlderVersionIsInferred() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let source = try ChainModels.store(
            model, "v3", rows: [["name": .string("Ada"), "nickname": .string("countess"), "email": .string("a@b")]], in: directory)
        let migration = try ProgressiveMigration(store: source, model: model, to: "v1")
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name)" } == ["v3->v1"])
        let losses = migration.dataLosses(of: migration.steps[0], in: source)
        #expect(losses == [DataLoss(what: UncarriedData(kind: .attribute, entity: "Person", property: "email"), count: 1)])
        let output = directory.appending("v1.sqlite")
        try migration.run(output: output)
        #expect(try ChainModels.values(output, ["name", "nickname"]) == [[.string("Ada"), .string("countess")]])
    }

    /// A given mapping to an older version is used.
    @Test func aGivenMappingToAnOlderVersionIsUsed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let source = try ChainModels.store(model, "v3", rows: [["name": .string("Ada"), "email": .string("a@b")]], in: directory)
        // v3 -> v1, keeping the e-mail address as the nickname.
        let mapping = MappingModel(source: .init(name: "v3"), destination: .init(name: "v1")) {
            EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person") {
                PropertyMapping("name", "$source.name")
                PropertyMapping("nickname", "$source.email")
            }
        }
        let migration = try ProgressiveMigration(store: source, model: model, to: "v1", mappings: [mapping])
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name) \($0.inferred)" } == ["v3->v1 false"])
        let output = directory.appending("v1.sqlite")
        try migration.run(output: output)
        #expect(try ChainModels.values(output, ["name", "nickname"]) == [[.string("Ada"), .string("a@b")]])
    }

    // MARK: - Matching a mapping to a step

    /// A mapping that records its models' entity hashes is matched by them, whatever name it gives.
    @Test func hashesIdentifyTheVersionsAMappingConnects() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let v1 = model.version(named: "v1")!.model, v3 = model.version(named: "v3")!.model
        var mapping = try MappingModel.inferred(from: v1, to: v3)
        mapping.sourceModel = ModelReference(name: "Version One", entityVersionHashes: v1.entityVersionHashes())
        mapping.destinationModel = ModelReference(name: "Version Three", entityVersionHashes: v3.entityVersionHashes())
        #expect(mapping.matchingVersions(.source, in: model).versions.map(\.name) == ["v1"])
        #expect(mapping.matchingVersions(.destination, in: model).basis == .hashes)
        let source = try ChainModels.store(model, "v1", rows: [["name": .string("Ada")]], in: directory)
        let migration = try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [mapping], mappingLabels: ["mine.json"])
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name) \($0.inferred)" } == ["v1->v3 false"])
        #expect(migration.steps[0].mappingLabels == ["mine.json"])
    }

    /// A mapping of an older edit of a version (its recorded hashes are not the version's) is refused,
    /// naming the mapping and the entities that differ.
    @Test func aStaleMappingIsRefusedNamingTheEntities() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let v2 = model.version(named: "v2")!.model, v3 = model.version(named: "v3")!.model
        var mapping = try MappingModel.inferred(from: v2, to: v3, sourceName: "v2", destinationName: "v3")
        // Made when v2's Person had another attribute (the hash of such a Person, from another model).
        mapping.sourceModel.entityVersionHashes["Person"] = try ChainModels.model("Retyped").version(named: "v1")!.model.versionHash(ofEntity: "Person")
        let source = try ChainModels.store(model, "v2", rows: [["name": .string("Ada")]], in: directory)
        let error = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [mapping], mappingLabels: ["old.json"])
        }
        #expect(error.code == .unusableMapping && error.category.exitCode == 66)
        #expect(error.message.contains("old.json") && error.message.contains("Person differs"), "\(error)")
        #expect(error.message.contains("against v2"), "\(error)")
    }

    /// Without hashes, a mapping is matched by version name, and what it names must exist there.
    @Test func aNamedMappingMustFitItsVersions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let source = try ChainModels.store(model, "v2", rows: [["name": .string("Ada")]], in: directory)
        let mapping = MappingModel(source: .init(name: "v2"), destination: .init(name: "v3")) {
            EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person") {
                PropertyMapping("name", "$source.nickname")
                PropertyMapping("phone", "$source.name")
            }
        }
        let error = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [mapping], mappingLabels: ["hand.json"])
        }
        #expect(error.code == .unusableMapping, "\(error)")
        #expect(error.message.contains("hand.json") && error.message.contains("Person.nickname"), "\(error)")
        #expect(error.message.contains("Person.phone"), "\(error)")
    }

    /// Every mapping given is used by one step: one off the way from the store to the target is refused.
    @Test func aMappingOffTheWayIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Stretch")
        let source = try ChainModels.store(model, "v2", rows: [["name": .string("Ada")]], in: directory)
        let earlier = try MappingModel.inferred(from: "v1", to: "v2", in: model)
        let error = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [earlier], mappingLabels: ["v1-to-v2.json"])
        }
        #expect(error.code == .unusableMapping)
        #expect(error.message.contains("v1-to-v2.json fits no step: it maps v1 → v2, but the store is at v2"), "\(error)")
        // Beyond the target.
        let far = try MappingModel.inferred(from: "v2", to: "v4", in: model)
        let beyond = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [far], mappingLabels: ["far.json"])
        }
        #expect(beyond.message.contains("far.json fits no step: it maps v2 → v4, beyond the target v3"), "\(beyond)")
        // Against the direction of the migration.
        let backwards = try MappingModel.inferred(from: "v3", to: "v2", in: model)
        let against = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(store: source, model: model, to: "v4", mappings: [backwards], mappingLabels: ["back.json"])
        }
        #expect(against.message.contains("against the direction"), "\(against)")
        // Two mappings leaving the same version: the second finds the chain already past it.
        let v2ToV4 = try MappingModel.inferred(from: "v2", to: "v4", in: model)
        let twice = try #require(throws: MigrationError.self) {
            try ProgressiveMigration(
                store: source, model: model, to: "v4", mappings: [try MappingModel.inferred(from: "v2", to: "v3", in: model), v2ToV4],
                mappingLabels: ["a.json", "b.json"])
        }
        #expect(twice.code == .unusableMapping && twice.message.contains("already at v3"), "\(twice)")
        // A store already at the target needs no mapping: the given one is not refused.
        let current = try ProgressiveMigration(store: source, model: model, to: "v2", mappings: [earlier])
        #expect(current.isUpToDate)
    }

    /// Given mappings may connect non-adjacent versions; the stretches around them are inferred.
    @Test func aGivenMappingAcrossVersionsWithInferredStretches() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Stretch")
        let source = try ChainModels.store(model, "v1", rows: [["name": .string("Ada")]], in: directory)
        let v2ToV3 = try MappingModel.inferred(from: "v2", to: "v3", in: model)
        let migration = try ProgressiveMigration(store: source, model: model, to: "v3", mappings: [v2ToV3])
        #expect(migration.steps.map { "\($0.from.name)->\($0.to.name) \($0.inferred)" } == ["v1->v2 true", "v2->v3 false"])
    }

    /// Every missing policy of every step is named at once, before anything is written.
    @Test func missingPoliciesAreNamedBeforeAnythingRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try People.generate("v2", persons: 20, in: directory)
        let mappings = try ["v2-to-v3", "v3-to-v4", "v4-to-v5"].map(People.mapping)
        let migration = try ProgressiveMigration(store: source, model: People.model, to: "v5", mappings: mappings)
        let output = directory.appending("out.sqlite")
        let error = try #require(throws: MigrationError.self) { try migration.run(output: output) }
        #expect(error.code == .missingPolicy && error.category.exitCode == 66)
        #expect(error.message.contains("step 3 (v4 → v5)"), "\(error)")
        #expect(error.message.contains("AdultToCompanyPolicy") && error.message.contains("ChildToSchoolPolicy"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("out") } == [])
    }

    // MARK: - What a step does not carry

    /// A property mapping without an expression reads its namesake, a copy mapping reads what its
    /// destination has, a policy may read anything, and an entity no mapping reads is dropped whole.
    @Test func whatAMappingDoesNotCarry() throws {
        let model = try ChainModels.model("Returning")
        let v3 = model.version(named: "v3")!.model, v1 = model.version(named: "v1")!.model
        let transform = MappingModel(source: .init(name: "v3"), destination: .init(name: "v1")) {
            EntityMapping(name: "PersonToPerson", type: .transform, source: "Person", destination: "Person") {
                PropertyMapping("name")
                PropertyMapping("nickname", "$source.email")
            }
        }
        #expect(MappingModel.uncarried(by: [transform], source: v3, destination: v1) == [UncarriedData(kind: .attribute, entity: "Person", property: "nickname")])
        let copy = MappingModel(source: .init(name: "v3"), destination: .init(name: "v1")) {
            EntityMapping(name: "PersonToPerson", type: .copy, source: "Person", destination: "Person") {}
        }
        #expect(MappingModel.uncarried(by: [copy], source: v3, destination: v1) == [UncarriedData(kind: .attribute, entity: "Person", property: "email")])
        let policy = MappingModel(source: .init(name: "v3"), destination: .init(name: "v1")) {
            EntityMapping(name: "PersonToPerson", type: .custom, source: "Person", destination: "Person", policy: "MyApp.Policy") {}
        }
        #expect(MappingModel.uncarried(by: [policy], source: v3, destination: v1).isEmpty)
        let removal = MappingModel(source: .init(name: "v3"), destination: .init(name: "v1")) {
            EntityMapping(name: "PersonToNone", type: .remove, source: "Person", destination: nil) {}
        }
        #expect(MappingModel.uncarried(by: [removal], source: v3, destination: v1) == [UncarriedData(kind: .entity, entity: "Person")])
        // People v2 -> v3 carries everything; v3 -> v2 inferred drops Address, and Person.address
        // (its inverse, Address.residents, is read by no mapping either).
        let people = try VersionedModel(contentsOf: Fixtures.peopleModel)
        let split = try MappingModel(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v2-to-v3.json"))
        #expect(MappingModel.uncarried(by: [split], source: people.version(named: "v2")!.model, destination: people.version(named: "v3")!.model).isEmpty)
        let back = try MappingModel.inferred(from: "v3", to: "v2", in: people)
        #expect(
            MappingModel.uncarried(by: [back], source: people.version(named: "v3")!.model, destination: people.version(named: "v2")!.model) == [
                UncarriedData(kind: .entity, entity: "Address"), UncarriedData(kind: .relationship, entity: "Person", property: "address"),
            ])
    }

    /// A store already at the target version has nothing to migrate: no step, nothing written.
    @Test func aStoreAtTheTargetHasNothingToMigrate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try ChainModels.model("Returning")
        let source = try ChainModels.store(model, "v3", rows: [["name": .string("Ada")]], in: directory)
        let migration = try ProgressiveMigration(store: source, model: model)
        #expect(migration.isUpToDate)
        let output = directory.appending("out.sqlite")
        #expect(try migration.run(output: output).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("out") } == [])
    }
}
