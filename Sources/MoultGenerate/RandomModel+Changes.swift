import MoultModel

// MARK: - Changes a lightweight mapping allows

extension RandomModel {
    /// Makes one random change and says what it was, or nil when the change found nothing to change.
    mutating func change() -> String? {
        switch draw.below(12) {
        case 0:
            // A new attribute is optional, or required with a default: existing objects need a value.
            let index = draw.below(entities.count)
            var attribute = newAttribute()
            if attribute.defaultValueString == nil { attribute.isOptional = true }
            entities[index].attributes.append(attribute)
            return "add attribute \(entities[index].name).\(entities[index].attributes.last!.name)"
        case 1: return changeAttribute("remove") { _, _ in nil }
        case 2: return changeAttribute("rename") { attribute, model in
                var renamed = attribute
                renamed.renamingIdentifier = attribute.renamingIdentifier ?? attribute.name
                renamed.name = model.name("n")
                return renamed
            }
        case 3: return changeAttribute("widen", where: { [.integer16, .integer32, .float].contains($0.attributeType) }) { attribute, _ in
                var widened = attribute
                widened.attributeType = [.integer16: .integer32, .integer32: .integer64, .float: .double][attribute.attributeType] ?? attribute.attributeType
                return widened
            }
        case 4: return changeAttribute("make optional", where: { !$0.isOptional }) { attribute, _ in
                var optional = attribute
                optional.isOptional = true
                return optional
            }
        case 5: return changeAttribute("make required with a default", where: { $0.isOptional && Self.defaultValue($0.attributeType) != nil }, unconstrained: true) { attribute, _ in
                var required = attribute
                required.isOptional = false
                required.defaultValueString = Self.defaultValue(attribute.attributeType)
                return required
            }
        case 6: return changeAttribute("toggle external storage of", where: { $0.attributeType == .binary }) { attribute, _ in
                var toggled = attribute
                toggled.allowsExternalBinaryDataStorage.toggle()
                return toggled
            }
        case 7:
            entities.append(newEntity())
            return "add entity \(entities.last!.name)"
        case 8: return removeEntity()
        case 9: return renameEntity()
        case 10:
            addRelationship()
            return "add relationship"
        default: return removeRelationship()
        }
    }

    /// Changes an attribute drawn among those `condition` accepts (with `unconstrained`, only those of
    /// no uniqueness constraint); its entity's constraints follow a rename, and lose a removed attribute.
    private mutating func changeAttribute(
        _ what: String, where condition: (AttributeDescription) -> Bool = { _ in true }, unconstrained: Bool = false,
        _ transform: (AttributeDescription, inout RandomModel) -> AttributeDescription?
    ) -> String? {
        let candidates = entities.indices.flatMap { entity in
            let constrained = unconstrained ? Set(entities[entity].uniquenessConstraints.joined()) : []
            return entities[entity].attributes.indices.filter {
                condition(entities[entity].attributes[$0]) && !constrained.contains(entities[entity].attributes[$0].name)
            }.map { (entity, $0) }
        }
        guard !candidates.isEmpty else { return nil }
        let (entity, index) = candidates[draw.below(candidates.count)]
        let old = entities[entity].attributes[index]
        if let new = transform(old, &self) {
            entities[entity].attributes[index] = new
            entities[entity].uniquenessConstraints = entities[entity].uniquenessConstraints.map { $0.map { $0 == old.name ? new.name : $0 } }
        } else {
            entities[entity].attributes.remove(at: index)
            entities[entity].uniquenessConstraints.removeAll { $0.contains(old.name) }
        }
        return "\(what) attribute \(entities[entity].name).\(old.name)"
    }

    /// Removes an entity that is no one's parent, with every relationship to it and their inverses.
    private mutating func removeEntity() -> String? {
        let parents = Set(entities.compactMap(\.parentName))
        let candidates = entities.indices.filter { !parents.contains(entities[$0].name) }
        guard entities.count > 1, !candidates.isEmpty else { return nil }
        let removed = entities.remove(at: candidates[draw.below(candidates.count)]).name
        for index in entities.indices {
            entities[index].relationships.removeAll { $0.destinationEntity == removed || $0.inverseEntity == removed }
        }
        return "remove entity \(removed)"
    }

    /// Renames an entity (its renaming identifier keeps the old name) and every reference to it.
    private mutating func renameEntity() -> String? {
        let index = draw.below(entities.count)
        let old = entities[index].name
        let new = name("N")
        entities[index].renamingIdentifier = entities[index].renamingIdentifier ?? old
        entities[index].name = new
        entities[index].representedClassName = new
        for entity in entities.indices {
            if entities[entity].parentName == old { entities[entity].parentName = new }
            for relationship in entities[entity].relationships.indices {
                if entities[entity].relationships[relationship].destinationEntity == old { entities[entity].relationships[relationship].destinationEntity = new }
                if entities[entity].relationships[relationship].inverseEntity == old { entities[entity].relationships[relationship].inverseEntity = new }
            }
        }
        return "rename entity \(old) → \(new)"
    }

    /// Removes a relationship and its inverse.
    private mutating func removeRelationship() -> String? {
        let candidates = entities.indices.flatMap { entity in entities[entity].relationships.map { (entity, $0) } }
        guard !candidates.isEmpty else { return nil }
        let (entity, relationship) = candidates[draw.below(candidates.count)]
        entities[entity].relationships.removeAll { $0.name == relationship.name }
        if let inverse = relationship.inverseName {
            for index in entities.indices { entities[index].relationships.removeAll { $0.name == inverse } }
        }
        return "remove relationship \(entities[entity].name).\(relationship.name)"
    }
}
