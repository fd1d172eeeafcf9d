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
            print(json ? Self.json(model) : Self.text(model), terminator: "")
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

    static func json(_ model: VersionedModel) -> String {
        var versions: [String] = []
        for version in model.versions {
            let entries = hashes(version.model)
            var entities: [String] = []
            var notes: [String] = []
            for (entity, hash) in entries {
                switch hash {
                case .success(let hash): entities.append("\(JSONText.string(entity)):\(JSONText.string(hash.hex))")
                case .failure(let error):
                    entities.append("\(JSONText.string(entity)):null")
                    notes.append("\(JSONText.string(entity)):\(JSONText.string(error.message))")
                }
            }
            var fields = [
                "\"name\":\(JSONText.string(version.name))",
                "\"current\":\(version.name == model.currentVersionName)",
                "\"versionIdentifiers\":[\(version.model.versionIdentifiers.map(JSONText.string).joined(separator: ","))]",
                "\"entities\":{\(entities.joined(separator: ","))}",
            ]
            if !notes.isEmpty { fields.append("\"notComputable\":{\(notes.joined(separator: ","))}") }
            versions.append("{\(fields.joined(separator: ","))}")
        }
        let note = model.currentVersionNote.map { ",\"currentVersionNote\":\(JSONText.string($0))" } ?? ""
        return "{\"versions\":[\(versions.joined(separator: ","))]\(note)}\n"
    }
}

/// JSON text for the few shapes the commands print.
enum JSONText {
    /// A JSON string literal (the one quoting the event stream uses).
    static func string(_ value: String) -> String { EventJSON.string(value) }
}
