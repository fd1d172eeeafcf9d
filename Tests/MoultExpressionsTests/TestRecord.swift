import Foundation
import MoultExpressions
import MoultModel
import MoultTestSupport

/// An object for tests: values by slot of a schema.
struct TestRecord: ObjectRecord {
    var objectID: ObjectID
    var schema: KeySchema
    var values: [Value]

    init(id: Int64 = 1, entity: Int32 = 1, schema: KeySchema, _ values: [String: Value]) {
        objectID = ObjectID(entity: entity, primaryKey: id)
        self.schema = schema
        self.values = schema.keys.map { values[$0] ?? .null }
    }

    func value(forKey key: String) -> Value {
        schema.slot(of: key).map { values[$0] } ?? .null
    }

    func value(atSlot slot: Int) -> Value { values[slot] }
}

/// Resolves object ids to records from a dictionary.
struct TestResolver: ObjectResolver {
    var records: [ObjectID: TestRecord]

    func record(for id: ObjectID) throws -> (any ObjectRecord)? { records[id] }
}

/// Evaluates expressions and predicates on records of one schema.
struct Evaluator {
    var compiler: ExpressionCompiler

    init(schema: KeySchema, schemas: [String: KeySchema] = [:], functions: ExpressionFunctionRegistry = ExpressionFunctionRegistry()) {
        compiler = ExpressionCompiler(schema: schema, schemas: schemas, functions: functions)
    }

    func value(_ text: String, on record: TestRecord, configure: (inout EvaluationContext) -> Void = { _ in }) throws -> Value {
        let compiled = try compiler.compileExpression(text)
        var context = EvaluationContext(object: record, variables: compiler.variables)
        configure(&context)
        return try compiled.evaluate(context)
    }

    func holds(_ text: String, on record: TestRecord, configure: (inout EvaluationContext) -> Void = { _ in }) throws -> Bool {
        let compiled = try compiler.compilePredicate(text)
        var context = EvaluationContext(object: record, variables: compiler.variables)
        configure(&context)
        return try compiled.evaluate(context)
    }
}

/// Every filter predicate and value expression of the fixture mapping models.
enum FixtureMappings {
    struct Entry: Decodable {
        struct Property: Decodable {
            var kind: String
            var name: String
            var valueExpression: String?
        }

        var name: String
        var source: String?
        var destination: String?
        var filterPredicate: String?
        var properties: [Property]
    }

    static func load() throws -> [String: [Entry]] {
        let data = try Data(contentsOf: Fixtures.url("mapping-models.json"))
        return try JSONDecoder().decode([String: [Entry]].self, from: data)
    }
}
