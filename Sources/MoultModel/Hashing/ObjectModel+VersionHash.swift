import Synchronization

// MARK: - Property hashes

extension AttributeDescription {
    /// The attribute's version hash, as Core Data computes `NSAttributeDescription.versionHash`.
    ///
    /// Inputs: the name, the optional/transient/read-only flags, the version hash modifier, the
    /// attribute type's code, and one byte each for external binary storage and preserve-after-deletion.
    /// This is the hash of an ordinary attribute; a derived one hashes differently, see
    /// ``derivedVersionHash()`` (``ObjectModel/versionHash(ofEntity:)`` takes the right one).
    public var versionHash: VersionHash {
        var input = HashInput()
        input.append(propertyHash(name: name, isOptional: isOptional, isTransient: isTransient, isReadOnly: isReadOnly, modifier: versionHashModifier))
        input.append(i32: attributeType.code)
        if allowsExternalBinaryDataStorage { input.append(u8: 1) }
        if preserveAfterDeletion { input.append(u8: 1) }
        return input.finalize()
    }

    /// The version hash of a derived attribute: `SHA256(derivation expression as Foundation prints it)`,
    /// and nothing else (CORE-DATA-FORMATS.md §4; confirmed on CoreDataPlus' `Book.pagesCount`,
    /// `pages.@count` printed `count:(pages)`, and on Photos' key-path derivations).
    ///
    /// - Throws: ``ModelError`` `.notComputable` when the attribute has no derivation expression or one
    ///   whose printed form is not confirmed (see ``DerivationExpression``).
    public func derivedVersionHash() throws(ModelError) -> VersionHash {
        guard let text = derivationExpression, !text.isEmpty else {
            throw ModelError(.notComputable, "the derived attribute '\(name)' has no derivation expression", property: name)
        }
        let expression: DerivationExpression
        do {
            expression = try DerivationExpression(text)
        } catch {
            throw ModelError(.notComputable, "the derived attribute '\(name)': \(error.message)", property: name)
        }
        var input = HashInput()
        input.append(expression.printed)
        return input.finalize()
    }

    /// The hash this attribute enters its entity's hash with: ``derivedVersionHash()`` for a derived
    /// attribute, ``versionHash`` otherwise.
    ///
    /// - Throws: ``ModelError`` `.notComputable` for an unconfirmed derivation, and for a composite
    ///   attribute (iOS 17): no real store in reach confirms how Core Data hashes one (its type code,
    ///   2100, and whether its elements enter the hash) nor how it lays it out (flattened columns), so
    ///   Moult reads such a model but gives no hash and writes no store of it.
    public func entityVersionHashInput() throws(ModelError) -> VersionHash {
        if attributeType == .composite {
            throw ModelError(
                .notComputable,
                "the composite attribute '\(name)' (Core Data's hash and columns of composite attributes are not confirmed by any real store)",
                property: name)
        }
        return isDerived ? try derivedVersionHash() : versionHash
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
    /// A derived attribute enters with its own hash (``AttributeDescription/derivedVersionHash()``),
    /// in its name-sorted place, and is never skipped as transient.
    ///
    /// - Throws: ``ModelError`` `.missingEntity` for an unknown entity; `.notComputable` for an entity
    ///   that has or inherits a derived attribute whose expression's hash is not confirmed.
    public func versionHash(ofEntity name: String) throws(ModelError) -> VersionHash {
        // Kept with the model's other hashes (``entityVersionHashes()``): inferring a long history asks
        // each version for its entities' hashes once per pair of versions tried. An entity whose hash
        // cannot be computed is not kept there, and is hashed again to say why.
        if let known = entityVersionHashes()[name] { return known }
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
        var input = HashInput()
        input.append(entity.name)
        input.append(u8: entity.isAbstract ? 1 : 0)
        if let parent = entity.parentName { input.append(try versionHash(ofEntity: parent, cache: &cache)) }
        var properties: [(name: String, hash: VersionHash)] = []
        for attribute in attributes(of: name) where !attribute.isTransient || attribute.isDerived {
            do {
                properties.append((attribute.name, try attribute.entityVersionHashInput()))
            } catch {
                throw ModelError(
                    .notComputable, "entity '\(name)' has \(error.message): its version hash cannot be given", entity: name,
                    property: attribute.name)
            }
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

    /// Whether each entity of the model has the hash `storeHashes` gives it, and the store no entity
    /// more: ``isCompatible(withEntityHashes:configuration:)`` for the whole model, deciding at the first
    /// entity that differs (finding a store's version among hundreds hashes little of the others).
    func hasEntityHashes(_ storeHashes: [String: VersionHash]) -> Bool {
        guard entities.count == storeHashes.count, entities.allSatisfy({ storeHashes[$0.name] != nil }) else { return false }
        if let hashes = hashMemo.known {
            return entities.allSatisfy { entity in hashes[entity.name].map { $0 == storeHashes[entity.name] } ?? true }
        }
        var cache: [String: VersionHash] = [:]
        for entity in entities {
            // An entity whose hash cannot be computed matches whatever the store holds (as in hashDifferences).
            if let hash = try? versionHash(ofEntity: entity.name, cache: &cache), hash != storeHashes[entity.name] { return false }
        }
        return true
    }

    /// The version hash of a property (attribute or relationship, inherited ones included) of an entity;
    /// nil when the entity has no property with this name.
    public func versionHash(ofProperty propertyName: String, inEntity entityName: String) -> VersionHash? {
        if let attribute = attribute(named: propertyName, of: entityName) { return try? attribute.entityVersionHashInput() }
        let owned = relationshipsWithOwners(of: entityName).first { $0.property.name == propertyName }
        return owned.map { $0.property.versionHash(declaredBy: $0.owner) }
    }

    /// The version hash of every entity whose hash is computable, by entity name: what a store made with
    /// this model holds in `NSStoreModelVersionHashes` (less the entities of
    /// ``entitiesWithUncomputableHash``).
    ///
    /// Computed once per model and kept (a chain over hundreds of versions asks each version for its
    /// hashes many times).
    public func entityVersionHashes() -> [String: VersionHash] {
        hashMemo.value {
            var result: [String: VersionHash] = [:]
            var cache: [String: VersionHash] = [:]
            for entity in entities {
                if let hash = try? versionHash(ofEntity: entity.name, cache: &cache) { result[entity.name] = hash }
            }
            return result
        }
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

    /// The entities whose version hash cannot be computed (they have or inherit a derived attribute whose
    /// expression's hash is not confirmed), in byte order of their names.
    public var entitiesWithUncomputableHash: [String] {
        entityNamesInByteOrder.filter { name in
            attributes(of: name).contains { (try? $0.entityVersionHashInput()) == nil && (!$0.isTransient || $0.isDerived) }
        }
    }
}

// MARK: - Memo

/// A model's entity version hashes, computed on first use and shared by the model's copies. It takes
/// no part in a model's equality or hash: it is a function of the entities.
final class VersionHashMemo: Sendable, Hashable {
    private let hashes = Mutex<[String: VersionHash]?>(nil)

    /// The hashes when they have been computed, else nil.
    var known: [String: VersionHash]? { hashes.withLock { $0 } }

    /// The hashes, `compute`d the first time.
    func value(_ compute: () -> [String: VersionHash]) -> [String: VersionHash] {
        if let known = hashes.withLock({ $0 }) { return known }
        let computed = compute()
        hashes.withLock { $0 = computed }
        return computed
    }

    static func == (lhs: VersionHashMemo, rhs: VersionHashMemo) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
