import Foundation
import MoultExpressions
import MoultModel
import MoultTestSupport
import Testing

/// Long key paths and deep nesting: what the parser accepts compiles, prints, pushes down and
/// evaluates without recursion proportional to the input; what is nested deeper than the explicit
/// limit is a parse error saying so.
@Suite struct DepthAndLengthTests {
    static let schema = KeySchema(keys: ["name", "next", "items"], destinations: ["next": "Node", "items": "Node"])

    /// A key path of 20,000 keys (which overflowed the stack) parses into one node, prints back to the
    /// same text, compiles and evaluates through a chain of objects.
    @Test func aTwentyThousandKeyPath() throws {
        let count = 20_000
        let text = "$source" + String(repeating: ".next", count: count - 1) + ".name"
        let node = try ExpressionNode(parsing: text)
        guard case .keyPath(.variable("source"), let components) = node else {
            Issue.record("not one key path: \(String(describing: node).prefix(80))")
            return
        }
        #expect(components.count == count)
        #expect(node.description == text)
        #expect(try ExpressionNode(parsing: node.description) == node)

        // An object whose `next` is itself: the path reads `next` 19,999 times, then `name`.
        let loop = TestRecord(id: 1, entity: 1, schema: Self.schema, ["name": "end", "next": .object(ObjectID(entity: 1, primaryKey: 1))])
        let evaluator = Evaluator(schema: Self.schema, schemas: ["Node": Self.schema])
        let value = try evaluator.value(text, on: loop) { $0.resolver = TestResolver(records: [loop.objectID: loop]) }
        #expect(value == "end")
        // Pushdown declines a path through a relationship (it reads one column), without walking it.
        #expect(SQLPushdown(columns: ["name": SQLColumn(name: "ZNAME", type: .string)]).expression(node) == nil)
    }

    /// The time to parse and compile a key path grows linearly: 8 times the keys take well under 64
    /// times as long (a quadratic parser took seconds at 10,000 keys). No wall-clock bound is asserted,
    /// only the ratio, with a wide margin for a loaded machine.
    @Test func keyPathsParseInLinearTime() throws {
        func cost(_ keys: Int) throws -> Duration {
            let text = "$source" + String(repeating: ".next", count: keys)
            let clock = ContinuousClock()
            var best = Duration.seconds(1_000)
            for _ in 0..<3 {
                let start = clock.now
                let node = try ExpressionNode(parsing: text)
                _ = try ExpressionCompiler(schema: Self.schema, schemas: ["Node": Self.schema]).compile(node)
                best = min(best, clock.now - start)
            }
            return best
        }
        _ = try cost(1_000)
        let small = try cost(4_000)
        let large = try cost(32_000)
        #expect(large < small * 32, "4,000 keys: \(small), 32,000 keys: \(large)")
    }

    /// Collection operators map the rest of the path over each element: a path may hold at most 16.
    @Test func collectionOperatorsAreLimited() throws {
        let compiler = ExpressionCompiler(schema: Self.schema, schemas: ["Node": Self.schema])
        _ = try compiler.compileExpression("items" + String(repeating: ".@sum", count: 16))
        let error = try #require(throws: ExpressionError.self) {
            try compiler.compileExpression("items" + String(repeating: ".@sum", count: 17))
        }
        #expect(error.message.contains("more than 16 collection operators"), "\(error)")
    }

    /// Every form of nesting stops at the limit with a parse error naming it: parentheses, NOT,
    /// unary minus, powers, arrays, function calls, subscripts, chained operators.
    @Test(arguments: [
        ("(", "x", ")"), ("NOT ", "x == 1", ""), ("-", "x", ""), ("2 ** ", "x", ""), ("{", "x", "}"),
        ("abs:(", "x", ")"), ("FUNCTION(", "x", ", 'lowercase')"), ("TERNARY(TRUEPREDICATE, ", "x", ", 1)"), ("CAST(", "x", ", 'NSString')"),
    ])
    func nestingBeyondTheLimitIsAParseError(open: String, inner: String, close: String) throws {
        let deep = String(repeating: open, count: 2_000) + inner + String(repeating: close, count: 2_000)
        let error = try #require(throws: ExpressionError.self) { try PredicateNode(parsing: deep + " == 1") }
        #expect(error.code == .syntax, "\(error)")
        #expect(error.message.contains("more than 200"), "\(error)")
        #expect(error.category == .badInput)
    }

    @Test func chainsAndSubscriptsBeyondTheLimit() throws {
        for text in [
            "x" + String(repeating: "[0]", count: 2_000),
            "x" + String(repeating: "[0].a", count: 2_000),
            "x" + String(repeating: " + 1", count: 2_000),
            "x" + String(repeating: " * 2", count: 2_000),
        ] {
            let error = try #require(throws: ExpressionError.self) { try ExpressionNode(parsing: text) }
            #expect(error.message.contains("more than 200"), "\(text.prefix(30)): \(error)")
        }
    }

    /// Just under the limit, every walk over the tree (compile, print, reparse, hash, pushdown,
    /// evaluate) finishes, on a secondary thread's stack as the command line's run does.
    @Test func nestingJustUnderTheLimitIsWalkedEverywhere() async throws {
        let texts = [
            String(repeating: "(", count: 190) + "age + 1" + String(repeating: ")", count: 190) + " > 3",
            String(repeating: "NOT ", count: 190) + "age > 3",
            String(repeating: "-(", count: 90) + "age" + String(repeating: ")", count: 90) + " < 5",
            "age" + String(repeating: " + 1", count: 190) + " > 3",
            "{" + String(repeating: "{", count: 180) + "1" + String(repeating: "}", count: 180) + "} == {}",
        ]
        let schema = KeySchema(keys: ["age"])
        let record = TestRecord(id: 1, entity: 1, schema: schema, ["age": 4])
        let pushdown = SQLPushdown(columns: ["age": SQLColumn(name: "ZAGE", type: .integer32)])
        for text in texts {
            let outcome = try await Task.detached {
                let predicate = try PredicateNode(parsing: text)
                let printed = predicate.description
                let again = try PredicateNode(parsing: printed)
                var hasher = Hasher()
                predicate.hash(into: &hasher)
                _ = pushdown.predicate(predicate)
                let compiled = try ExpressionCompiler(schema: schema).compile(predicate)
                let context = EvaluationContext(object: record)
                _ = try? compiled.evaluate(context)
                return again == predicate
            }.value
            #expect(outcome, "\(text.prefix(40))")
        }
    }
}
