public import MoultModel

/// What inferring many mappings between the versions of one versioned model shares: each pair of
/// neighbouring versions compared once, and the renames followed from a version to each other kept,
/// so that inferring from a version to one further on extends what was followed to a nearer one.
///
/// A search for a path of inferred steps through a long history tries many pairs of versions; without
/// it, each inference follows renames through every version between its two, again.
///
/// ```swift
/// let cache = InferenceCache(model)
/// let first = try MappingModel.inference(from: "v1", to: "v200", in: model, cache: cache)
/// let second = try MappingModel.inference(from: "v1", to: "v300", in: model, cache: cache)  // follows v200 → v300 only
/// ```
///
/// A cache serves one versioned model, its versions in one order; it is not to be shared between threads.
public final class InferenceCache {
    let names: [String]
    let versions: [ObjectModel]
    private var steps: [Int: (correspondence: Correspondence, ambiguities: [MappingIssue])] = [:]
    /// From a version (key), the correspondence composed to each version reached (key), with the
    /// ambiguities of its last step.
    private var composed: [Int: [Int: (correspondence: Correspondence, ambiguities: [MappingIssue])]] = [:]

    /// A cache for the versions of `model`, in its order.
    public init(_ model: VersionedModel) {
        names = model.versions.map(\.name)
        versions = model.versions.map(\.model)
    }

    /// Whether this cache was made for `model`'s versions in this order.
    func serves(_ model: VersionedModel) -> Bool {
        model.versions.count == names.count && zip(model.versions, names).allSatisfy { $0.name == $1 }
    }

    /// The correspondence of neighbouring versions `from` → `to` (indexes), compared once.
    private func step(_ from: Int, _ to: Int) -> (correspondence: Correspondence, ambiguities: [MappingIssue]) {
        let key = from * versions.count + to
        if let known = steps[key] { return known }
        let found = Inference.correspondence(from: versions[from], to: versions[to])
        steps[key] = found
        return found
    }

    /// The correspondence from version `end` back to version `start` through every version between
    /// (indexes; either direction), extending the longest one composed from `start` that stops on the way.
    func composed(from start: Int, to end: Int) -> (correspondence: Correspondence, ambiguities: [MappingIssue]) {
        let direction = end > start ? 1 : -1
        var known = composed[start] ?? [:]
        if let done = known[end] { return done }
        // The nearest composed point toward `end` (a search probes ever further, then back).
        var position = start + direction
        var current = step(start, position)
        var probe = end - direction
        while probe != start {
            if let reached = known[probe] {
                position = probe
                current = reached
                break
            }
            probe -= direction
        }
        while position != end {
            let next = step(position, position + direction)
            current = (Self.compose(current.correspondence, then: next.correspondence), next.ambiguities)
            position += direction
        }
        known[end] = current
        composed[start] = known
        return current
    }

    /// `first` (newer → older) followed by `then` (newest → newer): newest → older.
    private static func compose(_ first: Correspondence, then next: Correspondence) -> Correspondence {
        var result = Correspondence()
        for (destinationEntity, middleEntity) in next.entities {
            guard let sourceEntity = first.entities[middleEntity] else { continue }
            result.entities[destinationEntity] = sourceEntity
            var properties: [String: String] = [:]
            let earlier = first.properties[middleEntity]
            for (destinationProperty, middleProperty) in next.properties[destinationEntity] ?? [:] {
                if let sourceProperty = earlier?[middleProperty] { properties[destinationProperty] = sourceProperty }
            }
            result.properties[destinationEntity] = properties
        }
        return result
    }
}

extension MappingModel {
    /// ``inference(from:to:in:)`` sharing what `cache` already followed (renames through the versions
    /// between), as a search through a long history does.
    ///
    /// - Throws: as ``inference(from:to:in:)``.
    public static func inference(
        from sourceVersion: String, to destinationVersion: String, in model: VersionedModel, cache: InferenceCache
    ) throws(MappingError) -> InferredMapping {
        guard cache.serves(model), let start = cache.names.firstIndex(of: sourceVersion), let end = cache.names.firstIndex(of: destinationVersion),
            start != end
        else { return try inference(from: sourceVersion, to: destinationVersion, in: model) }
        let source = cache.versions[start], destination = cache.versions[end]
        let direction = end > start ? 1 : -1
        let between = stride(from: start + direction, to: end, by: direction).map { cache.versions[$0] }
        var inference = Inference(source: source, destination: destination, chain: [source] + between + [destination])
        inference.precomposed = cache.composed(from: start, to: end)
        return try finish(&inference, sourceName: sourceVersion, destinationName: destinationVersion)
    }
}
