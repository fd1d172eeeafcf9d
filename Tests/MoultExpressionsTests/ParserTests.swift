import Foundation
import MoultModel
import MoultTestSupport
import Testing
@testable import MoultExpressions

@Suite struct ParserTests {
    @Test func designScenarioExpressions() throws {
        #expect(try ExpressionNode(parsing: "$source.amount") == .keyPath(base: .variable("source"), components: ["amount"]))
        #expect(try ExpressionNode(parsing: "($source.temperature - 32.0) / 1.8") == .arithmetic(
            .divide,
            .arithmetic(.subtract, .keyPath(base: .variable("source"), components: ["temperature"]), .constant(.double(32))),
            .constant(.double(1.8))))
        #expect(try ExpressionNode(parsing: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#)
            == .function(
                receiver: .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments: [.constant(.string("TradeToTrade")), .keyPath(base: .variable("source"), components: ["trades"])]))
        #expect(try ExpressionNode(parsing: "$source.#size") == .keyPath(base: .variable("source"), components: ["size"]))
        #expect(try PredicateNode(parsing: "age >= 18") == .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["age"]), .greaterOrEqual, .constant(.int(18)))))
        #expect(try PredicateNode(parsing: "age < 18") == .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["age"]), .less, .constant(.int(18)))))
        #expect(try PredicateNode(parsing: "street != nil OR state != nil") == .or([
            .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["street"]), .notEqual, .constant(.null))),
            .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["state"]), .notEqual, .constant(.null))),
        ]))
    }

    @Test func everyFixtureExpressionParses() throws {
        var count = 0
        for (_, mappings) in try FixtureMappings.load() {
            for mapping in mappings {
                if let filter = mapping.filterPredicate {
                    _ = try PredicateNode(parsing: filter)
                    count += 1
                }
                for property in mapping.properties {
                    guard let text = property.valueExpression else { continue }
                    let node = try ExpressionNode(parsing: text)
                    // Xcode's decoded text is the canonical text: printing gives it back.
                    #expect(node.description == text)
                    count += 1
                }
            }
        }
        #expect(count >= 5)
    }

    @Test func keywordsAreCaseInsensitive() throws {
        let upper = try PredicateNode(parsing: "NOT a == 1 AND b BEGINSWITH \"x\" OR ANY c IN {1, 2}")
        let lower = try PredicateNode(parsing: "not a == 1 and b beginswith \"x\" or any c in {1, 2}")
        #expect(upper == lower)
        #expect(try ExpressionNode(parsing: "yes") == .constant(.bool(true)))
        #expect(try ExpressionNode(parsing: "Null") == .constant(.null))
        #expect(try PredicateNode(parsing: "truepredicate") == .constant(true))
    }

    @Test func precedence() throws {
        let node = try ExpressionNode(parsing: "1 + 2 * 3 ** 2 ** 2 - -4")
        #expect(node.description == "1 + 2 * 3 ** 2 ** 2 - -4")
        guard case .arithmetic(.subtract, .arithmetic(.add, _, .arithmetic(.multiply, _, .arithmetic(.power, _, .arithmetic(.power, _, _)))), .constant(.int(-4))) = node else {
            Issue.record("wrong tree: \(node)")
            return
        }
        let predicate = try PredicateNode(parsing: "a == 1 OR b == 2 AND NOT c == 3")
        guard case .or(let operands) = predicate, case .and(let right) = operands[1], case .not = right[1] else {
            Issue.record("wrong tree: \(predicate)")
            return
        }
        #expect(try PredicateNode(parsing: "a == 1 && b == 2 || !(c == 3)") == (try PredicateNode(parsing: "(a == 1 AND b == 2) OR NOT c == 3")))
    }

    @Test func comparisonsAndOptions() throws {
        let operators: [(String, ComparisonOperator)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less), ("<=", .lessOrEqual),
            ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
            ("CONTAINS", .contains), ("BEGINSWITH", .beginsWith), ("ENDSWITH", .endsWith), ("LIKE", .like),
            ("MATCHES", .matches), ("IN", .in),
        ]
        for (text, op) in operators {
            for (suffix, options) in [("", StringComparisonOptions()), ("[c]", .caseInsensitive), ("[d]", .diacriticInsensitive), ("[cd]", [.caseInsensitive, .diacriticInsensitive])] {
                let node = try PredicateNode(parsing: "name \(text)\(suffix) \"x\"")
                #expect(node == .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["name"]), op, .constant(.string("x")), options: options)))
            }
        }
        #expect(try PredicateNode(parsing: "age BETWEEN {1, 5}") == .comparison(ComparisonNode(
            .keyPath(base: .evaluatedObject, components: ["age"]), .between, .array([.constant(.int(1)), .constant(.int(5))]))))
        for (word, modifier) in [("ANY", ComparisonModifier.any), ("SOME", .any), ("ALL", .all), ("NONE", .none)] {
            guard case .comparison(let comparison) = try PredicateNode(parsing: "\(word) tags.name == 'x'") else {
                Issue.record("not a comparison")
                continue
            }
            #expect(comparison.modifier == modifier)
            #expect(comparison.lhs == .keyPath(base: .evaluatedObject, components: ["tags", "name"]))
        }
    }

    @Test func functionsTernaryCastAndCollections() throws {
        #expect(try ExpressionNode(parsing: "FUNCTION($source, 'valueForKeyPath:', 'owner.name')") == .function(
            receiver: .variable("source"), selector: "valueForKeyPath:", arguments: [.constant(.string("owner.name"))]))
        #expect(try ExpressionNode(parsing: "sum:({1, 2, 3})") == .function(receiver: nil, selector: "sum:", arguments: [.array([1, 2, 3].map { .constant(.int($0)) })]))
        #expect(try ExpressionNode(parsing: "now()") == .function(receiver: nil, selector: "now", arguments: []))
        #expect(try ExpressionNode(parsing: "add:to:(1, 2)") == .function(receiver: nil, selector: "add:to:", arguments: [.constant(.int(1)), .constant(.int(2))]))
        #expect(try ExpressionNode(parsing: "TERNARY(age >= 18, 'adult', 'child')") == .ternary(
            .comparison(ComparisonNode(.keyPath(base: .evaluatedObject, components: ["age"]), .greaterOrEqual, .constant(.int(18)))),
            .constant(.string("adult")), .constant(.string("child"))))
        #expect(try ExpressionNode(parsing: "CAST(0, 'NSDate')") == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(try ExpressionNode(parsing: "CAST($source.age, \"NSString\")") == .cast(.keyPath(base: .variable("source"), components: ["age"]), type: "NSString"))
        #expect(try ExpressionNode(parsing: "trades.@sum.amount") == .keyPath(base: .evaluatedObject, components: ["trades", "@sum", "amount"]))
        #expect(try ExpressionNode(parsing: "{}") == .array([]))
        #expect(try ExpressionNode(parsing: "tags[FIRST]") == .subscripted(.keyPath(base: .evaluatedObject, components: ["tags"]), index: .first))
        #expect(try ExpressionNode(parsing: "SELF") == .evaluatedObject)
        #expect(try ExpressionNode(parsing: "$destination.name") == .keyPath(base: .variable("destination"), components: ["name"]))
    }

    @Test func subqueryIsAClearError() {
        #expect {
            try PredicateNode(parsing: "SUBQUERY(trades, $t, $t.amount > 5).@count > 0")
        } throws: { error in
            guard let error = error as? ExpressionError else { return false }
            return error.code == .unsupported && error.description.contains("SUBQUERY is not supported yet")
        }
    }

    @Test(arguments: [
        "", "a ==", "== 1", "(a == 1", "a == 1)", "{1, 2", "FUNCTION($manager)", "FUNCTION($m, sel)", "TERNARY(a, 1, 2)",
        "a BETWEEN {1}", "$source.size", "a == 1 b", "a + ", "CAST(1)", "ANY a", "a[1", "name LIKE[x] 'a'", "%@ == 1",
    ])
    func rejects(text: String) {
        #expect(throws: ExpressionError.self) {
            _ = try PredicateNode(parsing: text)
            _ = try ExpressionNode(parsing: text)
        }
    }

    @Test func deepNestingIsRefusedNotACrash() throws {
        let deep = String(repeating: "(", count: 10_000) + "1" + String(repeating: ")", count: 10_000)
        #expect(throws: ExpressionError.self) { try ExpressionNode(parsing: deep) }
        let longChain = Array(repeating: "1", count: 20_000).joined(separator: " + ")
        #expect(throws: ExpressionError.self) { _ = try ExpressionNode(parsing: longChain) }
        let chain = Array(repeating: "2", count: 100).joined(separator: " * ")
        #expect(try ExpressionNode(parsing: chain).description == chain)
        let shallow = String(repeating: "(", count: 50) + "1" + String(repeating: ")", count: 50)
        #expect(try ExpressionNode(parsing: shallow) == .constant(.int(1)))
    }
}
