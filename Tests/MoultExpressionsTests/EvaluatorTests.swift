import Foundation
import MoultModel
import MoultTestSupport
import Testing
@testable import MoultExpressions

@Suite struct EvaluatorTests {
    static let person = KeySchema(
        keys: ["name", "age", "state", "street", "weight", "born", "isActive", "size", "temperature", "amount", "owner", "trades", "tags", "balance"],
        destinations: ["owner": "Person", "trades": "Trade"])
    static let trade = KeySchema(keys: ["amount", "symbol"])
    let evaluator = Evaluator(schema: person, schemas: ["Person": person, "Trade": trade])

    func record(_ values: [String: Value], id: Int64 = 1) -> TestRecord {
        TestRecord(id: id, schema: Self.person, values)
    }

    @Test func designScenarioValueExpressions() throws {
        let row = record(["amount": 125, "temperature": .double(212), "size": 7, "color": "red"])
        #expect(try evaluator.value("$source.amount", on: row) == 125)
        #expect(try evaluator.value("($source.temperature - 32.0) / 1.8", on: row) == .double((212.0 - 32.0) / 1.8))
        #expect(try evaluator.value("($source.temperature - 32.0) / 1.8", on: record(["temperature": 50])) == .double(10))
        #expect(try evaluator.value("$source.#size", on: row) == 7)
        #expect(try evaluator.value("($source.temperature - 32.0) / 1.8", on: record([:])) == .null)
    }

    @Test func designScenarioRelationshipMappings() throws {
        let host = RecordingHost()
        let trades: Value = [.object(ObjectID(entity: 3, primaryKey: 1)), .object(ObjectID(entity: 3, primaryKey: 2))]
        let row = record(["trades": trades], id: 42)
        let text = #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#
        #expect(try evaluator.value(text, on: row) { $0.host = host } == trades)
        #expect(host.calls.last?.selector == "destinationInstancesForEntityMappingNamed:sourceInstances:")
        #expect(host.calls.last?.arguments == ["TradeToTrade", trades])
        // People v2 → v3: the address of a person is made from the person itself.
        let address = #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToAddress", $source)"#
        #expect(try evaluator.value(address, on: row) { $0.host = host } == [.object(row.objectID)])
        #expect(host.calls.last?.arguments == ["PersonToAddress", .object(row.objectID)])
        #expect(host.calls.last?.receiver == .variable("manager"))
    }

    @Test func designScenarioFilters() throws {
        #expect(try evaluator.holds("age >= 18", on: record(["age": 18])))
        #expect(try !evaluator.holds("age >= 18", on: record(["age": 17])))
        #expect(try !evaluator.holds("age >= 18", on: record([:])))
        #expect(try evaluator.holds("age < 18", on: record(["age": 3])))
        #expect(try !evaluator.holds("age < 18", on: record([:])))
        #expect(try evaluator.holds("street != nil OR state != nil", on: record(["state": "CA"])))
        #expect(try evaluator.holds("street != nil OR state != nil", on: record(["street": "1 Infinite Loop"])))
        #expect(try !evaluator.holds("street != nil OR state != nil", on: record(["name": "x"])))
        #expect(try evaluator.holds("name BEGINSWITH 'A'", on: record(["name": "Alice"])))
        #expect(try !evaluator.holds("name BEGINSWITH 'A'", on: record(["name": "bob"])))
    }

    @Test func fixtureValueExpressionsEvaluate() throws {
        // wibosco Migration1to2: hexColor = $source.color.
        let schema = KeySchema(keys: ["color"])
        let colors = Evaluator(schema: schema)
        #expect(try colors.value("$source.color", on: TestRecord(schema: schema, ["color": "#FF0000"])) == "#FF0000")
        // Relationship mappings go to the migration manager.
        let host = RecordingHost()
        // The other fixtures' relationships (apptentive's fileMessage, fileAttachment) are to-ones.
        let toOnes = ["owner", "fileMessage", "fileAttachment"]
        let cars = KeySchema(keys: toOnes + ["cars"])
        var values: [String: Value] = ["cars": [.object(ObjectID(entity: 1, primaryKey: 3))]]
        for key in toOnes { values[key] = .object(ObjectID(entity: 2, primaryKey: 9)) }
        let car = TestRecord(id: 4, schema: cars, values)
        for (_, mappings) in try FixtureMappings.load() {
            for mapping in mappings {
                for property in mapping.properties where property.valueExpression?.hasPrefix("FUNCTION($manager") == true {
                    let text = property.valueExpression!
                    let result = try Evaluator(schema: cars).value(text, on: car) { $0.host = host }
                    guard case .array(let objects) = result, let call = host.calls.last else {
                        Issue.record("\(text) gave \(result)")
                        continue
                    }
                    #expect(call.receiver == .variable("manager"))
                    #expect(text.contains(call.selector))
                    #expect(call.arguments.count == 2)
                    #expect(objects == Comparison.elements(call.arguments[1]))
                }
            }
        }
        #expect(host.calls.count >= 3)
    }

    @Test func nilSemantics() throws {
        let row = record(["name": "x"])
        #expect(try evaluator.holds("age == nil", on: row))
        #expect(try !evaluator.holds("age != nil", on: row))
        #expect(try evaluator.holds("age != 5", on: row))
        #expect(try !evaluator.holds("age == 5", on: row))
        #expect(try !evaluator.holds("age < 5", on: row))
        #expect(try !evaluator.holds("age > 5", on: row))
        #expect(try evaluator.holds("NOT age > 5", on: row))
        #expect(try evaluator.holds("nil == nil", on: row))
        #expect(try evaluator.holds("age == state", on: row))
        #expect(try !evaluator.holds("age BETWEEN {1, 5}", on: row))
        #expect(try !evaluator.holds("age IN {1, 5}", on: row))
        #expect(try !evaluator.holds("name CONTAINS nil", on: row))
        #expect(try !evaluator.holds("street LIKE '*'", on: row))
    }

    @Test func mixedNumbers() throws {
        let row = record(["age": 3, "weight": .double(3.0), "balance": .decimal(Decimal(string: "3.00")!), "isActive": true])
        #expect(try evaluator.holds("age == weight", on: row))
        #expect(try evaluator.holds("age == balance AND weight == balance", on: row))
        #expect(try evaluator.holds("age < 3.5 AND age > 2.9999", on: row))
        #expect(try evaluator.holds("isActive == 1 AND isActive == YES AND isActive != 0", on: row))
        #expect(try evaluator.value("age + 1", on: row) == 4)
        #expect(try evaluator.value("age / 2", on: row) == .double(1.5))
        #expect(try evaluator.value("age * 1.5", on: row) == .double(4.5))
        #expect(try evaluator.value("balance + 1", on: row) == .decimal(4))
        #expect(try evaluator.value("2 ** 10", on: row) == .double(1024))
        #expect(try evaluator.value("9223372036854775807 + 1", on: row) == .double(9223372036854775808.0))
        // Exact comparison of large integers with doubles (no rounding of the integer).
        #expect(try !evaluator.holds("9007199254740993 == 9007199254740992.0", on: row))
        #expect(try evaluator.holds("9007199254740993 > 9007199254740992.0", on: row))
    }

    @Test func datesAndStrings() throws {
        let born = Date(timeIntervalSinceReferenceDate: 1000)
        let row = record(["born": .date(born), "name": "Zoë Ärger", "state": "CA"])
        #expect(try evaluator.holds("born == CAST(1000, 'NSDate')", on: row))
        #expect(try evaluator.holds("born > CAST(999.5, 'NSDate') AND born < CAST(1000.5, \"NSDate\")", on: row))
        #expect(try evaluator.holds("name ==[cd] 'zoe arger'", on: row))
        #expect(try !evaluator.holds("name ==[c] 'zoe ärger'", on: row))
        #expect(try evaluator.holds("name ==[c] 'ZOË ÄRGER'", on: row))
        #expect(try evaluator.holds("name ==[d] 'Zoe Arger'", on: row))
        #expect(try evaluator.holds("name CONTAINS[cd] 'ARG'", on: row))
        #expect(try evaluator.holds("name ENDSWITH 'ger'", on: row))
        #expect(try !evaluator.holds("name CONTAINS ''", on: row))
        #expect(try evaluator.holds("state IN {'CA', 'NY'}", on: row))
        #expect(try evaluator.holds("'A' IN state", on: row))
        #expect(try evaluator.holds("state < 'CB' AND state > 'C'", on: row))
        #expect(try evaluator.holds("'é' > 'e' AND 'Z' < 'a'", on: row))
        #expect(throws: ExpressionError.self) { try evaluator.holds("state < 5", on: row) }
        #expect(try !evaluator.holds("state == 5", on: row))
    }

    @Test func likeAndMatches() throws {
        let row = record(["name": "Straße 12", "state": "a*c"])
        #expect(try evaluator.holds("name LIKE 'Str*'", on: row))
        #expect(try evaluator.holds("name LIKE 'Stra?e 1?'", on: row))
        #expect(try !evaluator.holds("name LIKE 'str*'", on: row))
        #expect(try evaluator.holds("name LIKE[c] 'str*'", on: row))
        #expect(try evaluator.holds("name LIKE '*'", on: row))
        #expect(try !evaluator.holds("name LIKE 'Str'", on: row))
        #expect(try evaluator.holds(#"state LIKE 'a\\*c'"#, on: row))
        #expect(try !evaluator.holds(#"state LIKE 'a\\*'"#, on: row))
        #expect(try evaluator.holds("name MATCHES 'Stra.e [0-9]+'", on: row))
        #expect(try !evaluator.holds("name MATCHES 'Stra'", on: row))
        #expect(try evaluator.holds("name MATCHES '[a-z]+|Straße 12'", on: row))
        #expect(try evaluator.holds("name MATCHES[c] 'STRASSE 12|straße 12'", on: row))
        #expect(throws: ExpressionError.self) { try evaluator.holds("name MATCHES '('", on: row) }
    }

    @Test func aggregatesAndRelationships() throws {
        let trades = (1...3).map { TestRecord(id: Int64($0), entity: 2, schema: Self.trade, ["amount": .int(Int64($0) * 10), "symbol": $0 == 2 ? "AAPL" : "MSFT"]) }
        let owner = record(["name": "Owner"], id: 9)
        var records: [ObjectID: TestRecord] = [owner.objectID: owner]
        for trade in trades { records[trade.objectID] = trade }
        let resolver = TestResolver(records: records)
        let row = record(["owner": .object(owner.objectID), "trades": .array(trades.map { .object($0.objectID) }), "tags": ["a", "b"]])
        let configure: (inout EvaluationContext) -> Void = { $0.resolver = resolver }
        #expect(try evaluator.value("$source.owner.name", on: row, configure: configure) == "Owner")
        #expect(try evaluator.value("FUNCTION($source, 'valueForKeyPath:', 'owner.name')", on: row, configure: configure) == "Owner")
        #expect(try evaluator.value("trades.@count", on: row) == 3)
        #expect(try evaluator.value("trades.@sum.amount", on: row, configure: configure) == 60)
        #expect(try evaluator.value("trades.@avg.amount", on: row, configure: configure) == .double(20))
        #expect(try evaluator.value("trades.@max.amount", on: row, configure: configure) == 30)
        #expect(try evaluator.value("trades.amount", on: row, configure: configure) == [10, 20, 30])
        #expect(try evaluator.holds("ANY trades.symbol == 'AAPL'", on: row, configure: configure))
        #expect(try !evaluator.holds("ALL trades.symbol == 'AAPL'", on: row, configure: configure))
        #expect(try evaluator.holds("ALL trades.amount > 5", on: row, configure: configure))
        #expect(try evaluator.holds("NONE trades.amount > 30", on: row, configure: configure))
        #expect(try evaluator.holds("tags CONTAINS 'b' AND 'a' IN tags", on: row))
        #expect(try evaluator.value("tags[LAST]", on: row) == "b")
        #expect(try evaluator.value("tags[0]", on: row) == "a")
        #expect(try evaluator.value("tags[SIZE]", on: row) == 2)
        #expect(throws: ExpressionError.self) { try evaluator.value("$source.owner.name", on: row) }
    }

    @Test func variablesTernaryCast() throws {
        let row = record(["age": 20, "name": "n"])
        let destination = TestRecord(id: 5, schema: Self.person, ["name": "dest"])
        let value = try evaluator.value("TERNARY(age >= 18, $adultLabel, 'child')", on: row) { $0[variable: "adultLabel"] = .value("adult") }
        #expect(value == "adult")
        #expect(try evaluator.value("$destination.name", on: row) { $0[variable: "destination"] = .object(destination) } == "dest")
        #expect(try evaluator.value("$destination", on: row) { $0[variable: "destination"] = .object(destination) } == .object(destination.objectID))
        #expect(try evaluator.value("$source", on: row) == .object(row.objectID))
        #expect(throws: ExpressionError.self) { try evaluator.value("$unset", on: row) }
        #expect(try evaluator.value("CAST(age, 'NSString')", on: row) == "20")
        #expect(try evaluator.value("CAST('2.5', 'NSNumber')", on: row) == .double(2.5))
        #expect(try evaluator.value("CAST(age, 'NSDate')", on: row) == .date(Date(timeIntervalSinceReferenceDate: 20)))
    }

    @Test func unknownKeysAreCompileErrors() {
        #expect {
            try evaluator.compiler.compileExpression("$source.nope")
        } throws: { error in
            (error as? ExpressionError)?.code == .unknownKey && "\(error)".contains("nope")
        }
    }

    @Test func compiledFromAModel() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [AttributeDescription(name: "age", type: .integer16)]),
            EntityDescription(name: "Adult", parent: "Person", attributes: [AttributeDescription(name: "companyName", type: .string)]),
        ])
        let adult = try #require(KeySchema(entity: "Adult", in: model))
        #expect(adult.keys == ["age", "companyName"])
        let compiler = try #require(ExpressionCompiler(model: model, entity: "Person"))
        let filter = try compiler.compilePredicate("age >= 18")
        #expect(try filter.evaluate(on: TestRecord(schema: adult, ["age": 30, "companyName": "Apple"])))
    }
}

/// A function host that records its calls and answers the association look-ups with their sources.
final class RecordingHost: ExpressionFunctionHost, @unchecked Sendable {
    struct Call {
        var selector: String
        var receiver: FunctionReceiver
        var arguments: [Value]
    }

    var calls: [Call] = []

    func call(_ selector: String, on receiver: FunctionReceiver, arguments: [Value]) throws -> Value {
        calls.append(Call(selector: selector, receiver: receiver, arguments: arguments))
        guard let sources = arguments.last else { return .null }
        if case .array = sources { return sources }
        return .array([sources])
    }
}
