import Foundation
import MoultModel
import Testing
@testable import MoultExpressions

/// Random and mutated inputs: the parser must never crash or hang, and whatever parses must print
/// to text that parses back to the same tree. Compiling, evaluating and pushing down what parses
/// must not crash either.
///
/// The default run tries a few thousand inputs; set `MOULT_FUZZ_ITERATIONS` for a long run
/// (see CONTRIBUTING.md, "Fuzzing the expression parser").
@Suite struct FuzzTests {
    static let seeds: [String] = [
        "$source.amount", "($source.temperature - 32.0) / 1.8",
        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#,
        "$source.#size", "age >= 18", "age < 18", "street != nil OR state != nil", "name BEGINSWITH[cd] 'a'",
        "ANY trades.amount > 100", "NOT (a == 1 AND b == 2)", "x BETWEEN {1, 0x1F}", "tags[LAST] IN {'a', \"b\"}",
        "TERNARY(age >= 18, 'adult', 'child')", "CAST(0b101, 'NSDate')", "sum:({1, 2.5e3, -3})", "now()",
        "trades.@sum.amount > 1e2", "name LIKE 'a*?' || name MATCHES '[a-z]+'", "FUNCTION($source, 'valueForKeyPath:', 'a.b')",
        "SUBQUERY(x, $y, $y == 1).@count > 0", "'\\u00e9\\n' == \"é\"", "2 ** 3 ** -1 * -x", "TRUEPREDICATE && !FALSEPREDICATE",
        "add:to:(1, 2) =< 0o17", "$a.b.c[0][SIZE] <> $d", "name ==[c] 'Straße'",
    ]

    static let fragments: [String] = [
        "(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/", "**", "==", "=", "!=", "<>", "<", "<=", "=<", ">",
        ">=", "=>", "&&", "||", "!", ":", "%@", "$source", "$manager", "#size", "@count", "@sum", "@avg", "AND", "OR",
        "NOT", "ANY", "ALL", "NONE", "SOME", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN",
        "[c]", "[cd]", "TRUEPREDICATE", "FALSEPREDICATE", "YES", "NO", "nil", "NULL", "SELF", "FUNCTION", "TERNARY",
        "CAST", "SUBQUERY", "FIRST", "LAST", "SIZE", "1", "0x", "0b1", "0o9", "1.5", "1e", "1e308", "9e999",
        "9223372036854775808", "'a'", "\"b\"", "'", "\"", "\\", "é", "日本", "🙂", "\u{0}", "\n", " ", "age", "name",
        "sum:", "now", "'NSDate'", "'sqrt:'",
    ]

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Ways to nest, as an opening and a closing text around an operand.
    static let nestings: [(open: String, close: String)] = [
        ("(", ")"), ("NOT ", ""), ("-", ""), ("-(", ")"), ("{", "}"), ("abs:(", ")"), ("2 ** ", ""), ("!(", ")"),
        ("FUNCTION(", ", 'lowercase')"), ("TERNARY(TRUEPREDICATE, ", ", 1)"), ("CAST(", ", 'NSString')"), ("sum:({", "})"),
        ("", "[0]"), ("", " + 1"), ("", ".a[LAST]"), ("(1 + ", ") * 2"),
    ]

    /// Deep nesting around the parser's limit (200), mixed kinds, and long key paths.
    static func deepInput(_ g: inout Generator) -> String {
        if Int.random(in: 0..<4, using: &g) == 0 {
            let keys = (0..<Int.random(in: 1...1_000, using: &g)).map { _ in ["a", "@sum", "#b", "name", "@count"].randomElement(using: &g)! }
            return "$source." + keys.joined(separator: ".") + (Bool.random(using: &g) ? " > 1" : "")
        }
        var text = ["age", "x == 1", "$a.b", "{1, 2}", "1.5", seeds.randomElement(using: &g)!].randomElement(using: &g)!
        for _ in 0..<Int.random(in: 150...260, using: &g) {
            let nesting = nestings.randomElement(using: &g)!
            text = nesting.open + text + nesting.close
        }
        if Int.random(in: 0..<3, using: &g) == 0, !text.isEmpty {
            // A cut or a stray token somewhere inside.
            var scalars = Array(text.unicodeScalars)
            scalars.insert(contentsOf: fragments.randomElement(using: &g)!.unicodeScalars, at: Int.random(in: 0..<scalars.count, using: &g))
            text = String(String.UnicodeScalarView(scalars))
        }
        return text
    }

    static func input(_ g: inout Generator) -> String {
        // One input in twenty nests deeply (around the parser's limit) or is a long key path.
        if Int.random(in: 0..<20, using: &g) == 0 { return deepInput(&g) }
        switch Int.random(in: 0..<4, using: &g) {
        case 0:
            // Random bytes, mostly printable ASCII, decoded leniently.
            let count = Int.random(in: 0..<40, using: &g)
            let bytes = (0..<count).map { _ in
                Int.random(in: 0..<8, using: &g) == 0 ? UInt8.random(in: 0...255, using: &g) : UInt8.random(in: 0x20...0x7E, using: &g)
            }
            return String(decoding: bytes, as: UTF8.self)
        case 1:
            // Random tokens.
            return (0..<Int.random(in: 1..<16, using: &g)).map { _ in fragments.randomElement(using: &g)! }
                .joined(separator: Bool.random(using: &g) ? " " : "")
        default:
            // A mutated seed.
            var scalars = Array(seeds.randomElement(using: &g)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                let position = scalars.isEmpty ? 0 : Int.random(in: 0..<scalars.count, using: &g)
                switch Int.random(in: 0..<5, using: &g) {
                case 0: if !scalars.isEmpty { scalars.remove(at: position) }
                case 1: scalars.insert(contentsOf: fragments.randomElement(using: &g)!.unicodeScalars, at: position)
                case 2: if !scalars.isEmpty { scalars[position] = fragments.randomElement(using: &g)!.unicodeScalars.first ?? " " }
                case 3:
                    let end = min(scalars.count, position + Int.random(in: 0..<8, using: &g))
                    scalars.insert(contentsOf: scalars[position..<end], at: position)
                default:
                    let other = Array(seeds.randomElement(using: &g)!.unicodeScalars)
                    let cut = Int.random(in: 0...other.count, using: &g)
                    scalars = Array(scalars[..<position]) + other[cut...]
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            return text
        }
    }

    struct Record: ObjectRecord {
        var objectID: ObjectID { ObjectID(entity: 1, primaryKey: 1) }
        func value(forKey key: String) -> Value {
            switch key.count % 5 {
            case 0: .int(Int64(key.count))
            case 1: .string(key)
            case 2: .array([1, "a", .null])
            case 3: .double(1.5)
            default: .null
            }
        }
        func value(atSlot slot: Int) -> Value { .null }
    }

    /// Runs `iterations` inputs; returns how many parsed.
    static func run(iterations: Int, seed: UInt64) -> (parsed: Int, failures: [String]) {
        var g = Generator(state: seed)
        var parsed = 0
        var failures: [String] = []
        let compiler = ExpressionCompiler()
        // Keys of three letters are to-ones (compared with objects in SQL), the others attributes.
        let pushdown = SQLPushdown { key in
            key.count == 3
                ? .toOne(name: "Z" + key.uppercased(), entity: .fixed(2))
                : SQLColumn(name: "Z" + key.uppercased(), type: key.count % 2 == 0 ? .integer64 : .string)
        }
        // Variables bound as a fetch's arguments are: an object, a value, a list.
        let bindings: [String: Value] = ["a": .object(ObjectID(entity: 2, primaryKey: 7)), "b": .int(3), "c": .array([.string("x"), .int(1)])]
        var context = EvaluationContext(object: Record(), variables: compiler.variables)
        context[variable: "a"] = .value(.int(1))
        for _ in 0..<iterations {
            let text = input(&g)
            if let predicate = try? PredicateNode(parsing: text) {
                parsed += 1
                if (try? PredicateNode(parsing: predicate.description)) != predicate, failures.count < 20 {
                    failures.append("predicate \(text) printed as \(predicate.description) does not parse back")
                }
                _ = pushdown.predicate(predicate)
                _ = pushdown.predicate(predicate.binding(bindings))
                if !text.contains("MATCHES"), let compiled = try? compiler.compile(predicate) { _ = try? compiled.evaluate(context) }
            }
            if let expression = try? ExpressionNode(parsing: text) {
                parsed += 1
                if (try? ExpressionNode(parsing: expression.description)) != expression, failures.count < 20 {
                    failures.append("expression \(text) printed as \(expression.description) does not parse back")
                }
                _ = pushdown.expression(expression)
                if let compiled = try? compiler.compile(expression) { _ = try? compiled.evaluate(context) }
            }
        }
        return (parsed, failures)
    }

    @Test func randomAndMutatedInputs() {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["MOULT_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 5_000
        let seed = environment["MOULT_FUZZ_SEED"].flatMap(UInt64.init) ?? 1
        let start = Date()
        let result = Self.run(iterations: iterations, seed: seed)
        for failure in result.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(result.parsed > iterations / 50, "the generator should produce some valid inputs")
        if environment["MOULT_FUZZ_ITERATIONS"] != nil {
            print("fuzz: \(iterations) inputs, \(result.parsed) parses, seed \(seed), \(Int(Date().timeIntervalSince(start))) s")
        }
    }
}
