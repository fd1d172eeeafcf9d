public import MoultModel
import Synchronization

/// Everything an evaluation needs besides the compiled expression: the object, variables, the
/// function host and the object resolver.
///
/// Make one per stream of rows and change ``object`` per row: evaluation itself allocates nothing
/// for plain key paths and arithmetic.
///
/// ```swift
/// var context = EvaluationContext(variables: compiler.variables)
/// context.host = migrationManager
/// for record in rows {
///     context.object = record
///     let celsius = try compiled.evaluate(context)
/// }
/// ```
///
/// Thread-confined: use one per thread.
public struct EvaluationContext {
    /// The object evaluated on: `SELF`, bare key paths (`age`) and `$source` all denote it.
    public var object: (any ObjectRecord)?
    /// Answers `FUNCTION` calls on `$manager`, `$entityPolicy` and unknown selectors.
    public var host: (any ExpressionFunctionHost)?
    /// Resolves relationship values for key paths that go through them.
    public var resolver: (any ObjectResolver)?
    /// The layout the variables were compiled against.
    public let layout: VariableLayout
    /// Variable values by slot of ``layout``.
    var variableValues: [VariableValue]

    /// A context for expressions compiled with a compiler whose variables are `variables`.
    public init(
        object: (any ObjectRecord)? = nil, variables: VariableLayout = VariableLayout(),
        host: (any ExpressionFunctionHost)? = nil, resolver: (any ObjectResolver)? = nil
    ) {
        self.object = object
        self.host = host
        self.resolver = resolver
        self.layout = variables
        self.variableValues = Array(repeating: .unbound, count: variables.count)
    }

    /// The value of a variable (`$destination`, a user variable …), by name.
    ///
    /// Setting a name the layout does not know does nothing: no compiled expression reads it.
    public subscript(variable name: String) -> VariableValue {
        get {
            guard let slot = layout.slot(of: name), slot < variableValues.count else { return .unbound }
            return variableValues[slot]
        }
        set {
            guard let slot = layout.slot(of: name) else { return }
            if slot >= variableValues.count {
                variableValues.append(contentsOf: Array(repeating: .unbound, count: slot + 1 - variableValues.count))
            }
            variableValues[slot] = newValue
        }
    }

    /// The value of a variable by its slot in ``layout`` (no name look-up: for per-row updates).
    public subscript(variableSlot slot: Int) -> VariableValue {
        get { slot < variableValues.count ? variableValues[slot] : .unbound }
        set {
            if slot >= variableValues.count {
                variableValues.append(contentsOf: Array(repeating: .unbound, count: slot + 1 - variableValues.count))
            }
            variableValues[slot] = newValue
        }
    }
}

@available(*, unavailable)
extension EvaluationContext: Sendable {}

/// The value of a variable in an ``EvaluationContext``.
public enum VariableValue {
    /// Not set: evaluating the variable is an error.
    case unbound
    /// A plain value.
    case value(Value)
    /// An object: key paths on the variable read its properties.
    case object(any ObjectRecord)
}

/// The variables a compiler has seen, each with a slot, shared between a compiler and the contexts
/// of its expressions.
///
/// Thread-safe: compilers add names while contexts read them.
public final class VariableLayout: Sendable {
    private let storage = Mutex<[String: Int]>([:])

    public init(_ names: [String] = []) {
        for name in names { _ = slot(adding: name) }
    }

    /// How many variables have a slot.
    public var count: Int { storage.withLock { $0.count } }

    /// The slot of a variable, or nil when no compiled expression uses it.
    public func slot(of name: String) -> Int? { storage.withLock { $0[name] } }

    /// The slot of a variable, given one when it has none.
    public func slot(adding name: String) -> Int {
        storage.withLock { slots in
            if let slot = slots[name] { return slot }
            let slot = slots.count
            slots[name] = slot
            return slot
        }
    }
}
