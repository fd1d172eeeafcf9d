public import MoultExpressions
import MoultMapping
public import MoultModel

// MARK: - $manager in expressions

extension MigrationManager: ExpressionFunctionHost {
    public func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        switch (receiver, selector) {
        case (.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a mapping name and source objects")
            }
            return .array(try destinationInstances(forEntityMappingNamed: name, sourceInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a relationship name and source objects")
            }
            return .array(try destinationInstances(forSourceRelationshipNamed: name, sourceInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("manager"), "sourceInstancesForEntityMappingNamed:destinationInstances:"):
            guard arguments.count == 2, case .string(let name) = arguments[0] else {
                throw MigrationError(.invalidMapping, "\(selector) takes a mapping name and destination objects")
            }
            return .array(try sourceInstances(forEntityMappingNamed: name, destinationInstances: Self.objectIDs(in: arguments[1])).map(Value.object))
        case (.variable("entityPolicy"), _):
            guard let host = currentCompiled?.policy as? any ExpressionFunctionHost else {
                throw MigrationError(.invalidMapping, "the policy of this mapping does not answer \(selector)", mapping: currentMapping?.name)
            }
            return try host.call(selector, on: receiver, arguments: arguments)
        default:
            throw MigrationError(.invalidMapping, "unknown function \(selector) on \(receiver)", mapping: currentMapping?.name)
        }
    }
}

/// Answers `$manager` calls for the manager's own evaluation context, without retaining it.
package struct ManagerHost: ExpressionFunctionHost {
    unowned let manager: MigrationManager

    package func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        try manager.call(selector, on: receiver, arguments: arguments)
    }
}
