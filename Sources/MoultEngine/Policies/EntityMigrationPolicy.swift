public import MoultMapping
public import MoultModel

/// Customises how one entity mapping migrates: Core Data's `NSEntityMigrationPolicy`, with its seven
/// hooks.
///
/// Every hook has a default that behaves as Core Data's base class does: ``createDestinationInstances(for:mapping:manager:)``
/// makes one destination object from the attribute mappings and associates it with its source, and
/// ``createRelationships(for:source:mapping:manager:)`` sets every relationship mapping. Override
/// only what differs.
///
/// The migration runs in chunks and may be resumed in another process: a policy keeps nothing in its
/// own stored properties that must outlive a chunk. What it must remember (for example "the company
/// already created for this name") goes in ``MigrationManager/state(_:)``, which commits with each
/// chunk and survives a resume.
///
/// ```swift
/// struct CompanyUniquingPolicy: EntityMigrationPolicy {
///     func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping,
///                                     manager: MigrationManager) throws {
///         guard case .string(let name) = source.value(forKey: "companyName") else { return }
///         let companies = manager.state("companies")
///         let company = try companies.objectID(forKey: name)
///             ?? manager.createObject(entity: "Company", values: ["name": .string(name)])
///         try companies.set(company, forKey: name)
///         try manager.associate(source: source.objectID, destination: company, mapping: mapping)
///     }
/// }
/// ```
public protocol EntityMigrationPolicy {
    /// Called once when the mapping starts a stage-1 pass (again on resume).
    func begin(mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 1: makes the destination objects for one source object.
    func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws
    /// Called once when the mapping's stage-1 pass is over.
    func endInstanceCreation(mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 2: sets the relationships of one destination object made from `source`.
    func createRelationships(
        for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws
    /// Called once when the mapping's stage-2 pass is over.
    func endRelationshipCreation(mapping: EntityMapping, manager: MigrationManager) throws
    /// Stage 3: checks of the policy's own, after the model's rules. Report problems with
    /// ``MigrationManager/reportValidationFailure(_:)``.
    func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws
    /// Called once when the whole migration of this mapping is over.
    func end(mapping: EntityMapping, manager: MigrationManager) throws
}

extension EntityMigrationPolicy {
    public func begin(mapping: EntityMapping, manager: MigrationManager) throws {}

    public func createDestinationInstances(
        for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try manager.createDefaultDestinationInstance(for: source, mapping: mapping)
    }

    public func endInstanceCreation(mapping: EntityMapping, manager: MigrationManager) throws {}

    public func createRelationships(
        for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try manager.createDefaultRelationships(for: destination, source: source, mapping: mapping)
    }

    public func endRelationshipCreation(mapping: EntityMapping, manager: MigrationManager) throws {}
    public func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws {}
    public func end(mapping: EntityMapping, manager: MigrationManager) throws {}
}

/// The policy of mappings that name none: Core Data's base `NSEntityMigrationPolicy`.
public struct DefaultMigrationPolicy: EntityMigrationPolicy {
    public init() {}
}
