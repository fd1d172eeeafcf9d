public import Foundation
public import MoultModel

extension MappingModel {
    /// Finds a model version Xcode recorded (`sourcemodelpath`, relative to the Xcode project) on disk.
    ///
    /// The recorded path is relative to a project folder Moult does not know, so each folder above the
    /// mapping model (up to six levels) is tried with each tail of the path, longest first:
    /// `Tests/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel` is found as
    /// `<an ancestor>/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel`. At least the last two
    /// components (the `.xcdatamodeld` and the version) must match.
    ///
    /// - Parameters:
    ///   - reference: ``sourceModel`` or ``destinationModel``.
    ///   - mappingURL: The `.xcmappingmodel` folder (or mapping file) the reference came from.
    /// - Returns: The `.xcdatamodel` folder, or nil when none exists.
    public static func locate(_ reference: ModelReference, near mappingURL: URL) -> URL? {
        guard let path = reference.path else { return nil }
        let components = path.split(separator: "/").map(String.init)
        guard components.count >= 1 else { return nil }
        var folder = mappingURL.standardizedFileURL.deletingLastPathComponent()
        for _ in 0..<6 {
            for start in 0...max(0, components.count - 2) {
                let candidate = components[start...].reduce(folder) { $0.appending(path: $1) }
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue {
                    return candidate
                }
            }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { break }
            folder = parent
        }
        return nil
    }

    /// The version of `model` a reference names: by entity version hashes when the reference records
    /// them, else by name, else (Xcode's mapping models record neither hashes nor a usable name for
    /// every project) the one version whose entities and properties fit every mapping of this model
    /// on that side.
    ///
    /// - Parameters:
    ///   - side: `.source` or `.destination`.
    ///   - model: the versioned model whose versions are searched.
    /// - Returns: The version, or nil when none (or more than one, by structure) matches.
    public func version(_ side: MappingSide, in model: VersionedModel) -> VersionedModel.Version? {
        let reference = side == .source ? sourceModel : destinationModel
        if !reference.entityVersionHashes.isEmpty {
            return model.versions.first { $0.model.entityVersionHashes() == reference.entityVersionHashes }
        }
        if let name = reference.name, let version = model.version(named: name) { return version }
        let fitting = model.versions.filter { version in
            entityMappings.allSatisfy { mapping in
                let entityName = side == .source ? mapping.sourceEntityName : mapping.destinationEntityName
                guard let entityName else { return true }
                guard version.model.entity(named: entityName) != nil else { return false }
                guard side == .destination else { return true }
                return mapping.attributeMappings.allSatisfy { version.model.attribute(named: $0.name, of: entityName) != nil }
                    && mapping.relationshipMappings.allSatisfy { version.model.relationship(named: $0.name, of: entityName) != nil }
            }
        }
        return fitting.count == 1 ? fitting[0] : nil
    }
}

/// Which side of a mapping model.
public enum MappingSide: Sendable, Hashable {
    case source
    case destination
}

extension ModelReference {
    /// The entities whose version hashes differ between this reference and a model (changed, only in
    /// one of them), in byte order of names; empty when the reference records no hashes or they agree.
    ///
    /// ```swift
    /// let stale = mapping.sourceModel.entitiesDiffering(from: version.model.entityVersionHashes())
    /// // ["Post"]: the mapping was made from an earlier edit of this version
    /// ```
    public func entitiesDiffering(from hashes: [String: VersionHash]) -> [String] {
        guard !entityVersionHashes.isEmpty else { return [] }
        return Set(hashes.keys).union(entityVersionHashes.keys).filter { hashes[$0] != entityVersionHashes[$0] }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
