import Foundation
import MoultMigration
import MoultModel
import MoultStore
import MoultXMLStore

extension InspectCommand {
    /// `inspect` of a Core Data XML store: its header, entity hashes and objects per entity, read in one
    /// streamed pass; false when the store is not an XML store.
    func inspectXMLStore() throws -> Bool {
        guard try StoreTypeSupport.type(of: store) == .xml else { return false }
        let reader = try XMLStoreReader(url: URL(filePath: store))
        let metadata = try reader.info.storeMetadata()
        let versioned = try model.map { try VersionedModel(contentsOf: URL(filePath: $0)) }
        let matching = versioned?.version(matchingEntityHashes: metadata.entityHashes)
        var counts: [String: Int] = [:]
        if let matching {
            try reader.bind(to: StoreLayout(model: matching.model))
            while let object = try reader.next() { counts[object.entity, default: 0] += 1 }
        } else {
            // Without the model, a type is the entity's name in capitals: named back from the hashes.
            let names = Dictionary(metadata.entityHashes.keys.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
            for (type, count) in try reader.objectCountsByType() { counts[names[type] ?? type, default: 0] += count }
        }
        let report = XMLReport(
            storeType: "XML", storeUUID: metadata.storeUUID, nextObjectID: reader.info.nextObjectID, frameworkVersion: metadata.frameworkVersion,
            versionIdentifiers: metadata.versionIdentifiers, versionHashes: metadata.entityHashes.mapValues(\.hex),
            entities: counts.mapValues { ["count": $0] }, matchingVersion: matching?.name)
        if json {
            try report.printJSON()
        } else {
            print("store type: XML (NSXMLStoreType)")
            print("store UUID: \(metadata.storeUUID)")
            print("next object ID: \(reader.info.nextObjectID)")
            print("framework version: \(metadata.frameworkVersion.map(String.init) ?? "unknown")")
            print("version identifiers: \(metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))")
            print("entities:")
            for name in metadata.entityHashes.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                print("  \(name)  \(metadata.entityHashes[name]!.hex)\(counts[name].map { "  \($0) objects" } ?? "")")
            }
            if let matching { print("matching version: \(matching.name)") }
        }
        if let versioned, matching == nil {
            throw MigrationError(
                .incompatibleStore,
                "no version of \(versioned.name) matches the store \(store):\n"
                    + versioned.versionDifferences(from: metadata.entityHashes))
        }
        return true
    }

    /// `inspect --json` of an XML store.
    struct XMLReport: JSONReport {
        static let isPrettyPrinted = true
        var storeType: String
        var storeUUID: String
        var nextObjectID: Int64
        @ExplicitNull var frameworkVersion: Int?
        var versionIdentifiers: [String]
        var versionHashes: [String: String]
        var entities: [String: [String: Int]]
        @ExplicitNull var matchingVersion: String?
    }
}
