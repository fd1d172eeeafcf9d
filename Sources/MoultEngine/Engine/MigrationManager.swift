import Foundation
import MoultAssociations
import MoultExpressions
public import MoultMapping
public import MoultModel
import MoultStore

/// Runs entity mappings from a source store into a destination store, chunk by chunk: Core Data's
/// `NSMigrationManager`, streaming.
///
/// Policies see the manager: they create destination objects (``createObject(entity:values:)``),
/// record associations (``associate(source:destination:mapping:)``), look them up
/// (``destinationInstances(forEntityMappingNamed:sourceInstances:)``), and keep state across chunks
/// (``state(_:)``). Value expressions reach it as `$manager`.
///
/// Nothing a policy does through it is written at once: the chunk's objects, links, attributes and
/// state are recorded in the chunk's evaluation, which its later look-ups see, and the engine's chunk
/// writer writes them in the chunk's transaction (see `EvaluatedChunk`).
///
/// A manager is made and driven by the engine for a driver (`StreamingMigrator` of MoultMigration); it is
/// confined to the thread that runs the migration.
///
/// Its work is in files by role: creating objects (stage 1, `MigrationManager+Insert`), associations
/// (`+Associations`), relationships object by object and as set operations (stage 2,
/// `+Relationships`, `+RelationshipSets`), reading the source (`+SourceReading`), and `$manager` in
/// expressions (`+ExpressionHost`).
public final class MigrationManager {
    public let sourceModel: ObjectModel
    public let destinationModel: ObjectModel
    /// Free-form values for policies (Core Data's `userInfo`), not persisted across a resume.
    public var userInfo: [String: Value] = [:]
    /// The entity mapping being run.
    public private(set) var currentMapping: EntityMapping?
    /// The stage being run.
    public private(set) var currentStage: MigrationStage = .preparing

    /// The source, read object by object.
    let sourceStore: any StoreReading
    /// The source's SQL capability (see `Session`): nil for a store type without SQL, whose chunks take
    /// the per-object path.
    let sqlSource: (any SQLFastPaths)?
    let destinationStore: SQLiteStore
    let writer: StoreWriter
    var destination: Database { destinationStore.database }
    var sourceLayout: StoreLayout { sourceStore.layout }
    var destinationLayout: StoreLayout { destinationStore.layout }
    let associations: any AssociationTable
    var mappings: [CompiledMapping] = []
    var mappingIndexByName: [String: Int] = [:]
    let variables = VariableLayout(["source", "destination", "manager", "entityMapping", "entityPolicy", "propertyMapping"])
    var context: EvaluationContext
    let sourceSlot: Int
    let destinationSlot: Int

    /// The folder holding the source's external binary data files (see ``ExternalDataConversion``), and
    /// the largest file read into a row.
    var externalData: (folder: URL, maxBytes: Int)?

    private var failures: [ValidationFailure] = []
    private(set) var failureCount = 0
    static let failureLimit = 10_000

    /// Mappings whose bulk-copied chunks write no associations (see ``UnreadAssociations``).
    var unreadAssociations: Set<Int> = []
    /// The source key of a destination object made by a chunk of such a mapping: (mapping index,
    /// destination key) → source key. Set by the session, which knows the plan.
    var unwrittenSource: ((Int, Int64) -> Int64?)?

    /// The compiled mapping being run.
    private(set) var currentCompiled: CompiledMapping?

    /// What a layer over the manager keeps for the manager's life (the CoreData module's
    /// `NSMigrationManager`; see `MigrationManager+ObjectGraph`).
    package var attachment: AnyObject?
    /// Counts the chunks begun: a layer that caches objects drops them when it changes.
    package private(set) var evaluationGeneration = 0
    /// Called before each evaluation is handed to the chunk writer: a layer records there what must
    /// commit with the chunk (the CoreData module's `userInfo`).
    package var willTakeEvaluation: (() throws -> Void)?
    /// Called after stage 2's default sets a relationship (its name, the object, the targets: a
    /// to-one's first, a to-many's added), for a layer that caches objects (the CoreData module's
    /// context, around `super.createRelationships`).
    package var didSetRelationship: ((String, ObjectID, [ObjectID]) -> Void)?
    /// Whether a layer's fetches in the destination run their predicates in SQL where they can
    /// (``MigrationOptions/fetchesInSQL``).
    package var fetchesInSQL = true

    /// The chunk being evaluated: what policies and mappings create, relate, set and remember is
    /// recorded there, not written (see ``EvaluatedChunk``).
    let evaluation = ChunkEvaluation()
    /// The mappings that migrate an object reached through a source relationship, worked out once per
    /// (mapping, relationship, entity) (see ``mappings(migrating:through:)``).
    var sourceRelationshipMappings: [SourceRelationshipKey: [Int]] = [:]
    /// How each relationship of each destination entity is written (see ``relationshipWrite(_:entity:)``).
    var relationshipWrites: [RelationshipKey: RelationshipWrite] = [:]
    /// How each relationship of each destination entity is unset (see ``relationshipRemoval(_:entity:)``).
    var relationshipRemovals: [RelationshipKey: RelationshipRemoval] = [:]
    /// The set form of each mapping's stage 2, by mapping index: nil inside when it has none (see
    /// ``setWrite(for:)``).
    var setWrites: [Int: SetWrite?] = [:]

    init(
        source: any StoreReading, sqlSource: (any SQLFastPaths)?, destination: SQLiteStore, sourceModel: ObjectModel,
        destinationModel: ObjectModel, associations: any AssociationTable
    ) throws {
        self.sourceStore = source
        self.sqlSource = sqlSource
        self.destinationStore = destination
        self.writer = try destination.makeWriter()
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.associations = associations
        context = EvaluationContext(variables: variables)
        sourceSlot = variables.slot(adding: "source")
        destinationSlot = variables.slot(adding: "destination")
        // Unowned, like the resolver: the context is the manager's own, and a strong reference back
        // would keep every finished step's manager, and its open stores, alive.
        context.host = ManagerHost(manager: self)
        context.resolver = SourceResolver(manager: self)
        context[variable: "manager"] = .value(.string("manager"))
    }

    func install(_ mappings: [CompiledMapping]) {
        self.mappings = mappings
        mappingIndexByName = [:]
        for mapping in mappings where mappingIndexByName[mapping.name] == nil {
            mappingIndexByName[mapping.name] = mapping.index
        }
        for mapping in mappings where mappingIndexByName[mapping.mapping.name] == nil {
            mappingIndexByName[mapping.mapping.name] = mapping.index
        }
    }

    // MARK: - Driving

    func compiled(_ mapping: EntityMapping) throws -> CompiledMapping {
        if let current = currentCompiled, current.mapping == mapping { return current }
        guard let index = mappingIndexByName[mapping.name] else {
            throw MigrationError(.invalidMapping, "the entity mapping '\(mapping.name)' is not part of this migration")
        }
        return mappings[index]
    }

    /// Starts evaluating a chunk: primary keys continue from the writer's.
    func beginEvaluation() {
        evaluationGeneration &+= 1
        let (writer, layout) = (writer, destinationLayout)
        evaluation.begin(mapping: currentMapping?.name) { root in
            (try? layout.entity(number: root).map { try writer.lastPrimaryKey(for: $0.name) } ?? 0) ?? 0
        }
    }

    /// What was evaluated since ``beginEvaluation()``, handed to the chunk writer.
    func takeEvaluated() throws -> EvaluatedChunk {
        try willTakeEvaluation?()
        return evaluation.take()
    }

    func enter(_ mapping: CompiledMapping?, stage: MigrationStage) {
        currentCompiled = mapping
        currentMapping = mapping?.mapping
        currentStage = stage
        context[variable: "entityMapping"] = .value(mapping.map { .string($0.name) } ?? .null)
    }

    // MARK: - Policies' state

    /// A policy's state that survives chunks and resumes: it commits with each chunk, in the
    /// destination's transaction, and is removed when the migration ends.
    public func state(_ namespace: String) -> PolicyState {
        PolicyState(database: destination, namespace: namespace, evaluation: evaluation)
    }

    /// Records a validation failure found by a policy's ``EntityMigrationPolicy/performCustomValidation(mapping:manager:)``.
    public func reportValidationFailure(_ failure: ValidationFailure) {
        failureCount += 1
        guard failures.count < Self.failureLimit else { return }
        var failure = failure
        if failure.sourceEntity == nil, let origin = sourceObject(ofDestination: failure.entity, primaryKey: failure.primaryKey) {
            failure.sourceEntity = origin.entity
            failure.sourcePrimaryKey = origin.primaryKey
        }
        failures.append(failure)
    }

    /// The source object a destination object was made from, by the association table of the
    /// mappings that make objects of its entity, or by the chunks recorded for those whose
    /// associations were not written (nil for an object no mapping made from a source).
    func sourceObject(ofDestination entity: String, primaryKey: Int64) -> (entity: String, primaryKey: Int64)? {
        guard let number = destinationLayout.entity(named: entity)?.number else { return nil }
        let destination = ObjectID(entity: number, primaryKey: primaryKey)
        for mapping in mappings where mapping.mapping.destinationEntityName == entity && mapping.mapping.sourceEntityName != nil {
            if let source = (try? associations.sources(forMapping: mapping.index, destination: destination))?.first,
                let layout = sourceLayout.entity(number: source.entity)
            {
                return (layout.name, source.primaryKey)
            }
            if unreadAssociations.contains(mapping.index), let key = unwrittenSource?(mapping.index, primaryKey),
                let layout = mapping.source
            {
                return (layout.name, key)
            }
        }
        return nil
    }

    var validationFailures: [ValidationFailure] { failures }
}

@available(*, unavailable)
extension MigrationManager: Sendable {}
