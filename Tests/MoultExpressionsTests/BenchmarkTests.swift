import Foundation
import MoultModel
import Testing
import MoultExpressions

/// Evaluations per second of compiled expressions over a million rows. Out of the default run:
/// `MOULT_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter BenchmarkTests`.
/// It prints figures and asserts only that the results are right, never a timing.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["MOULT_BENCH"] == "1"))
struct BenchmarkTests {
    /// A row buffer a cursor refills for each row, as a store's cursor does.
    final class RowBuffer: ObjectRecord {
        var values: [Value]
        let schema: KeySchema
        init(schema: KeySchema) {
            self.schema = schema
            values = Array(repeating: .null, count: schema.keys.count)
        }
        var objectID: ObjectID { ObjectID(entity: 1, primaryKey: 1) }
        func value(forKey key: String) -> Value { schema.slot(of: key).map { values[$0] } ?? .null }
        func value(atSlot slot: Int) -> Value { values[slot] }
    }

    static let rows = 1_000_000
    static let names: [Value] = ["Alice", "Bob", "Anna", "Zoë", "Adam", "Carl"]

    @Test func celsius() throws {
        let schema = KeySchema(keys: ["name", "age", "state", "temperature"])
        let compiler = ExpressionCompiler(schema: schema)
        let compiled = try compiler.compileExpression("($source.temperature - 32.0) / 1.8")
        let row = RowBuffer(schema: schema)
        let context = EvaluationContext(object: row, variables: compiler.variables)
        var total = 0.0
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for index in 0..<Self.rows {
                row.values[3] = .double(Double(index % 200))
                if case .double(let celsius) = try compiled.evaluate(context) { total += celsius }
            }
        }
        // The same loop written by hand against the same row buffer: the floor to compare with.
        let record: any ObjectRecord = row
        var native = 0.0
        let baseline = clock.measure {
            for index in 0..<Self.rows {
                row.values[3] = .double(Double(index % 200))
                if case .double(let fahrenheit) = record.value(atSlot: 3) { native += (fahrenheit - 32.0) / 1.8 }
            }
        }
        let expected = (0..<Self.rows).reduce(0.0) { $0 + (Double($1 % 200) - 32.0) / 1.8 }
        #expect(abs(total - expected) < 1e-6 * abs(expected))
        #expect(abs(native - expected) < 1e-6 * abs(expected))
        report("($source.temperature - 32.0) / 1.8", elapsed, baseline: baseline)
    }

    @Test func threeClauseFilter() throws {
        let schema = KeySchema(keys: ["name", "age", "state", "temperature"])
        let compiler = ExpressionCompiler(schema: schema)
        let compiled = try compiler.compilePredicate("age >= 18 AND name BEGINSWITH 'A' AND state != nil")
        let row = RowBuffer(schema: schema)
        let context = EvaluationContext(object: row, variables: compiler.variables)
        var matches = 0
        var expected = 0
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for index in 0..<Self.rows {
                row.values[0] = Self.names[index % Self.names.count]
                row.values[1] = .int(Int64(index % 100))
                row.values[2] = index % 5 == 0 ? .null : "CA"
                if try compiled.evaluate(context) { matches += 1 }
            }
        }
        // The same filter written by hand against the same row buffer.
        let record: any ObjectRecord = row
        let baseline = clock.measure {
            for index in 0..<Self.rows {
                row.values[0] = Self.names[index % Self.names.count]
                row.values[1] = .int(Int64(index % 100))
                row.values[2] = index % 5 == 0 ? .null : "CA"
                guard case .int(let age) = record.value(atSlot: 1), age >= 18,
                    case .string(let name) = record.value(atSlot: 0), name.utf8.starts(with: "A".utf8),
                    !record.value(atSlot: 2).isNull
                else { continue }
                expected += 1
            }
        }
        #expect(matches == expected)
        report("age >= 18 AND name BEGINSWITH 'A' AND state != nil", elapsed, baseline: baseline)
    }

    private func report(_ text: String, _ elapsed: Duration, baseline: Duration) {
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let rate = Double(Self.rows) / seconds(elapsed)
        print(
            "bench: \(text): \(Self.rows) rows in \(String(format: "%.3f", seconds(elapsed))) s = "
                + "\(String(format: "%.2f", rate / 1e6)) M evaluations/s; hand-written loop "
                + "\(String(format: "%.3f", seconds(baseline))) s (ratio \(String(format: "%.2f", seconds(elapsed) / seconds(baseline))))")
    }
}
