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

    // MARK: - Beside the model

    /// Where an app's mapping models are looked for when none is given: the repository holding the
    /// model (the nearest folder, from the model's own folder up, that holds `.git`), else the model's
    /// own folder. An app's mapping models sit in its project next to its model, or in a folder of the
    /// project, as Core Data finds them in the app's bundle.
    public static func searchRoot(forModel model: URL) -> URL {
        let start = model.standardizedFileURL.deletingLastPathComponent()
        var folder = start
        while true {
            if FileManager.default.fileExists(atPath: folder.appending(path: ".git").path(percentEncoded: false)) { return folder }
            let parent = folder.deletingLastPathComponent()
            if parent.path(percentEncoded: false) == folder.path(percentEncoded: false) || folder.path(percentEncoded: false) == "/" { return start }
            folder = parent
        }
    }

    /// Folders never searched for an app's mapping models: build products and dependencies, which hold
    /// copies of other projects' files (hidden folders, `.build` and `.git` among them, are skipped too).
    static let foldersNotSearched: Set<String> = ["DerivedData", "Pods", "Carthage", "node_modules", "build"]

    /// The most folders the search beside a model visits: a model in a very large tree is searched this
    /// far, and `tooLarge` is told.
    public static let mostFoldersSearched = 20_000

    /// Every `.xcmappingmodel` under ``searchRoot(forModel:)``, in path order (Xcode's compiled
    /// `.cdm` files are not read). Folders reached through a symbolic link are not searched. One that
    /// cannot be read is left out and named to `unreadable`: it was not given, so it stops nothing.
    ///
    /// - Parameters:
    ///   - model: the model's `.xcdatamodeld` (or `.xcdatamodel`), whose repository is searched.
    ///   - entityNames: the entities of every version of the model, when known: a mapping model none
    ///     of whose entity mappings names one of them (another model's, by ``namesNoneOf(_:in:)``) is
    ///     left out without being read. Reading one means decoding the two models it embeds, the most
    ///     of a run's start in a project with many mapping models.
    ///   - unreadable: told of each mapping model read that cannot be read, with why.
    ///   - tooLarge: told of the root when the search stops at ``mostFoldersSearched`` folders.
    public static func candidates(
        besideModel model: URL, entityNames: Set<String>? = nil, unreadable: (URL, String) -> Void = { _, _ in },
        tooLarge: (URL) -> Void = { _ in }
    ) -> (root: URL, found: [Candidate]) {
        let root = searchRoot(forModel: model)
        var found: [Candidate] = []
        var pending = [root]
        var visited = 0
        while let folder = pending.popLast() {
            visited += 1
            if visited > mostFoldersSearched {
                tooLarge(root)
                break
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false)) else { continue }
            for name in names.sorted() where !name.hasPrefix(".") && !foldersNotSearched.contains(name) {
                let url = folder.appending(path: name)
                var info = stat()
                guard lstat(url.path(percentEncoded: false), &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
                if url.pathExtension.lowercased() == "xcmappingmodel" {
                    if let entityNames, namesNoneOf(entityNames, in: url) { continue }
                    do {
                        found.append(Candidate(url: url, mapping: try MappingModel(contentsOf: url)))
                    } catch {
                        unreadable(url, "\(error)")
                    }
                } else if !["xcdatamodeld", "xcdatamodel", "xcassets"].contains(url.pathExtension.lowercased()) {
                    pending.append(url)
                }
            }
        }
        return (root, found.sorted { $0.url.path < $1.url.path })
    }

    /// Whether the `.xcmappingmodel` at `url` is surely not a mapping of a model whose versions hold
    /// these entities: its `xcmapping.xml` names source or destination entities (`sourcename`,
    /// `destinationname`), and none of them is one of `entityNames`. A mapping whose embedded models
    /// are two of the model's versions names their entities, so it is never left out; a file that
    /// cannot be read, whose names are not plain entity names, or that holds `sourcename` or
    /// `destinationname` anywhere but as Xcode writes the attribute, is not judged here (it is read,
    /// and told as unreadable if it is). Fuzzed: `MappingPrefilterFuzzTests`.
    public static func namesNoneOf(_ entityNames: Set<String>, in url: URL) -> Bool {
        guard let data = try? Data(contentsOf: url.appending(path: "xcmapping.xml")) else { return false }
        var found = 0
        for key in ["sourcename", "destinationname"] {
            // Every `sourcename` of the file must be one this search reads (`name="sourcename"`, as Xcode
            // writes it): one written otherwise (other quotes, spaces, or in a text) is not judged here.
            let written = Data("name=\"\(key)\"".utf8)
            guard occurrences(of: Data(key.utf8), in: data) == occurrences(of: written, in: data) else { return false }
            var from = data.startIndex
            // (Foundation's search, compiled optimised, not a byte loop of this module's.)
            while let match = data.range(of: written, in: from..<data.endIndex) {
                // The value: from the element's `>` to the next `<`.
                guard let close = data[match.upperBound...].firstIndex(of: UInt8(ascii: ">")),
                    let end = data[(close + 1)...].firstIndex(of: UInt8(ascii: "<"))
                else { return false }
                let value = data[(close + 1)..<end]
                let plain = !value.isEmpty && value.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                }
                guard plain else { return false }
                if entityNames.contains(String(decoding: value, as: UTF8.self)) { return false }
                found += 1
                from = end
            }
        }
        return found > 0
    }

    /// How often `pattern` occurs in `data`.
    private static func occurrences(of pattern: Data, in data: Data) -> Int {
        var count = 0
        var from = data.startIndex
        while let match = data.range(of: pattern, in: from..<data.endIndex) {
            count += 1
            from = match.upperBound
        }
        return count
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
