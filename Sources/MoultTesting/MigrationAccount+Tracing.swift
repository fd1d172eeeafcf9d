import Foundation
import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

// MARK: - Tracing values back to the source

/// Traces destination properties back through the steps to the source properties they read, and
/// counts the source's values over the objects the mappings on the way carry: the first step's filters
/// evaluated on the source (``ObjectCoverage``), a later step's evaluated on the source objects with
/// their keys traced back (`age` of v3 is `age` of v1 when every step copies it).
struct Tracer {
    let steps: [MigrationAccount.Step]
    let source: StoreSnapshot
    let coverage: ObjectCoverage
    let filters: FilterEvaluator

    /// A later step's filter, as a condition on the source objects: its keys renamed to the source
    /// properties they are copies of; nil when a key is not a plain copy of one.
    struct Condition: Hashable {
        var predicate: String
        var renames: [String: String]?
    }

    /// A source property a destination property reads, through the first-step mapping that carries it.
    struct Origin: Hashable {
        var entity: String
        var property: String
        var mapping: String
        /// Whether every step copies it as it is (`$source.name`, same type).
        var copied: Bool
        /// The later steps' filters on the way.
        var conditions: [Condition]
    }

    /// What a destination property's values are, measured.
    struct Measure {
        var fates: [(MigrationAccount.Fate, Int)] = []
        var origins: [Origin] = []
        var before = 0
        var after = 0
        /// Source values with no destination value (0 when a later filter cannot be evaluated here).
        var lost = 0
    }

    // MARK: - Expressions

    /// The source key an expression copies (`$source.KEY`, or Xcode's `FUNCTION($source, "valueForKey:", "KEY")`), if it only copies one.
    static func copiedKey(_ expression: String) -> String? {
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("$source."), case let key = text.dropFirst("$source.".count).drop(while: { $0 == "#" }),
            !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        {
            return String(key)
        }
        for selector in ["valueForKey:", "valueForKeyPath:"] {
            let prefix = "FUNCTION($source, \"\(selector)\", \""
            guard text.hasPrefix(prefix), text.hasSuffix("\")") else { continue }
            let key = text.dropFirst(prefix.count).dropLast(2)
            if !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return String(key) }
        }
        return nil
    }

    /// The source keys an expression reads (`$source.KEY…`, or the key it copies), and whether it reads
    /// the object itself.
    static func sourceKeys(_ expression: String) -> (keys: [String], readsObject: Bool) {
        if let key = copiedKey(expression) { return ([key], true) }
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

    /// The identifiers of a predicate outside its string literals and not after a dot: the keys it
    /// reads of the object (and words such as `AND`, which no entity has as a property).
    static func predicateKeys(_ text: String) -> Set<String> {
        var keys: Set<String> = []
        var quote: Character?
        var word = ""
        var before: Character?
        var last: Character?
        for character in text + " " {
            defer { last = character }
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            if character.isLetter || character.isNumber || character == "_" {
                if word.isEmpty { before = last }
                word.append(character)
                continue
            }
            if !word.isEmpty, word.first?.isNumber == false, ![".", "$", "@"].contains(before) { keys.insert(word) }
            word = ""
            if character == "\"" || character == "'" { quote = character }
        }
        return keys
    }

    // MARK: - Origins

    /// The source properties `property` of `entity` (a destination entity of step `index`) reads.
    func origins(_ entity: String, _ property: String, step index: Int, copied: Bool = true, conditions: [Condition] = []) -> (
        origins: [Origin], readsObject: Bool, byPolicy: Bool
    ) {
        let step = steps[index]
        var found: [Origin] = []
        var readsObject = false
        var byPolicy = false
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
            byPolicy = byPolicy || mapping.effectiveType == .custom || mapping.builtinPolicy != nil
                || !["", "NSEntityMigrationPolicy"].contains(mapping.entityMigrationPolicyClassName ?? "")
            let read = Self.sourceKeys(expression)
            let keys = read.keys.filter { step.from.attribute(named: $0, of: sourceEntity) != nil || step.from.relationship(named: $0, of: sourceEntity) != nil }
            readsObject = readsObject || (read.readsObject && read.keys.isEmpty)
            var onTheWay = conditions
            if index > 0, let condition = condition(of: mapping, step: index) { onTheWay.append(condition) }
            for key in keys {
                let sameType = step.from.attribute(named: key, of: sourceEntity)?.attributeType == step.to.attribute(named: property, of: entity)?.attributeType
                let isCopy = copied && keys.count == 1 && (Self.copiedKey(expression) == key || Self.isRelationshipCopy(expression, key)) && sameType
                if index == 0 {
                    found.append(Origin(entity: sourceEntity, property: key, mapping: mapping.name, copied: isCopy, conditions: onTheWay))
                } else {
                    let earlier = origins(sourceEntity, key, step: index - 1, copied: isCopy, conditions: onTheWay)
                    found += earlier.origins
                    readsObject = readsObject || earlier.readsObject
                    byPolicy = byPolicy || earlier.byPolicy
                }
            }
        }
        return (Array(Set(found)).sorted { ($0.entity, $0.property, $0.mapping) < ($1.entity, $1.property, $1.mapping) }, readsObject, byPolicy)
    }

    /// A later step's mapping's filter as a condition on the source objects, nil when it has none.
    func condition(of mapping: EntityMapping, step index: Int) -> Condition? {
        guard let predicate = mapping.filterPredicate, !predicate.trimmingCharacters(in: .whitespaces).isEmpty,
            let sourceEntity = mapping.sourceEntityName
        else { return nil }
        let model = steps[index].from
        var renames: [String: String]? = [:]
        for key in Self.predicateKeys(predicate)
        where model.attribute(named: key, of: sourceEntity) != nil || model.relationship(named: key, of: sourceEntity) != nil {
            let traced = origins(sourceEntity, key, step: index - 1).origins
            guard traced.count == 1, let origin = traced.first, origin.copied else {
                renames = nil
                break
            }
            renames?[key] = origin.property
        }
        return Condition(predicate: predicate, renames: renames)
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "KEY", $source.KEY)`.
    static func isRelationshipCopy(_ expression: String, _ key: String) -> Bool {
        expression.contains("destinationInstancesForSourceRelationshipNamed") && expression.contains("$source.\(key)")
    }

    // MARK: - Objects

    /// The source's objects (primary keys) the mappings on an origin's way carry; nil when a later
    /// filter cannot be evaluated on the source.
    func carried(_ origin: Origin) -> [Int64]? {
        var keys = carried(by: origin.mapping, of: origin.entity)
        for condition in origin.conditions {
            guard let passing = filters.passing(condition, entity: origin.entity) else { return nil }
            keys = keys.filter(passing.contains)
        }
        return keys
    }

    /// The source's objects a first-step mapping carries.
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

    /// The source entities whose objects become `entity` at step `index`'s source, through one
    /// mapping per step (nil when several mappings make it, or none).
    func lineage(of entity: String, beforeStep index: Int) -> String? {
        var name = entity
        for step in steps[..<index].reversed() {
            let making = step.mappings.flatMap(\.entityMappings).filter { $0.destinationEntityName == name && $0.effectiveType != .remove }
            guard making.count == 1, let source = making[0].sourceEntityName else { return nil }
            name = source
        }
        return name
    }

    /// The source objects whose lineage is `entity` at step `index`'s source.
    func objects(of entity: String, beforeStep index: Int) -> Int {
        guard index > 0 else { return source.values[entity]?.count ?? 0 }
        return lineage(of: entity, beforeStep: index).map { carried($0).count } ?? 0
    }

    /// The objects a later step's filters reject, on entities all of whose mappings have filters, when
    /// those filters can be evaluated on the source objects.
    func laterFilterDrops() -> [(step: Int, entity: String, count: Int, filters: [String])] {
        var drops: [(step: Int, entity: String, count: Int, filters: [String])] = []
        for index in steps.indices.dropFirst() {
            for (entity, names) in ObjectCoverage.filteredEntities(of: steps[index].mappings) {
                guard let origin = lineage(of: entity, beforeStep: index) else { continue }
                let mappings = steps[index].mappings.flatMap(\.entityMappings).filter { names.contains($0.name) }
                var passing: Set<Int64> = []
                var evaluable = true
                for mapping in mappings {
                    guard let condition = condition(of: mapping, step: index), let found = filters.passing(condition, entity: origin) else {
                        evaluable = false
                        break
                    }
                    passing.formUnion(found)
                }
                guard evaluable else { continue }
                let rejected = carried(origin).filter { !passing.contains($0) }.count
                if rejected > 0 { drops.append((index, origin, rejected, names)) }
            }
        }
        return drops
    }

    /// The non-nil source values of `property` of `entity` at step `index`'s source.
    func values(of entity: String, _ property: String, beforeStep index: Int) -> Int {
        guard index > 0 else { return carried(entity).filter { source.values[entity]?[$0]?[property] != nil }.count }
        return Set(origins(entity, property, step: index - 1).origins.flatMap { origin in
            (carried(origin) ?? []).filter { source.values[origin.entity]?[$0]?[origin.property] != nil }.map { "\(origin.entity)/\($0)" }
        }).count
    }

    // MARK: - Measuring

    /// The source values, per object carried, of the properties `origins` name (an object counts once
    /// when any of them is non-nil), and whether every later filter on the way could be evaluated.
    func before(_ origins: [Origin]) -> (values: [String], objects: Int, measurable: Bool) {
        var values: [String] = []
        var objects: Set<String> = []
        var measurable = true
        for origin in origins {
            guard let keys = carried(origin) else {
                measurable = false
                continue
            }
            for key in keys {
                guard let value = source.values[origin.entity]?[key]?[origin.property] else { continue }
                values.append(value)
                objects.insert("\(origin.entity)/\(key)")
            }
        }
        return (values, objects.count, measurable)
    }

    /// A relationship of the destination entity a last-step mapping does not map, whose source entity
    /// has a relationship of that name: its links are kept only where the inverse side's mapping makes
    /// them, so fewer objects with a link after than before is a loss. Nil when there is nothing to
    /// compare (no such source relationship, a policy, a later filter that cannot be evaluated).
    func measureUnmapped(_ mapping: EntityMapping, _ property: String, in destination: StoreSnapshot) -> Measure? {
        let index = steps.count - 1
        guard let sourceEntity = mapping.sourceEntityName, let entity = mapping.destinationEntityName,
            steps[index].from.relationship(named: property, of: sourceEntity) != nil, mapping.effectiveType == .transform,
            mapping.builtinPolicy == nil, ["", "NSEntityMigrationPolicy"].contains(mapping.entityMigrationPolicyClassName ?? "")
        else { return nil }
        var origins = [Origin(entity: sourceEntity, property: property, mapping: mapping.name, copied: true, conditions: [])]
        if index > 0 {
            origins = self.origins(sourceEntity, property, step: index - 1, conditions: condition(of: mapping, step: index).map { [$0] } ?? []).origins
        }
        let (_, objects, measurable) = before(origins)
        guard measurable, !origins.isEmpty else { return nil }
        var result = Measure(origins: origins)
        result.before = objects
        result.after = (destination.values[entity] ?? [:]).values.filter { $0[property] != nil }.count
        result.lost = max(0, result.before - result.after)
        return result
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
        let (beforeValues, objects, measurable) = before(traced.origins)
        result.before = objects
        let copied = traced.origins.allSatisfy(\.copied)
        let defaulted = copied ? max(0, result.after - result.before) : 0
        // Lost: a copied attribute's source values found nowhere in the destination (a policy that
        // makes one object of several equal ones loses none); else fewer values after than before,
        // unless a policy makes the objects (it may merge them).
        if !measurable || traced.byPolicy {
            result.lost = 0
        } else if copied && !isRelationship {
            let present = Set(afterValues)
            result.lost = beforeValues.filter { !present.contains($0) }.count
        } else {
            result.lost = max(0, result.before - result.after)
        }
        guard copied else {
            result.fates = [(.converted, result.after)]
            return result
        }
        if isRelationship {
            result.fates = [(.kept, min(result.before, result.after)), (.defaulted, defaulted)]
            return result
        }
        var remaining: [String: Int] = [:]
        for value in beforeValues { remaining[value, default: 0] += 1 }
        var kept = 0
        for value in afterValues where (remaining[value] ?? 0) > 0 {
            remaining[value]! -= 1
            kept += 1
        }
        result.fates = [(.kept, kept), (.converted, max(0, result.after - kept - defaulted)), (.defaulted, defaulted)]
        return result
    }
}

// MARK: - Filters on the source

/// Evaluates later steps' filters on the source store's objects, their keys renamed, once each.
final class FilterEvaluator {
    let store: any StoreReading
    private var cache: [String: Set<Int64>?] = [:]

    init(store: any StoreReading) {
        self.store = store
    }

    /// The objects of `entity` for which the condition holds; nil when it cannot be evaluated.
    func passing(_ condition: Tracer.Condition, entity: String) -> Set<Int64>? {
        guard let renames = condition.renames else { return nil }
        let key = "\(entity)\u{0}\(condition.predicate)\u{0}\(renames.sorted { $0.key < $1.key })"
        if let known = cache[key] { return known }
        let found = try? evaluate(condition.predicate, renames: renames, entity: entity)
        cache[key] = found
        return found
    }

    private func evaluate(_ predicate: String, renames: [String: String], entity: String) throws -> Set<Int64>? {
        guard let layout = store.layout.entity(named: entity) else { return nil }
        let variables = VariableLayout(["source"])
        let compiled = try ExpressionCompiler(variables: variables).compilePredicate(predicate)
        let resolver = StoreResolver(store: store)
        let cursor = try store.objects(of: entity, includingSubentities: false, after: 0, through: nil, batchSize: 500)
        var passing: Set<Int64> = []
        while let row = try cursor.next() {
            let record = RenamedRecord(base: StoredRecord(row: row, entity: layout, resolver: resolver), renames: renames)
            var context = EvaluationContext(object: record, variables: variables, resolver: resolver)
            context[variable: "source"] = .object(record)
            if try compiled.evaluate(context) { passing.insert(row.id.primaryKey) }
        }
        return passing
    }
}

/// A record whose keys are read under other names: a later version's key as the source property it
/// is a copy of.
struct RenamedRecord: ObjectRecord {
    let base: StoredRecord
    let renames: [String: String]

    var objectID: ObjectID { base.objectID }
    func value(forKey key: String) -> Value { base.value(forKey: renames[key] ?? key) }
    func value(atSlot slot: Int) -> Value { base.value(atSlot: slot) }
}
