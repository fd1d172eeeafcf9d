import Testing
@testable import MoultExpressions

@Suite struct LexerTests {
    private func kinds(_ text: String) throws -> [Token.Kind] {
        try Lexer.tokenize(text).map(\.kind).dropLast()
    }

    @Test(arguments: [
        ("42", Token.Kind.integer(42)), ("0x1F", .integer(31)), ("0X1f", .integer(31)), ("0o17", .integer(15)),
        ("0b1011", .integer(11)), ("1.5", .double(1.5)), ("1e3", .double(1000)), ("2.5E-2", .double(0.025)),
        ("1e+2", .double(100)), (".5", .double(0.5)), ("9223372036854775807", .integer(.max)),
        ("9223372036854775808", .double(9223372036854775808.0)), ("0xFFFFFFFFFFFFFFFFF", .double(295147905179352825855.0)),
    ])
    func numbers(text: String, expected: Token.Kind) throws {
        #expect(try kinds(text) == [expected])
    }

    @Test func strings() throws {
        #expect(try kinds(#""a\"b" 'c\'d' "\n\t\r\\" "\u00e9x" 'it''s'"#) == [
            .string("a\"b"), .string("c'd"), .string("\n\t\r\\"), .string("éx"), .string("it"), .string("s"),
        ])
        #expect(try kinds("\"日本語\"") == [.string("日本語")])
    }

    @Test func keyPathsVariablesAndEscapes() throws {
        #expect(try kinds("$source.#size.@count") == [
            .variable("source"), .symbol("."), .escapedIdentifier("size"), .symbol("."), .collectionOperator("count"),
        ])
        #expect(try kinds("straße") == [.identifier("straße")])
    }

    @Test func operators() throws {
        #expect(try kinds("a ** b =< c => d <> e != f == g && h || !i") == [
            .identifier("a"), .symbol("**"), .identifier("b"), .symbol("=<"), .identifier("c"), .symbol("=>"),
            .identifier("d"), .symbol("<>"), .identifier("e"), .symbol("!="), .identifier("f"), .symbol("=="),
            .identifier("g"), .symbol("&&"), .identifier("h"), .symbol("||"), .symbol("!"), .identifier("i"),
        ])
    }

    @Test(arguments: ["0x", "0b102", "1e", "12abc", "\"open", "$", "#1", "a ~ b", "\"\\u12\""])
    func malformed(text: String) {
        #expect(throws: ExpressionError.self) { _ = try Lexer.tokenize(text) }
    }
}
