public import Foundation
import MoultEngine
import MoultExpressions
import MoultModel
import MoultStore

/// A fetch in a migration's context: an entity, a predicate, an offset and a limit.
///
/// ```swift
/// let request = NSFetchRequest<NSManagedObject>(entityName: "Measurement")
/// request.predicate = NSPredicate(format: "measurement == %@", object)
/// let found = try manager.destinationContext.fetch(request)
/// ```
open class NSFetchRequest<ResultType: NSFetchRequestResult>: NSObject {
    /// The entity fetched.
    public var entityName: String?
    /// The condition, in Core Data's predicate syntax (run by Moult's predicate language).
    public var predicate: NSPredicate?
    /// The most objects to give (0: no limit).
    public var fetchLimit = 0
    /// Objects to skip first.
    public var fetchOffset = 0
    /// Whether the entity's sub-entities' objects are fetched too.
    public var includesSubentities = true
    /// Accepted for source compatibility; a fetch in a migration gives the objects in store order.
    public var sortDescriptors: [NSSortDescriptor]?
    /// Accepted for source compatibility: objects are read as they are asked for.
    public var returnsObjectsAsFaults = true
    public var fetchBatchSize = 0

    /// A fetch of the named entity's objects.
    public init(entityName: String) {
        self.entityName = entityName
    }

    public override init() {
        entityName = nil
    }
}

/// A condition in Core Data's predicate syntax, run by Moult's predicate language (`%@` arguments
/// bound as values, `%K` as key paths): this module's `NSPredicate` shadows Foundation's, whose
/// `init(format:)` is not implemented on Linux.
///
/// ```swift
/// NSPredicate(format: "name == %@ AND age >= %d", name, 18)
/// ```
open class NSPredicate: NSObject, @unchecked Sendable {
    /// The format, as written.
    public let predicateFormat: String
    let arguments: [Any?]

    /// A predicate from a format and its arguments.
    public init(format predicateFormat: String, _ arguments: Any?...) {
        self.predicateFormat = predicateFormat
        self.arguments = arguments
    }

    /// A predicate from a format and an array of arguments.
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        self.predicateFormat = predicateFormat
        self.arguments = arguments ?? []
    }

    /// A predicate that is always (or never) true.
    public init(value: Bool) {
        predicateFormat = value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        arguments = []
    }

    open override var description: String { predicateFormat }

    /// The format with its arguments as variables (`$cdArgument0`) and `%K` keys written in, and the
    /// variables' values.
    ///
    /// - Throws: ``/MoultEngine/MigrationError`` `.invalidMapping` when a specifier lacks its argument or
    ///   `%K` is not given a key.
    func translated(_ value: (Any?) throws -> Value) throws -> (text: String, variables: [(String, Value)]) {
        var text = ""
        var variables: [(String, Value)] = []
        var remaining = arguments[...]
        var characters = predicateFormat[...]
        while let character = characters.first {
            characters = characters.dropFirst()
            guard character == "%" else {
                text.append(character)
                continue
            }
            if characters.first == "%" {
                text.append("%")
                characters = characters.dropFirst()
                continue
            }
            var specifier = ""
            while let next = characters.first, "lhqzjt".contains(next) {
                specifier.append(next)
                characters = characters.dropFirst()
            }
            guard let conversion = characters.first else {
                throw MigrationError(.invalidMapping, "the predicate '\(predicateFormat)' ends in '%'")
            }
            characters = characters.dropFirst()
            guard let argument = remaining.popFirst() else {
                throw MigrationError(.invalidMapping, "the predicate '\(predicateFormat)' has more specifiers than arguments")
            }
            if conversion == "K" {
                guard let key = argument as? String else {
                    throw MigrationError(.invalidMapping, "%K in the predicate '\(predicateFormat)' takes a key path (a String)")
                }
                text += key
                continue
            }
            guard "@dDiuUxXfeEgGcsSp".contains(conversion) else {
                throw MigrationError(.invalidMapping, "the predicate '\(predicateFormat)' has the unknown specifier %\(specifier)\(conversion)")
            }
            let name = "cdArgument\(variables.count)"
            variables.append((name, try value(argument)))
            text += "$\(name)"
        }
        return (text, variables)
    }
}

/// A fetch's predicate compiled against a context: objects as records, relationship values as object
/// ids; and, for the destination's tables, its SQL where it pushes down exactly.
struct FetchCondition {
    let predicate: CompiledPredicate
    let variables: VariableLayout
    let values: [(String, Value)]
    let context: NSManagedObjectContext
    /// The predicate with its arguments written in as constants, for ``sql(for:)``.
    private let bound: PredicateNode?

    init(_ predicate: NSPredicate, context: NSManagedObjectContext) throws {
        self.context = context
        let (text, values) = try predicate.translated(Self.value(of:))
        self.values = values
        variables = VariableLayout(values.map(\.0))
        do {
            self.predicate = try ExpressionCompiler(variables: variables).compilePredicate(text)
        } catch {
            throw MigrationError(.invalidMapping, "the fetch predicate '\(predicate.predicateFormat)' cannot be read: \(error)", underlying: error)
        }
        bound = (try? PredicateNode(parsing: text)).map { $0.binding(Dictionary(values, uniquingKeysWith: { first, _ in first })) }
    }

    /// Whether the predicate may push down to SQL over some entity's table (``sql(for:)`` says for which).
    var canPushDown: Bool { bound != nil }

    /// The predicate as a `WHERE` over the table of `layout` (its attributes, and its to-ones compared
    /// with an object or nil), true for exactly the rows the predicate holds for, as the Swift evaluator
    /// would say of them; nil when it cannot be said in SQL exactly (``/MoultExpressions/SQLPushdown``).
    func sql(for layout: EntityLayout) -> SQLCondition? {
        guard let bound else { return nil }
        var columns: [String: SQLColumn] = [:]
        for attribute in layout.attributes { columns[attribute.name] = SQLColumn(name: attribute.column, type: attribute.type) }
        for toOne in layout.toOneRelationships {
            columns[toOne.name] = .toOne(name: toOne.column, entity: toOne.entityColumn.map { .column($0) } ?? .fixed(toOne.destinationNumber))
        }
        guard let fragment = SQLPushdown(columns: columns).predicate(bound) else { return nil }
        return SQLCondition(fragment.sql, fragment.arguments)
    }

    static func value(of argument: Any?) throws -> Value {
        switch argument {
        case nil: return .null
        case let object as NSManagedObject: return .object(object.id)
        case let id as NSManagedObjectID: return .object(id.id)
        case let set as Set<NSManagedObject>: return .array(set.map { .object($0.id) })
        case let array as [Any]: return .array(try array.map(value(of:)))
        case let set as NSSet: return .array(try set.allObjects.map(value(of:)))
        case let argument?:
            guard let value = ValueBridge.untyped(argument) else {
                throw MigrationError(.invalidMapping, "a predicate argument of type \(type(of: argument)) has no value Moult can compare")
            }
            return value
        }
    }

    func matches(_ object: NSManagedObject) throws -> Bool {
        var evaluation = EvaluationContext(object: ObjectValues(object: object, context: context), variables: variables)
        evaluation.resolver = ContextResolver(context: context)
        for (name, value) in values { evaluation[variable: name] = .value(value) }
        return try predicate.evaluate(evaluation)
    }
}

/// An object of a context as the predicate language reads it.
struct ObjectValues: ObjectRecord {
    let object: NSManagedObject
    let context: NSManagedObjectContext

    var objectID: ObjectID { object.id }

    func value(forKey key: String) -> Value {
        if let relationship = object.entity.relationshipsByName[key], relationship.isToMany {
            return .array(context.toManyIDs(key, of: object).map(Value.object))
        }
        return context.record(of: object)[key] ?? .null
    }

    func value(atSlot slot: Int) -> Value { .null }
}

/// Follows relationship values of a context's objects for key paths (`measurement.name`).
struct ContextResolver: ObjectResolver {
    let context: NSManagedObjectContext

    func record(for id: ObjectID) throws -> (any ObjectRecord)? {
        context.object(for: id).map { ObjectValues(object: $0, context: context) }
    }
}
