import ArgumentParser
import Foundation
import MoultGenerate
import MoultMigration
import MoultModel
import MoultStore

/// `moult generate STORE --model M [--model-version V] [--objects N] [--seed S] [--break-rule N]`.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a store of any model version filled with every kind of value it allows (deterministic for a seed).",
        discussion: """
            Objects are spread over the concrete entities; attributes take ordinary values and their type's edges \
            within the model's rules, relationships of every kind are filled with their inverses, external-storage \
            blobs are written as files beside the store, derived attributes are computed by the store's triggers. \
            Memory stays flat at any --objects. --list-rules prints the validation rules a store can break; \
            --break-rule N makes object 0 of that rule's entity break it (every other value keeps every rule). \
            --check validates the store made against its own version's rules (required values and relationships, \
            bounds, patterns, to-many counts, one-to-ones pointing back; uniqueness is the store's own index): \
            any failure but the rule --break-rule breaks is named, exit 67.
            """
    )

    @Argument(help: "The store to create (must not exist).")
    var store: String?

    @Option(help: "An .xcdatamodeld or .xcdatamodel.")
    var model: String

    @Option(help: "The model version (default: the current version).")
    var modelVersion: String?

    @Option(help: "How many objects, spread over the concrete entities.")
    var objects: Int = 1_000

    @Option(help: "The random seed.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Break rule N of --list-rules in one object.", valueName: "n"))
    var breakRule: Int?

    @Flag(help: "Print the validation rules a store can be made to break, numbered, and stop.")
    var listRules = false

    @Flag(help: "Validate the store made against its version's rules; any failure but --break-rule's fails (67).")
    var check = false

    func validate() throws {
        guard objects >= 0 else { throw ValidationError("--objects must be 0 or more") }
        if store == nil && !listRules { throw ValidationError("Missing expected argument '<store>'") }
    }

    func run() async throws {
        try await reportingFailures {
            try OutputPathCheck(writes: [.store("STORE", store)]).refuse()
            let versioned = try VersionedModel(contentsOf: URL(filePath: model), requiringCurrentVersion: modelVersion == nil)
            guard let version = modelVersion.map({ versioned.version(named: $0) }) ?? versioned.current else {
                throw ModelError(.missingVersion, "the model has no version '\(modelVersion ?? "")' (it has \(versioned.versions.map(\.name).joined(separator: ", ")))", file: model)
            }
            var generator = StoreGenerator(model: version.model, objects: objects, seed: seed)
            let rules = generator.rules()
            if listRules {
                for (index, rule) in rules.enumerated() { print("\(index) \(rule)") }
                return
            }
            if let breakRule {
                guard rules.indices.contains(breakRule) else {
                    throw GeneratorError(.unknownRule, "--break-rule \(breakRule): the model version has \(rules.count) rule\(rules.count == 1 ? "" : "s") (see --list-rules)")
                }
                generator.brokenRule = rules[breakRule]
            }
            let url = URL(filePath: store ?? "")
            let summary = try Self.generateAtomically(generator, at: url)
            let broken = generator.brokenRule.map { "; object 0 of \($0.entity) breaks \($0)" } ?? ""
            print("generated \(summary.objects) objects of \(summary.objectsByEntity.count) entities at version \(version.name) in \(url.path), \(summary.links) to-many links, \(summary.externalFiles) external files\(broken)")
            if check { try Self.check(url, model: version.model, except: generator.brokenRule) }
        }
    }

    /// Validates a generated store against its model's rules: every failure but those of `rule` (the
    /// one `--break-rule` breaks on purpose) is named, and the check fails (67).
    ///
    /// - Throws: ``CommandFailure`` (validation failed) naming each failure, up to 20.
    static func check(_ url: URL, model: ObjectModel, except rule: StoreGenerator.Rule?) throws {
        let store = try SQLiteStore(url: url, model: model)
        defer { store.database.close() }
        var failures: [ValidationFailure] = []
        let validator = Validator(model: model, layout: store.layout, database: store.database, stopAtFirst: false) { failures.append($0) }
        try validator.run()
        let unexpected = failures.filter { rule == nil || $0.entity != rule?.entity || $0.property != rule?.attribute }
        guard !unexpected.isEmpty else {
            print("checked: the store keeps every rule of its version" + (failures.isEmpty ? "" : " but the one it breaks on purpose"))
            return
        }
        throw CommandFailure(
            .validationFailed,
            "the generated store breaks its own version's rules (\(unexpected.count) failure\(unexpected.count == 1 ? "" : "s")):\n"
                + unexpected.prefix(20).map { "  \($0)" }.joined(separator: "\n"))
    }

    /// Generates under a temporary name in the same folder and renames the store into place when
    /// complete (its external data folder with it), so a stopped run leaves no store that looks whole.
    static func generateAtomically(_ generator: StoreGenerator, at url: URL) throws -> StoreGenerator.Summary {
        let manager = FileManager.default
        guard !manager.fileExists(atPath: url.path) else {
            throw StoreError(.alreadyExists, "a file is already there; moult generate does not overwrite it", path: url.path)
        }
        let support = ExternalDataReference.supportFolder(besideStore: url)
        guard !manager.fileExists(atPath: support.path) else {
            throw StoreError(.alreadyExists, "an external data folder is already there; moult generate does not overwrite it", path: support.path)
        }
        let temporary = RunNames.uniqueTemporary(for: url.deletingPathExtension().appendingPathExtension("sqlite"))
        let temporarySupport = ExternalDataReference.supportFolder(besideStore: temporary)
        func removeTemporary() {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileOperations.removeTree(temporary.path + suffix) }
            try? FileOperations.removeTree(temporarySupport)
        }
        do {
            let summary = try generator.generate(at: temporary)
            for suffix in ["-wal", "-shm"] { try? FileOperations.removeTree(temporary.path + suffix) }
            if manager.fileExists(atPath: temporarySupport.path) { try FileOperations.rename(temporarySupport.path, to: support.path, durable: true) }
            try FileOperations.rename(temporary.path, to: url.path, durable: true)
            return summary
        } catch {
            removeTemporary()
            throw error
        }
    }
}

/// `moult generate-models DIR [--count N] [--first K] [--seed S]` (hidden): random model pairs for the long
/// run of `moult test` on Moult itself (Benchmarks/scripts/model-pairs.sh).
struct GenerateModelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-models",
        abstract: "Write seeded random model pairs (v1 → v2 by changes a lightweight mapping allows) as DIR/PairK.xcdatamodeld.",
        shouldDisplay: false)

    @Argument(help: "The folder to write the models into (made if missing).")
    var folder: String

    @Option(help: "How many pairs.")
    var count: Int = 1

    @Option(help: "The number of the first pair.")
    var first: Int = 0

    @Option(help: "The random seed.")
    var seed: UInt64 = 1

    func validate() throws {
        guard count >= 0, first >= 0 else { throw ValidationError("--count and --first must be 0 or more") }
    }

    func run() async throws {
        try await reportingFailures {
            let generator = ModelPairGenerator(seed: seed)
            for index in first..<(first + count) {
                let pair = try generator.pair(index)
                let url = URL(filePath: folder).appending(path: "Pair\(index).xcdatamodeld")
                try FileOperations.writeFolder(pair.model.xcodeFiles(), at: url)
                try FileOperations.writeAtomically(Data((pair.changes.joined(separator: "\n") + "\n").utf8), to: url.appending(path: "changes.txt"), durable: false)
                print("\(url.path): \(pair.changes.joined(separator: "; "))")
            }
        }
    }
}
