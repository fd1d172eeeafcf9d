import Foundation
import MoultExpressions
import MoultModel
import MoultStore

extension StageStore {
    // MARK: - Expressions

    func compiler(for entity: String) throws -> ExpressionCompiler {
        if let compiler = compilers[entity] { return compiler }
        _ = try entityLayout(entity)
        var functions = ExpressionFunctionRegistry()
        let now = self.now
        functions.register("now") { _, _ in .date(now) }
        guard let compiler = ExpressionCompiler(model: model, entity: entity, functions: functions) else {
            throw MigrationError(.invalidMapping, "version \(version.name) has no entity '\(entity)'", entity: entity)
        }
        compilers[entity] = compiler
        return compiler
    }

    func compile(_ assignments: [String: String], entity: String) throws -> [(String, CompiledExpression)] {
        let compiler = try compiler(for: entity)
        let layout = try entityLayout(entity)
        return try assignments.sorted { $0.key < $1.key }.map { key, text in
            guard layout.attribute(named: key) != nil || layout.toOne(named: key) != nil else {
                throw MigrationError(.invalidMapping, "\(entity) has no attribute or to-one relationship '\(key)' to set", entity: entity)
            }
            if layout.toOne(named: key) != nil { try refuseToOneWithStoredInverse(key, of: entity) }
            do {
                return (key, try compiler.compileExpression(text))
            } catch {
                throw MigrationError(.invalidMapping, "the value of \(entity).\(key), \(text), does not compile", entity: entity, underlying: error)
            }
        }
    }

    func evaluate(_ expression: CompiledExpression, on object: StageObject?, entity: String) throws -> Value {
        do {
            var context = EvaluationContext(variables: try compiler(for: entity).variables)
            context.object = object
            context.resolver = object == nil ? nil : Resolver(store: self)
            return try expression.evaluate(context)
        } catch {
            throw MigrationError(
                .evaluationFailed, "\(expression) failed\(object.map { " on \(entity) Z_PK \($0.objectID.primaryKey)" } ?? "")", entity: entity,
                primaryKey: object?.objectID.primaryKey, underlying: error)
        }
    }

    /// An entity's objects matching a predicate: in SQL when it can be pushed down, else in Swift.
    struct Query {
        let entity: EntityLayout
        let entityCondition: String?
        let condition: SQLCondition?
        let filter: CompiledPredicate?
        let keys: [String]
        let store: StageStore

        init(_ store: StageStore, entity name: String, predicate: String?) throws {
            self.store = store
            entity = try store.entityLayout(name)
            entityCondition = store.condition(of: entity)
            let compiler = try store.compiler(for: name)
            keys = compiler.schema?.keys ?? []
            guard let predicate, !predicate.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                condition = nil
                filter = nil
                return
            }
            let node: PredicateNode
            do {
                node = try PredicateNode(parsing: predicate)
            } catch {
                throw MigrationError(.invalidMapping, "the predicate \(predicate) does not parse", entity: name, underlying: error)
            }
            do {
                let compiled = try compiler.compile(node)
                let columns = Dictionary(entity.attributes.map { ($0.name, SQLColumn(name: $0.column, type: $0.type)) }, uniquingKeysWith: { a, _ in a })
                if let pushed = SQLPushdown(columns: columns).predicate(node) {
                    condition = SQLCondition(pushed.sql, pushed.arguments)
                    filter = nil
                } else {
                    condition = nil
                    filter = compiled
                }
            } catch {
                throw MigrationError(.invalidMapping, "the predicate \(predicate) does not compile for \(name)", entity: name, underlying: error)
            }
        }

        /// The rows SQLite finds: the entity's, narrowed by the predicate when it is pushed down.
        var rows: StagedRows { StagedRows(table: entity.table, entityCondition: entityCondition, condition: condition) }

        func matches(_ object: StageObject) throws -> Bool {
            guard let filter else { return true }
            do {
                var context = EvaluationContext(variables: try store.compiler(for: entity.name).variables)
                context.object = object
                context.resolver = Resolver(store: store)
                return try filter.evaluate(context)
            } catch {
                throw MigrationError(
                    .evaluationFailed, "the predicate \(filter) failed on \(entity.name) Z_PK \(object.objectID.primaryKey)", entity: entity.name,
                    primaryKey: object.objectID.primaryKey, underlying: error)
            }
        }
    }

    /// Finds the objects relationship values point to, for key paths (`owner.name`).
    struct Resolver: ObjectResolver {
        let store: StageStore
        func record(for id: ObjectID) throws -> (any ObjectRecord)? {
            guard let entity = store.layout.entity(number: id.entity) else { return nil }
            let cursor = try store.store.objects(of: entity.name, after: id.primaryKey - 1, through: id.primaryKey, batchSize: 1)
            guard let row = try cursor.next() else { return nil }
            return StageObject(row: row, store: store, keys: KeySchema(entity: entity.name, in: store.model)?.keys ?? [])
        }
    }

    func toMany(_ key: String, of object: StageObject) -> Value {
        guard let entity = layout.entity(number: object.objectID.entity), entity.toMany(named: key) != nil,
            let ids = try? store.toManyDestinations(key, of: entity.name, sources: [object.objectID.primaryKey])
        else { return .null }
        return .array((ids[object.objectID.primaryKey] ?? []).map { .object($0) })
    }

    /// Whether an expression gives the same value for every object: no key path, no `SELF`, no
    /// variable, no random number.
    static func isObjectIndependent(_ node: ExpressionNode) -> Bool {
        switch node {
        case .constant: return true
        case .array(let elements): return elements.allSatisfy(isObjectIndependent)
        case .negate(let inner), .cast(let inner, _): return isObjectIndependent(inner)
        case .arithmetic(_, let a, let b): return isObjectIndependent(a) && isObjectIndependent(b)
        case .function(nil, let selector, let arguments):
            return !selector.hasPrefix("random") && arguments.allSatisfy(isObjectIndependent)
        default: return false
        }
    }
}
