import Foundation
import MoultModel
import Testing
@testable import MoultExpressions

@Suite struct PushdownTests {
    static let columns: [String: SQLColumn] = [
        "age": SQLColumn(name: "ZAGE", type: .integer16),
        "name": SQLColumn(name: "ZNAME", type: .string),
        "street": SQLColumn(name: "ZSTREET", type: .string),
        "state": SQLColumn(name: "ZSTATE", type: .string),
        "temperature": SQLColumn(name: "ZTEMPERATURE", type: .double),
        "amount": SQLColumn(name: "ZAMOUNT", type: .integer64),
        "born": SQLColumn(name: "ZBORN", type: .date),
        "isActive": SQLColumn(name: "ZISACTIVE", type: .boolean),
        "price": SQLColumn(name: "ZPRICE", type: .decimal),
    ]
    let pushdown = SQLPushdown(columns: columns)

    func predicate(_ text: String) throws -> SQLFragment? { pushdown.predicate(try PredicateNode(parsing: text)) }
    func expression(_ text: String) throws -> SQLValueFragment? { pushdown.expression(try ExpressionNode(parsing: text)) }

    @Test func designScenarioFilters() throws {
        #expect(try predicate("age >= 18") == SQLFragment(sql: "\"ZAGE\" >= ?", arguments: [18]))
        #expect(try predicate("age < 18") == SQLFragment(sql: "\"ZAGE\" < ?", arguments: [18]))
        #expect(try predicate("street != nil OR state != nil") == SQLFragment(sql: "((\"ZSTREET\") IS NOT NULL) OR ((\"ZSTATE\") IS NOT NULL)"))
        #expect(try predicate("name BEGINSWITH 'A'") == SQLFragment(sql: "substr(\"ZNAME\", 1, 1) = ?", arguments: ["A"]))
    }

    @Test func designScenarioValueExpressions() throws {
        #expect(try expression("$source.amount")?.value == SQLFragment(sql: "\"ZAMOUNT\""))
        #expect(try expression("($source.temperature - 32.0) / 1.8")?.value
            == SQLFragment(sql: "(CAST((\"ZTEMPERATURE\" - ?) AS REAL) / ?)", arguments: [.double(32), .double(1.8)]))
        let upper = try #require(try expression("uppercase:($source.name)"))
        #expect(upper.value == SQLFragment(sql: "upper(\"ZNAME\")"))
        #expect(upper.fallbackCondition != nil)
        #expect(try expression(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#) == nil)
    }

    /// A to-one compares with an object (its key and its entity, as object ids compare) or nil, and
    /// with nothing else; arguments bound as constants push down as literals do.
    @Test func toOnesCompareWithObjects() throws {
        var columns = Self.columns
        columns["owner"] = .toOne(name: "ZOWNER", entity: .fixed(3))
        columns["holder"] = .toOne(name: "ZHOLDER", entity: .column("Z3_HOLDER"))
        let pushdown = SQLPushdown(columns: columns)
        func bound(_ text: String, _ values: [String: Value]) throws -> SQLFragment? {
            pushdown.predicate(try PredicateNode(parsing: text).binding(values))
        }
        let person = Value.object(ObjectID(entity: 3, primaryKey: 42))
        #expect(try bound("owner == $x", ["x": person]) == SQLFragment(sql: "\"ZOWNER\" IS ?", arguments: [42]))
        #expect(try bound("owner != $x", ["x": person]) == SQLFragment(sql: "\"ZOWNER\" IS NOT ?", arguments: [42]))
        #expect(try bound("$x == owner", ["x": .object(ObjectID(entity: 5, primaryKey: 42))]) == SQLFragment(sql: "0"))
        #expect(try bound("owner == $x", ["x": .null]) == SQLFragment(sql: "\"ZOWNER\" IS NULL"))
        #expect(try bound("holder == $x", ["x": person]) == SQLFragment(sql: "(\"ZHOLDER\" IS ? AND \"Z3_HOLDER\" IS ?)", arguments: [42, 3]))
        #expect(try bound("holder != $x AND age > $y", ["x": person, "y": .int(3)])
            == SQLFragment(sql: "(NOT (\"ZHOLDER\" IS ? AND \"Z3_HOLDER\" IS ?)) AND (\"ZAGE\" > ?)", arguments: [42, 3, 3]))
        #expect(try bound("age IN $list", ["list": .array([1, 2])]) == SQLFragment(sql: "\"ZAGE\" IN (?, ?)", arguments: [1, 2]))
        for declined in ["owner == 3", "owner > $x", "owner == name", "owner.name == 'x'", "owner IN {$x}", "age == $unbound"] {
            #expect(try bound(declined, ["x": person]) == nil, "\(declined)")
        }
    }

    @Test func nilRules() throws {
        #expect(try predicate("age == nil") == SQLFragment(sql: "(\"ZAGE\") IS NULL"))
        #expect(try predicate("nil != age") == SQLFragment(sql: "(\"ZAGE\") IS NOT NULL"))
        #expect(try predicate("age != 5") == SQLFragment(sql: "\"ZAGE\" IS NOT ?", arguments: [5]))
        #expect(try predicate("NOT age > 5") == SQLFragment(sql: "NOT coalesce(\"ZAGE\" > ?, 0)", arguments: [5]))
        #expect(try predicate("age < nil") == SQLFragment(sql: "0"))
    }

    @Test func othersPushedDown() throws {
        #expect(try predicate("age BETWEEN {1, 5}") == SQLFragment(sql: "\"ZAGE\" BETWEEN ? AND ?", arguments: [1, 5]))
        #expect(try predicate("state IN {'CA', 'NY'}") == SQLFragment(sql: "\"ZSTATE\" IN (?, ?)", arguments: ["CA", "NY"]))
        #expect(try predicate("name LIKE 'A*b?[c]'") == SQLFragment(sql: "\"ZNAME\" GLOB ?", arguments: ["A*b?[[]c]"]))
        #expect(try predicate("name CONTAINS ''") == SQLFragment(sql: "0"))
        #expect(try predicate("born > CAST(100, 'NSDate')") == SQLFragment(sql: "\"ZBORN\" > ?", arguments: [.double(100)]))
        #expect(try predicate("isActive == YES") == SQLFragment(sql: "\"ZISACTIVE\" IS ?", arguments: [1]))
        #expect(try predicate("TRUEPREDICATE") == SQLFragment(sql: "1"))
    }

    @Test(arguments: [
        "name ==[c] 'a'", "name BEGINSWITH[cd] 'a'", "name MATCHES 'a.*'", "name LIKE[c] 'a*'", "age == 'a'",
        "name < 5", "price > 1", "ANY trades.amount > 1", "owner.name == 'x'", "age * temperature > 1", "age / amount > 1",
        "age * 0 == 0", "age / 0 > 1", "age ** 2 > 1", "born > 5", "sqrt:(age) > 1", "nosuchkey == 1", "now() > born",
        "$manager == 1", "age IN {1, 'a'}", "age IN {1, nil}",
    ])
    func declines(text: String) throws {
        #expect(try predicate(text) == nil)
    }
}
