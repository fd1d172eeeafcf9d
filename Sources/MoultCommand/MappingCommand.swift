import ArgumentParser
import Foundation
import MoultMapping
import MoultModel
import MoultStore

/// `moult mapping show|convert`: look at a mapping model, or turn an Xcode one into Moult's JSON.
struct MappingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mapping",
        abstract: "Show a mapping model, or convert an .xcmappingmodel to Moult's JSON mapping format.",
        subcommands: [Show.self, Convert.self]
    )

    /// `moult mapping show FILE [--json]`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print a mapping model: its models (with entity hashes) and every entity mapping in order.",
            discussion: """
                FILE is a mapping model in Moult's JSON format (.json) or an Xcode .xcmappingmodel folder.
                Prints the source and destination models (name, recorded path, entity version hashes:
                for an .xcmappingmodel, those of the models Xcode embedded in it), then each entity mapping
                in the order it runs: name, type (and the type Core Data gives an Undefined one), source and
                destination entities, filter predicate, custom policy class, and the value expression of
                every property mapping. No policy needs to be registered: nothing is run.

                With --json: {"file":…, "source":{"name":…,"path":…,"entityVersionHashes":{…}},
                "destination":{…}, "entityMappings":[{"name":…,"type":…,"effectiveType":…,"source":…,
                "destination":…,"order":…,"filter":…,"policy":…,"userInfo":{…}, "builtinPolicy",
                "sourceVersionHash" and "destinationVersionHash" when the mapping records them,
                "attributes":[{"name":…,"value":…}],"relationships":[…]}]}; a property whose "value" is
                null has no expression recorded (the default applies).
                """
        )

        @Argument(help: "A mapping model: a .json file or an .xcmappingmodel folder.")
        var file: String

        @Flag(help: "Print JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures {
                let mapping = try MappingModel(contentsOf: URL(filePath: file))
                if json { return try MappingCommand.Report(mapping, file: file).printJSON() }
                print(MappingCommand.text(mapping, file: file), terminator: "")
            }
        }
    }

    /// `moult mapping convert FILE.xcmappingmodel --to json [--output F]`.
    struct Convert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "convert",
            abstract: "Convert a mapping model to Moult's JSON mapping format.",
            discussion: """
                Writes the mapping model in Moult's JSON format (with the entity version hashes of its
                models), to standard output or to --output, so that it can be edited (a custom policy
                replaced, an expression changed) and given to `moult migrate --mapping`. Reading the
                written file back gives the same mapping model. An existing --output file is replaced
                only once the whole text is written.
                """
        )

        @Argument(help: "A mapping model: an .xcmappingmodel folder (or a .json file).")
        var file: String

        @Option(help: "The format to write: json.")
        var to: String

        @Option(help: "The file to write (standard output when left out).")
        var output: String?

        func validate() throws {
            guard to.lowercased() == "json" else {
                throw ValidationError("--to \(to): the only format written is json")
            }
        }

        func run() async throws {
            try await reportingFailures {
                let mapping = try MappingModel(contentsOf: URL(filePath: file))
                let text = mapping.jsonText()
                guard let output else {
                    print(text, terminator: "")
                    return
                }
                do throws(StoreError) {
                    try FileOperations.writeOutput(Data(text.utf8), to: URL(filePath: output), durable: false)
                } catch {
                    throw MappingError(.unreadable, "cannot write the JSON mapping: \(error.message)", file: output)
                }
            }
        }
    }

    // MARK: - Rendering

    static func text(_ mapping: MappingModel, file: String) -> String {
        var text = "Mapping model \(file)\n"
        for (label, reference) in [("Source", mapping.sourceModel), ("Destination", mapping.destinationModel)] {
            text += "\(label) model: \(reference.name ?? "(no name)")"
            if let path = reference.path { text += " (\(path))" }
            text += "\n"
            if reference.entityVersionHashes.isEmpty {
                text += "  entity hashes: none recorded\n"
            } else {
                let width = reference.entityVersionHashes.keys.map(\.count).max() ?? 0
                for (entity, hash) in reference.entityVersionHashes.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                    text += "  \(entity)\(String(repeating: " ", count: width - entity.count))  \(hash.hex)\n"
                }
            }
        }
        text += "Entity mappings, in order:\n"
        for (index, entity) in mapping.orderedEntityMappings.enumerated() {
            var type = entity.mappingType.jsonName
            if entity.effectiveType != entity.mappingType { type += " (runs as \(entity.effectiveType.jsonName))" }
            text += "\(index + 1). \(entity.name) [\(type)] \(entity.sourceEntityName ?? "(none)") → \(entity.destinationEntityName ?? "(none)")\n"
            if let hash = entity.sourceEntityVersionHash { text += "   source hash: \(hash.hex)\n" }
            if let hash = entity.destinationEntityVersionHash { text += "   destination hash: \(hash.hex)\n" }
            if let filter = entity.filterPredicate { text += "   filter: \(filter)\n" }
            if let policy = entity.entityMigrationPolicyClassName { text += "   policy: \(policy)\n" }
            if let builtin = entity.builtinPolicy { text += "   built-in policy: \(builtin)\n" }
            for (key, value) in entity.userInfo.sorted(by: { $0.key < $1.key }) { text += "   user info: \(key) = \(value)\n" }
            for (kind, properties) in [("attribute", entity.attributeMappings), ("relationship", entity.relationshipMappings)] {
                for property in properties {
                    text += "   \(kind) \(property.name) = \(property.valueExpression ?? "(no expression: default)")\n"
                }
            }
        }
        return text
    }

    /// `mapping show --json`.
    struct Report: JSONReport {
        static let isPrettyPrinted = true

        /// A model the mapping names.
        struct Model: Encodable {
            @ExplicitNull var name: String?
            @ExplicitNull var path: String?
            var entityVersionHashes: [String: String]
        }

        struct Property: Encodable {
            var name: String
            @ExplicitNull var value: String?
            /// Left out when empty.
            var userInfo: [String: String]?
        }

        struct Entity: Encodable {
            var name: String
            var type: String
            var effectiveType: String
            @ExplicitNull var source: String?
            @ExplicitNull var destination: String?
            @ExplicitNull var order: Int?
            @ExplicitNull var filter: String?
            @ExplicitNull var policy: String?
            /// Left out unless the mapping names one.
            var builtinPolicy: String?
            /// Left out unless the mapping records them.
            var sourceVersionHash: String?
            var destinationVersionHash: String?
            var userInfo: [String: String]
            var attributes: [Property]
            var relationships: [Property]
        }

        var file: String
        var source: Model
        var destination: Model
        var entityMappings: [Entity]

        init(_ mapping: MappingModel, file: String) {
            func model(_ reference: ModelReference) -> Model {
                Model(name: reference.name, path: reference.path, entityVersionHashes: reference.entityVersionHashes.mapValues(\.hex))
            }
            func properties(_ mappings: [PropertyMapping]) -> [Property] {
                mappings.map { Property(name: $0.name, value: $0.valueExpression, userInfo: $0.userInfo.isEmpty ? nil : $0.userInfo) }
            }
            self.file = file
            source = model(mapping.sourceModel)
            destination = model(mapping.destinationModel)
            entityMappings = mapping.orderedEntityMappings.map { entity in
                Entity(
                    name: entity.name, type: entity.mappingType.jsonName, effectiveType: entity.effectiveType.jsonName, source: entity.sourceEntityName,
                    destination: entity.destinationEntityName, order: entity.order, filter: entity.filterPredicate,
                    policy: entity.entityMigrationPolicyClassName, builtinPolicy: entity.builtinPolicy, sourceVersionHash: entity.sourceEntityVersionHash?.hex,
                    destinationVersionHash: entity.destinationEntityVersionHash?.hex, userInfo: entity.userInfo,
                    attributes: properties(entity.attributeMappings), relationships: properties(entity.relationshipMappings))
            }
        }
    }
}
