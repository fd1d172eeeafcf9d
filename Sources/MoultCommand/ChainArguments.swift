import ArgumentParser
import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore

/// What names a chain of steps: the store, the model, the target, the mappings and policies, and how
/// stores are read. `moult verify` takes these alone; `moult migrate` and `moult plan` take them with
/// ``MigrationArguments``' options of the run.
struct ChainArguments: ParsableArguments {
    // Optional for the parser only: `migrate --manifest` takes its stores and models from the manifest.
    // Every other use needs both (``requireStoreAndModel()``, from each command's `validate()`).
    @Argument(help: ArgumentHelp("The store (migrate: migrated in place unless --output is given; plan and verify only read it).", valueName: "store"))
    var storeArgument: String?

    @Option(name: .customLong("model"), help: "The versioned model (.xcdatamodeld) or a single version (.xcdatamodel).")
    var modelOption: String?

    var store: String { storeArgument ?? "" }
    var model: String { modelOption ?? "" }

    /// STORE and --model, which every command needs but `migrate --manifest`: bad usage (64) without them.
    func requireStoreAndModel() throws {
        if storeArgument == nil { throw ValidationError("Missing expected argument '<store>'") }
        if modelOption == nil { throw ValidationError("Missing expected argument '--model <model>'") }
    }

    @Option(help: "The target version (default: the model's current version).")
    var to: String?

    @Option(name: .customLong("mapping"), help: "A mapping model (.json or .xcmappingmodel), or a folder searched for the steps' mappings; repeat for several steps or passes.")
    var mappings: [String] = []

    @Flag(help: "Infer every step: without --mapping, the mapping models of the model's project are not looked for.")
    var infer = false

    @Option(
        help: ArgumentHelp(
            "The versions in the order the chain follows, oldest first (default: the order the mapping models give, "
                + "else the names'); versions not listed come after.",
            valueName: "v1,v2,…"))
    var order: String?

    @Option(
        name: .customLong("source-model"),
        help: ArgumentHelp(
            "Where the source store's model comes from: 'model' (a version of --model, found by its hashes) or 'store' "
                + "(the model the store carries in Z_MODELCACHE, for a store whose model source is lost).",
            valueName: "model|store"))
    var sourceModel: String = "model"

    @Option(help: "SQLite's page cache per connection, in KiB.")
    var pageCache: Int = 4 * 1024

    @OptionGroup var valueSize: ValueSizeOption
    var maxValueSize: Int { valueSize.bytes }

    @Option(
        name: .customLong("policy"),
        help: ArgumentHelp(
            "Bind a policy class a mapping names (MyApp.CompanyPolicy, or its last component) to a built-in policy, "
                + "CLASS=builtin:unique(key: ATTR), CLASS=builtin:split(key: ATTR, separator: \",\"), CLASS=builtin:split(keys: [A, B]), "
                + "or to Core Data's default policy, CLASS=default (the class's own behaviour is skipped: a warning says so); repeat.",
            valueName: "class=policy"))
    var policyBindings: [String] = []

    func validate() throws {
        guard ["model", "store"].contains(sourceModel) else {
            throw ValidationError("--source-model must be model or store, not '\(sourceModel)'")
        }
        guard pageCache >= 64 else { throw ValidationError("--page-cache must be at least 64 KiB") }
        _ = try bindings()
    }

    /// `options` with this command line's page cache and value size limit.
    func withValueLimits(_ options: MigrationOptions) -> MigrationOptions {
        var options = options
        options.pageCacheKiB = pageCache
        options.maxValueBytes = maxValueSize
        return options
    }


    /// `--source-model store`: the model the store carries (Z_MODELCACHE) becomes the source version,
    /// placed just before the target so that the step from it is direct. A store whose hashes a version
    /// of --model already has needs no such version: that version is the source, as without the option.
    func withStoreModel(_ versioned: VersionedModel, store: String? = nil) throws -> VersionedModel {
        let url = URL(filePath: store ?? self.store)
        let database = try Database(url: url, mode: .readOnly, configuration: .init(pageCacheKiB: 256))
        defer { database.close() }
        guard let carried = try ModelCache.model(in: database) else {
            throw StoreError(.notCoreData, "--source-model store: the store carries no model (no Z_MODELCACHE, as in stores older than about 2019)", path: url.path)
        }
        let metadata = try StoreMetadata(reading: database)
        if versioned.version(matchingEntityHashes: metadata.entityHashes) != nil { return versioned }
        guard carried.entityVersionHashes() == metadata.entityHashes else {
            throw StoreError(
                .corrupt, "--source-model store: the model the store carries does not have the store's own entity hashes", path: url.path)
        }
        let target = to ?? versioned.currentVersionName
        guard let position = versioned.versions.firstIndex(where: { $0.name == target }) else { return versioned }
        var versions = versioned.versions
        versions.insert(.init(name: "(store model)", model: carried), at: position)
        return try VersionedModel(name: versioned.name, versions: versions, currentVersionName: versioned.currentVersionName)
    }

    /// The `--policy` bindings, read.
    func bindings() throws -> [(className: String, binding: PolicyRegistry.Binding)] {
        var seen: Set<String> = []
        return try policyBindings.map { text in
            guard let equals = text.firstIndex(of: "="), !text[..<equals].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--policy '\(text)': expected CLASS=builtin:<policy> or CLASS=default")
            }
            let className = text[..<equals].trimmingCharacters(in: .whitespaces)
            guard seen.insert(className).inserted else { throw ValidationError("--policy binds the class '\(className)' twice") }
            do {
                return (className, try PolicyRegistry.Binding(parsing: String(text[text.index(after: equals)...])))
            } catch let error as MigrationError {
                throw ValidationError("--policy '\(text)': \(error.message)")
            }
        }
    }

    /// The `--mapping` models with their labels: a file is read; a folder (not an `.xcmappingmodel`)
    /// is searched for the mappings of the migration's steps (``MappingDiscovery``).
    func mappingModels(_ versioned: VersionedModel, folders: MappingFolders = MappingFolders()) throws -> ([MappingModel], [String]) {
        try Self.mappingModels(mappings, store: store, to: to, versioned, folders: folders, besideModel: findsMappings ? URL(filePath: model) : nil)
    }

    /// Whether the app's mapping models are looked for beside the model: no `--mapping`, no `--infer`.
    var findsMappings: Bool { mappings.isEmpty && !infer }

    /// A version of the model that cannot be read stops only a migration that needs it, as Core Data
    /// reads a version only then: the target, or the store's own version (bad input, 65, with why it
    /// cannot be read). Any other is said in a warning: no step goes through it.
    func refuseNeedingUnreadableVersions(_ versioned: VersionedModel) throws {
        let unreadable = versioned.unreadableVersions
        guard !unreadable.isEmpty else { return }
        let target = to.map { $0.hasSuffix(".xcdatamodel") ? String($0.dropLast(".xcdatamodel".count)) : $0 }
        if let target, let error = unreadable[target] { throw error }
        let names = unreadable.keys.sorted(by: VersionedModel.naturalOrder)
        if let metadata = try? StoreMetadata(contentsOf: URL(filePath: store)), versioned.version(matchingEntityHashes: metadata.entityHashes) == nil {
            throw CommandFailure(
                .badInput,
                "no version of the model that can be read matches the store \(store), and \(names.joined(separator: ", ")) cannot be read: "
                    + names.map { "\($0): \(unreadable[$0]!)" }.joined(separator: "; "))
        }
        for name in names {
            printError("moult: warning: version \(name) of the model cannot be read, so no step goes through it: \(unreadable[name]!)")
        }
    }

    /// A store in WAL mode (its header says so) with no `-wal` beside it and no object in its main file:
    /// most likely copied without its `-wal`, where an app's latest writes are until a checkpoint. It
    /// migrates as the store it is (a store closed cleanly has no `-wal` either), with this said.
    static func missingWALNote(_ store: String) -> String? {
        // (In the folder the run holds: FileOperations, HeldFolders.)
        let header = (try? FileOperations.withRegularFile(store) { (descriptor, size) throws(StoreError) in
            try FileOperations.readAll(descriptor, size: min(size, 20), path: store)
        }) ?? nil
        guard let header, header.count == 20, header.starts(with: Array("SQLite format 3".utf8)),
            header[18] == 2, header[19] == 2, !FileOperations.exists(store + "-wal"),
            let database = try? Database(url: URL(filePath: store), mode: .readOnly)
        else { return nil }
        defer { database.close() }
        guard case .int(0)? = try? database.scalar("SELECT COALESCE(SUM(Z_MAX), 0) FROM Z_PRIMARYKEY") else { return nil }
        return "\(store) is in WAL mode, has no -wal beside it and holds no object: if it was copied, copy its -wal (and -shm) with it, "
            + "or the app's latest writes, which a -wal holds until a checkpoint, are not in it"
    }

    /// Whether a `--mapping` path is a folder to search (not an `.xcmappingmodel`, which is a folder too).
    static func isMappingFolder(_ url: URL) -> Bool {
        var isFolder: ObjCBool = false
        return url.pathExtension.lowercased() != "xcmappingmodel"
            && FileManager.default.fileExists(atPath: url.path(percentEncoded: false), isDirectory: &isFolder) && isFolder.boolValue
    }

    /// The model's versions in the order the chain follows: `--order`'s, else the one every `--mapping`
    /// model gives (a folder's every mapping model), names deciding the rest (``/MoultMapping/VersionOrder``).
    func ordered(_ versioned: VersionedModel, folders: MappingFolders) throws -> VersionedModel {
        if let order {
            let names = order.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            do {
                return try VersionOrder.explicit(names, in: versioned)
            } catch {
                throw ValidationError("--order: \(error.message)")
            }
        }
        var given: [MappingModel] = findsMappings ? folders.besideModel(URL(filePath: model), versioned).map(\.mapping) : []
        for path in mappings {
            let url = URL(filePath: path)
            if Self.isMappingFolder(url) {
                given += try folders.candidates(in: url).map(\.mapping)
            } else {
                given.append(try folders.mapping(at: url))
            }
        }
        return VersionOrder.following(given, in: versioned)
    }

    /// Mapping files and folders (as `--mapping` takes them) for a migration of `store` to `to`; a
    /// manifest's `mappings` too. `folders` keeps what each folder holds, for a fleet whose stores share it.
    static func mappingModels(
        _ paths: [String], store: String, to: String?, _ versioned: VersionedModel, folders: MappingFolders = MappingFolders(),
        besideModel model: URL? = nil
    ) throws -> ([MappingModel], [String]) {
        var models: [MappingModel] = []
        var labels: [String] = []
        // None given: the app's own, found beside the model, as Core Data looks for them before it infers.
        if let model, paths.isEmpty {
            let found = folders.besideModel(model, versioned)
            guard !found.isEmpty, let source = MappingDiscovery.version(of: URL(filePath: store), in: versioned),
                let target = versioned.version(named: to ?? versioned.currentVersionName)
            else { return ([], []) }
            let chosen: [MappingDiscovery.Candidate]
            do {
                chosen = try MappingDiscovery.select(found, model: versioned, from: source, to: target)
            } catch var error as MigrationError {
                error.message += " (or give --infer to infer every step)"
                throw error
            }
            for candidate in chosen {
                printError("moult: note: using the mapping model \(candidate.url.path), found beside the model (--infer infers instead)")
            }
            return (chosen.map(\.mapping), chosen.map(\.url.path))
        }
        for path in paths {
            let url = URL(filePath: path)
            if Self.isMappingFolder(url) {
                let candidates = try folders.candidates(in: url)
                guard let source = MappingDiscovery.version(of: URL(filePath: store), in: versioned),
                    let target = versioned.version(named: to ?? versioned.currentVersionName)
                else { continue }  // the migration says what is wrong with the store or the target
                for candidate in try MappingDiscovery.select(candidates, model: versioned, from: source, to: target) {
                    models.append(candidate.mapping)
                    labels.append(candidate.url.path)
                }
            } else {
                models.append(try folders.mapping(at: url))
                labels.append(path)
            }
        }
        return (models, labels)
    }

    /// The migration these arguments describe, with the command line's policies registered and the
    /// `--policy` bindings over them, reading `store` (default: STORE). Every policy of every step is found (and a built-in one checked
    /// against the step's models) before anything runs; a class bound to Core Data's default policy
    /// gets a warning.
    func migration(options: MigrationOptions, store: String? = nil) throws -> ProgressiveMigration {
        let store = store ?? self.store
        var versioned = try VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: to == nil, settingAsideUnreadableVersions: true)
        try refuseNeedingUnreadableVersions(versioned)
        if to == nil, let note = versioned.currentVersionNote { printError("moult: note: \(note)") }
        if let note = Self.missingWALNote(store) { printError("moult: note: \(note)") }
        // A target whose store cannot be written as Core Data would (an unconfirmed derivation or
        // composite attribute) is refused first (65): its entities would otherwise match any store by
        // presence and the run would claim there is nothing to migrate.
        if let target = versioned.version(named: to ?? versioned.currentVersionName) {
            do throws(StoreError) {
                try StoreLayout(model: target.model).checkWritable()
            } catch {
                var located = error
                if located.path == nil { located.path = model }
                throw located
            }
        }
        let folders = MappingFolders()
        versioned = try ordered(versioned, folders: folders)
        if sourceModel == "store" { versioned = try withStoreModel(versioned, store: store) }
        let (mappingModels, mappingLabels) = try mappingModels(versioned, folders: folders)
        var policies = MoultCommand.policies
        let bindings = try bindings()
        for (className, binding) in bindings { policies.bind(className, to: binding) }
        let migration = try ProgressiveMigration(
            store: URL(filePath: store), model: versioned, to: to, mappings: mappingModels, policies: policies,
            options: withValueLimits(options), mappingLabels: mappingLabels)
        var used: Set<String> = []
        for step in migration.steps where !step.inferred {
            for mapping in step.mappings.flatMap(\.orderedEntityMappings) {
                if case .bound(let className, let binding) = try policies.source(for: mapping) {
                    used.insert(className)
                    if binding == .coreDataDefault {
                        printError(
                            "moult: warning: entity mapping \(mapping.name) runs Core Data's default policy instead of "
                                + "\(mapping.entityMigrationPolicyClassName ?? className) (--policy \(className)=default): what that class does is skipped")
                    }
                }
                _ = try policies.resolve(mapping, source: step.from.model, destination: step.to.model)
            }
        }
        for (className, _) in bindings where !used.contains(className) {
            printError("moult: warning: --policy \(className)=…: no entity mapping of this migration names that class")
        }
        var versions = migration.steps.map(\.to)
        if let first = migration.steps.first { versions.insert(first.from, at: 0) }
        Self.warnAboutIgnoredFetchIndexElements(versions.map(\.model))
        // What Core Data accepts in a version the chain reads, though it is not consistent: said once each.
        for version in versions {
            for warning in version.model.warnings { printError("moult: warning: version \(version.name): \(warning)") }
        }
        return migration
    }

    /// Says, once per message, which fetch index elements the models' layouts ignore (an element on a
    /// to-many relationship: Core Data makes no index term for it).
    static func warnAboutIgnoredFetchIndexElements(_ models: [ObjectModel]) {
        var said: Set<String> = []
        for model in models {
            for message in (try? StoreLayout(model: model))?.ignoredFetchIndexElements ?? [] where said.insert(message).inserted {
                printError("moult: warning: \(message)")
            }
        }
    }
}
