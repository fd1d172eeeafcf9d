public import Foundation
public import MoultMapping
public import MoultModel
import MoultStore

/// Finds mapping models in folders, as Core Data's `mappingModelFromBundles:forSourceModel:destinationModel:`
/// finds them in bundles: every `.xcmappingmodel` and Moult JSON mapping under the folders, each
/// step of a migration taking the one whose source and destination are the step's versions.
public enum MappingDiscovery {
    /// A mapping model found in a folder.
    public struct Candidate: Sendable {
        public var url: URL
        public var mapping: MappingModel
    }

    /// Every mapping model under `directory`, recursively, in path order: `.xcmappingmodel` folders
    /// (not searched inside) and `.json` files that read as Moult mappings. `skipped` is told about
    /// each `.json` file that is not one (other JSON files may sit beside the mappings).
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.io` when the folder cannot be read; the ``/MoultMapping/MappingError`` of an
    ///   `.xcmappingmodel` that cannot be read.
    public static func candidates(in directory: URL, skipped: (URL, String) -> Void = { _, _ in }) throws -> [Candidate] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MigrationError(.io, "the mapping folder \(directory.path) does not exist or is not a folder")
        }
        var found: [Candidate] = []
        var pending = [directory]
        while let folder = pending.popLast() {
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: folder.path).sorted()
            } catch {
                throw MigrationError(.io, "cannot read the mapping folder \(folder.path): \(error.localizedDescription)")
            }
            for name in names where !name.hasPrefix(".") {
                let url = folder.appending(path: name)
                var isFolder: ObjCBool = false
                guard manager.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
                let ext = url.pathExtension.lowercased()
                if ext == "xcmappingmodel" {
                    found.append(Candidate(url: url, mapping: try MappingModel(contentsOf: url)))
                } else if isFolder.boolValue {
                    pending.append(url)
                } else if ext == "json" {
                    do {
                        found.append(Candidate(url: url, mapping: try MappingModel(contentsOf: url)))
                    } catch {
                        skipped(url, "\(error)")
                    }
                }
            }
        }
        return found.sorted { $0.url.path < $1.url.path }
    }

    /// The candidates a migration from `source` to `target` uses: walking from the store's version,
    /// each step takes the candidate whose source is the version reached (its versions matched by
    /// entity hashes, or by the version names a hand-written mapping records), going as far toward
    /// the target as one goes; versions no candidate leaves are crossed by inference. Candidates off
    /// that way are not used.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.unusableMapping` when two candidates map the same two versions
    ///   on the way, naming both.
    public static func select(
        _ candidates: [Candidate], model: VersionedModel, from source: VersionedModel.Version, to target: VersionedModel.Version
    ) throws -> [Candidate] {
        let names = model.versions.map(\.name)
        guard let start = names.firstIndex(of: source.name), let end = names.firstIndex(of: target.name), start != end else { return [] }
        let forward = end > start
        func between(_ index: Int) -> Bool { forward ? (start...end).contains(index) : (end...start).contains(index) }
        func before(_ a: Int, _ b: Int) -> Bool { forward ? a < b : a > b }

        // Each candidate's one pair of versions on the way.
        var pairs: [Int: [(to: Int, candidate: Candidate)]] = [:]
        for candidate in candidates {
            let from = candidate.mapping.matchingVersions(.source, in: model)
            let to = candidate.mapping.matchingVersions(.destination, in: model)
            guard from.basis != .structure, to.basis != .structure else { continue }
            let onTheWay = from.versions.flatMap { f in to.versions.map { (names.firstIndex(of: f.name)!, names.firstIndex(of: $0.name)!) } }
                .filter { between($0.0) && between($0.1) && before($0.0, $0.1) }
            guard onTheWay.count == 1 else { continue }
            pairs[onTheWay[0].0, default: []].append((onTheWay[0].1, candidate))
        }
        for (from, list) in pairs {
            for to in Set(list.map(\.to)) {
                let same = list.filter { $0.to == to }
                if same.count > 1 {
                    throw MigrationError(
                        .unusableMapping,
                        "several mapping models found map \(names[from]) → \(names[to]): "
                            + same.map(\.candidate.url.path).joined(separator: " and ")
                            + "; keep one in the folder, or give the one meant with --mapping FILE")
                }
            }
        }
        var chosen: [Candidate] = []
        var index = start
        while index != end {
            if let list = pairs[index], let farthest = list.max(by: { before($0.to, $1.to) }) {
                chosen.append(farthest.candidate)
                index = farthest.to
            } else {
                index += forward ? 1 : -1
            }
        }
        return chosen
    }

    /// The version a store is at, by its entity hashes; nil when it cannot be read or none matches.
    public static func version(of store: URL, in model: VersionedModel) -> VersionedModel.Version? {
        guard let metadata = try? SourceStore.metadata(of: store) else { return nil }  // (SQLite or XML)
        return model.version(matchingEntityHashes: metadata.entityHashes)
    }
}
