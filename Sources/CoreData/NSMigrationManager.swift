public import Foundation
import MoultEngine
import MoultMapping
import MoultModel

/// The migration as a policy sees it: Core Data's `NSMigrationManager` over Moult's engine.
///
/// Objects made in ``destinationContext`` are made by the engine; ``associate(sourceInstance:withDestinationInstance:for:)``
/// and ``destinationInstances(forEntityMappingName:sourceInstances:)`` write and read Moult's
/// association tables. One manager serves every entity mapping of a migration step, as Core Data's
/// does, so ``userInfo`` is shared between them.
///
/// ```swift
/// try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
/// let post = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [source]).first
/// ```
///
/// What cannot be done (an unknown key, a mapping that does not exist, a source object changed) fails
/// the hook that asked, with the reason, once the hook returns: Core Data raises for these.
open class NSMigrationManager: NSObject {
    unowned let engine: MigrationManager
    /// The source store's objects (read-only).
    public private(set) var sourceContext: NSManagedObjectContext!
    /// The destination store's objects, as the run has made them so far.
    public private(set) var destinationContext: NSManagedObjectContext!
    /// Values a policy keeps across objects and mappings (a lookup table, say).
    ///
    /// In a chunked run it is kept with each chunk's checkpoint when it holds property-list values and
    /// objects; otherwise the mapping's pass runs in one chunk (see the article "Bringing your app's policies").
    public var userInfo: [AnyHashable: Any]?
    /// The entity mapping being run.
    public private(set) var currentEntityMapping: NSEntityMapping!
    private var mappings: [String: NSEntityMapping] = [:]
    private var failure: MigrationError?

    init(engine: MigrationManager) {
        self.engine = engine
        super.init()
        sourceContext = NSManagedObjectContext(side: .source, manager: self, model: engine.sourceModel)
        destinationContext = NSManagedObjectContext(side: .destination, manager: self, model: engine.destinationModel)
    }

    /// The manager over an engine's manager: made once, kept by the engine's manager for its life.
    static func over(_ engine: MigrationManager) throws -> NSMigrationManager {
        if let known = engine.attachment as? NSMigrationManager { return known }
        let manager = NSMigrationManager(engine: engine)
        try manager.restoreUserInfo()
        engine.attachment = manager
        engine.willTakeEvaluation = { [unowned manager] in try manager.recordUserInfo() }
        return manager
    }

    // MARK: - userInfo across chunks and resumes

    /// What ``recordUserInfo()`` last recorded.
    private var recordedUserInfo = "null"
    /// Where `userInfo` first held a value Moult cannot record, once it did.
    private var unrecordable: UserInfoRecord.Unrecordable?

    /// The `userInfo` the committed chunks recorded, on a resume; refuses a resume past a chunk whose
    /// `userInfo` could not be recorded.
    private func restoreUserInfo() throws {
        let state = engine.state(UserInfoRecord.namespace)
        if case .string(let reason)? = try state.value(forKey: UserInfoRecord.unrecordableKey) {
            throw MigrationError(
                .checkpointMismatch,
                """
                this run cannot be resumed: in the interrupted run, the policy's NSMigrationManager.userInfo came to hold                 what Moult cannot record with a chunk (\(reason)), so the chunks after it would not see what the policy                 remembered. Start the migration afresh (remove its work folder, or `moult abandon`); to make it resumable,                 keep property-list values and managed objects in userInfo
                """,
                mapping: engine.currentMapping?.name)
        }
        if case .string(let text)? = try state.value(forKey: UserInfoRecord.key) {
            recordedUserInfo = text
            userInfo = UserInfoRecord.decode(text, manager: self)
        }
    }

    /// Records `userInfo` with the chunk being handed to the writer, when it changed.
    func recordUserInfo() throws {
        guard unrecordable == nil else { return }
        do {
            let text = try UserInfoRecord.encode(userInfo)
            guard text != recordedUserInfo else { return }
            try engine.state(UserInfoRecord.namespace).set(.string(text), forKey: UserInfoRecord.key)
            recordedUserInfo = text
        } catch let error as UserInfoRecord.Unrecordable {
            unrecordable = error
            try engine.state(UserInfoRecord.namespace).set(.string(error.description), forKey: UserInfoRecord.unrecordableKey)
            let warning = "moult: warning: \(error.description), which Moult cannot record with a chunk: this run goes on in this "
                + "process with userInfo as the policy left it, but cannot be resumed if interrupted\n"
            FileHandle.standardError.write(Data(warning.utf8))
        }
    }

    func entityMapping(_ mapping: EntityMapping) -> NSEntityMapping {
        if let known = mappings[mapping.name], known.mapping == mapping { return known }
        let made = NSEntityMapping(mapping)
        mappings[mapping.name] = made
        return made
    }

    // MARK: - Failures a hook reports once it returns

    /// Records what went wrong in a call that cannot throw (the first one wins).
    func fail(_ message: String) {
        guard failure == nil else { return }
        failure = MigrationError(.evaluationFailed, message, mapping: engine.currentMapping?.name, entity: engine.currentMapping?.sourceEntityName)
    }

    func fail(_ error: any Error) {
        guard failure == nil else { return }
        failure = error as? MigrationError
            ?? MigrationError(.evaluationFailed, "\(error)", mapping: engine.currentMapping?.name, underlying: error)
    }

    /// Throws what a call reported since the last check.
    func throwFailure() throws {
        guard let failure else { return }
        self.failure = nil
        throw failure
    }

    // MARK: - Associations

    /// The destination objects the named entity mapping made from these source objects.
    open func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?) -> [NSManagedObject] {
        do {
            let ids = try engine.destinationInstances(forEntityMappingNamed: mappingName, sourceInstances: (sourceInstances ?? []).map(\.id))
            return ids.compactMap { destinationContext.object(for: $0) }
        } catch {
            fail(error)
            return []
        }
    }

    /// The source objects the named entity mapping made these destination objects from.
    open func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?) -> [NSManagedObject] {
        do {
            let ids = try engine.sourceInstances(forEntityMappingNamed: mappingName, destinationInstances: (destinationInstances ?? []).map(\.id))
            return ids.compactMap { sourceContext.object(for: $0) }
        } catch {
            fail(error)
            return []
        }
    }

    /// Records that the entity mapping made `destinationInstance` from `sourceInstance`.
    open func associate(sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject, for entityMapping: NSEntityMapping) {
        guard sourceInstance.managedObjectContext === sourceContext, destinationInstance.managedObjectContext === destinationContext else {
            return fail("associate(sourceInstance:withDestinationInstance:for:) takes a source object and a destination object")
        }
        do {
            try engine.associate(source: sourceInstance.id, destination: destinationInstance.id, mapping: entityMapping.mapping)
        } catch {
            fail(error)
        }
    }

    // MARK: - Models

    /// The source entity of an entity mapping.
    open func sourceEntity(for mapping: NSEntityMapping) -> NSEntityDescription? {
        mapping.sourceEntityName.flatMap { sourceContext.entityDescription(named: $0) }
    }

    /// The destination entity of an entity mapping.
    open func destinationEntity(for mapping: NSEntityMapping) -> NSEntityDescription? {
        mapping.destinationEntityName.flatMap { destinationContext.entityDescription(named: $0) }
    }

    /// The source model.
    public var sourceModel: NSManagedObjectModel { NSManagedObjectModel(engine.sourceModel) }
    /// The destination model.
    public var destinationModel: NSManagedObjectModel { NSManagedObjectModel(engine.destinationModel) }
    /// Always 0 in a streaming migration: its progress is reported as events.
    public var migrationProgress: Float { 0 }
}

/// One entity mapping, as a policy reads it.
open class NSEntityMapping: NSObject {
    let mapping: EntityMapping

    init(_ mapping: EntityMapping) {
        self.mapping = mapping
    }

    /// The mapping's name (`CarToCar`).
    public var name: String! { mapping.name }
    /// The mapping's user info (the values the mapping model gives it, as strings).
    public var userInfo: [AnyHashable: Any]? { mapping.userInfo }
    public var sourceEntityName: String? { mapping.sourceEntityName }
    public var destinationEntityName: String? { mapping.destinationEntityName }
    /// The policy class the mapping names.
    public var entityMigrationPolicyClassName: String? { mapping.entityMigrationPolicyClassName }
    /// The filter predicate's text.
    public var sourceExpressionText: String? { mapping.filterPredicate }

    open override var description: String { "NSEntityMapping(\(mapping.name))" }
}

/// A model, as a policy reads it.
open class NSManagedObjectModel: NSObject {
    let model: ObjectModel

    init(_ model: ObjectModel) {
        self.model = model
    }

    /// The model's entities, by name.
    public var entitiesByName: [String: NSEntityDescription] {
        Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, NSEntityDescription($0, in: model)) })
    }

    /// The model's entities.
    public var entities: [NSEntityDescription] { model.entities.map { NSEntityDescription($0, in: model) } }
}
