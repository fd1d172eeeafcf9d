public import MoultModel

/// Which versions of a versioned model one side of a mapping model fits, and on what evidence; or why
/// it fits none.
public struct VersionMatch: Sendable, Hashable {
    /// What identified the versions.
    public enum Basis: String, Sendable, Hashable {
        /// The entity version hashes the mapping records equal the version's (Core Data's rule for a
        /// compiled mapping model).
        case hashes
        /// The version name the mapping records (a hand-written mapping without hashes), with every
        /// entity and property it names present in that version.
        case name
        /// Neither hashes nor a known name: the versions whose entities and properties fit every entity
        /// mapping.
        case structure
    }

    public var basis: Basis
    /// The fitting versions, in the model's order; empty when none fits.
    public var versions: [VersionedModel.Version]
    /// Why no version fits, one line per reason (empty when some version fits).
    public var reasons: [String]
}

extension MappingModel {
    /// The versions of `model` that one side of this mapping fits.
    ///
    /// - With entity version hashes recorded (an `.xcmappingmodel`'s embedded models, or a JSON
    ///   mapping written by `moult infer --json`), a version fits when its hashes are the recorded
    ///   ones, as Core Data matches a compiled mapping model; a mapping of an edited version (a stale
    ///   mapping) fits none, and the reasons name the entities that differ from the closest version.
    /// - Without hashes, the version the mapping names fits when every entity and property the mapping
    ///   names on that side exists in it.
    /// - With neither, every version that has those entities and properties fits.
    public func matchingVersions(_ side: MappingSide, in model: VersionedModel) -> VersionMatch {
        let reference = side == .source ? sourceModel : destinationModel
        let sideName = side == .source ? "source" : "destination"
        if !reference.entityVersionHashes.isEmpty {
            // (No difference at all: decided at the first entity that differs, without listing them.)
            let fitting = model.versions.filter { $0.model.isCompatible(withEntityHashes: reference.entityVersionHashes) }
            if !fitting.isEmpty {
                // Versions with identical hashes: the recorded name, when it is one of them, decides.
                if let name = reference.name, let named = fitting.first(where: { $0.name == name }) {
                    return VersionMatch(basis: .hashes, versions: [named], reasons: [])
                }
                return VersionMatch(basis: .hashes, versions: fitting, reasons: [])
            }
            // The closest version: the one named, else the one with the fewest differences.
            let closest = reference.name.flatMap { model.version(named: $0) }
                ?? model.versions.min { lhs, rhs in
                    lhs.model.hashDifferences(from: reference.entityVersionHashes).count
                        < rhs.model.hashDifferences(from: reference.entityVersionHashes).count
                }!
            let differences = closest.model.hashDifferences(from: reference.entityVersionHashes).map { difference in
                switch difference {
                case .missingInStore(let entity): "\(entity) is in \(closest.name) but not in the mapping's \(sideName) model"
                case .missingInModel(let entity): "\(entity) is in the mapping's \(sideName) model but not in \(closest.name)"
                case .hashDiffers(let entity, let version, let recorded):
                    "\(entity) differs (hash \(version.hex.prefix(12))… in \(closest.name), \(recorded.hex.prefix(12))… in the mapping)"
                }
            }
            let named = reference.name.map { " '\($0)'" } ?? ""
            return VersionMatch(
                basis: .hashes, versions: [],
                reasons: [
                    "its \(sideName) model\(named) matches no version of \(model.name) by entity hashes (a mapping of another model, or of an older edit of the version); against \(closest.name): "
                        + differences.joined(separator: "; ")
                ])
        }
        if let name = reference.name {
            guard let version = model.version(named: name) else {
                return VersionMatch(
                    basis: .name, versions: [],
                    reasons: ["its \(sideName) model is '\(name)', which is not a version of \(model.name) (\(model.versions.map(\.name).joined(separator: ", ")))"])
            }
            let missing = missingElements(side, in: version.model)
            guard missing.isEmpty else {
                return VersionMatch(
                    basis: .name, versions: [],
                    reasons: ["it names \(name) as its \(sideName) model, but \(name) lacks what it maps: " + missing.joined(separator: "; ")])
            }
            return VersionMatch(basis: .name, versions: [version], reasons: [])
        }
        let fitting = model.versions.filter { missingElements(side, in: $0.model).isEmpty }
        if fitting.isEmpty {
            let closest = model.versions.min { missingElements(side, in: $0.model).count < missingElements(side, in: $1.model).count }!
            return VersionMatch(
                basis: .structure, versions: [],
                reasons: [
                    "it records neither the name nor the entity hashes of its \(sideName) model, and no version of \(model.name) has what it maps (\(closest.name) lacks: "
                        + missingElements(side, in: closest.model).joined(separator: "; ") + ")"
                ])
        }
        return VersionMatch(basis: .structure, versions: fitting, reasons: [])
    }

    /// The entities and properties this mapping names on one side that `version` lacks.
    func missingElements(_ side: MappingSide, in version: ObjectModel) -> [String] {
        var missing: [String] = []
        func note(_ text: String) { if !missing.contains(text) { missing.append(text) } }
        for mapping in entityMappings {
            switch side {
            case .source:
                guard let entity = mapping.sourceEntityName else { continue }
                guard version.entity(named: entity) != nil else {
                    note("no entity \(entity)")
                    continue
                }
                let expressions = (mapping.attributeMappings + mapping.relationshipMappings).compactMap(\.valueExpression)
                var keys = expressions.flatMap { ExpressionScanner.sourceKeys(in: $0, implicit: false) }
                if let filter = mapping.filterPredicate { keys += ExpressionScanner.sourceKeys(in: filter, implicit: true) }
                for key in keys
                where !version.hasAttribute(named: key, of: entity) && !version.hasRelationship(named: key, of: entity)
                    && version.entity(named: entity)?.fetchedProperties.contains(where: { $0.name == key }) != true
                {
                    note("no property \(entity).\(key)")
                }
            case .destination:
                guard let entity = mapping.destinationEntityName else { continue }
                guard version.entity(named: entity) != nil else {
                    note("no entity \(entity)")
                    continue
                }
                for property in mapping.attributeMappings where !version.hasAttribute(named: property.name, of: entity) {
                    note("no attribute \(entity).\(property.name)")
                }
                for property in mapping.relationshipMappings where !version.hasRelationship(named: property.name, of: entity) {
                    note("no relationship \(entity).\(property.name)")
                }
            }
        }
        return missing
    }
}
