import ArgumentParser
import Foundation
import MoultGenerate
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTesting

/// `moult test MODEL [--mapping DIR]… [--stages F] [--fixtures DIR] [--objects N] [--seed S] [--junit FILE] [--json]`,
/// and `moult test MODEL --freeze DIR`.
struct TestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Migrate a generated store of every version (and every frozen fixture) to the current version by every path, and check and compare the results.",
        discussion: """
            For each version but the target (or those named with --version): a generated store (see moult \
            generate), and each fixture store of that version in --fixtures (checked first against the folder's \
            checksum manifest: a changed fixture is refused, named, 65). Each store is migrated to the current \
            version by every path: into a new store (--output), in place, and into a new store stopped at a random \
            chunk and resumed; with --stages, every path runs the stages instead: a copy staged in place \
            (moult migrate --stages, which has no --output: this copy is the output path), and a copy staged in place \
            killed after the handlers' first commit (the staged-after-commit fault point) and run again, which resumes it. Each path is a child moult, a store's paths side by side, and \
            as many stores at once as the cores hold their paths (a stopped moult test, SIGTERM, SIGINT or its parent \
            gone, stops its children and exits 75). With --stages the results are compared with the reference: a \
            copy of the source with the stages' update, delete and deleteDuplicates operations applied by the test \
            itself (not by the staged driver; insert and sql operations are left out, with a note), so that \
            duplicates a handler deletes on purpose are not counted as lost. Each result is verified (moult verify: keys, inverses, \
            the target's validation rules, counts, a sample carried value by value), and all the paths' results \
            must hold the same objects with the same values (primary keys aside). The account of each source, \
            measured in the source and the result, says per entity and property how many values were kept, \
            converted, defaulted and dropped, and which source objects no entity mapping carries (a filter \
            rejects them, or no mapping reads their entity). A drop the model makes itself (an entity or property \
            the target no longer has) passes; a drop of data the target could hold fails the store unless \
            --allow-loss names it. A path that fails, two that disagree, or a loss not allowed: exit 67, with the \
            first object that differs. --freeze DIR writes a generated store per version into DIR \
            and the checksum manifest (\(FixtureManifest.fileName)) --fixtures reads.
            """
    )

    @Argument(help: "The versioned model (.xcdatamodeld).")
    var model: String

    @Option(name: .customLong("mapping"), help: "A mapping model or a folder of them, as for migrate; repeat.")
    var mappings: [String] = []

    @Flag(help: "Infer every step: without --mapping, the mapping models of the model's project are not looked for.")
    var infer = false

    @Option(help: "The version every store is migrated to (default: the model's current version).")
    var to: String?

    @Option(name: .customLong("policy"), help: ArgumentHelp("Bind a policy class a mapping names, as for migrate; repeat.", valueName: "class=policy"))
    var policyBindings: [String] = []

    @Option(
        name: .customLong("allow-loss"),
        help: ArgumentHelp(
            "Accept a loss of data the target could hold: ENTITY (its objects and properties) or ENTITY.PROPERTY, as the account names them; repeat.",
            valueName: "entity[.property]"))
    var allowedLosses: [String] = []

    @Option(help: "A stages file: every path runs these stages (a copy staged in place, and one stopped and resumed), compared with what their handlers make of the source.")
    var stages: String?

    @Option(help: ArgumentHelp("A folder of frozen fixture stores with its \(FixtureManifest.fileName).", valueName: "dir"))
    var fixtures: String?

    @Option(name: .customLong("version"), help: "Test only this version (repeat); default: every version but the target. (A bare --version prints Moult's version.)")
    var versions: [String] = []

    @Option(help: "Objects per generated store.")
    var objects: Int = 200

    @Option(help: "The random seed (generated stores, the chunk each resumed path stops at).")
    var seed: UInt64 = 1

    @Option(help: "Source objects per chunk (default: an eighth of --objects), so the resumed path stops inside the run.")
    var chunkSize: Int?

    @Option(help: ArgumentHelp("Write a JUnit XML report (one test case per version, store and path).", valueName: "file"))
    var junit: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Write a generated store per version and a checksum manifest into DIR (which must not hold them yet), and stop.", valueName: "dir"))
    var freeze: String?

    @Option(help: ArgumentHelp("Where the stores of the run are made (default: a temporary folder, removed at the end).", valueName: "dir"))
    var work: String?

    func validate() throws {
        guard objects >= 0 else { throw ValidationError("--objects must be 0 or more") }
        if let chunkSize, chunkSize < 1 { throw ValidationError("--chunk-size must be at least 1") }
        guard URL(filePath: model).pathExtension == "xcdatamodeld" else {
            throw ValidationError("the model must be a versioned model (.xcdatamodeld), not '\(model)'")
        }
        if let junit {
            // Refused before the run, not after it: a folder, or a file in a folder that does not exist.
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: junit, isDirectory: &isFolder), isFolder.boolValue {
                throw ValidationError("--junit \(junit) is a folder: name the report's file (such as \(URL(filePath: junit).appending(path: "moult.xml").path))")
            }
            let parent = URL(filePath: junit).deletingLastPathComponent().path
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--junit \(junit): the folder \(parent) does not exist")
            }
        }
    }

    func run() async throws {
        ChildStop.install()
        ParentWatch.start()
        try await reportingFailures {
            try OutputPathCheck(
                reads: [.folder("--fixtures", fixtures)], writes: [.file("--junit", junit), .folder("--freeze", freeze), .folder("--work", work)]
            ).refuse()
            let versioned = try VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: to == nil)
            let target = try targetVersion(versioned)
            let chosen = try chosenVersions(versioned, before: target)
            if let freeze {
                let frozen = try Self.freeze(
                    versioned, versions: versions.isEmpty ? versioned.versions : chosen, objects: objects, seed: seed, into: URL(filePath: freeze),
                    says: json ? { _ in } : { print($0) })
                if json { try frozen.printJSON() }
                return
            }
            let manifest = try fixtures.map { try Self.checkedFixtures(URL(filePath: $0), versioned) }
            let folder = try workFolder()
            defer { if work == nil { try? FileOperations.removeTree(folder) } }
            if let manifest {
                // Never a silent skip: a fixture this run does not test is named.
                let tested = Set(chosen.map(\.name)).subtracting([target.name])
                for store in manifest.stores where !tested.contains(store.version) {
                    let why = store.version == target.name ? "it is at the target version" : "--version does not name \(store.version)"
                    printError("moult: note: fixture \(store.path) (version \(store.version)) is not tested: \(why)")
                }
            }
            let stagesPlan = try stages.map { try TestStages(file: $0, model: versioned) }
            var runner = PathRunner(command: self, target: target, folder: folder, stages: stagesPlan, earlierMappings: try earlierMappings(versioned))
            var sources: [PathRunner.Source] = []
            for version in chosen where version.name != target.name {
                if version.model.entityVersionHashes() == target.model.entityVersionHashes() {
                    printError("moult: note: \(version.name) has the same version hashes as \(target.name): its stores are current, nothing to migrate")
                    continue
                }
                let generated = folder.appending(path: "\(Self.fileName(version.name))-generated.sqlite")
                _ = try GenerateCommand.generateAtomically(StoreGenerator(model: version.model, objects: objects, seed: seed), at: generated)
                sources.append(runner.source(generated, label: "generated", version: version))
                for store in manifest?.stores ?? [] where store.version == version.name {
                    let copy = try runner.copyFixture(URL(filePath: fixtures!).appending(path: store.path))
                    sources.append(runner.source(copy, label: "fixture \(store.path)", version: version))
                }
            }
            let results = try runner.run(sources, pathsPerSource: stages == nil ? 3 : 2)
            try report(results, model: versioned.name, target: target.name)
        }
    }

    /// The versions named with --version, or every version but the target.
    private func chosenVersions(_ versioned: VersionedModel, before target: VersionedModel.Version) throws -> [VersionedModel.Version] {
        guard !versions.isEmpty else { return versioned.versions.filter { $0.name != target.name } }
        return try versions.map { name in
            guard let version = versioned.version(named: name) else {
                throw ModelError(.missingVersion, "--version \(name): the model has no such version (it has \(versioned.versions.map(\.name).joined(separator: ", ")))", file: model)
            }
            return version
        }
    }

    private func targetVersion(_ versioned: VersionedModel) throws -> VersionedModel.Version {
        guard let to else { return versioned.current }
        guard let version = versioned.version(named: to) else {
            throw ModelError(.missingVersion, "--to \(to): the model has no such version (it has \(versioned.versions.map(\.name).joined(separator: ", ")))", file: model)
        }
        return version
    }

    /// The arguments every child `migrate` and `verify` of a store at `version` gets: the model, the
    /// target, the mappings, the policies. A `--mapping` file whose source is a version the chain
    /// passes before `version` maps an earlier part of the history: it is left out for this store, as
    /// a migration refuses a mapping model none of its steps uses (a folder is searched by the child).
    func migrationArguments(from version: VersionedModel.Version, earlier: [String: Set<String>]) -> [String] {
        let kept = mappings.filter { earlier[$0]?.contains(version.name) != true }
        return ["--model", model] + (to.map { ["--to", $0] } ?? []) + kept.flatMap { ["--mapping", $0] } + (infer ? ["--infer"] : [])
            + policyBindings.flatMap { ["--policy", $0] }
    }

    /// For each `--mapping` file, the versions whose stores do not use it: those the chain reaches after
    /// every version the mapping's source fits (the order the given mappings give, as `migrate` follows
    /// it). A mapping that fits no version is given to every store, so that the child says why.
    func earlierMappings(_ versioned: VersionedModel) throws -> [String: Set<String>] {
        let folders = MappingFolders()
        var given: [MappingModel] = []
        var files: [(path: String, mapping: MappingModel)] = []
        for path in mappings {
            let url = URL(filePath: path)
            if ChainArguments.isMappingFolder(url) {
                given += try folders.candidates(in: url).map(\.mapping)
            } else {
                let mapping = try folders.mapping(at: url)
                given.append(mapping)
                files.append((path, mapping))
            }
        }
        let order = VersionOrder.following(given, in: versioned).versions.map(\.name)
        var result: [String: Set<String>] = [:]
        for (path, mapping) in files {
            let sources = mapping.matchingVersions(.source, in: versioned).versions.compactMap { order.firstIndex(of: $0.name) }
            guard let latest = sources.max() else { continue }
            result[path] = Set(order[(latest + 1)...])
        }
        return result
    }

    private func workFolder() throws -> URL {
        if let work {
            let url = URL(filePath: work)
            try FileOperations.makeNewDirectory(url.path)
            return url
        }
        let url = FileManager.default.temporaryDirectory.appending(path: "moult-test-\(UUID().uuidString)")
        try FileOperations.makeNewDirectory(url.path)
        return url
    }

    /// A version's name as a file name (no `/`, no leading dot).
    static func fileName(_ version: String) -> String {
        let cleaned = String(version.map { $0 == "/" || $0 == "\u{0}" ? "_" : $0 })
        return cleaned.hasPrefix(".") ? "_" + cleaned : cleaned
    }

    // MARK: - Fixtures

    /// `moult test --freeze DIR --json`: the manifest written and the files it lists.
    struct FreezeReport: JSONReport {
        var manifest: String
        var objects: Int
        var seed: UInt64
        var files: [FixtureManifest.Entry]
    }

    /// Writes a generated store per version into `folder` and the manifest of their checksums; `says`
    /// gets a line per store and one for the manifest.
    static func freeze(
        _ versioned: VersionedModel, versions: [VersionedModel.Version], objects: Int, seed: UInt64, into folder: URL,
        says: (String) -> Void
    ) throws -> FreezeReport {
        let manager = FileManager.default
        if !manager.fileExists(atPath: folder.path) { try FileOperations.makeNewDirectory(folder.path) }
        let manifestURL = folder.appending(path: FixtureManifest.fileName)
        guard !manager.fileExists(atPath: manifestURL.path) else {
            throw StoreError(.alreadyExists, "the folder already has a fixture manifest; moult test --freeze does not overwrite fixtures", path: manifestURL.path)
        }
        var entries: [FixtureManifest.Entry] = []
        for version in versions {
            let name = "\(fileName(version.name)).sqlite"
            let store = folder.appending(path: name)
            _ = try GenerateCommand.generateAtomically(StoreGenerator(model: version.model, objects: objects, seed: seed), at: store)
            entries.append(.init(sha256: try FixtureManifest.sha256(of: store), version: version.name, path: name))
            let external = ExternalDataReference.folder(besideStore: store)
            let prefix = "\(ExternalDataReference.supportFolder(besideStore: store).lastPathComponent)/\(ExternalDataReference.folderName)"
            for file in ((try? manager.contentsOfDirectory(atPath: external.path)) ?? []).sorted() {
                entries.append(.init(sha256: try FixtureManifest.sha256(of: external.appending(path: file)), version: version.name, path: "\(prefix)/\(file)"))
            }
            says("froze \(name) (version \(version.name), \(objects) objects, seed \(seed))")
        }
        try FileOperations.writeAtomically(Data(FixtureManifest(entries: entries).text.utf8), to: manifestURL, durable: true)
        says("wrote \(manifestURL.path): \(entries.count) file\(entries.count == 1 ? "" : "s")")
        return FreezeReport(manifest: manifestURL.path, objects: objects, seed: seed, files: entries)
    }

    /// The fixtures folder's manifest, every file checked against it, every version known to the model.
    static func checkedFixtures(_ folder: URL, _ versioned: VersionedModel) throws -> FixtureManifest {
        let url = folder.appending(path: FixtureManifest.fileName)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FixtureError("\(url.path): no fixture manifest (moult test --freeze writes one; a fixture without a checksum is never trusted)")
        }
        let manifest = try FixtureManifest(bytes: Array(data), file: url.path)
        for entry in manifest.entries where versioned.version(named: entry.version) == nil {
            throw FixtureError("\(url.path): fixture \(entry.path) is at version '\(entry.version)', which the model does not have")
        }
        try manifest.check(in: folder)
        try manifest.checkVersions(in: folder, model: versioned)
        return manifest
    }
}
