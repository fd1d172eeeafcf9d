public import MoultModel

/// The order of a model's versions a chain of migrations follows: the one the mapping models give,
/// not the one names give.
///
/// Core Data has no order of versions: a progressive migrator goes from the store's version along the
/// mapping models it has (each connects a source version to a destination version), and infers what
/// they leave. Names only sort well when they are numbered alike: `CyfaceModel`, `2`, …, `13` sort
/// with the first version last. ``following(_:in:)`` orders the versions so that every mapping goes
/// forwards, keeping the names' order wherever no mapping says otherwise; ``explicit(_:in:)`` takes an
/// order given by hand (`--order V1,V2,…`). A chain is then planned over the versions in that order:
/// the given mappings are its steps, the stretches between them inferred.
///
/// ```swift
/// let model = try VersionedModel(contentsOf: url)             // CyfaceModel sorts last
/// let ordered = VersionOrder.following(mappings, in: model)   // CyfaceModel, 2, 3, …, 13
/// ```
public enum VersionOrder {
    /// `model` with its versions ordered so that every given mapping connects an earlier version to a
    /// later one, each version otherwise as late as the names' order puts it.
    ///
    /// A mapping connects the one version its source matches to the one its destination matches
    /// (``MappingModel/matchingVersions(_:in:)``); a mapping that matches no version, or several, says
    /// nothing about the order. When the mappings go round in a circle (a folder with mappings up and
    /// down), those that go backwards in the names' order are left out. Time and memory grow with
    /// versions × mappings: a history of hundreds of versions is ordered in milliseconds.
    ///
    /// - Parameters:
    ///   - mappings: the mapping models given (files, and the mapping models of a folder).
    ///   - model: the versioned model.
    /// - Returns: the model with its versions reordered (the same model when the mappings change nothing).
    public static func following(_ mappings: [MappingModel], in model: VersionedModel) -> VersionedModel {
        let names = model.versions.map(\.name)
        let index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var edges: [(from: Int, to: Int)] = []
        for mapping in mappings {
            let sources = mapping.matchingVersions(.source, in: model).versions
            let destinations = mapping.matchingVersions(.destination, in: model).versions
            guard sources.count == 1, destinations.count == 1, let from = index[sources[0].name], let to = index[destinations[0].name], from != to
            else { continue }
            edges.append((from, to))
        }
        guard !edges.isEmpty else { return model }
        let order = linearOrder(count: names.count, edges: edges) ?? linearOrder(count: names.count, edges: edges.filter { $0.from < $0.to })!
        guard order != Array(names.indices) else { return model }
        var reordered = model
        reordered.versions = order.map { model.versions[$0] }
        return reordered
    }

    /// `model` with the versions `names` lists first, in that order, then the others in their order:
    /// `--order V1,V2,…`.
    ///
    /// - Throws: ``MappingError`` `.invalidOrder` naming a version the model does not have, or one
    ///   named twice.
    public static func explicit(_ names: [String], in model: VersionedModel) throws(MappingError) -> VersionedModel {
        var listed: [VersionedModel.Version] = []
        var seen: Set<String> = []
        for name in names {
            guard let version = model.version(named: name) else {
                throw MappingError(
                    .invalidOrder, "the model has no version '\(name)' (versions: \(model.versions.map(\.name).joined(separator: ", ")))")
            }
            guard seen.insert(version.name).inserted else { throw MappingError(.invalidOrder, "the version '\(version.name)' is named twice") }
            listed.append(version)
        }
        var reordered = model
        reordered.versions = listed + model.versions.filter { !seen.contains($0.name) }
        return reordered
    }

    /// The indexes `0..<count` in an order where every edge goes forwards, built from the end: each
    /// time, of the versions no remaining edge leaves, the one latest in the names' order is placed
    /// last. Nil when the edges make a circle.
    static func linearOrder(count: Int, edges: [(from: Int, to: Int)]) -> [Int]? {
        var outgoing = [Int](repeating: 0, count: count)
        var incoming = [[Int]](repeating: [], count: count)
        for edge in edges {
            outgoing[edge.from] += 1
            incoming[edge.to].append(edge.from)
        }
        // The versions no edge leaves, kept sorted so that the latest is taken first.
        var free = (0..<count).filter { outgoing[$0] == 0 }
        var reversed: [Int] = []
        reversed.reserveCapacity(count)
        while let last = free.popLast() {
            reversed.append(last)
            for from in incoming[last] {
                outgoing[from] -= 1
                if outgoing[from] == 0 {
                    let position = free.firstIndex { $0 > from } ?? free.endIndex
                    free.insert(from, at: position)
                }
            }
        }
        return reversed.count == count ? reversed.reversed() : nil
    }
}
