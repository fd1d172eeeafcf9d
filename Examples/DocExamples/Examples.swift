import Foundation
import Moult
import MoultPeople

// The Swift examples of the README and the DocC articles, each verbatim inside a function that gives it
// the names it uses, so that the compiler checks them all and `DocExamplesTests` runs them (and checks
// that every example of the documentation is here, word for word). Edit an example here and in its
// document together.

enum Examples {
    /// README.md, "As a library". Run in a folder holding `Datasets` and `people-v2.sqlite`.
    static func readme() throws {
        let model = try VersionedModel(contentsOf: URL(filePath: "Datasets/People/People.xcdatamodeld"))
        let migration = try ProgressiveMigration(
            store: URL(filePath: "people-v2.sqlite"), model: model, to: "v3",
            mappings: [try MappingModel(contentsOf: URL(filePath: "Datasets/People/Mappings/v2-to-v3.json"))],
            options: MigrationOptions(chunkSize: 10_000, associations: .lmdb, durable: true))
        try migration.run(output: URL(filePath: "people-v3.sqlite"), progress: { print($0.stage, $0.done, $0.total) })
    }

    /// MoultMigration.md, the chain with a policy. Run in a folder holding `People.xcdatamodeld`.
    static func chainWithAPolicy(source: URL, destination: URL, v2to3: MappingModel, v3to4: MappingModel, v4to5: MappingModel) throws {
        let model = try VersionedModel(contentsOf: URL(filePath: "People.xcdatamodeld"))
        var policies = PolicyRegistry()
        policies.register("AdultToCompanyPolicy") { UniquingPolicy(nameKey: "companyName", entity: "Company") }
        policies.register("ChildToSchoolPolicy") { UniquingPolicy(nameKey: "schoolName", entity: "School") }
        let migration = try ProgressiveMigration(
            store: source, model: model, to: "v5", mappings: [v2to3, v3to4, v4to5], policies: policies,
            options: MigrationOptions(chunkSize: 10_000, associations: .lmdb))
        try migration.run(output: destination, progress: { progress in print(progress.stage, progress.mapping ?? "", progress.fraction) })
    }

    /// StagedMigrations.md: a People store at v1.
    static func staged(url: URL, model: VersionedModel) throws {
        let migration = try StagedMigration(store: url, model: model, stages: [
            .custom(from: "v1", to: "v2", willMigrate: StageHandler(operations: [
                .update(entity: "Person", where: "age == nil", set: ["age": "0"]),
            ])),
            .custom(from: "v2", to: "v3", willMigrate: StageHandler("dedupe") { store in
                try store.deleteDuplicates(of: "Person", by: ["name", "age"])
            }),
        ], options: MigrationOptions(chunkSize: 1_000))
        try migration.run()
    }

    /// InPlace.md, in place with the clean-up deferred: a People store at v2.
    static func inPlaceDeferred(url: URL, model: VersionedModel, v2ToV3: MappingModel) throws {
        var migration = try InPlaceMigration(store: url, model: model, to: "v3", mappings: [v2ToV3])
        migration.defersCleanup = true            // dropped columns, tables, new indexes: later
        for (step, method) in zip(migration.steps, migration.methods) { print(step.to.name, method) }
        try migration.run()
        try InPlaceMigration.finishPendingCleanup(of: url, layout: StoreLayout(model: model.version(named: "v3")!.model))
    }

    /// InPlace.md, as an app opens its store: a People store at v1.
    static func inPlaceOnOpening(url: URL, model: VersionedModel) throws {
        if !model.current.model.isConfiguration(nil, compatibleWithStoreMetadata: try StoreMetadata(contentsOf: url)) {
            print("needs a migration")
        }
        let store = try SQLiteStore.open(at: url, model: model, options: [.migrateAutomatically, .inferMappingAutomatically])
        _ = store
    }

    /// MoultModel.md, reading a versioned model. Run in a folder holding `Model.xcdatamodeld`.
    static func readingAModel() throws -> ObjectModel {
        let model = try VersionedModel(contentsOf: URL(filePath: "Model.xcdatamodeld"))
        for version in model.versions {
            print(version.name, version.model.versionIdentifiers)
        }
        let current = model.current.model
        return current
    }

    /// MoultModel.md, a model built in code.
    static func buildingAModel() throws -> ObjectModel {
        let model = try ObjectModel(versionIdentifier: "3") {
            Entity("Person") {
                Attribute("name", .string).required()
                Attribute("age", .integer16).defaultValue("0").range(min: "0", max: "150")
                Relationship("address", to: "Address", inverse: "residents")
            }
            Entity("Address") {
                Attribute("street", .string)
                Relationship("residents", toMany: "Person", inverse: "address")
            }
        }
        return model
    }

    /// VersionHashing.md. Run in a folder holding `Model.xcdatamodeld`.
    static func versionHashes(storeHashes: [String: VersionHash]) throws {
        let model = try VersionedModel(contentsOf: URL(filePath: "Model.xcdatamodeld"))
        let hash = try model.current.model.versionHash(ofEntity: "Person")
        print(hash.hex)

        if let version = model.version(matchingEntityHashes: storeHashes) {
            print("the store was made with", version.name)
        } else {
            for difference in model.current.model.hashDifferences(from: storeHashes) {
                print(difference)   // entity 'Person' has hash … in the model and … in the store
            }
        }
    }

    /// Syntax.md: compiled against the People model's Person at v2.
    static func expressions(model: ObjectModel, migrationManager: any ExpressionFunctionHost, row: any ObjectRecord) throws -> Value {
        let compiler = ExpressionCompiler(model: model, entity: "Person")!
        let months = try compiler.compileExpression("$source.age * 12")
        let adults = try compiler.compilePredicate("age >= 18")

        var context = EvaluationContext(variables: compiler.variables)
        context.host = migrationManager          // answers FUNCTION($manager, …)
        context.object = row                     // per row: SELF, bare keys and $source
        let value = try months.evaluate(context)
        print(value, try adults.evaluate(context))
        return value
    }

    /// TheModelAStoreCarries.md: a store that carries its model, written as an Xcode model in `folder`.
    static func extractingAModel(store: SQLiteStore, folder: URL) throws {
        if let extraction = try ModelCache.extraction(in: store.database) {
            try Data(extraction.model.xcodeContents().utf8).write(to: folder.appending(path: "contents"))
            for line in extraction.leftOut { print("not written: \(line)") }
        }
    }

    /// MoultArchive.md: a store's metadata, an archived expression and a mapping model's source model.
    static func archives(plistBytes: [UInt8], expressionBytes: [UInt8], sourceModelData: [UInt8]) throws -> [String: VersionHash] {
        let metadata = try PropertyListValue(binaryPropertyList: plistBytes)
        let archive = try KeyedArchive(expressionBytes)
        let root = try archive.instance(archive.rootUID)          // an NSKeyPathExpression, say
        let model = try ObjectModel(xcodeDesignArchive: sourceModelData)
        let hashes = model.entityVersionHashes()
        print(metadata, root)
        return hashes
    }
}
