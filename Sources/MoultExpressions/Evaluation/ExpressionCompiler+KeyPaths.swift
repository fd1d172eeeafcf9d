import MoultModel

extension ExpressionCompiler {
    /// A key path on a base. On the evaluated object the first key is read by slot; keys after a
    /// relationship are read by slot when the destination's schema is known.
    func keyPath(base: ExpressionNode, components: [String]) throws(ExpressionError) -> Evaluator {
        guard let first = components.first else { return try evaluator(base) }
        switch base {
        case .evaluatedObject, .variable("source"):
            if first.hasPrefix("@") { break }
            let slot = try slot(of: first, in: schema)
            let rest = try path(components.dropFirst(), schema: destinationSchema(of: first, in: schema))
            let isLast = components.count == 1
            if let slot {
                // Read through the optional in place: no copy of the existential per row.
                if isLast {
                    return { context in
                        guard let value = context.object?.value(atSlot: slot) else { throw ExpressionCompiler.noObject }
                        return value
                    }
                }
                return { context in
                    guard let value = context.object?.value(atSlot: slot) else { throw ExpressionCompiler.noObject }
                    return try rest(value, context)
                }
            }
            return { context in try rest(try ExpressionCompiler.object(context).value(forKey: first), context) }
        case .variable(let name):
            if first.hasPrefix("@") { break }
            let variableSlot = variables.slot(adding: name)
            let variableSchema = variableSchemas[name]
            let slot = try self.slot(of: first, in: variableSchema)
            let rest = try path(components.dropFirst(), schema: destinationSchema(of: first, in: variableSchema))
            let whole = try path(components[...], schema: variableSchema)
            return { context in
                switch context[variableSlot: variableSlot] {
                case .unbound: throw ExpressionError(.missingBinding, "variable $\(name) is not set")
                case .object(let record):
                    return try rest(slot.map { record.value(atSlot: $0) } ?? record.value(forKey: first), context)
                case .value(let value):
                    return try whole(value, context)
                }
            }
        default:
            break
        }
        let baseEvaluator = try evaluator(base)
        let whole = try path(components[...], schema: nil)
        return { context in try whole(try baseEvaluator(context), context) }
    }

    private func slot(of key: String, in schema: KeySchema?) throws(ExpressionError) -> Int? {
        guard let schema else { return nil }
        guard let slot = schema.slot(of: key) else {
            let known = schema.keys.prefix(20).joined(separator: ", ")
            throw ExpressionError(.unknownKey, "the entity has no property \"\(key)\"", expected: "one of: \(known)")
        }
        return slot
    }

    private func destinationSchema(of key: String, in schema: KeySchema?) -> KeySchema? {
        schema?.destinations[key].flatMap { schemas[$0] }
    }

    /// One step of a compiled key path.
    enum KeyStep: Sendable {
        /// Read a key (by slot when the schema is known).
        case key(String, slot: Int?)
        /// A collection operator (`@count`, `@sum` …) over what the rest of the path gives for each element.
        case collection(String)
    }

    /// A key path may hold at most this many collection operators: each one maps the rest of the path
    /// over a collection, so each is a level of nesting when it is evaluated.
    static let maximumCollectionOperators = 16

    /// The rest of a key path, applied to a value: objects are resolved, collections mapped.
    ///
    /// The steps are compiled in one pass and run in a loop, so a key path of any length compiles and
    /// evaluates in time linear in its length and in constant stack depth (collection operators aside,
    /// which are limited to ``maximumCollectionOperators``).
    func path(_ components: ArraySlice<String>, schema: KeySchema?) throws(ExpressionError) -> PathStep {
        guard !components.isEmpty else { return { value, _ in value } }
        var steps: [KeyStep] = []
        steps.reserveCapacity(components.count)
        var schema = schema
        var operators = 0
        for component in components {
            if component.hasPrefix("@") {
                let operation = String(component.dropFirst())
                guard ExpressionNode.collectionOperators.contains(operation) else {
                    throw ExpressionError(.unsupported, "collection operator \(component) is not supported")
                }
                operators += 1
                if Self.unionOperators.contains(operation), component == components.last {
                    throw ExpressionError(.syntax, "collection operator \(component) needs a key path after it", expected: "\(component).key")
                }
                guard operators <= Self.maximumCollectionOperators else {
                    throw ExpressionError(
                        .unsupported, "a key path holds more than \(Self.maximumCollectionOperators) collection operators",
                        expected: "a shorter key path")
                }
                steps.append(.collection(operation))
            } else {
                steps.append(.key(component, slot: try slot(of: component, in: schema)))
                schema = destinationSchema(of: component, in: schema)
            }
        }
        let compiled = steps
        if compiled.count == 1, case .key(let key, let slot) = compiled[0] {
            return { value, context in try ExpressionCompiler.read(key, slot: slot, of: value, context) }
        }
        return { value, context in try ExpressionCompiler.run(compiled[...], on: value, context) }
    }

    /// Runs key path steps on a value, in a loop.
    static func run(_ steps: ArraySlice<KeyStep>, on start: Value, _ context: EvaluationContext) throws -> Value {
        var value = start
        var index = steps.startIndex
        while index < steps.endIndex {
            switch steps[index] {
            case .key(let key, let slot):
                value = try read(key, slot: slot, of: value, context)
            case .collection(let operation):
                let elements: [Value]
                switch value {
                case .null: elements = []
                case .array(let values): elements = values
                default: throw ExpressionError(.typeMismatch, "@\(operation) needs a collection, not \(kindName(value)) (\(value))")
                }
                if operation == "count" { return .int(Int64(elements.count)) }
                let rest = steps[(index + 1)...]
                if unionOperators.contains(operation) { return try union(operation, of: elements, rest, context) }
                let mapped = try elements.map { try run(rest, on: $0, context) }
                switch operation {
                case "sum": return try BuiltinFunctions.table["sum:"]!.body(mapped)
                case "avg": return try BuiltinFunctions.table["average:"]!.body(mapped)
                case "min": return try BuiltinFunctions.table["min:"]!.body(mapped)
                default: return try BuiltinFunctions.table["max:"]!.body(mapped)
                }
            }
            index += 1
        }
        return value
    }

    // MARK: - Unions

    /// Key-value coding's union operators, which make a collection of the values the rest of the key
    /// path gives for each element of a collection.
    static let unionOperators: Set<String> = [
        "unionOfObjects", "distinctUnionOfObjects", "unionOfArrays", "distinctUnionOfArrays", "unionOfSets", "distinctUnionOfSets",
    ]

    /// A union operator applied as key-value coding applies it: the rest of the path is read on each
    /// element, and
    /// - `@unionOfObjects` collects the values (a nil left out), `@distinctUnionOfObjects` each once;
    /// - `@unionOfArrays` joins the collections each element gives (a nil gives none),
    ///   `@distinctUnionOfArrays` keeps each value once;
    /// - `@unionOfSets` and `@distinctUnionOfSets` join them into a set, each value once (a set holds
    ///   no value twice: the two are one operation).
    ///
    /// `$source.countries.@distinctUnionOfSets.moods` is every mood of any of the source's countries,
    /// once. Values kept once keep the order of their first appearance.
    ///
    /// - Throws: ``ExpressionError`` `.typeMismatch` when an element's value is not a collection for an
    ///   operator that joins collections.
    static func union(_ operation: String, of elements: [Value], _ rest: ArraySlice<KeyStep>, _ context: EvaluationContext) throws -> Value {
        var values: [Value] = []
        let joinsCollections = !operation.hasSuffix("Objects")
        for element in elements {
            let value = try run(rest, on: element, context)
            switch value {
            case .null: continue
            case .array(let inner) where joinsCollections: values += inner
            default:
                guard !joinsCollections else {
                    throw ExpressionError(
                        .typeMismatch, "@\(operation) needs a collection for each element, not \(kindName(value)) (\(value))")
                }
                values.append(value)
            }
        }
        guard operation.hasPrefix("distinct") || operation == "unionOfSets" else { return .array(values) }
        var seen: Set<Value> = []
        return .array(values.filter { seen.insert($0).inserted })
    }

    /// Collections read through to-many relationships nest one level per relationship; deeper than
    /// this, a key path is refused rather than building values too deep to walk.
    static let maximumCollectionNesting = 64

    /// One key of a value: of the object it identifies, or of each element of a collection.
    static func read(_ key: String, slot: Int?, of value: Value, _ context: EvaluationContext, nesting: Int = 0) throws -> Value {
        switch value {
        case .null:
            return .null
        case .object(let id):
            guard let resolver = context.resolver else {
                throw ExpressionError(.missingBinding, "key \"\(key)\" goes through a relationship, but no object resolver is set")
            }
            guard let record = try resolver.record(for: id) else { return .null }
            if let slot { return record.value(atSlot: slot) }
            if let schema = resolver.schema(forEntity: id.entity), let found = schema.slot(of: key) {
                return record.value(atSlot: found)
            }
            return record.value(forKey: key)
        case .array(let elements):
            guard nesting < maximumCollectionNesting else {
                throw ExpressionError(
                    .evaluationFailed, "key \"\(key)\" is read through more than \(maximumCollectionNesting) nested collections")
            }
            return .array(try elements.map { try read(key, slot: slot, of: $0, context, nesting: nesting + 1) })
        default:
            throw ExpressionError(.typeMismatch, "cannot read key \"\(key)\" of \(kindName(value)) (\(value))")
        }
    }

    // MARK: - Functions

    func function(receiver: ExpressionNode?, selector: String, arguments: [ExpressionNode]) throws(ExpressionError) -> Evaluator {
        // `$source.a.b` written as FUNCTION($source, "valueForKeyPath:", "a.b").
        if let receiver, selector == "valueForKeyPath:" || selector == "valueForKey:" {
            guard arguments.count == 1, case .constant(.string(let keyPath)) = arguments[0] else {
                throw ExpressionError(.unsupported, "\(selector) needs one constant key path string")
            }
            let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !components.contains(where: \.isEmpty) else {
                throw ExpressionError(.syntax, "malformed key path \"\(keyPath)\"", expected: "keys separated by \".\"")
            }
            return try self.keyPath(base: receiver, components: components)
        }
        let argumentEvaluators = try arguments.map { (argument) throws(ExpressionError) -> Evaluator in try evaluator(argument) }
        let receiverIsManager = if case .variable("manager") = receiver { true } else { false }
        if !receiverIsManager, let registered = functions.functions[selector] {
            let receiverEvaluator: Evaluator? = try receiver.map { (node) throws(ExpressionError) -> Evaluator in try evaluator(node) }
            return { context in
                let receiverValue = try receiverEvaluator?(context) ?? .null
                let values = try argumentEvaluators.map { try $0(context) }
                do {
                    return try registered(receiverValue, values)
                } catch let error as ExpressionError {
                    throw error
                } catch {
                    throw ExpressionError(.evaluationFailed, "function \(selector) failed: \(error)")
                }
            }
        }
        if !receiverIsManager, let builtin = BuiltinFunctions.table[selector] {
            if let arity = builtin.arity, arity != arguments.count {
                throw ExpressionError(
                    .unknownFunction, "\(selector) takes \(arity) argument\(arity == 1 ? "" : "s"), not \(arguments.count)")
            }
            let body = builtin.body
            if argumentEvaluators.count == 1 {
                let only = argumentEvaluators[0]
                return { context in try body([try only(context)]) }
            }
            return { context in try body(try argumentEvaluators.map { try $0(context) }) }
        }
        guard let receiver else {
            throw ExpressionError(
                .unknownFunction, "unknown function \(selector)",
                expected: "a built-in function (sum:, sqrt:, uppercase: …) or one registered by a policy")
        }
        // Everything else goes to the host: $manager's selectors, $entityPolicy's, custom ones.
        let receiverEvaluator: Evaluator?
        let receiverName: String?
        if case .variable(let name) = receiver {
            receiverName = name
            receiverEvaluator = nil
        } else {
            receiverName = nil
            receiverEvaluator = try evaluator(receiver)
        }
        return { context in
            guard let host = context.host else {
                throw ExpressionError(.missingBinding, "FUNCTION \(selector) needs a function host (the migration manager), and none is set")
            }
            let target: FunctionReceiver = if let receiverName { .variable(receiverName) } else { .value(try receiverEvaluator!(context)) }
            let values = try argumentEvaluators.map { try $0(context) }
            do {
                return try host.call(selector, on: target, arguments: values)
            } catch let error as ExpressionError {
                throw error
            } catch {
                throw ExpressionError(.evaluationFailed, "FUNCTION \(selector) failed: \(error)")
            }
        }
    }
}
