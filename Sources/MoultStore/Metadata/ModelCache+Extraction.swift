public import MoultModel

// MARK: - Extraction

extension ModelCache {
    /// The model a store carries, as an Xcode model holds it: what `moult model extract` writes.
    ///
    /// Everything the cache holds that the model XML can hold is kept: entities with their parents,
    /// abstractness, class names, renaming identifiers, version hash modifiers, user info, uniqueness
    /// constraints and fetch indexes; attributes with their types, optionality, transience, defaults,
    /// bounds, external storage, derivations, class names and transformers; relationships with their
    /// inverses, counts, order and delete rules; fetched properties, fetch request templates and
    /// configurations. Three things are changed to be what Xcode writes: a sub-entity lists only the
    /// properties, fetch indexes and constraints it declares (the cache repeats every inherited one on
    /// it); a renaming identifier equal to the name is left out (the cache archives the name when none
    /// was set, as Core Data's getter gives it); and a derived attribute is not read-only (the cache marks
    /// it so; the model XML has no such flag, and a derived attribute's hash does not depend on it).
    ///
    /// What the XML cannot hold is taken out of ``model`` and named in ``leftOut``: validation rules other
    /// than bounds (rules set in code), defaults of other classes, read-only properties set in code,
    /// fetch requests' sort descriptors and limits, fetched properties whose predicate Moult does not print.
    ///
    /// ```swift
    /// if let extraction = try ModelCache.extraction(in: store.database) {
    ///     print(extraction.model.xcodeContents())
    ///     for line in extraction.leftOut { print("left out: \(line)") }
    /// }
    /// ```
    public struct Extraction: Sendable, Hashable {
        /// The model, as its Xcode model file holds it: reading back ``/MoultModel/ObjectModel/xcodeContents()`` gives it.
        public var model: ObjectModel
        /// What the cache holds that ``model`` does not carry, one line each (`Entity.property: what`).
        public var leftOut: [String]
    }

    /// The model in a store's `Z_MODELCACHE`, whole, as ``Extraction`` describes; nil when the store
    /// has no model cache.
    ///
    /// - Throws: ``StoreError`` `.corrupt` (bad input, 65) when the cache is there but cannot be decoded.
    public static func extraction(in database: Database) throws(StoreError) -> Extraction? {
        guard let blob = try content(of: database) else { return nil }
        return try extraction(compressed: blob, path: database.path)
    }

    /// The extraction of the content of `Z_MODELCACHE.Z_CONTENT` (``extraction(in:)``).
    public static func extraction(compressed: [UInt8], path: String? = nil) throws(StoreError) -> Extraction {
        let (decoded, notes) = try decoded(compressed: compressed, path: path, whole: true)
        var leftOut = notes
        let entities = decoded.entities.map { entity in
            var result = declaredOnly(entity, in: decoded)
            if result.renamingIdentifier == result.name { result.renamingIdentifier = nil }
            func note(_ property: String, _ reason: String) { leftOut.append(.init(entity: entity.name, property: property, reason: reason)) }
            result.attributes = result.attributes.map { xcodeForm($0, note: note) }
            result.relationships = result.relationships.map { relationship in
                var property = relationship
                if property.renamingIdentifier == property.name { property.renamingIdentifier = nil }
                if property.isReadOnly { note(property.name, "read-only (set in code), which the model XML cannot hold") }
                property.isReadOnly = false
                return property
            }
            return result
        }
        do {
            let model = try ObjectModel(
                entities: entities, versionIdentifier: decoded.versionIdentifier, configurations: decoded.configurations, fetchRequests: decoded.fetchRequests)
            return Extraction(model: model, leftOut: lines(leftOut, in: decoded))
        } catch {
            throw StoreError(.corrupt, "the model cache (Z_MODELCACHE) holds a model Moult refuses: \(error.message)", path: path)
        }
    }

    /// An attribute as the model XML holds it: no renaming identifier equal to its name, no validation
    /// rules (noted), not read-only (noted unless derived).
    static func xcodeForm(_ attribute: AttributeDescription, note: (String, String) -> Void) -> AttributeDescription {
        var result = attribute
        if result.renamingIdentifier == result.name { result.renamingIdentifier = nil }
        if !result.validationRules.isEmpty {
            let count = result.validationRules.count
            note(result.name, "\(count) validation rule\(count == 1 ? "" : "s") set in code, which the model XML cannot hold")
            result.validationRules = []
        }
        if result.isReadOnly, !result.isDerived { note(result.name, "read-only (set in code), which the model XML cannot hold") }
        result.isReadOnly = false
        return result
    }

    /// The notes as lines, `Entity.property: reason`, sorted; a note a sub-entity repeats for a property
    /// it inherits is given once, on the entity that declares the property.
    static func lines(_ notes: [Decoder.LeftOut], in model: ObjectModel) -> [String] {
        let all = Set(notes)
        let kept = all.filter { note in
            !model.ancestors(of: note.entity).contains { all.contains(.init(entity: $0.name, property: note.property, reason: note.reason)) }
        }
        return kept.map { note in
            let owner = note.entity.isEmpty ? "model" : note.entity
            return (note.property.map { "\(owner).\($0)" } ?? owner) + ": " + note.reason
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// An entity with only what it declares: properties, fetch indexes and uniqueness constraints equal
    /// to one of an ancestor's are removed.
    static func declaredOnly(_ entity: EntityDescription, in model: ObjectModel) -> EntityDescription {
        guard let parent = entity.parentName else { return entity }
        let ancestors = model.ancestors(of: entity.name)
        let attributes = model.attributes(of: parent), relationships = model.relationships(of: parent)
        var result = entity
        result.attributes.removeAll { attributes.contains($0) }
        result.relationships.removeAll { relationships.contains($0) }
        result.fetchedProperties.removeAll { property in ancestors.contains { $0.fetchedProperties.contains(property) } }
        result.fetchIndexes.removeAll { index in ancestors.contains { $0.fetchIndexes.contains(index) } }
        result.uniquenessConstraints.removeAll { constraint in ancestors.contains { $0.uniquenessConstraints.contains(constraint) } }
        return result
    }
}
