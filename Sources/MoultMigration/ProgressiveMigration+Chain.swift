import MoultMapping
import MoultModel

/// How a chain is made (see ``ProgressiveMigration/init(store:model:to:mappings:policies:options:mappingLabels:)``):
/// the given mappings placed on the way from the store's version to the target, grouped into passes,
/// and the stretches between them inferred.
extension ProgressiveMigration {
    /// A given mapping with the versions it connects.
    private struct Given {
        var mapping: MappingModel
        var label: String
        var from: Int
        var to: Int
    }

    /// The way a migration goes, by the versions' indexes in the model: from the store's version to the
    /// target, forwards or backwards.
    private struct Way: CustomStringConvertible {
        var names: [String]
        var start: Int
        var end: Int

        /// Whether index `a` comes before `b` on the way from the store to the target.
        func before(_ a: Int, _ b: Int) -> Bool { end >= start ? a < b : a > b }

        /// A pair of indexes as versions' names.
        func describe(_ pair: (Int, Int)) -> String { "\(names[pair.0]) → \(names[pair.1])" }

        var description: String { "the migration goes from \(names[start]) to \(names[end])" }
    }

    /// The steps from `source` to `target`: each group of given mappings one step, each stretch
    /// without one inferred.
    static func chain(
        model: VersionedModel, from source: VersionedModel.Version, to target: VersionedModel.Version, mappings: [MappingModel],
        labels: [String]
    ) throws -> [Step] {
        let names = model.versions.map(\.name)
        let way = Way(names: names, start: names.firstIndex(of: source.name)!, end: names.firstIndex(of: target.name)!)
        let given = try place(mappings, labels: labels, in: model, on: way)
        if way.start == way.end { return [] }

        // Mappings between the same two versions are passes of one step, in the order given.
        var groups: [[Given]] = []
        for item in given {
            if let index = groups.firstIndex(where: { $0[0].from == item.from && $0[0].to == item.to }) {
                groups[index].append(item)
            } else {
                groups.append([item])
            }
        }
        groups.sort { lhs, rhs in lhs[0].from != rhs[0].from ? way.before(lhs[0].from, rhs[0].from) : way.before(lhs[0].to, rhs[0].to) }
        return try steps(of: groups, in: model, on: way)
    }

    /// Each given mapping with the pair of versions it connects on the way.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.unusableMapping` listing every mapping that fits no step, or several.
    private static func place(_ mappings: [MappingModel], labels: [String], in model: VersionedModel, on way: Way) throws -> [Given] {
        let names = way.names
        var refusals: [String] = []
        var given: [Given] = []
        for (offset, mapping) in mappings.enumerated() {
            let label = labels[offset]
            let sourceMatch = mapping.matchingVersions(.source, in: model)
            let destinationMatch = mapping.matchingVersions(.destination, in: model)
            let reasons = sourceMatch.reasons + destinationMatch.reasons
            guard reasons.isEmpty else {
                refusals.append("\(label) fits no step: " + reasons.joined(separator: "; "))
                continue
            }
            var pairs: [(Int, Int)] = []
            for from in sourceMatch.versions {
                for to in destinationMatch.versions where to.name != from.name {
                    pairs.append((names.firstIndex(of: from.name)!, names.firstIndex(of: to.name)!))
                }
            }
            guard !pairs.isEmpty else {
                refusals.append("\(label) fits no step: it maps \(sourceMatch.versions[0].name) to itself")
                continue
            }
            if way.start == way.end {
                // Nothing to migrate: the mapping only has to be one of this model's.
                continue
            }
            let onTheWay = pairs.filter { pair in
                !way.before(pair.0, way.start) && way.before(pair.0, pair.1) && !way.before(way.end, pair.1)
            }
            if onTheWay.count == 1 {
                given.append(Given(mapping: mapping, label: label, from: onTheWay[0].0, to: onTheWay[0].1))
            } else if onTheWay.isEmpty {
                refusals.append("\(label) fits no step: \(whyOffTheWay(pairs[0], on: way))")
            } else {
                refusals.append(
                    "\(label) fits several steps (\(onTheWay.map(way.describe).joined(separator: ", "))): record its versions' names or entity hashes in it")
            }
        }
        guard refusals.isEmpty else {
            throw MigrationError(
                .unusableMapping,
                "every mapping model given must be used by one step of the migration; \(refusals.count == 1 ? "this one fits" : "these fit") none:\n  "
                    + refusals.joined(separator: "\n  "))
        }
        return given
    }

    /// Why a pair of versions a mapping connects is not on the way.
    private static func whyOffTheWay(_ pair: (Int, Int), on way: Way) -> String {
        if !way.before(pair.0, pair.1) {
            "it maps \(way.describe(pair)), against the direction of the migration (\(way))"
        } else if way.before(pair.0, way.start) {
            "it maps \(way.describe(pair)), but the store is at \(way.names[way.start]) (\(way))"
        } else {
            "it maps \(way.describe(pair)), beyond the target \(way.names[way.end]) (\(way))"
        }
    }

    /// The steps: each group of passes, with the stretches before, between and after them inferred.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.unusableMapping` for a group behind the chain's position,
    ///   `.invalidMapping` for one that does not fit its models, and what inferring a stretch throws.
    private static func steps(of groups: [[Given]], in model: VersionedModel, on way: Way) throws -> [Step] {
        let names = way.names
        var steps: [Step] = []
        var position = way.start
        var previous: String?
        for group in groups {
            let first = group[0]
            guard !way.before(first.from, position) else {
                let after = previous.map { " after \($0)" } ?? ""
                throw MigrationError(
                    .unusableMapping,
                    "every mapping model given must be used by one step of the migration: \(group.map(\.label).joined(separator: ", ")) maps \(names[first.from]) → \(names[first.to]), but the chain is already at \(names[position])\(after) (\(way))")
            }
            if first.from != position { steps += try inferStretch(model, from: position, to: first.from) }
            let from = model.versions[first.from], to = model.versions[first.to]
            let (mappings, warnings) = try PartialMappings.completing(group.map(\.mapping), labels: group.map(\.label), from: from, to: to, in: model)
            // Every problem at once, before anything runs; passes may name each other's mappings.
            let combined = MappingModel(
                source: first.mapping.sourceModel, destination: first.mapping.destinationModel,
                entityMappings: mappings.flatMap(\.orderedEntityMappings))
            do {
                try combined.validate(source: from.model, destination: to.model)
            } catch {
                throw MigrationError(
                    .invalidMapping, "\(group.map(\.label).joined(separator: " and ")) (\(from.name) → \(to.name)) does not fit its models",
                    underlying: error)
            }
            steps.append(
                Step(from: from, to: to, mappings: mappings, inferred: false, mappingLabels: group.map(\.label), warnings: warnings))
            position = first.to
            previous = group.map(\.label).joined(separator: " and ")
        }
        if position != way.end { steps += try inferStretch(model, from: position, to: way.end) }
        return steps
    }

    /// The inferred steps across a stretch with no given mapping: one step straight across when it
    /// can be inferred (Core Data's rule), else a path of inferred steps, each as long as the search
    /// finds (``farthestInferable(from:toward:infer:)``).
    ///
    /// An inference is tried only on the edges the search explores, each once: a stretch inferable
    /// straight across costs one inference; one that is not costs a few per step (a number that grows
    /// with the logarithm of the stretch's length), and a stretch with no path is refused after
    /// trying, from the version where it is stuck, each version beyond it once.
    private static func inferStretch(_ model: VersionedModel, from start: Int, to end: Int) throws -> [Step] {
        let versions = model.versions
        var tried: [Int: Result<InferredMapping, MappingError>] = [:]
        // Renames followed through the versions between once, however many pairs the search tries.
        let cache = InferenceCache(model)
        func infer(_ from: Int, _ to: Int) -> Result<InferredMapping, MappingError> {
            let key = from * versions.count + to
            if let known = tried[key] { return known }
            let result = Result { () throws(MappingError) in
                try MappingModel.inference(from: versions[from].name, to: versions[to].name, in: model, cache: cache)
            }
            tried[key] = result
            return result
        }
        func step(_ from: Int, _ to: Int, _ inferred: InferredMapping) -> Step {
            Step(
                from: versions[from], to: versions[to], mappings: [inferred.mapping], inferred: true, mappingLabels: ["inferred"],
                warnings: inferred.warnings)
        }
        let directProblem: MappingError
        switch infer(start, end) {
        case .success(let inferred): return [step(start, end, inferred)]
        case .failure(let error): directProblem = error
        }
        let direction = end > start ? 1 : -1
        var steps: [Step] = []
        var position = start
        while position != end {
            guard let reached = farthestInferable(from: position, toward: end, infer: { (try? infer($0, $1).get()) != nil }),
                case .success(let inferred) = infer(position, reached)
            else {
                let stuck = versions[position].name, next = versions[position + direction].name
                var message = "no mapping model was given from \(versions[start].name) to \(versions[end].name), and none can be inferred"
                if position != start || end != position + direction {
                    message += ", directly or through the versions between (stuck at \(stuck) → \(next))"
                }
                throw MigrationError(.noMigrationPath, message, underlying: directProblem)
            }
            steps.append(step(position, reached, inferred))
            position = reached
        }
        let problems = directProblem.issues.map(\.description).joined(separator: "; ")
        let note = "\(versions[start].name) → \(versions[end].name) cannot be inferred directly (\(problems)); inferred in \(steps.count) steps instead"
        for index in steps.indices { steps[index].chainedInference = note }
        return steps
    }

    /// The version farthest from `position` toward `end` (indexes in the model's order) that one
    /// inferred step reaches, nil when none does.
    ///
    /// The next version first; from a reachable one, versions twice as far each time until one is not
    /// reachable, then halving the gap between the farthest reachable and the nearest unreachable: a
    /// step of length n costs about 2 log₂ n inferences. (A change and its reversal further on, such as
    /// an attribute retyped and retyped back, can make a farther version reachable past an unreachable
    /// one; the halving then keeps the nearer one, and the path has one step more. Core Data infers
    /// only straight across, which is tried before.) When the next version is not reachable, the
    /// versions beyond are tried in order, and the first reachable one is gone on from.
    static func farthestInferable(from position: Int, toward end: Int, infer: (Int, Int) -> Bool) -> Int? {
        let direction = end > position ? 1 : -1
        let distance = abs(end - position)
        guard distance > 0 else { return nil }
        func at(_ length: Int) -> Int { position + direction * length }
        var reached = 1
        if !infer(position, at(1)) {
            guard let skip = (2...max(distance, 2)).first(where: { $0 <= distance && infer(position, at($0)) }) else { return nil }
            reached = skip
        }
        var gap = 1
        var unreachable: Int?
        while reached < distance {
            let probe = min(reached + gap, distance)
            if infer(position, at(probe)) {
                reached = probe
                gap *= 2
            } else {
                unreachable = probe
                break
            }
        }
        if var unreachable {
            while unreachable - reached > 1 {
                let middle = (reached + unreachable) / 2
                if infer(position, at(middle)) { reached = middle } else { unreachable = middle }
            }
        }
        return at(reached)
    }
}
