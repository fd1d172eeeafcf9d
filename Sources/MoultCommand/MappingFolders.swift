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
