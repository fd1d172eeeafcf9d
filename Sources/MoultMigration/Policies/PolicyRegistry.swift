public import MoultMapping

/// Policies by the name a mapping gives them (`entityMigrationPolicyClassName`).
///
/// Xcode writes class names qualified by the module (`MyApp.CompanyPolicy`, or Core Data's
/// `REPLACE_AT_RUNTIME.` placeholder): a name is looked up as written, then by its last component.
///
/// ```swift
/// var registry = PolicyRegistry()
/// registry.register("AdultToCompanyPolicy") { CompanyUniquingPolicy() }
/// ```
public struct PolicyRegistry: Sendable {
    public typealias Factory = @Sendable () -> any EntityMigrationPolicy

    private var factories: [String: Factory] = [:]

    public init() {}

    /// Registers a policy under a name; a later registration under the same name replaces it.
    public mutating func register(_ name: String, factory: @escaping Factory) {
        factories[name] = factory
    }

    /// The names registered.
    public var names: [String] { factories.keys.sorted() }

    /// A new policy for a mapping: the registered one, the default when the mapping names none, or nil
    /// when it names one that is not registered.
    public func policy(for mapping: EntityMapping) -> (any EntityMigrationPolicy)? {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty, name != "NSEntityMigrationPolicy" else {
            return DefaultMigrationPolicy()
        }
        if let factory = factories[name] { return factory() }
        if let last = name.split(separator: ".").last, let factory = factories[String(last)] { return factory() }
        return nil
    }
}
