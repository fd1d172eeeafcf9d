/// Splits expression text into tokens.
///
/// Works on the UTF-8 bytes of the text; identifiers may contain any non-ASCII letter. Numbers:
/// decimal, `0x` hexadecimal, `0o` octal, `0b` binary integers (too large for Int64: a double), and
/// decimals with a fraction and/or an exponent. Strings: single or double quotes, with the escapes
/// `\n \t \r \0 \\ \' \" \uXXXX` and `\` before any other character standing for that character.
struct Lexer {
    let text: String
    private let bytes: [UInt8]
    private var position = 0

    init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    /// Every token of the text, ending with `.end`.
    static func tokenize(_ text: String) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, expected: String? = nil, at offset: Int) -> ExpressionError {
        ExpressionError(.syntax, message, expected: expected, source: text, offset: offset)
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte >= 0x80
    }

    static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || isDigit(byte)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    mutating func next() throws(ExpressionError) -> Token {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            position += 1
        }
        let start = position
        guard let byte = peek() else { return Token(kind: .end, offset: start, endOffset: start) }
        let kind: Token.Kind
        switch byte {
        case _ where Lexer.isDigit(byte):
            kind = try number()
        case UInt8(ascii: "."):
            if let next = peek(1), Lexer.isDigit(next) {
                kind = try number()
            } else {
                position += 1
                kind = .symbol(".")
            }
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            kind = .string(try string(quote: byte))
        case UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "@"):
            position += 1
            guard let first = peek(), Lexer.isIdentifierStart(first) else {
                let what = byte == UInt8(ascii: "$") ? "a variable name after \"$\"" :
                    byte == UInt8(ascii: "#") ? "a key after \"#\"" : "an operator name after \"@\""
                throw error("unexpected character", expected: what, at: position)
            }
            let name = identifier()
            kind = byte == UInt8(ascii: "$") ? .variable(name) :
                byte == UInt8(ascii: "#") ? .escapedIdentifier(name) : .collectionOperator(name)
        case _ where Lexer.isIdentifierStart(byte):
            kind = .identifier(identifier())
        default:
            kind = .symbol(try symbol())
        }
        return Token(kind: kind, offset: start, endOffset: position)
    }

    private mutating func identifier() -> String {
        let start = position
        while let byte = peek(), Lexer.isIdentifierPart(byte) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private static let symbols: [String] = [
        "**", "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||",
        "(", ")", "{", "}", "[", "]", ",", "+", "-", "*", "/", "<", ">", "=", "!", "%", ":",
    ]

    private mutating func symbol() throws(ExpressionError) -> String {
        for symbol in Lexer.symbols {
            let utf8 = Array(symbol.utf8)
            if position + utf8.count <= bytes.count && Array(bytes[position..<position + utf8.count]) == utf8 {
                position += utf8.count
                return symbol
            }
        }
        let scalar = String(decoding: bytes[position...].prefix(4), as: UTF8.self).unicodeScalars.first
        throw error("unexpected character \(scalar.map { "\"\($0)\"" } ?? "")", expected: "an expression", at: position)
    }

    // MARK: - Numbers

    private mutating func number() throws(ExpressionError) -> Token.Kind {
        let start = position
        if peek() == UInt8(ascii: "0"), let marker = peek(1) {
            let radix: Int64? = switch marker {
            case UInt8(ascii: "x"), UInt8(ascii: "X"): 16
            case UInt8(ascii: "o"), UInt8(ascii: "O"): 8
            case UInt8(ascii: "b"), UInt8(ascii: "B"): 2
            default: nil
            }
            if let radix { return try radixInteger(radix, start: start) }
        }
        while let byte = peek(), Lexer.isDigit(byte) { position += 1 }
        var isInteger = true
        if peek() == UInt8(ascii: "."), let next = peek(1), Lexer.isDigit(next) {
            isInteger = false
            position += 1
            while let byte = peek(), Lexer.isDigit(byte) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var ahead = 1
            if let sign = peek(1), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { ahead = 2 }
            if let digit = peek(ahead), Lexer.isDigit(digit) {
                isInteger = false
                position += ahead
                while let byte = peek(), Lexer.isDigit(byte) { position += 1 }
            } else {
                throw error("malformed number", expected: "digits in the exponent", at: position + ahead)
            }
        }
        if let byte = peek(), Lexer.isIdentifierStart(byte) {
            throw error("malformed number", expected: "an operator or a space after a number", at: position)
        }
        let digits = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let value = Int64(digits) { return .integer(value) }
        guard let value = Double(digits) else {
            throw error("malformed number", expected: "a number", at: start)
        }
        guard value.isFinite else { throw error("number out of range", expected: "a number below 1.8e308", at: start) }
        return .double(value)
    }

    private mutating func radixInteger(_ radix: Int64, start: Int) throws(ExpressionError) -> Token.Kind {
        position += 2
        var value: Int64 = 0
        var overflowed = false
        var approximate: Double = 0
        var count = 0
        while let byte = peek() {
            let digit: Int64
            switch byte {
            case 0x30...0x39: digit = Int64(byte - 0x30)
            case 0x61...0x66: digit = Int64(byte - 0x61 + 10)
            case 0x41...0x46: digit = Int64(byte - 0x41 + 10)
            case UInt8(ascii: "_"): position += 1; continue
            default: digit = -1
            }
            if digit < 0 {
                if Lexer.isIdentifierPart(byte) {
                    throw error("malformed number", expected: "a base-\(radix) digit", at: position)
                }
                break
            }
            guard digit < radix else { throw error("malformed number", expected: "a base-\(radix) digit", at: position) }
            approximate = approximate * Double(radix) + Double(digit)
            let (multiplied, o1) = value.multipliedReportingOverflow(by: radix)
            let (added, o2) = multiplied.addingReportingOverflow(digit)
            overflowed = overflowed || o1 || o2
            value = added
            count += 1
            position += 1
        }
        guard count > 0 else { throw error("malformed number", expected: "a base-\(radix) digit", at: position) }
        guard approximate.isFinite else { throw error("number out of range", expected: "a number below 1.8e308", at: start) }
        return overflowed ? .double(approximate) : .integer(value)
    }

    // MARK: - Strings

    private mutating func string(quote: UInt8) throws(ExpressionError) -> String {
        let start = position
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw error("unterminated string", expected: "a closing \(quote == 0x22 ? "\"" : "'")", at: start)
            }
            position += 1
            if byte == quote { break }
            guard byte == UInt8(ascii: "\\") else { result.append(byte); continue }
            guard let escaped = peek() else { continue }
            position += 1
            switch escaped {
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "0"): result.append(0x00)
            case UInt8(ascii: "u"):
                var code: UInt32 = 0
                for index in 0..<4 {
                    guard let hex = peek(), let digit = Lexer.hexValue(hex) else {
                        throw error("malformed \\u escape", expected: "four hexadecimal digits", at: position - 2 - index)
                    }
                    code = code * 16 + digit
                    position += 1
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw error("\\u escape is not a Unicode scalar", expected: "a code point outside D800–DFFF", at: position - 6)
                }
                result.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: result.append(escaped)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        default: nil
        }
    }
}
