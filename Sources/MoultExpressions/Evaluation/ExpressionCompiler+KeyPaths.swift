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

    /// The rest of a key path, applied to a value: objects are resolved, collections mapped.
    func path(_ components: ArraySlice<String>, schema: KeySchema?) throws(ExpressionError) -> PathStep {
        guard let first = components.first else { return { value, _ in value } }
        let remaining = components.dropFirst()
        if first.hasPrefix("@") {
            let operation = String(first.dropFirst())
            guard ExpressionNode.collectionOperators.contains(operation) else {
                throw ExpressionError(.unsupported, "collection operator \(first) is not supported")
            }
            let rest = try path(remaining, schema: schema)
            return { value, context in
                let elements: [Value]
                switch value {
                case .null: elements = []
                case .array(let values): elements = values
                default: throw ExpressionError(.typeMismatch, "\(first) needs a collection, not \(kindName(value)) (\(value))")
                }
                if operation == "count" { return .int(Int64(elements.count)) }
                let mapped = try elements.map { try rest($0, context) }
                switch operation {
                case "sum": return try BuiltinFunctions.table["sum:"]!.body(mapped)
                case "avg": return try BuiltinFunctions.table["average:"]!.body(mapped)
                case "min": return try BuiltinFunctions.table["min:"]!.body(mapped)
                default: return try BuiltinFunctions.table["max:"]!.body(mapped)
                }
            }
        }
        let slot = try self.slot(of: first, in: schema)
        let rest = try path(remaining, schema: destinationSchema(of: first, in: schema))
        let key = first
        return { value, context in
            try rest(try ExpressionCompiler.read(key, slot: slot, of: value, context), context)
        }
    }

    /// One key of a value: of the object it identifies, or of each element of a collection.
    static func read(_ key: String, slot: Int?, of value: Value, _ context: EvaluationContext) throws -> Value {
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
            return .array(try elements.map { try read(key, slot: slot, of: $0, context) })
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
