import Foundation
public import MoultEngine
public import MoultExpressions
public import MoultMapping
public import MoultModel

/// A method of a policy a value expression calls (`FUNCTION($entityPolicy, "selector:", …)`): the
/// policy, the call's arguments (objects of the source context, `nil`, numbers as `NSNumber`), and the
/// manager, for a parameter of that type. The policy build writes one for each method of a policy class.
public typealias NSEntityMigrationPolicyFunction = (NSEntityMigrationPolicy, [Any?], NSMigrationManager) throws -> Any?

extension PolicyRegistry {
    /// Registers an app's `NSEntityMigrationPolicy` subclass under the names a mapping model may give
    /// it: `Module.Class` and `Class`.
    ///
    /// ```swift
    /// var policies = PolicyRegistry()
    /// policies.register(V2to3MakerPolicy.self, module: "CoreDataPlus")
    /// ```
    ///
    /// - Parameters:
    ///   - policy: The class.
    ///   - module: The app's module, as Xcode qualifies the class name in a mapping model; nil for none.
    ///   - functions: The methods value expressions call, by selector (`destinationTitleForSourceBookTitle:manager:`).
    ///   - name: The class name, when the mapping names it otherwise than the Swift class (as `@objc(Name)` does).
    public mutating func register<Policy: NSEntityMigrationPolicy>(
        _ policy: Policy.Type, module: String?, functions: [String: NSEntityMigrationPolicyFunction] = [:], as name: String? = nil
    ) {
        let name = name ?? String(describing: policy)
        let table = FunctionTable(functions)
        let factory: Factory = { CoreDataPolicy(policy: policy.init(), functions: table) }
        register(name, factory: factory)
        if let module, !module.isEmpty { register("\(module).\(name)", factory: factory) }
    }
}

/// A method table, shared by the policies of one class.
final class FunctionTable: @unchecked Sendable {
    // Immutable once made.
    let functions: [String: NSEntityMigrationPolicyFunction]

    init(_ functions: [String: NSEntityMigrationPolicyFunction]) {
        self.functions = functions
    }
}

/// The engine's policy protocol over an app's `NSEntityMigrationPolicy`: each hook hands the policy
/// Core Data's objects for the engine's, and fails with what a call the policy made could not do.
struct CoreDataPolicy: EntityMigrationPolicy, ExpressionFunctionHost {
    let policy: NSEntityMigrationPolicy
    let functions: FunctionTable

    private func run(_ manager: MigrationManager, source: MigrationObject? = nil, _ body: (NSMigrationManager) throws -> Void) throws {
        let bridge = try NSMigrationManager.over(manager)
        policy.bridge = bridge
        policy.engineSource = source
        defer { policy.engineSource = nil }
        do {
            try bridge.throwFailure()
            try body(bridge)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .evaluationFailed, "the policy \(type(of: policy)) failed: \(error)", mapping: manager.currentMapping?.name, underlying: error)
        }
        try bridge.throwFailure()
    }

    func begin(mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager) { try policy.begin($0.entityMapping(mapping), with: $0) }
    }

    func createDestinationInstances(for source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager, source: source) { bridge in
            guard let object = bridge.sourceContext.sourceObject(source) else { return }
            try policy.createDestinationInstances(forSource: object, in: bridge.entityMapping(mapping), manager: bridge)
        }
    }

    func endInstanceCreation(mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager) { try policy.endInstanceCreation(forMapping: $0.entityMapping(mapping), manager: $0) }
    }

    func createRelationships(for destination: ObjectID, source: MigrationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager, source: source) { bridge in
            _ = bridge.sourceContext.sourceObject(source)
            guard let object = bridge.destinationContext.object(for: destination) else { return }
            try policy.createRelationships(forDestination: object, in: bridge.entityMapping(mapping), manager: bridge)
        }
    }

    func endRelationshipCreation(mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager) { try policy.endRelationshipCreation(forMapping: $0.entityMapping(mapping), manager: $0) }
    }

    func performCustomValidation(mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager) { try policy.performCustomValidation(forMapping: $0.entityMapping(mapping), manager: $0) }
    }

    func end(mapping: EntityMapping, manager: MigrationManager) throws {
        try run(manager) { try policy.end($0.entityMapping(mapping), manager: $0) }
    }

    // MARK: - FUNCTION($entityPolicy, …)

    func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        guard let function = functions.functions[selector] else {
            let known = functions.functions.keys.sorted()
            throw MigrationError(
                .invalidMapping,
                "the policy \(type(of: policy)) has no method for the selector '\(selector)'"
                    + (known.isEmpty ? "" : " (its methods: \(known.joined(separator: ", ")))"))
        }
        guard let bridge = policy.bridge else {
            throw MigrationError(.evaluationFailed, "FUNCTION($entityPolicy, \"\(selector)\") was called outside the policy's hooks")
        }
        let values = arguments.map { Self.foundationValue($0, in: bridge) }
        let result: Any?
        do {
            result = try function(policy, values, bridge)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(.evaluationFailed, "\(type(of: policy)).\(selector) failed: \(error)", underlying: error)
        }
        try bridge.throwFailure()
        return try Self.value(of: result)
    }
}

extension CoreDataPolicy {
    /// An argument of a policy's method: objects of the source context (the values of `$source`).
    static func foundationValue(_ value: Value, in bridge: NSMigrationManager) -> Any? {
        switch value {
        case .object(let id): bridge.sourceContext.object(for: id)
        case .array(let values): values.map { foundationValue($0, in: bridge) }
        default: ValueBridge.foundationValue(value)
        }
    }

    /// What a policy's method returned, as the expression language holds it.
    static func value(of result: Any?) throws -> Value {
        switch result {
        case nil: return .null
        case let object as NSManagedObject: return .object(object.id)
        case let set as Set<NSManagedObject>: return .array(set.sorted { $0.id < $1.id }.map { .object($0.id) })
        case let ordered as NSOrderedSet: return .array(try ordered.array.map(value(of:)))
        case let array as [Any]: return .array(try array.map(value(of:)))
        case let set as NSSet: return .array(try set.allObjects.map(value(of:)))
        case let other?:
            guard let value = ValueBridge.untyped(other) else {
                throw MigrationError(.evaluationFailed, "a policy method returned a \(type(of: other)), which no attribute can hold")
            }
            return value
        }
    }
}

/// How the policy build's dispatch tables read a method's arguments: the call's values cast to the
/// parameter's type, the manager for an `NSMigrationManager` parameter.
public enum NSEntityMigrationPolicyArguments {
    /// The argument at `index`, as `type`.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.evaluationFailed` naming the selector when the call
    ///   has too few arguments or this one is of another type.
    public static func argument<T>(_ arguments: [Any?], _ index: Int, as type: T.Type, manager: NSMigrationManager, selector: String) throws -> T {
        if let manager = manager as? T, T.self == NSMigrationManager.self { return manager }
        guard index < arguments.count else {
            throw MigrationError(.evaluationFailed, "\(selector) was called with \(arguments.count) arguments; it takes more")
        }
        if let value = arguments[index] as? T { return value }
        let found = arguments[index].map { "\(Swift.type(of: $0))" } ?? "nil"
        throw MigrationError(.evaluationFailed, "argument \(index + 1) of \(selector) is \(found), not \(T.self)")
    }

    /// The argument at `index`, as an optional `type` (nil passes).
    public static func argument<T>(_ arguments: [Any?], _ index: Int, as type: T?.Type, manager: NSMigrationManager, selector: String) throws -> T? {
        guard index < arguments.count, let value = arguments[index] else { return nil }
        if let value = value as? T { return value }
        throw MigrationError(.evaluationFailed, "argument \(index + 1) of \(selector) is \(Swift.type(of: value)), not \(T.self)")
    }
}
