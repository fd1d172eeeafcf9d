import Crypto
import Foundation

/// The metadata values Core Data derives from a store's set of entity hashes.
public enum VersionHashes {
    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity's UTF-8 name followed by its
    /// hash, entities in byte order of their names.
    ///
    /// ```swift
    /// let digest = VersionHashes.digest(model.entityVersionHashes())
    /// ```
    public static func digest(_ hashes: [String: VersionHash]) -> String {
        var hasher = SHA512()
        for name in sortedNames(hashes) {
            hasher.update(data: Array(name.utf8))
            hasher.update(data: hashes[name]!.bytes)
        }
        return Data(hasher.finalize()).base64EncodedString()
    }

    /// `NSStoreModelVersionChecksumKey`: base64 of SHA-256 over the entity hashes, concatenated in byte
    /// order of the entity names.
    public static func checksum(_ hashes: [String: VersionHash]) -> String {
        var hasher = SHA256()
        for name in sortedNames(hashes) { hasher.update(data: hashes[name]!.bytes) }
        return Data(hasher.finalize()).base64EncodedString()
    }

    private static func sortedNames(_ hashes: [String: VersionHash]) -> [String] {
        hashes.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

// MARK: - Compatibility

/// One way a model's entity hashes differ from a store's.
public enum HashDifference: Sendable, Hashable, CustomStringConvertible {
    /// The model has the entity; the store has no hash for it.
    case missingInStore(entity: String)
    /// The store has a hash for an entity the model (or configuration) does not have.
    case missingInModel(entity: String)
    /// Both have the entity, with different hashes.
    case hashDiffers(entity: String, model: VersionHash, store: VersionHash)

    /// The entity concerned.
    public var entity: String {
        switch self {
        case .missingInStore(let entity), .missingInModel(let entity), .hashDiffers(let entity, _, _): entity
        }
    }

    public var description: String {
        switch self {
        case .missingInStore(let entity): "entity '\(entity)' is in the model but not in the store"
        case .missingInModel(let entity): "entity '\(entity)' is in the store but not in the model"
        case .hashDiffers(let entity, let model, let store):
            "entity '\(entity)' has hash \(model.hex) in the model and \(store.hex) in the store"
        }
    }
}

extension ObjectModel {
    /// How the model's entity hashes (or those of one configuration) differ from a store's, in byte order
    /// of the entity names; empty when they match.
    ///
    /// An entity whose hash is not computable (see ``entitiesWithUncomputableHash``) matches any hash the
    /// store holds for it: only its presence is compared.
    ///
    /// - Parameters:
    ///   - storeHashes: The store's `NSStoreModelVersionHashes`.
    ///   - configuration: A configuration's name; nil or `"Default"` for the whole model. An unknown
    ///     configuration has no entity.
    public func hashDifferences(from storeHashes: [String: VersionHash], configuration: String? = nil) -> [HashDifference] {
        let names = (entities(inConfiguration: configuration) ?? []).map(\.name)
        let hashes = entityVersionHashes()
        var differences: [HashDifference] = []
        for name in names {
            guard let stored = storeHashes[name] else {
                differences.append(.missingInStore(entity: name))
                continue
            }
            guard let hash = hashes[name] else { continue }
            if hash != stored { differences.append(.hashDiffers(entity: name, model: hash, store: stored)) }
        }
        let known = Set(names)
        for name in storeHashes.keys where !known.contains(name) {
            differences.append(.missingInModel(entity: name))
        }
        return differences.sorted { $0.entity.utf8.lexicographicallyPrecedes($1.entity.utf8) }
    }

    /// Whether a store with these entity hashes was made with this model (or configuration), as Core
    /// Data's `isConfiguration(withName:compatibleWithStoreMetadata:)` decides: the same entities, each
    /// with the same hash. Version identifiers play no part.
    ///
    /// ```swift
    /// if model.isCompatible(withEntityHashes: metadata.entityHashes) { ... }
    /// ```
    public func isCompatible(withEntityHashes storeHashes: [String: VersionHash], configuration: String? = nil) -> Bool {
        guard configuration == nil || configuration == "Default" else { return hashDifferences(from: storeHashes, configuration: configuration).isEmpty }
        return hasEntityHashes(storeHashes)
    }
}

extension VersionedModel {
    /// The version a store with these entity hashes was made with: the current version when it matches,
    /// otherwise the newest matching version; nil when none matches.
    public func version(matchingEntityHashes storeHashes: [String: VersionHash]) -> Version? {
        if current.model.isCompatible(withEntityHashes: storeHashes) { return current }
        return versions.reversed().first { $0.model.isCompatible(withEntityHashes: storeHashes) }
    }
}
