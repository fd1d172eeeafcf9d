import Benchmark
import MoultExpressions
import MoultModel

// Compiled expressions evaluated over many rows, as the migration engine runs them: parse and compile
// once, then one evaluation per row with the row swapped into one reused context. Each benchmark
// iteration evaluates over 1,000,000 rows (scalingFactor .mega): the figures are per evaluation, and
// "throughput" reads as evaluations per second.

// MARK: - Rows

/// A row as the store reads it: values by slot of the schema the expressions were compiled against.
private struct Reading: ObjectRecord {
    static let schema = KeySchema(
        keys: ["temperature", "age", "name", "state"],
        attributeTypes: ["temperature": .double, "age": .integer16, "name": .string, "state": .string])

    var objectID: ObjectID
    var values: [Value]

    func value(forKey key: String) -> Value {
        Self.schema.keys.firstIndex(of: key).map { values[$0] } ?? .null
    }

    func value(atSlot slot: Int) -> Value { values[slot] }
}

/// A thousand distinct rows (cycled), with nils and mixed values, so the branches are not all alike.
private let rows: [Reading] = {
    let names = ["Ada", "Alan", "Barbara", "Claude", "Edsger", "Grace", "Ken", "Margaret"]
    let states = ["CA", "NY", "TX", "WA"]
    var generator = SystemRandomNumberGenerator()
    return (0..<1_000).map { index in
        Reading(
            objectID: ObjectID(entity: 1, primaryKey: Int64(index + 1)),
            values: [
                .double(Double.random(in: -40...120, using: &generator)),
                .int(Int64.random(in: 0...99, using: &generator)),
                .string(names[index % names.count]),
                index % 5 == 0 ? .null : .string(states[index % states.count]),
            ])
    }
}()

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        scalingFactor: .mega,
        maxDuration: .seconds(10),
        maxIterations: 10
    )

    Benchmark("($source.temperature - 32.0) / 1.8, compiled", configuration: configuration) { benchmark in
        let compiler = ExpressionCompiler(schema: Reading.schema)
        let celsius = try compiler.compileExpression("($source.temperature - 32.0) / 1.8")
        var context = EvaluationContext(variables: compiler.variables)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            context.object = rows[index % rows.count]
            blackHole(try celsius.evaluate(context))
        }
    }

    Benchmark("age >= 18 AND name BEGINSWITH 'A' AND state != nil, compiled", configuration: configuration) { benchmark in
        let compiler = ExpressionCompiler(schema: Reading.schema)
        let filter = try compiler.compilePredicate("age >= 18 AND name BEGINSWITH 'A' AND state != nil")
        var context = EvaluationContext(variables: compiler.variables)
        benchmark.startMeasurement()
        var matches = 0
        for index in benchmark.scaledIterations {
            context.object = rows[index % rows.count]
            if try filter.evaluate(context) { matches += 1 }
        }
        blackHole(matches)
    }

    Benchmark("parse and compile ($source.temperature - 32.0) / 1.8", configuration: .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(5))
    ) { benchmark in
        let compiler = ExpressionCompiler(schema: Reading.schema)
        for _ in benchmark.scaledIterations {
            blackHole(try compiler.compileExpression("($source.temperature - 32.0) / 1.8"))
        }
    }
}
