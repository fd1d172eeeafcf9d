import Foundation
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

/// An `.xcmappingmodel` embeds the source and destination models it was made from (Xcode's design-time
/// model, archived); their entity version hashes identify the versions by content, as Core Data
/// matches a compiled mapping model.
@Suite struct EmbeddedModelTests {
    /// Entity version hashes Core Data wrote into the fixture stores, by model file
    /// (`Tests/Fixtures/version-hashes.json`).
    static let storeHashes: [String: [String: String]] = {
        struct Entry: Decodable {
            var model: String
            var entity: String
            var versionHash: String
        }
        let data = try! Data(contentsOf: Fixtures.url("version-hashes.json"))
        var result: [String: [String: String]] = [:]
        for entry in try! JSONDecoder().decode([Entry].self, from: data) {
            // "…/Name.xcdatamodel/contents" → "…/Name.xcdatamodel"
            let model = entry.model.hasSuffix("/contents") ? String(entry.model.dropLast("/contents".count)) : entry.model
            result[model, default: [:]][entry.entity] = entry.versionHash
        }
        return result
    }()

    /// The version whose embedded model differs from the `.xcdatamodel` on disk: (mapping file, side) →
    /// the entities whose hashes differ. Every other embedded model equals its version exactly.
    static let stale: [String: Set<String>] = [:]

    static var mappingFiles: [String] { RecordedMappings.files.map { String($0.dropLast("/xcmapping.xml".count)) } }

    @Test(arguments: mappingFiles)
    func embeddedModelsHaveTheHashesOfTheirVersions(_ file: String) throws {
        let url = Fixtures.url(file)
        let mapping = try MappingModel(xcmappingModelAt: url)
        for (side, reference) in [("source", mapping.sourceModel), ("destination", mapping.destinationModel)] {
            #expect(!reference.entityVersionHashes.isEmpty, "\(file) \(side): no hashes")
            let versionURL = try #require(MappingModel.locate(reference, near: url), "\(file) \(side): \(reference.path ?? "") not found")
            let onDisk = try ObjectModel(contentsOf: versionURL).entityVersionHashes()
            let differing = Set(onDisk.keys).union(reference.entityVersionHashes.keys).filter { onDisk[$0] != reference.entityVersionHashes[$0] }
            #expect(differing == Self.stale["\(file) \(side)"] ?? [], "\(file) \(side): \(differing.sorted())")
            // Where Core Data itself wrote a store of that version, its hashes agree too.
            let relative = versionURL.standardizedFileURL.path.replacingOccurrences(of: Fixtures.root.standardizedFileURL.path + "/", with: "")
            for (entity, hash) in Self.storeHashes[relative] ?? [:] where Self.stale["\(file) \(side)"]?.contains(entity) != true {
                #expect(reference.entityVersionHashes[entity]?.hex == hash, "\(file) \(side) \(entity)")
            }
        }
    }

    @Test func storeHashesCoverSomeMappedVersions() throws {
        // The check against Core Data's own hashes above is not empty.
        var covered = 0
        for file in Self.mappingFiles {
            let url = Fixtures.url(file)
            let mapping = try MappingModel(xcmappingModelAt: url)
            for reference in [mapping.sourceModel, mapping.destinationModel] {
                guard let version = MappingModel.locate(reference, near: url) else { continue }
                let relative = version.standardizedFileURL.path.replacingOccurrences(of: Fixtures.root.standardizedFileURL.path + "/", with: "")
                covered += Self.storeHashes[relative]?.count ?? 0
            }
        }
        #expect(covered > 0)
    }

    @Test func embeddedHashesChooseTheVersion() throws {
        let url = Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel")
        var mapping = try MappingModel(xcmappingModelAt: url)
        let versioned = try VersionedModel(contentsOf: try #require(MappingModel.locate(mapping.sourceModel, near: url)).deletingLastPathComponent())
        // Even with a wrong name, the hashes find the versions.
        mapping.sourceModel.name = "no such version"
        mapping.destinationModel.name = "no such version"
        #expect(mapping.version(.source, in: versioned)?.name == "SampleModel2")
        #expect(mapping.version(.destination, in: versioned)?.name == "SampleModel3")
    }
}
