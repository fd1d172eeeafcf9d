import ArgumentParser
import Foundation
import MoultMapping
import MoultModel

/// `moult infer --from A --to B [--model M] [--json]`.
struct InferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Infer a lightweight mapping model between two model versions.",
        discussion: """
            A and B are .xcdatamodel folders, or version names of the .xcdatamodeld given with --model
            (renames chained through the versions between them are then followed). Prints the mapping
            (in Moult's JSON mapping format with --json), or why none can be inferred, exit code 66.
            """
    )

    @Option(help: "The source version: an .xcdatamodel folder, or a version name of --model.")
    var from: String

    @Option(help: "The destination version: an .xcdatamodel folder, or a version name of --model.")
    var to: String

    @Option(help: "An .xcdatamodeld folder whose versions --from and --to name.")
    var model: String?

    @Flag(help: "Print the mapping in Moult's JSON mapping format.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let inferred: InferredMapping
            if let model {
                let versioned = try VersionedModel(contentsOf: URL(filePath: model))
                inferred = try MappingModel.inference(from: from, to: to, in: versioned)
            } else {
                // A bare version name (no such path) without --model: say what it needs.
                for path in [from, to] where !FileManager.default.fileExists(atPath: path) && !path.contains("/") && !path.hasSuffix(".xcdatamodel") {
                    throw CommandFailure(.usage, "'\(path)' is neither an .xcdatamodel folder nor a file here; to name a version, give its model with --model M.xcdatamodeld")
                }
                let source = try ObjectModel(contentsOf: URL(filePath: from))
                let destination = try ObjectModel(contentsOf: URL(filePath: to))
                inferred = try MappingModel.inference(
                    from: source, to: destination, sourceName: Self.versionName(from), destinationName: Self.versionName(to))
            }
            let mapping = inferred.mapping
            // Inferred as Core Data does, but objects may fail validation: said on standard error.
            for warning in inferred.warnings { printError("moult: warning: \(warning.description)") }
            print(json ? mapping.jsonText() : Self.summary(mapping), terminator: "")
        }
    }

    static func versionName(_ path: String) -> String {
        let last = URL(filePath: path).lastPathComponent
        return last.hasSuffix(".xcdatamodel") ? String(last.dropLast(".xcdatamodel".count)) : last
    }

    /// A readable summary: one line per entity mapping, then its property mappings that are not plain copies.
    static func summary(_ mapping: MappingModel) -> String {
        var text = "Inferred mapping \(mapping.sourceModel.name ?? "source") → \(mapping.destinationModel.name ?? "destination"):\n"
        for entity in mapping.entityMappings {
            let from = entity.sourceEntityName ?? "(none)", to = entity.destinationEntityName ?? "(none)"
            text += "  \(entity.name) [\(entity.mappingType.jsonName)] \(from) → \(to)\n"
            for property in entity.attributeMappings + entity.relationshipMappings {
                let value = property.valueExpression ?? "(default value)"
                if value != PropertyMapping.sourceValue(property.name) { text += "    \(property.name) = \(value)\n" }
            }
        }
        return text
    }
}
