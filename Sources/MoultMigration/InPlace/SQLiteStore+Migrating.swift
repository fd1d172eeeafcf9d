public import Foundation
public import MoultMapping
public import MoultModel
public import MoultStore

/// How ``MoultStore/SQLiteStore/open(at:model:options:mappings:policies:keepsBackup:)`` treats a store made by an
/// older version: Core Data's `NSMigratePersistentStoresAutomaticallyOption` and
/// `NSInferMappingModelAutomaticallyOption`.
public struct StoreOpeningOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Migrate a store made by an older version of the model to the current one, in place.
    public static let migrateAutomatically = StoreOpeningOptions(rawValue: 1 << 0)
    /// Infer the mapping of a step no mapping model is given for (lightweight migration).
    public static let inferMappingAutomatically = StoreOpeningOptions(rawValue: 1 << 1)
}

extension SQLiteStore {
    /// Opens a store with the current version of a versioned model, migrating it in place first when
    /// an older version made it: what Core Data users write with `addPersistentStore(ofType:…)` and the
    /// two automatic options.
    ///
    /// ```swift
    /// let model = try VersionedModel(contentsOf: URL(filePath: "Model.xcdatamodeld"))
    /// let store = try SQLiteStore.open(at: storeURL, model: model, options: [.migrateAutomatically, .inferMappingAutomatically])
    /// ```
    /// - Parameters:
    ///   - url: the store.
    ///   - model: the versioned model; the store is opened at its current version.
    ///   - options: without ``StoreOpeningOptions/migrateAutomatically`` a store of an older version is
    ///     refused; without ``StoreOpeningOptions/inferMappingAutomatically`` every step needs a mapping
    ///     model among `mappings`.
    ///   - mappings: mapping models for the steps that need one (matched to their steps by content).
    ///   - policies: the policies those mappings name.
    ///   - keepsBackup: keep the original as `NAME~.EXT` when the store is migrated.
    /// - Returns: the store, open for reading and writing, at the model's current version.
    /// - Throws: ``/MoultEngine/MigrationError``: `.incompatibleStore` when the store needs a migration the options
    ///   do not allow (or no version matches it), `.noMigrationPath`, and what
    ///   ``InPlaceMigration/run(progress:isCancelled:beforeStep:events:)`` throws; ``/MoultStore/StoreError`` from opening.
    public static func open(
        at url: URL, model: VersionedModel, options: StoreOpeningOptions = [.migrateAutomatically, .inferMappingAutomatically],
        mappings: [MappingModel] = [], policies: PolicyRegistry = PolicyRegistry(), keepsBackup: Bool = true
    ) throws -> SQLiteStore {
        let current = model.current
        let metadata = try StoreMetadata(contentsOf: url)
        if !current.model.isConfiguration(nil, compatibleWithStoreMetadata: metadata) {
            guard options.contains(.migrateAutomatically) else {
                throw MigrationError(
                    .incompatibleStore,
                    "the store \(url.path) was made by another version of \(model.name) than \(current.name); open it with .migrateAutomatically to migrate it")
            }
            let chain = try ProgressiveMigration(store: url, model: model, to: current.name, mappings: mappings, policies: policies)
            if !options.contains(.inferMappingAutomatically), let step = chain.steps.first(where: \.inferred) {
                throw MigrationError(
                    .noMigrationPath,
                    "no mapping model was given from \(step.from.name) to \(step.to.name); open the store with .inferMappingAutomatically to infer it")
            }
            try InPlaceMigration(chain: chain, keepsBackup: keepsBackup).run()
        }
        return try SQLiteStore(url: url, model: current.model, mode: .readWrite)
    }
}

extension ObjectModel {
    /// Whether a store with this metadata can be opened with this model as it is (no migration
    /// needed): every entity of the configuration (all entities when nil) has the version hash the
    /// store recorded for it. Core Data's `isConfiguration(withName:compatibleWithStoreMetadata:)`.
    ///
    /// ```swift
    /// if !model.current.model.isConfiguration(nil, compatibleWithStoreMetadata: try StoreMetadata(contentsOf: url)) { … }
    /// ```
    public func isConfiguration(_ configuration: String?, compatibleWithStoreMetadata metadata: StoreMetadata) -> Bool {
        guard let entities = entities(inConfiguration: configuration) else { return false }
        let hashes = entityVersionHashes()
        return entities.allSatisfy { entity in
            hashes[entity.name] != nil && metadata.entityHashes[entity.name] == hashes[entity.name]
        }
    }
}
