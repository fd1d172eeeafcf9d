public import MoultModel

// MARK: - Partial mappings

extension MappingModel {
    /// Completes a partial mapping (``infersRest``): the entity mappings it gives, and for every other
    /// entity of the step the entity mapping a lightweight step infers (``inferred(from:to:through:sourceName:destinationName:)``).
    ///
    /// - A given entity mapping takes the place of the inferred one of its destination entity.
    /// - A source entity a given mapping reads is not inferred removed; it is inferred into another
    ///   destination entity only where inference maps it there.
    /// - An inferred relationship reaches the objects a given mapping makes: through that mapping by
    ///   name, or, when several given mappings make them, by the source relationship.
    /// - The entity mappings run in the destination's entity order (byte order of names), each
    ///   destination's given mappings at its place in the order they are given, then the given ones of
    ///   no destination entity, then the inferred removals. Inferred mappings are named as
    ///   `moult infer` names them (`AdultToAdult`, `NoneToSchool`), which a given mapping's
    ///   relationship expressions may name.
    ///
    /// The result is not partial; ``inferredEntityMappingNames`` says which of its entity mappings
    /// were inferred. A mapping that is not partial is returned as it is.
    ///
    /// ```swift
    /// let partial = try MappingModel(jsonFile: url)          // "inferRest": true, one entity mapping
    /// let whole = try partial.completion(from: v4, to: v5).mapping
    /// for mapping in whole.entityMappings { print(mapping.name, whole.isInferred(mapping) ? "inferred" : "given") }
    /// ```
    /// - Parameters:
    ///   - source: The step's source model.
    ///   - destination: The step's destination model.
    ///   - intermediates: The versions between them, oldest first, to follow chained renames.
    ///   - sourceName: The source version's name, for messages.
    ///   - destinationName: The destination version's name, for messages.
    ///   - others: The entity mappings of the step's other passes (mapping models of the same two
    ///     versions run before or after this one): they count as given, and stay theirs.
    /// - Throws: ``MappingError`` with code ``MappingError/Code/notInferable`` (category incompatible)
    ///   whose ``MappingError/issues`` name each entity of the rest that cannot be inferred, and why.
    public func completion(
        from source: ObjectModel, to destination: ObjectModel, through intermediates: [ObjectModel] = [],
        sourceName: String? = nil, destinationName: String? = nil, alongside others: [EntityMapping] = []
    ) throws(MappingError) -> InferredMapping {
        guard infersRest else { return InferredMapping(mapping: self, warnings: []) }
        let own = orderedEntityMappings
        var inference = Inference(source: source, destination: destination, chain: [source] + intermediates + [destination])
        inference.given = own + others
        let merged = inference.run()
        let covered = Set(inference.given.compactMap(\.destinationEntityName))
        // What only concerns an entity a given mapping makes (an ambiguous rename of it) is the given
        // mapping's to decide.
        let issues = inference.issues.filter { issue in issue.entity.map { !covered.contains($0) } ?? true }
        if !issues.isEmpty {
            let entities = Self.entityList(issues.compactMap(\.entity))
            let given = Self.entityList(covered.sorted())
            throw MappingError(
                .notInferable,
                "the rest of the partial mapping from \(sourceName ?? "the source model") to \(destinationName ?? "the destination model") cannot be inferred"
                    + (entities.isEmpty ? "" : " for \(entities)") + (given.isEmpty ? "" : " (it gives the entity mappings of \(given))")
                    + ": give an entity mapping for each entity named below, or make the mapping whole",
                issues: issues)
        }
        let ownNames = Set(own.map(\.name)), otherNames = Set(others.map(\.name))
        var completed = self
        completed.entityMappings = merged.filter { !otherNames.contains($0.name) || ownNames.contains($0.name) }
        completed.infersRest = false
        completed.inferredEntityMappingNames = Set(completed.entityMappings.map(\.name)).subtracting(ownNames)
        return InferredMapping(mapping: completed, warnings: inference.warnings)
    }

    /// ``completion(from:to:through:sourceName:destinationName:alongside:)`` between two versions of
    /// a versioned model, following renames through the versions between them.
    ///
    /// - Throws: ``MappingError``: ``MappingError/Code/modelNotFound`` when a version does not exist,
    ///   ``MappingError/Code/notInferable`` when the rest cannot be inferred.
    public func completion(
        from sourceVersion: String, to destinationVersion: String, in model: VersionedModel, alongside others: [EntityMapping] = []
    ) throws(MappingError) -> InferredMapping {
        guard infersRest else { return InferredMapping(mapping: self, warnings: []) }
        let (from, to, between) = try Self.step(from: sourceVersion, to: destinationVersion, in: model)
        return try completion(from: from, to: to, through: between, sourceName: sourceVersion, destinationName: destinationVersion, alongside: others)
    }

    /// `A`, `A and B`, `A, B and C`.
    private static func entityList(_ names: [String]) -> String {
        var unique: [String] = []
        for name in names where !unique.contains(name) { unique.append(name) }
        guard unique.count > 1 else { return unique.first ?? "" }
        return unique.dropLast().joined(separator: ", ") + " and " + unique.last!
    }
}
