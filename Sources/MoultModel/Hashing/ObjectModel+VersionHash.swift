// MARK: - Property hashes

extension AttributeDescription {
    /// The attribute's version hash, as Core Data computes `NSAttributeDescription.versionHash`.
    ///
    /// Inputs: the name, the optional/transient/read-only flags, the version hash modifier, the
    /// attribute type's code, and one byte each for external binary storage and preserve-after-deletion.
    /// A derived attribute's hash is computed the same way here, but Core Data's rule for it is not known:
    /// see ``ObjectModel/versionHash(ofEntity:)``.
    public var versionHash: VersionHash {
        var input = HashInput()
        input.append(propertyHash(name: name, isOptional: isOptional, isTransient: isTransient, isReadOnly: isReadOnly, modifier: versionHashModifier))
        input.append(i32: attributeType.code)
        if allowsExternalBinaryDataStorage { input.append(u8: 1) }
        if preserveAfterDeletion { input.append(u8: 1) }
        return input.finalize()
    }
}

extension RelationshipDescription {
    /// The relationship's version hash, as Core Data computes `NSRelationshipDescription.versionHash`.
    ///
    /// Inputs: the name, the optional/transient/read-only flags, the version hash modifier, the
    /// destination entity's name, the inverse's name (left out for a relationship that is its own
    /// inverse), the maximum and minimum counts, and `u16(1)` when ordered.
    ///
    /// - Parameter entityName: The entity that declares the relationship (to recognise a relationship
    ///   that is its own inverse).
    public func versionHash(declaredBy entityName: String) -> VersionHash {
        var input = HashInput()
        input.append(propertyHash(name: name, isOptional: isOptional, isTransient: isTransient, isReadOnly: isReadOnly, modifier: versionHashModifier))
        input.append(destinationEntity)
        let isOwnInverse = inverseName == name && (inverseEntity ?? destinationEntity) == entityName
        if !isOwnInverse { input.append(inverseName) }
        input.append(i32: Int32(clamping: maxCount == Int.max ? -1 : maxCount))
        input.append(i32: Int32(clamping: minCount))
        if isOrdered { input.append(u16: 1) }
        return input.finalize()
    }
}

/// The hash every property hash starts from: name, flags, version hash modifier.
private func propertyHash(name: String, isOptional: Bool, isTransient: Bool, isReadOnly: Bool, modifier: String?) -> VersionHash {
    var input = HashInput()
    input.append(name)
    input.append(u16: (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0))
    input.append(modifier)
    return input.finalize()
}

// MARK: - Entity hashes

extension ObjectModel {
    /// The entity's version hash, as Core Data computes `NSEntityDescription.versionHash` and stores it in
    /// a store's metadata.
    ///
    /// ```swift
    /// let hash = try model.versionHash(ofEntity: "Post")
    /// print(hash.hex)
    /// ```
    ///
    /// Inputs: the name, whether it is abstract, the parent's hash, the hashes of every non-transient
    /// attribute and relationship (inherited ones included) in order of name, the version hash modifier,
    /// and the uniqueness constraints. Class names, user info, renaming identifiers, indexes, defaults,
    /// validation rules and fetched properties do not enter it.
    ///
    /// - Throws: ``ModelError`` `.missingEntity` for an unknown entity; `.notComputable` for an entity
    ///   that has or inherits a derived attribute, whose hash rule Core Data does not document.
    public func versionHash(ofEntity name: String) throws(ModelError) -> VersionHash {
        var cache: [String: VersionHash] = [:]
        return try versionHash(ofEntity: name, cache: &cache)
    }

    /// The entity's hash, its ancestors' hashes taken from (and added to) `cache`: each entity of a
    /// hierarchy is hashed once, not once per descendant.
    private func versionHash(ofEntity name: String, cache: inout [String: VersionHash]) throws(ModelError) -> VersionHash {
        if let known = cache[name] { return known }
        guard let entity = entity(named: name) else {
            throw ModelError(.missingEntity, "the model has no entity '\(name)'", entity: name)
        }
        if let derived = attributes(of: name).first(where: \.isDerived) {
            throw ModelError(
                .notComputable,
                "entity '\(name)' has the derived attribute '\(derived.name)': Core Data's version hash of derived attributes is not known, so no hash is given",
                entity: name, property: derived.name)
        }
        var input = HashInput()
        input.append(entity.name)
        input.append(u8: entity.isAbstract ? 1 : 0)
        if let parent = entity.parentName { input.append(try versionHash(ofEntity: parent, cache: &cache)) }
        var properties: [(name: String, hash: VersionHash)] = []
        for attribute in attributes(of: name) where !attribute.isTransient {
            properties.append((attribute.name, attribute.versionHash))
        }
        for (relationship, owner) in relationshipsWithOwners(of: name) where !relationship.isTransient {
            properties.append((relationship.name, relationship.versionHash(declaredBy: owner)))
        }
        properties.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for property in properties { input.append(property.hash) }
        input.append(entity.versionHashModifier)
        let constraints = entity.uniquenessConstraints.map { $0.joined(separator: ".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for constraint in constraints { input.append(constraint) }
        let hash = input.finalize()
        cache[name] = hash
        return hash
    }

    /// The version hash of a property (attribute or relationship, inherited ones included) of an entity;
    /// nil when the entity has no property with this name.
    public func versionHash(ofProperty propertyName: String, inEntity entityName: String) -> VersionHash? {
        if let attribute = attribute(named: propertyName, of: entityName) { return attribute.versionHash }
        let owned = relationshipsWithOwners(of: entityName).first { $0.property.name == propertyName }
        return owned.map { $0.property.versionHash(declaredBy: $0.owner) }
    }

    /// The version hash of every entity whose hash is computable, by entity name: what a store made with
    /// this model holds in `NSStoreModelVersionHashes` (less the entities of
    /// ``entitiesWithUncomputableHash``).
    public func entityVersionHashes() -> [String: VersionHash] {
        var result: [String: VersionHash] = [:]
        var cache: [String: VersionHash] = [:]
        for entity in entities {
            if let hash = try? versionHash(ofEntity: entity.name, cache: &cache) { result[entity.name] = hash }
        }
        return result
    }

    /// Every entity's version hash, or why it cannot be computed, by entity name; each entity hashed once.
    public func versionHashResults() -> [String: Result<VersionHash, ModelError>] {
        var result: [String: Result<VersionHash, ModelError>] = [:]
        var cache: [String: VersionHash] = [:]
        for entity in entities {
            do throws(ModelError) {
                result[entity.name] = .success(try versionHash(ofEntity: entity.name, cache: &cache))
            } catch {
                result[entity.name] = .failure(error)
            }
        }
        return result
    }

    /// The entities whose version hash cannot be computed (they have or inherit a derived attribute),
    /// in byte order of their names.
    public var entitiesWithUncomputableHash: [String] {
        entityNamesInByteOrder.filter { name in attributes(of: name).contains(where: \.isDerived) }
    }
}
