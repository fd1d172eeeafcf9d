import Foundation
public import MoultMapping
public import MoultModel
public import MoultStore

/// What a migration did with each property and each object, measured in the stores: the values of
/// the source (before) against those of the destination (after).
///
/// For each property of each destination entity, its values are traced back through the steps'
/// property mappings to the source properties they read (`$source.name`, or the property of the same
/// name when a mapping gives no expression), and the source's values of those properties, over the
/// objects the mapping carries, are compared with the destination's:
/// - `kept`: destination values equal to a value of the source property (counted as multisets);
/// - `converted`: other non-nil destination values computed from the source;
/// - `defaulted`: destination values with no source (the property reads nothing, or its source was nil);
/// - `dropped`: source values with no destination value (fewer non-nil values after than before),
///   objects no entity mapping carries (``ObjectCoverage``: a filter rejects them, or no mapping reads
///   their entity), and source properties no mapping reads.
///
/// Each drop is a ``Loss``. A drop the model itself makes (an entity or property the destination version
/// does not have) passes; a drop of data the destination could hold (a filter, a destination property
/// left unmapped, an expression that loses values) fails a test unless it is allowed (``unallowed(allowing:)``).
///
/// ```swift
/// let account = try MigrationAccount(steps: steps, source: before, destination: after, sourceStore: store)
/// for line in account.lines { print(line) }                  // Blob: dropped 40 (rejected by the filter of BlobToBlob)
/// for loss in account.unallowed(allowing: ["Blob.x"]) { print(loss) }
/// ```
public struct MigrationAccount: Sendable, Hashable {
    public enum Fate: String, Sendable, Hashable, Codable, CaseIterable {
        /// Copied unchanged (same name or renamed, same value).
        case kept
        /// Computed from the source by an expression or a type change, to another value.
        case converted
        /// No source: the destination's default.
        case defaulted
        /// Not carried: the source's values (or objects) are gone.
        case dropped
    }

    /// One fate of one property (or of a whole entity's objects when `property` is nil) of one entity:
    /// a destination entity for kept, converted and defaulted, a source entity for dropped.
    public struct Line: Sendable, Hashable, Codable, CustomStringConvertible {
        public var entity: String
        public var property: String?
        public var fate: Fate
        public var count: Int
        /// Why it was dropped.
        public var reason: String?

        public var description: String {
            let what = property.map { "\(entity).\($0)" } ?? entity
            let unit = property == nil ? " object\(count == 1 ? "" : "s")" : ""
            return "\(what): \(fate.rawValue) \(count)\(unit)" + (reason.map { " (\($0))" } ?? "")
        }
    }

    /// Source data a migration dropped.
    public struct Loss: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The source entity.
        public var entity: String
        /// The source property, nil for objects.
        public var property: String?
        /// Objects, or non-nil values.
        public var count: Int
        public var reason: String
        /// Whether the model itself drops it: the destination version has no such entity or property.
        public var byModel: Bool
        /// What allows it in the mappings (their user info's ``MigrationAccount/allowLossKey``), if anything.
        public var allowedBy: String?

        /// `Blob: 40 objects dropped (rejected by the filter of BlobToBlob)`.
        public var description: String {
            let what = property.map { "\(entity).\($0): \(count) value\(count == 1 ? "" : "s")" } ?? "\(entity): \(count) object\(count == 1 ? "" : "s")"
            return "\(what) dropped (\(reason))"
        }

        /// Whether `--allow-loss NAME` (`ENTITY` or `ENTITY.PROPERTY`) allows it.
        public func isAllowed(by name: String) -> Bool {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.first == entity else { return false }
            return parts.count == 1 || parts[1] == property
        }
    }

    /// One step of the migration: its mappings (passes) and models.
    public struct Step: Sendable {
        public var mappings: [MappingModel]
        public var from: ObjectModel
        public var to: ObjectModel

        public init(mappings: [MappingModel], from: ObjectModel, to: ObjectModel) {
            self.mappings = mappings
            self.from = from
            self.to = to
        }
    }

    public var lines: [Line]
    /// Every drop, by the model's changes or not.
    public var losses: [Loss]

    /// The losses no `--allow-loss` name and no mapping's ``allowLossKey`` allows, and that the model
    /// does not make itself.
    public func unallowed(allowing names: [String]) -> [Loss] {
        losses.filter { loss in !loss.byModel && loss.allowedBy == nil && !names.contains { loss.isAllowed(by: $0) } }
    }

    /// The key of an entity mapping's user info that allows losses of its source entity: `YES` for the
    /// objects and every property, or a comma-separated list of properties.
    public static let allowLossKey = "moultAllowLoss"

    /// The account of a migration of `source` through `steps` into `destination`.
    ///
    /// - Parameters:
    ///   - steps: The steps of the migration, in order (at least one).
    ///   - source: The store migrated (at the first step's source version).
    ///   - destination: The store the migration wrote (at the last step's destination version).
    ///   - sourceStore: The store migrated, open: the filters of the steps' mappings are evaluated on
    ///     its objects.
    /// - Throws: `StoreError` when the source store cannot be read.
    public init(steps: [Step], source: StoreSnapshot, destination: StoreSnapshot, sourceStore: some StoreReading) throws {
        var lines: [Line] = []
        var losses: [Loss] = []
        guard let first = steps.first else {
            (self.lines, self.losses) = ([], [])
            return
        }
        let coverage = try ObjectCoverage(mappings: first.mappings, source: first.from, store: sourceStore, keepingKeys: true)
        let tracer = Tracer(steps: steps, source: source, coverage: coverage, filters: FilterEvaluator(store: sourceStore))
        func drop(_ entity: String, _ property: String?, _ count: Int, _ reason: String, byModel: Bool) {
            guard count > 0 else { return }
            lines.append(Line(entity: entity, property: property, fate: .dropped, count: count, reason: reason))
            var loss = Loss(entity: entity, property: property, count: count, reason: reason, byModel: byModel)
            if !byModel { loss.allowedBy = Self.allowingMapping(loss, steps) }
            losses.append(loss)
        }

        // Objects: entities no mapping reads, objects every filter rejects.
        for (index, step) in steps.enumerated() {
            for what in MappingModel.uncarried(by: step.mappings, source: step.from, destination: step.to) where what.kind == .entity {
                let count = tracer.objects(of: what.entity, beforeStep: index)
                let byModel = !Self.destinationHasEntity(what.entity, step)
                drop(what.entity, nil, count, "step \(index + 1): no entity mapping reads it" + (byModel ? ", the next version has no such entity" : ""), byModel: byModel)
            }
        }
        for found in coverage.drops {
            drop(found.entity, nil, found.count, "rejected by the filter\(found.filters.count == 1 ? "" : "s") of \(found.filters.joined(separator: ", "))", byModel: false)
        }
        for found in tracer.laterFilterDrops() {
            drop(found.entity, nil, found.count, "step \(found.step + 1): rejected by the filter\(found.filters.count == 1 ? "" : "s") of \(found.filters.joined(separator: ", "))", byModel: false)
        }
        // Properties no mapping reads.
        for (index, step) in steps.enumerated() {
            for what in MappingModel.uncarried(by: step.mappings, source: step.from, destination: step.to) where what.kind != .entity {
                guard let property = what.property else { continue }
                let count = tracer.values(of: what.entity, property, beforeStep: index)
                let byModel = !Self.destinationHasProperty(property, of: what.entity, step)
                let reason = "step \(index + 1): no mapping reads it" + (byModel ? ", the next version has no such property" : ", though the next version has it")
                drop(what.entity, property, count, reason, byModel: byModel)
            }
        }
        // Each destination property: its values against its sources'.
        if let last = steps.last {
            var measured: Set<String> = []
            for mapping in last.mappings.flatMap(\.entityMappings) {
                guard let entity = mapping.destinationEntityName, mapping.effectiveType != .remove else { continue }
                let listed = Self.destinationProperties(of: mapping, last)
                // A relationship the mapping leaves out keeps only the links its inverse's mapping makes.
                let unmapped = last.to.relationships(of: entity).map(\.name).filter { !listed.contains($0) }
                for property in listed + unmapped where measured.insert("\(entity).\(property)").inserted {
                    let isListed = listed.contains(property)
                    guard let measure = isListed
                        ? tracer.measure(entity, property, in: destination, isRelationship: last.to.relationship(named: property, of: entity) != nil)
                        : tracer.measureUnmapped(mapping, property, in: destination)
                    else { continue }
                    for (fate, count) in measure.fates where count > 0 {
                        lines.append(Line(entity: entity, property: property, fate: fate, count: count))
                    }
                    if measure.lost > 0 {
                        let origins = Set(measure.origins.map { "\($0.entity).\($0.property)" }).sorted()
                        let reason = "\(measure.before) non-nil in the source, \(measure.after) in \(entity).\(property)"
                        for origin in Set(measure.origins.map(\.entity)).sorted() {
                            let names = Set(measure.origins.filter { $0.entity == origin }.map(\.property)).sorted()
                            drop(origin, names.joined(separator: ","), measure.lost, "\(origins.joined(separator: ", ")) → \(entity).\(property): \(reason)", byModel: false)
                        }
                    }
                }
            }
        }
        self.lines = lines.sorted { ($0.entity, $0.property ?? "", $0.fate.rawValue) < ($1.entity, $1.property ?? "", $1.fate.rawValue) }
        self.losses = losses
    }

    /// The dropped lines.
    public var dropped: [Line] { lines.filter { $0.fate == .dropped } }

    // MARK: - The model's own drops

    static func destinationHasEntity(_ name: String, _ step: Step) -> Bool {
        step.to.entities.contains { $0.name == name || $0.renamingIdentifier == name }
    }

    /// Whether some destination entity made from `entity` has a property `name` (or one renamed from it).
    static func destinationHasProperty(_ name: String, of entity: String, _ step: Step) -> Bool {
        let made = step.mappings.flatMap(\.entityMappings).filter { $0.sourceEntityName == entity }.compactMap(\.destinationEntityName)
        return made.contains { destination in
            step.to.attributes(of: destination).contains { $0.name == name || $0.renamingIdentifier == name }
                || step.to.relationships(of: destination).contains { $0.name == name || $0.renamingIdentifier == name }
        }
    }

    /// The entity mapping whose user info allows a loss, if one does.
    static func allowingMapping(_ loss: Loss, _ steps: [Step]) -> String? {
        steps.flatMap { $0.mappings.flatMap(\.entityMappings) }.first { mapping in
            guard mapping.sourceEntityName == loss.entity, let value = mapping.userInfo[allowLossKey] else { return false }
            if value.uppercased() == "YES" || value == "1" || value.lowercased() == "true" { return true }
            let names = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return loss.property.map { property in property.split(separator: ",").allSatisfy { names.contains(String($0)) } } ?? false
        }?.name
    }

    /// The destination properties an entity mapping fills: those it names, and for a copy every
    /// property of its destination entity.
    static func destinationProperties(of mapping: EntityMapping, _ step: Step) -> [String] {
        var names = (mapping.attributeMappings + mapping.relationshipMappings).map(\.name)
        if mapping.effectiveType == .copy, let entity = mapping.destinationEntityName {
            for name in step.to.attributes(of: entity).filter({ !$0.isTransient }).map(\.name) + step.to.relationships(of: entity).map(\.name)
            where !names.contains(name) {
                names.append(name)
            }
        }
        return names
    }
}
