import MoultModel
import Testing
@testable import MoultExpressions

@Suite struct ErrorTests {
    private func error(_ text: String) -> ExpressionError? {
        do {
            _ = try PredicateNode(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func pointsAtTheSpot() throws {
        let found = try #require(error("age >= AND x"))
        #expect(found.line == 1)
        #expect(found.column == 8)
        #expect(found.category == .badInput)
        #expect(found.expected != nil)
        #expect(found.description == """
            expression: line 1, column 8: unexpected "AND" (expected an expression after ">=")
              age >= AND x
                     ^
            """)
    }

    @Test func multiLineAndUnicodeColumns() throws {
        let found = try #require(error("name == 'Zoë'\n  AND age >>= 3"))
        #expect(found.line == 2)
        #expect(found.column == 12)
        #expect(found.excerpt == "    AND age >>= 3\n             ^")
        let unicode = try #require(error("'日本' == ) "))
        #expect(unicode.column == 9)
    }

    @Test func saysWhatWasExpected() throws {
        #expect(try #require(error("(a == 1")).expected?.contains(")") == true)
        #expect(try #require(error("$source.size == 1")).expected?.contains("#size") == true)
        #expect(try #require(error("a == 'open")).message.contains("unterminated string"))
        #expect(try #require(error("a + 1")).message.contains("not a predicate"))
    }
}
