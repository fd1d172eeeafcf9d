public import Foundation
import MoultExpressions
import MoultMapping
import MoultModel
import MoultStore

/// One thing a finished migration got wrong, as ``MigrationVerifier`` finds it.
public struct VerificationFailure: Sendable, Hashable, CustomStringConvertible {
    /// The checks, in the order they run.
    public enum Check: String, Sendable, Hashable, CaseIterable {
        /// The destination's metadata: its entity hashes are the destination version's.
        case metadata
        /// Objects per entity mapping: the source's objects that pass the mapping's filter.
        case count
        /// A to-one key pointing at no row of the relationship's destination entity.
        case danglingKey = "dangling-key"
        /// A one-to-one relationship whose inverse does not point back.
        case inverse
        /// A join table row (or a to-many key column) naming an object that does not exist.
        case orphan
        /// The destination model's validation rules.
        case validation
        /// A sampled source object with no destination object holding the values its mapping gives.
        case sample
        /// An external binary data reference whose file is not beside the destination with the source's bytes.
        case externalData = "external-data"
    }

    public var check: Check
    public var message: String

    public init(check: Check, message: String) {
        self.check = check
        self.message = message
    }

    public var description: String { "\(check.rawValue): \(message)" }
}

/// What ``MigrationVerifier/run(report:)`` did.
public struct VerificationReport: Sendable, Hashable {
    /// Failures by check.
    public var failures: [VerificationFailure.Check: Int] = [:]
    /// Checks made, by check (a count per entity mapping, per relationship, per sampled object …).
    public var checked: [VerificationFailure.Check: Int] = [:]
    /// What was not checked, and why.
    public var skipped: [String] = []
    /// Source objects compared value by value.
    public var sampled = 0
    /// To-one keys naming no object that the destination keeps from the source, by `Entity.relationship`
    /// of the destination: not failures (Core Data's lightweight migration keeps them; see `dangling-key`).
    public var keptDangling: [String: Int] = [:]

    public var failureCount: Int { failures.values.reduce(0, +) }
    public var passed: Bool { failureCount == 0 }
}

/// Checks a finished migration against its source, in SQL over whole tables and one streamed pass
/// per sampled mapping, so that memory stays bounded by the sample:
/// - the destination's metadata hashes are the destination version's;
/// - objects per entity mapping (default policy, filter counted in SQL): the source's count with the
///   mapping's filter, per destination entity;
/// - to-one keys point at existing rows of the right entity; one-to-one inverses point back; join
///   tables and to-many key columns name existing objects;
/// - the destination model's validation rules (stage 3's, run again);
/// - a seeded sample of each mapping's source objects: a destination object of its entity holds the
///   values the mapping's attribute expressions give it.
///
/// For a one-step migration, counts come from SQL over the source (with each mapping's filter) and
/// the sample from the mapping's expressions on the source objects; a step with a filter SQLite cannot
/// run is replayed as a chain is. A chain's intermediate stores are
/// gone: its counts and sample come from replaying every step in memory on one source object at a
/// time (`checkChain`, `ChainReplay`), in one streamed pass over the source.
public struct MigrationVerifier {
    public let migration: ProgressiveMigration
    public let destination: URL
    /// Source objects compared per entity mapping.
    public var sampleSize: Int
    public var seed: UInt64

    public init(migration: ProgressiveMigration, destination: URL, sampleSize: Int = 100, seed: UInt64 = 1) {
        self.migration = migration
        self.destination = destination
        self.sampleSize = sampleSize
        self.seed = seed
    }

    /// The connections' settings: the migration's value size limit (``/MoultEngine/MigrationOptions/maxValueBytes``).
    var valueLimits: Database.Configuration { Database.Configuration(maxValueBytes: migration.options.maxValueBytes) }

    /// Runs every check, calling `report` with each failure as it is found.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` when a store cannot be read (`.io`, `.incompatibleStore`).
    public func run(report: @escaping (VerificationFailure) -> Void) throws -> VerificationReport {
        var result = VerificationReport()
        let tally = Tally()
        let fail: (VerificationFailure) -> Void = { failure in
            tally.failures[failure.check, default: 0] += 1
            report(failure)
        }
        let target = migration.targetVersion.model
        guard FileOperations.exists(destination.path) else {
            throw MigrationError(.io, "the destination \(destination.path) does not exist")
        }
        let store: SQLiteStore
        do {
            store = try SQLiteStore(url: destination, model: target, mode: .readOnly, configuration: valueLimits)
        } catch {
            // A file that cannot be read (a link at a companion's name, a permission) is an I/O failure, not another store.
            if let categorized = error as? any CategorizedError, categorized.category == .io {
                throw MigrationError(.io, "cannot open the destination \(destination.path): \(categorized.description)", underlying: error)
            }
            throw MigrationError(.incompatibleStore, "the destination \(destination.path) does not open as a store of \(migration.targetVersion.name): \(error)", underlying: error)
        }
        defer { store.database.close() }

        try checkMetadata(store, target, &result, fail)
        try checkRelationships(store, target, &result, fail)
        try checkExternalData(store, &result, fail)
        var validator = Validator(
            model: target, layout: store.layout, database: store.database, stopAtFirst: false,
            report: { failure in fail(VerificationFailure(check: .validation, message: failure.description)) })
        // One-to-ones are checked above, as inverses.
        validator.checksOneToOnes = false
        result.checked[.validation, default: 0] += 1
        try validator.run()

        if migration.steps.count == 1, let step = migration.steps.first {
            try checkMappings(step, store, &result, fail)
        } else if migration.steps.count > 1 {
            try checkChain(store, &result, fail)
        } else {
            result.skipped.append("counts and the sample: the source is already at the destination's version, so no step maps one onto the other")
        }
        result.failures = tally.failures
        return result
    }

    // MARK: - Metadata

    private func checkMetadata(_ store: SQLiteStore, _ model: ObjectModel, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        let metadata: StoreMetadata
        do {
            metadata = try StoreMetadata(reading: store.database)
        } catch {
            fail(VerificationFailure(check: .metadata, message: "the destination's metadata cannot be read: \(error)"))
            return
        }
        let expected = StoreMetadata(model: model).entityHashes
        for (entity, hash) in expected.sorted(by: { $0.key < $1.key }) {
            result.checked[.metadata, default: 0] += 1
            guard let found = metadata.entityHashes[entity] else {
                fail(VerificationFailure(check: .metadata, message: "the metadata has no hash for \(entity) (\(migration.targetVersion.name) has \(hash))"))
                continue
            }
            if found != hash {
                fail(VerificationFailure(check: .metadata, message: "the metadata's hash of \(entity) is \(found), \(migration.targetVersion.name)'s is \(hash)"))
            }
        }
        for entity in metadata.entityHashes.keys.sorted() where expected[entity] == nil {
            fail(VerificationFailure(check: .metadata, message: "the metadata has a hash for \(entity), which \(migration.targetVersion.name) does not have"))
        }
    }

    // MARK: - Relationships

    private func checkRelationships(_ store: SQLiteStore, _ model: ObjectModel, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        let layout = store.layout
        let database = store.database
        var keyColumnsSeen: Set<String> = []
        let fromSource = sourceDanglingKeys()
        for entity in layout.entities {
            for toOne in entity.toOneRelationships {
                guard let target = layout.entity(named: toOne.destination) else { continue }
                result.checked[.danglingKey, default: 0] += 1
                try database.forEachFinding(.danglingKeys(of: toOne, in: entity, target: target)) { key, value in
                    // The source's own dangling key, kept: what Core Data's lightweight migration does.
                    if let value, fromSource[target.table]?.contains(value) == true {
                        result.keptDangling["\(entity.name).\(toOne.name)", default: 0] += 1
                        return
                    }
                    fail(
                        VerificationFailure(
                            check: .danglingKey,
                            message: "\(entity.name) Z_PK \(key).\(toOne.name) points at Z_PK \(value ?? 0), which is no \(toOne.destination)"))
                }
                // A one-to-one relationship: the inverse points back.
                guard let relationship = model.relationship(named: toOne.name, of: entity.name),
                    let inverse = model.inverse(of: relationship), !inverse.isToMany,
                    let inverseColumn = target.toOne(named: inverse.name)
                else { continue }
                result.checked[.inverse, default: 0] += 1
                try database.forEachFinding(.inversesNotPointingBack(of: toOne, in: entity, target: target, inverse: inverseColumn)) { key, other in
                    fail(
                        VerificationFailure(
                            check: .inverse,
                            message: "\(entity.name) Z_PK \(key).\(toOne.name) is \(toOne.destination) Z_PK \(other ?? 0), whose \(inverse.name) does not point back"))
                }
            }
            for toMany in entity.toManyRelationships {
                guard let target = layout.entity(named: toMany.destination) else { continue }
                switch toMany.storage {
                case .joinTable(let table, let sourceColumn, let destinationColumn, _):
                    for (column, side, sideName) in [(sourceColumn, entity, entity.name), (destinationColumn, target, toMany.destination)] {
                        guard keyColumnsSeen.insert("\(table).\(column)").inserted else { continue }
                        result.checked[.orphan, default: 0] += 1
                        try database.forEachFinding(.orphans(inJoinTable: table, column: column, side: side)) { key, _ in
                            fail(VerificationFailure(check: .orphan, message: "the join table \(table) of \(entity.name).\(toMany.name) names \(sideName) Z_PK \(key), which does not exist"))
                        }
                    }
                case .destinationColumn(let table, let column, _, _):
                    // The inverse's column is checked as a to-one; a hidden key (no inverse) here.
                    guard target.toOneRelationships.contains(where: { $0.column == column }) == false,
                        keyColumnsSeen.insert("\(table).\(column)").inserted
                    else { continue }
                    result.checked[.orphan, default: 0] += 1
                    try database.forEachFinding(.orphanKeys(in: table, column: column, target: target, entity: entity)) { key, value in
                        fail(
                            VerificationFailure(
                                check: .orphan,
                                message: "\(toMany.destination) Z_PK \(key) is in \(entity.name).\(toMany.name) of Z_PK \(value ?? 0), which does not exist"))
                    }
                }
            }
        }
    }

    /// The keys the source's to-ones name that no object has, by the table they point into (a root
    /// entity's, whose name a migration keeps unless it renames the root): a destination to-one that
    /// holds one of them into the same table keeps the source's value. Empty for a source that is no
    /// SQLite store (an XML store cannot hold one).
    private func sourceDanglingKeys() -> [String: Set<Int64>] {
        guard let source = try? SQLiteStore(url: migration.store, model: migration.sourceVersion.model, mode: .readOnly, configuration: valueLimits)
        else { return [:] }
        defer { source.database.close() }
        var keys: [String: Set<Int64>] = [:]
        try? source.database.forEachDanglingToOne(in: source.layout) { _, _, target, _, value in
            if let value { keys[target.table, default: []].insert(value) }
        }
        return keys
    }

    // MARK: - Counts and the sample

    private func checkMappings(_ step: ProgressiveMigration.Step, _ store: SQLiteStore, _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void) throws {
        let plan = try migration.migrator(for: step, source: migration.store).plan()
        let entityMappings = step.mappings.flatMap(\.orderedEntityMappings)
        // A filter SQLite cannot run is counted by evaluating it on every object, and a value that
        // needs more than the object itself (a relationship, a function of the migration) is computed
        // with what the object reaches: the replay does both.
        let reaching = entityMappings.contains { mapping in
            mapping.attributeMappings.contains { attribute in
                guard let text = attribute.valueExpression else { return false }
                guard let node = try? ExpressionNode(parsing: text) else { return true }
                return !Self.readsOnlyItsObject(node)
            }
        }
        if reaching || plan.mappings.contains(where: { $0.filter != nil && !$0.filterInSQL }) {
            try checkChain(store, &result, fail)
            return
        }
        guard entityMappings.count == plan.mappings.count else {
            result.skipped.append("counts and the sample: the plan's mappings do not line up with the mapping models'")
            return
        }
        let source = try SQLiteStore(url: migration.store, model: step.from.model, mode: .readOnly, configuration: valueLimits)
        defer { source.database.close() }

        // Counts, per destination entity: every mapping making it must be countable.
        var expected: [String: Int] = [:]
        var uncountable: [String: String] = [:]
        var sampled: [(EntityMapping, MigrationPlan.Mapping)] = []
        for (index, mapping) in entityMappings.enumerated() {
            let planned = plan.mappings[index]
            guard let destinationEntity = planned.destinationEntity else { continue }
            let custom = mapping.entityMigrationPolicyClassName != nil || mapping.builtinPolicy != nil || mapping.effectiveType == .custom
            if custom {
                uncountable[destinationEntity] = "the entity mapping \(planned.name) runs a policy"
                continue
            }
            guard planned.sourceEntity != nil, mapping.effectiveType == .copy || mapping.effectiveType == .transform else { continue }
            let rows = plan.passes.filter { $0.mapping == index && $0.stage == .createObjects }.reduce(0) { $0 + $1.estimatedRows }
            expected[destinationEntity, default: 0] += rows
            sampled.append((mapping, planned))
        }
        for (entityName, why) in uncountable.sorted(by: { $0.key < $1.key }) where expected[entityName] == nil {
            result.skipped.append("the count of \(entityName): \(why)")
        }
        for (entityName, count) in expected.sorted(by: { $0.key < $1.key }) {
            if let why = uncountable[entityName] {
                result.skipped.append("the count of \(entityName): \(why)")
                continue
            }
            guard let entity = store.layout.entity(named: entityName) else { continue }
            result.checked[.count, default: 0] += 1
            guard let found = try store.database.objectCount(of: entity) else { continue }
            if Int(found) != count {
                let mappings = sampled.filter { $0.1.destinationEntity == entityName }.map(\.1.name).joined(separator: ", ")
                fail(
                    VerificationFailure(
                        check: .count, message: "\(entityName): \(found) objects in the destination, \(count) source objects pass \(mappings)"))
            }
        }
        if sampleSize > 0 {
            for (mapping, planned) in sampled {
                try compareSample(mapping, planned, step, source, store, &result, fail)
            }
        }
    }

    /// An attribute the sample compares: its column, the mapping's expression of it, whether it is
    /// optional, and how its value changes between external and inline storage.
    private typealias ComparedAttribute = (
        column: AttributeColumn, expression: CompiledExpression, optional: Bool, conversion: ExternalDataReference.Conversion?
    )

    /// Reservoir-samples the source objects of a mapping that pass its filter (seeded), evaluates the
    /// mapping's attribute expressions on each, then streams the destination entity once to find an
    /// object holding those values.
    private func compareSample(
        _ mapping: EntityMapping, _ planned: MigrationPlan.Mapping, _ step: ProgressiveMigration.Step, _ source: SQLiteStore, _ store: SQLiteStore,
        _ result: inout VerificationReport, _ fail: (VerificationFailure) -> Void
    ) throws {
        guard let sourceName = planned.sourceEntity, let destinationName = planned.destinationEntity,
            let sourceEntity = source.layout.entity(named: sourceName), let destinationEntity = store.layout.entity(named: destinationName)
        else { return }
        let schema = CompiledMapping.schema(of: sourceEntity)
        var schemas: [String: KeySchema] = [:]
        for entity in source.layout.entities { schemas[entity.name] = CompiledMapping.schema(of: entity) }
        let variables = VariableLayout(["source"])
        let compiler = ExpressionCompiler(schema: schema, schemas: schemas, variables: variables)
        var filter: CompiledPredicate?
        if let text = mapping.filterPredicate, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let compiled = try? compiler.compilePredicate(text) else {
                result.skipped.append("the sample of \(planned.name): its filter does not compile here")
                return
            }
            filter = compiled
        }
        let compared = comparedAttributes(mapping, planned, step, destinationEntity, schema: schema, compiler: compiler, &result)
        guard !compared.isEmpty else {
            result.skipped.append("the sample of \(planned.name): no attribute to compare")
            return
        }
        let sample = try reservoir(of: planned, source, schema: schema, variables: variables, filter: filter, compared: compared)
        // Values a required attribute gets when nil are the model's default: not compared.
        let positions = compared.indices.filter { index in
            compared[index].optional || !sample.items.contains { $0.values[index].isNull }
        }
        // A value that may be kept in a file is compared by its bytes, on both sides.
        let external = Set(compared.indices.filter { step.to.model.attribute(named: compared[$0].column.name, of: destinationName)?.allowsExternalBinaryDataStorage == true })
        var missing: [[Value]: [Int64]] = [:]
        for item in sample.items {
            let values = try positions.map { index in
                external.contains(index) ? try Self.content(item.values[index], folder: ExternalDataReference.folder(besideStore: migration.store)) : item.values[index]
            }
            missing[values, default: []].append(item.key)
        }
        let cursorOut = try store.objects(of: destinationName, includingSubentities: false)
        while !missing.isEmpty, let row = try cursorOut.next() {
            let values = try positions.map { index -> Value in
                guard let slot = cursorOut.shape.slot(of: compared[index].column.name) else { return .null }
                return external.contains(index) ? try Self.content(row[slot], folder: ExternalDataReference.folder(besideStore: self.destination)) : row[slot]
            }
            missing[values] = nil
        }
        result.sampled += sample.items.count
        result.checked[.sample, default: 0] += sample.items.count
        if let firstError = sample.firstError {
            result.skipped.append("the sample of \(planned.name): \(sample.uncomputed) sampled object(s) whose values could not be computed here, first \(firstError)")
        }
        Self.reportMissing(missing, attributes: positions.map { compared[$0].column.name }, fail) { key, described in
            "no \(destinationName) in the destination holds what \(planned.name) makes of \(sourceName) Z_PK \(key): \(described)"
        }
    }

    /// Reports a `.sample` failure for each sampled object whose values (of `attributes`, in order) no
    /// destination object holds, grouped by those values, in the order of each group's first object.
    static func reportMissing<Key: Comparable>(
        _ missing: [[Value]: [Key]], attributes: [String], _ fail: (VerificationFailure) -> Void, message: (Key, String) -> String
    ) {
        for (values, keys) in missing.sorted(by: { $0.value[0] < $1.value[0] }) {
            let described = zip(attributes, values).map { "\($0) = \($1)" }.joined(separator: ", ")
            for key in keys { fail(VerificationFailure(check: .sample, message: message(key, described))) }
        }
    }

    /// The attributes the sample compares: those with an expression that compiles and reads only the
    /// object (what does not compile is said in `result`'s skipped).
    private func comparedAttributes(
        _ mapping: EntityMapping, _ planned: MigrationPlan.Mapping, _ step: ProgressiveMigration.Step, _ destinationEntity: EntityLayout,
        schema: KeySchema, compiler: ExpressionCompiler, _ result: inout VerificationReport
    ) -> [ComparedAttribute] {
        guard let sourceName = planned.sourceEntity, let destinationName = planned.destinationEntity else { return [] }
        var compared: [ComparedAttribute] = []
        for column in destinationEntity.attributes {
            let description = step.to.model.attribute(named: column.name, of: destinationName)
            if description?.isTransient == true { continue }
            let text: String
            if let propertyMapping = mapping.attributeMapping(named: column.name) {
                guard let expression = propertyMapping.valueExpression ?? (schema.slot(of: column.name) != nil ? PropertyMapping.sourceValue(column.name) : nil)
                else { continue }
                text = expression
            } else if mapping.effectiveType == .copy, schema.slot(of: column.name) != nil {
                text = PropertyMapping.sourceValue(column.name)
            } else {
                continue
            }
            guard let expression = try? compiler.compileExpression(text) else {
                result.skipped.append("the sample of \(planned.name).\(column.name): its expression \(text) does not compile here")
                continue
            }
            let conversion = ExternalDataConversion.of(
                expression.node, source: sourceName, destination: destinationName, attribute: column.name, sourceModel: step.from.model,
                destinationModel: step.to.model)
            compared.append((column, expression, description?.isOptional ?? true, conversion))
        }
        return compared
    }

    /// A seeded sample of a mapping's source objects that pass its filter.
    private struct Sample {
        /// Each sampled object's primary key and the values its mapping gives the compared attributes.
        var items: [(key: Int64, values: [Value])] = []
        /// The sampled objects whose values could not be computed, and the first reason.
        var uncomputed = 0
        var firstError: String?
    }

    /// A seeded reservoir of the source objects of a mapping that pass its filter, with the values its
    /// expressions give each, in one streamed pass over the source entity.
    private func reservoir(
        of planned: MigrationPlan.Mapping, _ source: SQLiteStore, schema: KeySchema, variables: VariableLayout, filter: CompiledPredicate?,
        compared: [ComparedAttribute]
    ) throws -> Sample {
        guard let sourceName = planned.sourceEntity else { return Sample() }
        var random = SplitMix64(seed: seed ^ UInt64(truncatingIfNeeded: planned.name.hashValueStable))
        var sample = Sample()
        var seen = 0
        let cursor = try source.objects(of: sourceName, includingSubentities: false)
        while let row = try cursor.next() {
            var values = row.values
            values += Array(repeating: .null, count: max(schema.keys.count - values.count, 0))
            let object = MigrationObject(objectID: row.id, entityName: sourceName, schema: schema, values: values)
            var context = EvaluationContext(object: object, variables: variables)
            context[variable: "source"] = .object(object)
            if let filter {
                guard (try? filter.evaluate(context)) == true else { continue }
            }
            seen += 1
            let slot = seen <= sampleSize ? seen - 1 : Int(random.next() % UInt64(seen))
            guard slot < sampleSize else { continue }
            var expected: [Value] = []
            var comparable = true
            for item in compared {
                var value: Value
                do {
                    value = try item.expression.evaluate(context)
                    if let conversion = item.conversion {
                        value = try ExternalDataConversion.apply(conversion, to: value, folder: ExternalDataReference.folder(besideStore: migration.store))
                    }
                } catch {
                    sample.uncomputed += 1
                    if sample.firstError == nil { sample.firstError = "\(item.column.name) of \(sourceName) Z_PK \(row.id.primaryKey): \(error)" }
                    comparable = false
                    break
                }
                let coerced = DefaultValues.coerce(value, to: item.column.type)
                expected.append(coerced)
            }
            guard comparable else { continue }
            if slot < sample.items.count { sample.items[slot] = (row.id.primaryKey, expected) } else { sample.items.append((row.id.primaryKey, expected)) }
        }
        return sample
    }
}

extension MigrationVerifier {
    /// Whether a value expression reads nothing but its object's own attributes (constants, `$source.x`,
    /// `x`, arithmetic and functions of those): what the one-step sample computes without the replay.
    static func readsOnlyItsObject(_ node: ExpressionNode) -> Bool {
        switch node {
        case .constant, .evaluatedObject: return true
        case .variable(let name): return name == "source"
        case .array(let items): return items.allSatisfy(readsOnlyItsObject)
        case .keyPath(let base, let components):
            guard components.count == 1 else { return false }
            if case .evaluatedObject = base { return true }
            if case .variable("source") = base { return true }
            return false
        case .negate(let inner), .cast(let inner, _): return readsOnlyItsObject(inner)
        case .arithmetic(_, let left, let right): return readsOnlyItsObject(left) && readsOnlyItsObject(right)
        case .function(let receiver, _, let arguments): return receiver == nil && arguments.allSatisfy(readsOnlyItsObject)
        case .subscripted, .ternary: return false
        }
    }
}

/// Failures counted as they are reported.
private final class Tally {
    var failures: [VerificationFailure.Check: Int] = [:]
}

/// A small seeded generator (SplitMix64): the same seed gives the same sequence on every platform, so
/// a verification's sample and a generated dataset (the People generator uses it too) are reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension String {
    /// A hash that is the same in every process (Swift's `hashValue` is seeded per process).
    var hashValueStable: Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(truncatingIfNeeded: hash)
    }
}
