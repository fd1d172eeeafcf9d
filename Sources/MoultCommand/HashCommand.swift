import ArgumentParser
import Foundation
import MoultMigration
import MoultModel

/// `moult hash PATH [--json]`: each version's entity hashes.
struct HashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the entity version hashes of each version of a model.",
        discussion: """
            PATH is an .xcdatamodeld folder (every version) or an .xcdatamodel folder (one version).
            The hashes are the ones Core Data stores in a store's metadata (NSStoreModelVersionHashes).
            An entity with (or inheriting) a derived attribute has no hash: Core Data's rule for derived
            attributes is not known, so it is reported as not computable, never guessed.

            With --json: {"versions":[{"name":"Model 2","current":true,"versionIdentifiers":["2.0"],
            "entities":{"Post":"<64 hex digits>","Derived":null},"notComputable":{"Derived":"<why>"}}]}
            and "currentVersionNote" when no .xccurrentversion named the current version (it is then the
            last one). A missing, empty or unusable .xccurrentversion does not stop the command.
            """
    )

    @Argument(help: "An .xcdatamodeld or .xcdatamodel folder.")
    var path: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            // Hashes do not depend on which version is current: a bad .xccurrentversion does not stop them.
            let model = try VersionedModel(contentsOf: URL(filePath: path), requiringCurrentVersion: false)
            if json { return try Report(model).printJSON() }
            print(Self.text(model), terminator: "")
        }
    }

    /// The hash, or the reason it is not computable, of each entity in byte order of names.
    private static func hashes(_ model: ObjectModel) -> [(entity: String, hash: Result<VersionHash, ModelError>)] {
        let results = model.versionHashResults()
        return model.entityNamesInByteOrder.compactMap { name in results[name].map { (name, $0) } }
    }

    static func text(_ model: VersionedModel) -> String {
        var output = ""
        for version in model.versions {
            output += version.name
            if version.name == model.currentVersionName { output += " (current)" }
            if !version.model.versionIdentifiers.isEmpty {
                output += " [version identifiers: \(version.model.versionIdentifiers.joined(separator: ", "))]"
            }
            output += "\n"
            let entries = hashes(version.model)
            let width = entries.map(\.entity.count).max() ?? 0
            for (entity, hash) in entries {
                let padding = String(repeating: " ", count: width - entity.count)
                switch hash {
                case .success(let hash): output += "  \(entity)\(padding)  \(hash.hex)\n"
                case .failure(let error): output += "  \(entity)\(padding)  not computable: \(error.message)\n"
                }
            }
        }
        if let note = model.currentVersionNote { output += "current version: \(model.currentVersionName) (\(note))\n" }
        return output
    }

    /// `hash --json`: each version's hashes.
    struct Report: JSONReport {
        struct Version: Encodable {
            var name: String
            var current: Bool
            var versionIdentifiers: [String]
            /// Each entity's hash; `null` when it is not computable.
            var entities: [String: String?]
            /// Why a hash is not computable; left out when every one is.
            var notComputable: [String: String]?
        }

        var versions: [Version]
        /// Left out when an .xccurrentversion named the current version.
        var currentVersionNote: String?

        init(_ model: VersionedModel) {
            versions = model.versions.map { version in
                var entities: [String: String?] = [:]
                var notComputable: [String: String] = [:]
                for (entity, hash) in HashCommand.hashes(version.model) {
                    switch hash {
                    case .success(let hash): entities[entity] = hash.hex
                    case .failure(let error):
                        entities.updateValue(nil, forKey: entity)
                        notComputable[entity] = error.message
                    }
                }
                return Version(
                    name: version.name, current: version.name == model.currentVersionName, versionIdentifiers: version.model.versionIdentifiers,
                    entities: entities, notComputable: notComputable.isEmpty ? nil : notComputable)
            }
            currentVersionNote = model.currentVersionNote
        }
    }
}
