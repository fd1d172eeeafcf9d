import Foundation
import MoultMapping
import MoultMigration
import MoultModel

/// The mapping models found in folders, each folder searched once.
final class MappingFolders {
    private var found: [String: [MappingDiscovery.Candidate]] = [:]

    /// A `.json` file that says it is a Moult mapping (`"moult-mapping/…"`) but does not read as one is
    /// an error (the step would silently be inferred without it); any other `.json` that is not a
    /// mapping is named in a warning.
    func candidates(in folder: URL) throws -> [MappingDiscovery.Candidate] {
        if let known = found[folder.path] { return known }
        var broken: [String] = []
        let candidates = try MappingDiscovery.candidates(in: folder) { file, reason in
            let text = (try? Data(contentsOf: file)).map { String(decoding: $0.prefix(4096), as: UTF8.self) } ?? ""
            if text.contains("\"moult-mapping/") {
                broken.append("\(file.path): \(reason)")
            } else {
                printError("moult: warning: \(file.path) in the mapping folder is not a mapping model (\(reason)); left out")
            }
        }
        if !broken.isEmpty {
            throw CommandFailure(.badInput, "a mapping model in the folder \(folder.path) cannot be read: \(broken.joined(separator: "; "))")
        }
        found[folder.path] = candidates
        return candidates
    }

    private var besideModels: [String: [MappingDiscovery.Candidate]] = [:]

    /// The app's own mapping models, found beside `model` as Core Data finds them in the app's bundle
    /// (``/MoultMigration/MappingDiscovery/candidates(besideModel:unreadable:tooLarge:)``): those whose
    /// recorded entity hashes are two versions of `versioned` (a mapping of another model, or of an
    /// edited version, is not this model's). Searched once per model.
    func besideModel(_ model: URL, _ versioned: VersionedModel) -> [MappingDiscovery.Candidate] {
        let key = model.standardizedFileURL.path
        if let known = besideModels[key] { return known }
        let (_, found) = MappingDiscovery.candidates(
            besideModel: model, entityNames: Set(versioned.versions.flatMap { $0.model.entities.map(\.name) }),
            unreadable: { url, reason in printError("moult: warning: the mapping model \(url.path) found beside the model cannot be read, so it is not used: \(reason)") },
            tooLarge: { root in printError("moult: warning: \(root.path) holds more than \(MappingDiscovery.mostFoldersSearched) folders: mapping models were looked for in the first ones only (give them with --mapping)") })
        let fitting = found.filter { candidate in
            [MappingSide.source, .destination].allSatisfy { side in
                let match = candidate.mapping.matchingVersions(side, in: versioned)
                return match.basis == .hashes && !match.versions.isEmpty
            }
        }
        besideModels[key] = fitting
        return fitting
    }

    private var files: [String: MappingModel] = [:]

    /// The mapping model of a `--mapping` file, read once however often the chain's planning asks
    /// (the order of versions, then the steps).
    func mapping(at url: URL) throws -> MappingModel {
        if let known = files[url.path] { return known }
        let mapping = try MappingModel(contentsOf: url)
        files[url.path] = mapping
        return mapping
    }
}
