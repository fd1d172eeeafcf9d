public import MoultMapping
public import MoultModel

/// The policies a migration can run, found for each entity mapping.
///
/// A mapping's policy is, in this order:
/// 1. what its class name (`entityMigrationPolicyClassName`) is bound to with ``bind(_:to:)`` (the
///    command line's `--policy Class=…`): a built-in policy, or Core Data's default policy;
/// 2. the built-in policy the mapping itself names (``/MoultMapping/EntityMapping/builtinPolicy``, JSON only);
/// 3. Core Data's default policy when it names no class (or `NSEntityMigrationPolicy`);
/// 4. the policy registered under its class name with ``register(_:factory:)``.
///
/// Anything else is refused (``resolve(_:source:destination:)``). Xcode writes class names qualified
/// by the module (`MyApp.CompanyPolicy`, or Core Data's `REPLACE_AT_RUNTIME.` placeholder): names are
/// compared as written, then by their last component.
///
/// ```swift
/// var registry = PolicyRegistry()
/// registry.register("AdultToCompanyPolicy") { CompanyUniquingPolicy() }
/// registry.bind("MyApp.TagPolicy", to: .builtin(try BuiltinPolicy(parsing: "split(key: tags)")))
/// ```
public struct PolicyRegistry: Sendable {
    public typealias Factory = @Sendable () -> any EntityMigrationPolicy

    /// What a class name is bound to instead of its compiled class.
    public enum Binding: Sendable, Hashable, CustomStringConvertible {
        /// Core Data's default policy (`NSEntityMigrationPolicy`): the class's own behaviour is skipped.
        case coreDataDefault
        /// A built-in policy.
        case builtin(BuiltinPolicy)

        /// Reads `default` or `builtin:<policy>` (see ``BuiltinPolicy``).
        ///
        /// - Throws: ``MigrationError`` `.invalidMapping` saying what is wrong.
        public init(parsing text: String) throws {
            let trimmed = text.trimmingWhiteSpace
            if trimmed == "default" {
                self = .coreDataDefault
            } else if trimmed.hasPrefix("builtin:") {
                self = .builtin(try BuiltinPolicy(parsing: trimmed))
            } else {
                throw MigrationError(
                    .invalidMapping,
                    "'\(text)' is neither 'default' nor 'builtin:<policy>'; the built-in policies are:\n\(BuiltinPolicy.usage)")
            }
        }

        public var description: String {
            switch self {
            case .coreDataDefault: "default"
            case .builtin(let policy): "builtin:\(policy)"
            }
        }
    }

    /// Where a mapping's policy comes from.
    public enum Source: Sendable, Hashable {
        /// Core Data's default policy: the mapping names no class.
        case noClass
        /// The class name is bound (the matching name as bound, and the binding).
        case bound(String, Binding)
        /// The mapping names a built-in policy.
        case builtin(BuiltinPolicy)
        /// The class is registered (under this name).
        case registered(String)
    }

    private var factories: [String: Factory] = [:]
    private var bindings: [String: Binding] = [:]

    public init() {}

    /// Registers a policy under a name; a later registration under the same name replaces it.
    public mutating func register(_ name: String, factory: @escaping Factory) {
        factories[name] = factory
    }

    /// Binds a class name to a built-in policy or to Core Data's default one; a binding wins over a
    /// registered class of that name and over the mapping's own built-in policy.
    public mutating func bind(_ className: String, to binding: Binding) {
        bindings[className] = binding
    }

    /// The names registered.
    public var names: [String] { factories.keys.sorted() }

    /// The class names bound, with their bindings.
    public var boundNames: [(className: String, binding: Binding)] {
        bindings.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Where the policy of a mapping comes from.
    ///
    /// - Throws: ``MigrationError`` `.missingPolicy` (exit code 66) naming the class and how to bind
    ///   it; `.invalidMapping` when the mapping's built-in policy cannot be read.
    public func source(for mapping: EntityMapping) throws -> Source {
        let className = mapping.entityMigrationPolicyClassName.flatMap { name in
            name.isEmpty || name == "NSEntityMigrationPolicy" ? nil : name
        }
        if let className, let (name, binding) = Self.lookUp(className, in: bindings) { return .bound(name, binding) }
        if let text = mapping.builtinPolicy {
            do {
                return .builtin(try BuiltinPolicy(parsing: text))
            } catch var error as MigrationError {
                error.mapping = mapping.name
                throw error
            }
        }
        guard let className else { return .noClass }
        if let (name, _) = Self.lookUp(className, in: factories) { return .registered(name) }
        throw missingPolicyError(className, mapping: mapping)
    }

    /// A new policy for a mapping, checked against the step's models when they are given.
    ///
    /// - Throws: ``MigrationError`` `.missingPolicy` (66) when the mapping names a class that is
    ///   neither bound nor registered; `.invalidMapping` (65) when a built-in policy cannot be read or
    ///   names attributes the models lack.
    public func resolve(_ mapping: EntityMapping, source: ObjectModel? = nil, destination: ObjectModel? = nil) throws
        -> any EntityMigrationPolicy
    {
        let builtin: BuiltinPolicy
        switch try self.source(for: mapping) {
        case .noClass, .bound(_, .coreDataDefault):
            return DefaultMigrationPolicy()
        case .registered(let name):
            return factories[name]!()
        case .bound(_, .builtin(let policy)), .builtin(let policy):
            builtin = policy
        }
        if let source, let destination { try builtin.check(mapping: mapping, source: source, destination: destination) }
        return builtin.makePolicy()
    }

    /// A new policy for a mapping: nil when it cannot be resolved (see ``resolve(_:source:destination:)``).
    public func policy(for mapping: EntityMapping) -> (any EntityMigrationPolicy)? {
        try? resolve(mapping)
    }

    private static func lookUp<T>(_ className: String, in table: [String: T]) -> (String, T)? {
        if let value = table[className] { return (className, value) }
        let last = lastComponent(className)
        let matches = table.filter { lastComponent($0.key) == last }.sorted { $0.key < $1.key }
        return matches.first.map { ($0.key, $0.value) }
    }

    private static func lastComponent(_ name: String) -> Substring {
        name.split(separator: ".").last ?? Substring(name)
    }

    private func missingPolicyError(_ className: String, mapping: EntityMapping) -> MigrationError {
        let short = Self.lastComponent(className)
        let registered = names.isEmpty ? "none is registered" : "registered: \(names.joined(separator: ", "))"
        return MigrationError(
            .missingPolicy,
            """
            the entity mapping names the policy class '\(className)', which is neither registered nor bound (\(registered)). \
            Bind it to a built-in policy (--policy \(short)=builtin:unique(key: <attribute>), or builtin:split(…)), \
            or to Core Data's default policy, skipping what the class does (--policy \(short)=default); \
            or build a command with the class registered (see Datasets/People/CLI)
            """,
            mapping: mapping.name, entity: mapping.sourceEntityName)
    }
}

extension String {
    var trimmingWhiteSpace: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}
