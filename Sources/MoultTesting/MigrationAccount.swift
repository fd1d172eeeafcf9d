import Foundation
public import MoultMapping
public import MoultModel

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
/// let coverage = try ObjectCoverage(mappings: steps[0].mappings, source: steps[0].from, store: sourceStore, keepingKeys: true)
/// let account = MigrationAccount(steps: steps, source: before, destination: after, coverage: coverage)
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
    ///   - coverage: The first step's ``ObjectCoverage`` of `source`, made keeping keys.
    public init(steps: [Step], source: StoreSnapshot, destination: StoreSnapshot, coverage: ObjectCoverage) {
        var lines: [Line] = []
        var losses: [Loss] = []
        let tracer = Tracer(steps: steps, source: source, coverage: coverage)
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
                for property in Self.destinationProperties(of: mapping, last) where measured.insert("\(entity).\(property)").inserted {
                    let measure = tracer.measure(entity, property, in: destination, isRelationship: last.to.relationship(named: property, of: entity) != nil)
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

// MARK: - Tracing values back to the source

/// Traces destination properties back through the steps to the source properties they read, and
/// counts the source's values over the objects each first-step mapping carries.
struct Tracer {
    let steps: [MigrationAccount.Step]
    let source: StoreSnapshot
    let coverage: ObjectCoverage

    /// A source property a destination property reads, through the first-step mapping that carries it.
    struct Origin: Hashable {
        var entity: String
        var property: String
        var mapping: String
        /// Whether every step copies it as it is (`$source.name`, same type).
        var copied: Bool
    }

    /// What a destination property's values are, measured.
    struct Measure {
        var fates: [(MigrationAccount.Fate, Int)] = []
        var origins: [Origin] = []
        var before = 0
        var after = 0
        /// Source values with no destination value.
        var lost = 0
    }

    /// The source keys an expression reads (`$source.KEY…`), and whether it reads the object itself.
    static func sourceKeys(_ expression: String) -> (keys: [String], readsObject: Bool) {
        var keys: [String] = []
        var rest = Substring(expression)
        while let range = rest.range(of: "$source") {
            rest = rest[range.upperBound...]
            guard rest.first == "." else { continue }
            let key = rest.dropFirst().drop { $0 == "#" }.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !key.isEmpty { keys.append(String(key)) }
        }
        return (keys, expression.contains("$source"))
    }

    /// The source properties `property` of `entity` (a destination entity of step `index`) reads.
    func origins(_ entity: String, _ property: String, step index: Int, copied: Bool = true) -> (origins: [Origin], readsObject: Bool) {
        let step = steps[index]
        var found: [Origin] = []
        var readsObject = false
        for mapping in step.mappings.flatMap(\.entityMappings) where mapping.destinationEntityName == entity {
            guard let sourceEntity = mapping.sourceEntityName, mapping.effectiveType != .remove, mapping.effectiveType != .add else { continue }
            let named = (mapping.attributeMappings + mapping.relationshipMappings).first { $0.name == property }
            let expression: String
            if let named {
                expression = named.valueExpression ?? PropertyMapping.sourceValue(property)
            } else if mapping.effectiveType == .copy {
                expression = PropertyMapping.sourceValue(property)
            } else {
                continue
            }
            let read = Self.sourceKeys(expression)
            readsObject = readsObject || (read.readsObject && read.keys.isEmpty)
            for key in read.keys {
                let sameType = step.from.attribute(named: key, of: sourceEntity)?.attributeType == step.to.attribute(named: property, of: entity)?.attributeType
                let isCopy = copied && read.keys.count == 1 && (expression == PropertyMapping.sourceValue(key) || Self.isRelationshipCopy(expression, key)) && sameType
                if index == 0 {
                    found.append(Origin(entity: sourceEntity, property: key, mapping: mapping.name, copied: isCopy))
                } else {
                    let earlier = origins(sourceEntity, key, step: index - 1, copied: isCopy)
                    found += earlier.origins
                    readsObject = readsObject || earlier.readsObject
                }
            }
        }
        return (Array(Set(found)).sorted { ($0.entity, $0.property, $0.mapping) < ($1.entity, $1.property, $1.mapping) }, readsObject)
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "KEY", $source.KEY)`.
    static func isRelationshipCopy(_ expression: String, _ key: String) -> Bool {
        expression.contains("destinationInstancesForSourceRelationshipNamed") && expression.contains("$source.\(key)")
    }

    /// The source's objects (primary keys) a first-step mapping carries.
    func carried(by mapping: String, of entity: String) -> [Int64] {
        let all = source.values[entity].map { Array($0.keys) } ?? []
        guard let passing = coverage.passing[mapping] else { return all }
        return all.filter(passing.contains)
    }

    /// The source's objects of an entity that the first step carries.
    func carried(_ entity: String) -> [Int64] {
        let all = source.values[entity].map { Array($0.keys) } ?? []
        guard let kept = coverage.carried[entity] else { return all }
        return all.filter(kept.contains)
    }

    /// The source objects whose lineage is `entity` at step `index`'s source (entity names traced back).
    func objects(of entity: String, beforeStep index: Int) -> Int {
        guard index > 0 else { return source.values[entity]?.count ?? 0 }
        var sources: Set<String> = []
        var frontier: Set<String> = [entity]
        for step in steps[..<index].reversed() {
            sources = []
            for mapping in step.mappings.flatMap(\.entityMappings) where mapping.destinationEntityName.map(frontier.contains) == true {
                if let name = mapping.sourceEntityName { sources.insert(name) }
            }
            frontier = sources
        }
        return frontier.reduce(0) { $0 + carried($1).count }
    }

    /// The non-nil source values of `property` of `entity` at step `index`'s source.
    func values(of entity: String, _ property: String, beforeStep index: Int) -> Int {
        guard index > 0 else { return carried(entity).filter { source.values[entity]?[$0]?[property] != nil }.count }
        return Set(origins(entity, property, step: index - 1).origins.flatMap { origin in
            carried(by: origin.mapping, of: origin.entity).filter { source.values[origin.entity]?[$0]?[origin.property] != nil }.map { "\(origin.entity)/\($0)" }
        }).count
    }

    /// The fates of a destination property's values.
    func measure(_ entity: String, _ property: String, in destination: StoreSnapshot, isRelationship: Bool) -> Measure {
        var result = Measure()
        let afterValues = (destination.values[entity] ?? [:]).values.compactMap { $0[property] }
        result.after = afterValues.count
        let traced = origins(entity, property, step: steps.count - 1)
        result.origins = traced.origins
        guard !traced.origins.isEmpty else {
            result.fates = [(traced.readsObject ? .converted : .defaulted, result.after)]
            return result
        }
        // The source values, per object carried, of the properties read (any non-nil one counts).
        var beforeValues: [String] = []
        var objects: Set<String> = []
        for origin in traced.origins {
            for key in carried(by: origin.mapping, of: origin.entity) {
                guard let value = source.values[origin.entity]?[key]?[origin.property] else { continue }
                beforeValues.append(value)
                objects.insert("\(origin.entity)/\(key)")
            }
        }
        result.before = objects.count
        result.lost = max(0, result.before - result.after)
        let copied = traced.origins.allSatisfy(\.copied)
        if isRelationship {
            result.fates = copied ? [(.kept, min(result.before, result.after)), (.defaulted, max(0, result.after - result.before))] : [(.converted, result.after)]
            return result
        }
        var remaining: [String: Int] = [:]
        for value in beforeValues { remaining[value, default: 0] += 1 }
        var kept = 0
        for value in afterValues where (remaining[value] ?? 0) > 0 {
            remaining[value]! -= 1
            kept += 1
        }
        let defaulted = copied ? max(0, result.after - result.before) : 0
        result.fates = [(.kept, kept), (.converted, max(0, result.after - kept - defaulted)), (.defaulted, defaulted)]
        return result
    }
}
