import Foundation
import MoultModel
import Testing
@testable import MoultExpressions

@Suite struct PrinterTests {
    @Test(arguments: [
        "$source.amount",
        "($source.temperature - 32.0) / 1.8",
        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToAddress", $source)"#,
        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#,
        "$source.#size",
        "$source.color",
        "1 - (2 - 3)",
        "1 - 2 - 3",
        "2 ** 3 ** 2",
        "(2 ** 3) ** 2",
        "-$source.x * 2",
        "sum:({1, 2.5, -3})",
        "now()",
        #"TERNARY(age >= 18, "adult", "child")"#,
        #"CAST($source.age, "NSString")"#,
        "CAST(100.0, \"NSDate\")",
        "trades.@sum.amount",
        "tags[LAST]",
        #""quote \" backslash \\ newline \n""#,
        "{YES, NO, nil}",
    ])
    func canonicalExpressions(text: String) throws {
        let node = try ExpressionNode(parsing: text)
        #expect(node.description == text)
        #expect(try ExpressionNode(parsing: node.description) == node)
    }

    @Test(arguments: [
        ("$source.temperature-32.0", "$source.temperature - 32.0"),
        ("'single'", "\"single\""),
        ("FUNCTION( $manager , 'sel:' , 'a' )", "FUNCTION($manager, \"sel:\", \"a\")"),
        ("SELF.age", "age"),
        ("((1))", "1"),
        ("0x10", "16"),
        ("true", "YES"),
        ("CAST(0, 'NSDate')", "CAST(0.0, \"NSDate\")"),
    ])
    func normalizes(text: String, canonical: String) throws {
        #expect(try ExpressionNode(parsing: text).description == canonical)
    }

    @Test(arguments: [
        ("age >= 18", "age >= 18"),
        ("street != nil or state != nil", "street != nil OR state != nil"),
        ("(a = 1 || b = 2) && c = 3", "(a == 1 OR b == 2) AND c == 3"),
        ("!(a == 1)", "NOT a == 1"),
        ("NOT (a == 1 AND b == 2)", "NOT (a == 1 AND b == 2)"),
        ("name beginswith[cd] 'a'", "name BEGINSWITH[cd] \"a\""),
        ("SOME trades.amount > 100", "ANY trades.amount > 100"),
        ("age between {1, 5}", "age BETWEEN {1, 5}"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("x =< 1 AND y => 2 AND z <> 3", "x <= 1 AND y >= 2 AND z != 3"),
    ])
    func canonicalPredicates(text: String, canonical: String) throws {
        let node = try PredicateNode(parsing: text)
        #expect(node.description == canonical)
        #expect(try PredicateNode(parsing: node.description) == node)
    }
}
