import Foundation
import MoultModel
import Testing
@testable import MoultExpressions

@Suite struct FunctionTests {
    static let schema = KeySchema(keys: ["name", "values", "x"])
    let row = TestRecord(schema: schema, ["name": "Zoë", "values": [2, 4, 4, 4, 5, 5, 7, 9], "x": .double(-2.5)])

    func value(_ text: String, functions: ExpressionFunctionRegistry = ExpressionFunctionRegistry()) throws -> Value {
        try Evaluator(schema: Self.schema, functions: functions).value(text, on: row)
    }

    @Test(arguments: [
        ("sum:({1, 2, 3})", Value.int(6)),
        ("FUNCTION(nil, 'sum:', $source.values)", .int(40)),
        ("count:($source.values)", .int(8)),
        ("min:($source.values)", .int(2)),
        ("max:($source.values)", .int(9)),
        ("average:($source.values)", .double(5)),
        ("median:($source.values)", .double(4.5)),
        ("median:({3, 1, 2})", .double(2)),
        ("mode:($source.values)", .array([4])),
        ("stddev:($source.values)", .double(2)),
        ("distinct:({1, 2, 1, 3, 2})", .array([1, 2, 3])),
        ("add:to:(2, 3)", .int(5)),
        ("from:subtract:(2, 3.5)", .double(-1.5)),
        ("multiply:by:(4, 2.5)", .double(10)),
        ("divide:by:(7, 2)", .double(3.5)),
        ("modulus:by:(7, 3)", .int(1)),
        ("modulus:by:(-7.5, 2)", .double(-1.5)),
        ("sqrt:(16)", .double(4)),
        ("log:(1000)", .double(3)),
        ("ln:(1)", .double(0)),
        ("raise:toPower:(2, 8)", .double(256)),
        ("exp:(0)", .double(1)),
        ("floor:($source.x)", .double(-3)),
        ("ceiling:($source.x)", .double(-2)),
        ("trunc:($source.x)", .double(-2)),
        ("abs:($source.x)", .double(2.5)),
        ("abs:(-4)", .int(4)),
        ("uppercase:($source.name)", .string("ZOË")),
        ("lowercase:('ÄBC')", .string("äbc")),
        ("noindex:(7)", .int(7)),
        ("bitwiseAnd:with:(12, 10)", .int(8)),
        ("bitwiseOr:with:(12, 10)", .int(14)),
        ("bitwiseXor:with:(12, 10)", .int(6)),
        ("leftshift:by:(1, 4)", .int(16)),
        ("rightshift:by:(16, 2)", .int(4)),
        ("onesComplement:(0)", .int(-1)),
        ("castObject:toType:('12', 'NSNumber')", .int(12)),
        ("FUNCTION($source, 'valueForKeyPath:', 'name')", .string("Zoë")),
        ("sqrt:(nil)", .null),
    ])
    func builtin(text: String, expected: Value) throws {
        #expect(try value(text) == expected)
    }

    @Test func volatileFunctions() throws {
        guard case .date(let now) = try value("now()") else { Issue.record("now() is not a date"); return }
        #expect(abs(now.timeIntervalSinceNow) < 60)
        guard case .double(let random) = try value("random()") else { Issue.record("random() is not a double"); return }
        #expect(random >= 0 && random < 1)
        let element = try value("random:({1, 2, 3})")
        #expect([Value.int(1), 2, 3].contains(element))
    }

    @Test func registeredFunctions() throws {
        var functions = ExpressionFunctionRegistry()
        functions.register("initials:") { receiver, arguments in
            guard case .string(let name) = arguments.first else { return .null }
            return .string(String(name.prefix(1)) + (receiver.isNull ? "" : "!"))
        }
        #expect(try value("initials:($source.name)", functions: functions) == "Z")
        #expect(try value("FUNCTION(1, 'initials:', $source.name)", functions: functions) == "Z!")
    }

    @Test func hostCalls() throws {
        let host = RecordingHost()
        let evaluator = Evaluator(schema: Self.schema)
        let result = try evaluator.value("FUNCTION($entityPolicy, 'companyNamed:', $source.name)", on: row) { $0.host = host }
        #expect(result == ["Zoë"])
        #expect(host.calls.first?.receiver == .variable("entityPolicy"))
        #expect(host.calls.first?.selector == "companyNamed:")
        // Without a host, such a call is a clear error, not a silent nil.
        #expect { try evaluator.value("FUNCTION($manager, 'x:', 1)", on: row) } throws: { error in
            (error as? ExpressionError)?.code == .missingBinding
        }
    }

    @Test func wrongArityAndUnknownFunctions() {
        #expect(throws: ExpressionError.self) { try value("sqrt:(1, 2)") }
        #expect(throws: ExpressionError.self) { try value("nosuchfunction:(1)") }
        #expect(throws: ExpressionError.self) { try value("uppercase:(1)") }
    }
}
