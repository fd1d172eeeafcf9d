import MoultMapping
import MoultModel

/// Partial mappings completed by inference, for whichever driver plans a step from given mappings (a
/// chain's steps, a staged run's custom stages): shared here so that no driver calls another's statics.
///
/// ```swift
/// let (mappings, warnings) = try PartialMappings.completing([given], labels: ["v4-to-v5.json"], from: v4, to: v5, in: model)
/// ```
enum PartialMappings {
    /// The mappings of one step (its passes) with each partial one completed
    /// (``/MoultMapping/MappingModel/completion(from:to:in:alongside:)``): the entity mappings of the
    /// other passes count as given; and what inferring the rest warns about.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.noMigrationPath` (incompatible) naming the mapping, the
    ///   step and each entity whose mapping cannot be inferred.
    static func completing(
        _ mappings: [MappingModel], labels: [String], from: VersionedModel.Version, to: VersionedModel.Version, in model: VersionedModel
    ) throws -> (mappings: [MappingModel], warnings: [MappingIssue]) {
        var completed = mappings
        var warnings: [MappingIssue] = []
        for (index, mapping) in mappings.enumerated() where mapping.infersRest {
            let others = mappings.enumerated().filter { $0.offset != index }.flatMap(\.element.orderedEntityMappings)
            do {
                let completion = try mapping.completion(from: from.name, to: to.name, in: model, alongside: others)
                completed[index] = completion.mapping
                warnings += completion.warnings
            } catch {
                let entities = error.issues.compactMap(\.entity)
                throw MigrationError(
                    .noMigrationPath,
                    "\(labels[index]) is a partial mapping (\(from.name) → \(to.name)), and the entity mappings it does not give cannot be inferred",
                    entity: entities.count == 1 ? entities[0] : nil, underlying: error)
            }
        }
        return (completed, warnings)
    }
}
