public import Foundation
public import MoultMapping
public import MoultModel
package import MoultStore

/// What the engine migrates: a source store read with its model into a destination model through
/// mapping models, with policies and options. A value; the drivers (a copy into a new store, a chain,
/// in place, staged) each make one per step and hand it to the engine, which knows nothing of how the
/// run is driven.
public struct MigrationJob: Sendable {
    public var sourceURL: URL
    public var sourceModel: ObjectModel
    public var destinationModel: ObjectModel
    public var mappingModels: [MappingModel]
    public var policies: PolicyRegistry
    public var options: MigrationOptions
    /// In place: the store whose support folder holds the external binary data files of the source (a
    /// copy in the work folder) and will hold the output's; nil: beside the source.
    package var externalDataHome: URL?
    /// The store beside which the source's external binary data files are.
    package var externalDataSource: URL { externalDataHome ?? sourceURL }

    public init(
        sourceURL: URL, sourceModel: ObjectModel, destinationModel: ObjectModel, mappingModels: [MappingModel],
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions()
    ) {
        self.sourceURL = sourceURL
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.mappingModels = mappingModels
        self.policies = policies
        self.options = options
    }

    /// The plan's identity: the source (its UUID, hashes and primary-key maxima), the destination model,
    /// the mappings, the policies' bindings and the options that shape the plan. A work directory made
    /// for another fingerprint is never resumed.
    package func fingerprint(source: any StoreReading) throws -> String {
        RunArguments.hash(try fingerprintText(source: source))
    }

    /// The text ``fingerprint(source:)`` hashes, one `key value` line per thing it holds: kept in the
    /// work directory so that a refused resume can name what differs (``RunArguments``).
    package func fingerprintText(source: any StoreReading) throws -> String {
        var text = "moult-plan/1\n"
        let metadata = try source.metadata()
        text += "source \(metadata.storeUUID)\n"
        for (name, hash) in metadata.entityHashes.sorted(by: { $0.key < $1.key }) { text += "source-hash \(name) \(hash.hex)\n" }
        for (entity, maximum) in try source.primaryKeyMaxima() { text += "source-max \(entity) \(maximum)\n" }
        for (name, hash) in destinationModel.entityVersionHashes().sorted(by: { $0.key < $1.key }) {
            text += "destination-hash \(name) \(hash.hex)\n"
        }
        text += "destination-identifiers \(destinationModel.versionIdentifiers.joined(separator: ","))\n"
        for mapping in mappingModels { text += "mapping \(mapping.jsonText())\n" }
        for (name, binding) in policies.boundNames { text += "policy \(name)=\(binding)\n" }
        text += "chunk-size \(options.chunkSize)\nassociations \(options.associations.rawValue)\n"
        for partition in options.partitions { text += "partition \(partition)\n" }
        text += "validate \(options.validate)\n"
        return text
    }
}
