public import Foundation
import MoultEngine
import MoultMapping
import MoultModel

/// Core Data's base class of an app's migration policies, with its seven hooks; what `super` does in
/// each is what Core Data's does.
///
/// ```swift
/// final class Post2ToPost3MigrationPolicy: NSEntityMigrationPolicy {
///     override func createDestinationInstances(forSource sourceInstance: NSManagedObject,
///                                              in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
///         try super.createDestinationInstances(forSource: sourceInstance, in: mapping, manager: manager)
///         // …
///     }
/// }
/// ```
///
/// A subclass is registered with `PolicyRegistry.register(_:module:functions:as:)` (this module's), which
/// the policy build (`moult policies build`) writes for each class.
open class NSEntityMigrationPolicy: NSObject {
    /// The source object of the call being run, for `super.createDestinationInstances` and
    /// `super.createRelationships`.
    var engineSource: MigrationObject?
    /// The manager of the hook last run, for `FUNCTION($entityPolicy, …)` calls made inside it.
    weak var bridge: NSMigrationManager?

    public required override init() {}

    /// Called once when the mapping's stage-1 pass starts (again on resume). Does nothing.
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Makes the destination object of a source object from the mapping's attribute mappings and
    /// associates the two.
    open func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        guard let source = engineSource, source.objectID == sInstance.id else {
            throw MigrationError(
                .evaluationFailed, "super.createDestinationInstances(forSource:in:manager:) was given another object than the one migrated",
                mapping: mapping.mapping.name)
        }
        try manager.throwFailure()
        try manager.engine.createDefaultDestinationInstance(for: source, mapping: mapping.mapping)
    }

    /// Called once when the mapping's stage-1 pass is over. Does nothing.
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the destination object's relationships from the mapping's relationship mappings.
    open func createRelationships(forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        guard let source = engineSource else {
            throw MigrationError(
                .evaluationFailed, "super.createRelationships(forDestination:in:manager:) was called outside stage 2", mapping: mapping.mapping.name)
        }
        try manager.throwFailure()
        try manager.destinationContext.absorbingRelationshipWrites {
            try manager.engine.createDefaultRelationships(for: dInstance.id, source: source, mapping: mapping.mapping)
        }
    }

    /// Called once when the mapping's stage-2 pass is over. Does nothing.
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Checks of the policy's own, after the model's rules. Does nothing.
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called once when the whole migration of the mapping is over. Does nothing.
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
}
