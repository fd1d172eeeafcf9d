public import MoultModel

typealias Evaluator = @Sendable (EvaluationContext) throws -> Value
typealias PredicateEvaluator = @Sendable (EvaluationContext) throws -> Bool
typealias PathStep = @Sendable (Value, EvaluationContext) throws -> Value

/// A value expression compiled for fast evaluation: key paths are bound to slots, constants and
/// patterns prepared, functions resolved. Evaluating it parses nothing and looks nothing up by name
/// (except key paths through relationships to entities the compiler had no schema for).
public struct CompiledExpression: Sendable, CustomStringConvertible {
    /// The expression it was compiled from.
    public let node: ExpressionNode
    let body: Evaluator

    /// Evaluates the expression in a context.
    ///
    /// - Throws: ``ExpressionError`` (type mismatches, missing bindings, failing host calls).
    @inline(__always)
    public func evaluate(_ context: EvaluationContext) throws -> Value { try body(context) }

    /// Evaluates the expression on one object with no variables, host or resolver.
    public func evaluate(on object: any ObjectRecord) throws -> Value {
        try body(EvaluationContext(object: object))
    }

    public var description: String { node.description }
}

/// A predicate compiled for fast evaluation (see ``CompiledExpression``).
public struct CompiledPredicate: Sendable, CustomStringConvertible {
    /// The predicate it was compiled from.
    public let node: PredicateNode
    let body: PredicateEvaluator

    /// Whether the predicate holds in a context.
    ///
    /// - Throws: ``ExpressionError`` (e.g. ordering a string against a number).
    @inline(__always)
    public func evaluate(_ context: EvaluationContext) throws -> Bool { try body(context) }

    /// Whether the predicate holds for one object, with no variables, host or resolver.
    public func evaluate(on object: any ObjectRecord) throws -> Bool {
        try body(EvaluationContext(object: object))
    }

    public var description: String { node.description }
}

/// Compiles parsed expressions and predicates against the schema of the objects they will be
/// evaluated on.
///
/// ```swift
/// let compiler = ExpressionCompiler(model: model, entity: "Reading")!
/// let celsius = try compiler.compileExpression("($source.temperature - 32.0) / 1.8")
/// var context = EvaluationContext(variables: compiler.variables)
/// context.object = row
/// let value = try celsius.evaluate(context)
/// ```
public struct ExpressionCompiler: Sendable {
    /// The schema of the evaluated object (`SELF`, bare key paths, `$source`); nil to read keys by name.
    public var schema: KeySchema?
    /// Schemas by entity name, for key paths through relationships (`$source.owner.name`).
    public var schemas: [String: KeySchema]
    /// Schemas of objects bound to other variables (e.g. `"destination"`).
    public var variableSchemas: [String: KeySchema]
    /// Functions a policy registered.
    public var functions: ExpressionFunctionRegistry
    /// The variables compiled expressions use, each with a slot: make contexts with it.
    public let variables: VariableLayout

    /// A compiler for objects with this schema (nil: keys read by name).
    public init(
        schema: KeySchema? = nil, schemas: [String: KeySchema] = [:], variableSchemas: [String: KeySchema] = [:],
        functions: ExpressionFunctionRegistry = ExpressionFunctionRegistry(), variables: VariableLayout = VariableLayout()
    ) {
        self.schema = schema
        self.schemas = schemas
        self.variableSchemas = variableSchemas
        self.functions = functions
        self.variables = variables
    }

    /// A compiler for objects of an entity of a model, with every entity's schema for relationships.
    /// Nil when the model has no such entity.
    public init?(
        model: ObjectModel, entity: String, functions: ExpressionFunctionRegistry = ExpressionFunctionRegistry(),
        variables: VariableLayout = VariableLayout()
    ) {
        guard let schema = KeySchema(entity: entity, in: model) else { return nil }
        var schemas: [String: KeySchema] = [:]
        for description in model.entities { schemas[description.name] = KeySchema(entity: description.name, in: model) }
        self.init(schema: schema, schemas: schemas, functions: functions, variables: variables)
    }

    // MARK: - Entry points

    /// Parses and compiles a value expression.
    ///
    /// - Throws: ``ExpressionError``: syntax errors with line and column; unknown keys and functions.
    public func compileExpression(_ text: String) throws(ExpressionError) -> CompiledExpression {
        let node = try ExpressionNode(parsing: text)
        do {
            return try compile(node)
        } catch var error {
            if error.source == nil { error.source = text }
            throw error
        }
    }

    /// Parses and compiles a predicate.
    ///
    /// - Throws: ``ExpressionError``: syntax errors with line and column; unknown keys and functions.
    public func compilePredicate(_ text: String) throws(ExpressionError) -> CompiledPredicate {
        let node = try PredicateNode(parsing: text)
        do {
            return try compile(node)
        } catch var error {
            if error.source == nil { error.source = text }
            throw error
        }
    }

    /// Compiles a parsed value expression.
    public func compile(_ node: ExpressionNode) throws(ExpressionError) -> CompiledExpression {
        CompiledExpression(node: node, body: try evaluator(node))
    }

    /// Compiles a parsed predicate.
    public func compile(_ node: PredicateNode) throws(ExpressionError) -> CompiledPredicate {
        CompiledPredicate(node: node, body: try predicateEvaluator(node))
    }

    // MARK: - Expressions

    func evaluator(_ node: ExpressionNode) throws(ExpressionError) -> Evaluator {
        switch node {
        case .constant(let value):
            return { _ in value }
        case .array(let elements):
            if elements.allSatisfy({ if case .constant = $0 { true } else { false } }) {
                let values = Value.array(elements.map { if case .constant(let v) = $0 { v } else { .null } })
                return { _ in values }
            }
            let evaluators = try elements.map { (element) throws(ExpressionError) -> Evaluator in try evaluator(element) }
            return { context in .array(try evaluators.map { try $0(context) }) }
        case .evaluatedObject:
            return { context in .object(try ExpressionCompiler.object(context).objectID) }
        case .variable(let name):
            if name == "source" { return { context in .object(try ExpressionCompiler.object(context).objectID) } }
            let slot = variables.slot(adding: name)
            return { context in
                switch context[variableSlot: slot] {
                case .unbound: throw ExpressionError(.missingBinding, "variable $\(name) is not set")
                case .value(let value): return value
                case .object(let record): return .object(record.objectID)
                }
            }
        case .keyPath(let base, let components):
            return try keyPath(base: base, components: components)
        case .subscripted(let base, let index):
            return try subscripted(base, index)
        case .negate(let operand):
            let inner = try evaluator(operand)
            return { context in try Arithmetic.negate(try inner(context)) }
        case .arithmetic(let op, let lhs, let rhs):
            return try arithmetic(op, lhs, rhs)
        case .function(let receiver, let selector, let arguments):
            return try function(receiver: receiver, selector: selector, arguments: arguments)
        case .ternary(let condition, let then, let otherwise):
            let test = try predicateEvaluator(condition)
            let a = try evaluator(then)
            let b = try evaluator(otherwise)
            return { context in try test(context) ? try a(context) : try b(context) }
        case .cast(let value, let type):
            guard Cast.supportedTypes.contains(type) else {
                throw ExpressionError(.unsupported, "CAST to \(type) is not supported", expected: "NSNumber, NSString, NSDate or NSDecimalNumber")
            }
            let inner = try evaluator(value)
            return { context in try Cast.apply(try inner(context), to: type) }
        }
    }

    /// The slot of a one-key key path on the evaluated object (`age`, `$source.age`), when the
    /// schema gives it one.
    func directSlot(_ node: ExpressionNode) throws(ExpressionError) -> Int? {
        guard case .keyPath(let base, let components) = node, base == .evaluatedObject || base == .variable("source"),
            components.count == 1, !components[0].hasPrefix("@"), let schema
        else { return nil }
        guard let slot = schema.slot(of: components[0]) else {
            throw ExpressionError(.unknownKey, "the entity has no property \"\(components[0])\"", expected: "one of: \(schema.keys.prefix(20).joined(separator: ", "))")
        }
        return slot
    }

    static let noObject = ExpressionError(.missingBinding, "no object to evaluate on ($source / SELF is not set)")

    @inline(__always)
    static func object(_ context: EvaluationContext) throws(ExpressionError) -> any ObjectRecord {
        guard let object = context.object else { throw noObject }
        return object
    }

    private func arithmetic(_ op: ArithmeticOperator, _ lhs: ExpressionNode, _ rhs: ExpressionNode) throws(ExpressionError) -> Evaluator {
        // The hot case of mapping models: a key path and a double constant, e.g. `$source.t - 32.0`,
        // fused into one closure that reads the slot itself.
        if case .constant(.double(let constant)) = rhs, let slot = try directSlot(lhs) {
            return { context in
                guard let value = context.object?.value(atSlot: slot) else { throw ExpressionCompiler.noObject }
                if case .double(let x) = value { return .double(Arithmetic.doubles(op, x, constant)) }
                return try Arithmetic.apply(op, value, .double(constant))
            }
        }
        let left = try evaluator(lhs)
        if case .constant(.double(let constant)) = rhs {
            return { context in
                let value = try left(context)
                if case .double(let x) = value { return .double(Arithmetic.doubles(op, x, constant)) }
                return try Arithmetic.apply(op, value, .double(constant))
            }
        }
        let right = try evaluator(rhs)
        return { context in
            let a = try left(context)
            let b = try right(context)
            if case .double(let x) = a, case .double(let y) = b { return .double(Arithmetic.doubles(op, x, y)) }
            return try Arithmetic.apply(op, a, b)
        }
    }

    private func subscripted(_ base: ExpressionNode, _ index: ExpressionNode.SubscriptIndex) throws(ExpressionError) -> Evaluator {
        let collection = try evaluator(base)
        let position: Evaluator? = if case .index(let node) = index { try evaluator(node) } else { nil }
        return { context in
            let value = try collection(context)
            if value.isNull { return .null }
            guard case .array(let elements) = value else {
                throw ExpressionError(.typeMismatch, "cannot subscript \(kindName(value)) (\(value))")
            }
            switch index {
            case .first: return elements.first ?? .null
            case .last: return elements.last ?? .null
            case .size: return .int(Int64(elements.count))
            case .index:
                let offset = try BuiltinFunctions.integer(try position!(context), "subscript")
                guard offset >= 0, offset < elements.count else {
                    throw ExpressionError(.evaluationFailed, "index \(offset) is outside the collection of \(elements.count)")
                }
                return elements[Int(offset)]
            }
        }
    }
}
