/// A Swift file's text with its comments and string literals blanked out, byte for byte, so that
/// searching the code for `@objc` or `#keyPath(` never finds them in a comment or a string, and an
/// offset in the mask is the same offset in the text.
struct SwiftSourceMask {
    let text: [UInt8]
    let code: [UInt8]
    /// Offsets where each line starts.
    let lineStarts: [Int]

    init(_ source: String) {
        let text = Array(source.utf8)
        self.text = text
        code = Self.masked(text)
        var starts = [0]
        for (offset, byte) in text.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
        lineStarts = starts
    }

    private static func masked(_ text: [UInt8]) -> [UInt8] {
        var code = text
        var index = 0
        func blank(_ range: Range<Int>) {
            for offset in range where code[offset] != UInt8(ascii: "\n") { code[offset] = UInt8(ascii: " ") }
        }
        func at(_ offset: Int, _ literal: String) -> Bool {
            let bytes = Array(literal.utf8)
            guard offset + bytes.count <= text.count else { return false }
            return Array(text[offset..<offset + bytes.count]) == bytes
        }
        while index < text.count {
            if at(index, "//") {
                let end = text[index...].firstIndex(of: UInt8(ascii: "\n")) ?? text.count
                blank(index..<end)
                index = end
            } else if at(index, "/*") {
                var depth = 0
                var end = index
                while end < text.count {
                    if at(end, "/*") {
                        depth += 1
                        end += 2
                    } else if at(end, "*/") {
                        depth -= 1
                        end += 2
                        if depth == 0 { break }
                    } else {
                        end += 1
                    }
                }
                blank(index..<end)
                index = end
            } else if text[index] == UInt8(ascii: "\"") || (text[index] == UInt8(ascii: "#") && at(index + 1, "\"")) {
                // A string literal, raw (#"…"#), multi-line ("""…""") or plain: blanked but its quotes.
                var hashes = 0
                var start = index
                while start < text.count, text[start] == UInt8(ascii: "#") {
                    hashes += 1
                    start += 1
                }
                let multiline = at(start, "\"\"\"")
                let quote = multiline ? "\"\"\"" : "\""
                let closing = quote + String(repeating: "#", count: hashes)
                var end = start + quote.utf8.count
                while end < text.count, !at(end, closing) {
                    if hashes == 0, text[end] == UInt8(ascii: "\\") { end += 1 }
                    if !multiline, text[end] == UInt8(ascii: "\n") { break }
                    end += 1
                }
                let contentStart = start + quote.utf8.count
                if contentStart < min(end, text.count) { blank(contentStart..<min(end, text.count)) }
                index = min(end + closing.utf8.count, text.count)
            } else {
                index += 1
            }
        }
        return code
    }

    /// The 1-based line and column of an offset.
    func position(of offset: Int) -> (line: Int, column: Int) {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return (low + 1, offset - lineStarts[low] + 1)
    }

    /// Offsets in the code (outside comments and strings) where `word` starts, as a whole word.
    func occurrences(of word: String) -> [Int] {
        let bytes = Array(word.utf8)
        guard !bytes.isEmpty, code.count >= bytes.count else { return [] }
        var found: [Int] = []
        var offset = 0
        while offset + bytes.count <= code.count {
            if code[offset] == bytes[0], Array(code[offset..<offset + bytes.count]) == bytes,
                offset == 0 || !Self.isIdentifier(code[offset - 1]) || bytes[0] == UInt8(ascii: "@") || bytes[0] == UInt8(ascii: "#"),
                offset + bytes.count == code.count || !Self.isIdentifier(code[offset + bytes.count]) || !Self.isIdentifier(bytes[bytes.count - 1])
            {
                found.append(offset)
                offset += bytes.count
            } else {
                offset += 1
            }
        }
        return found
    }

    /// The offset of the bracket closing the one at `open` (`(`, `{`, `[` or `<`), in the code.
    func closing(_ open: Int) -> Int? {
        let pairs: [UInt8: UInt8] = [UInt8(ascii: "("): UInt8(ascii: ")"), UInt8(ascii: "{"): UInt8(ascii: "}"), UInt8(ascii: "["): UInt8(ascii: "]"), UInt8(ascii: "<"): UInt8(ascii: ">")]
        guard open < code.count, let close = pairs[code[open]] else { return nil }
        var depth = 0
        for offset in open..<code.count {
            if code[offset] == code[open] { depth += 1 } else if code[offset] == close {
                depth -= 1
                if depth == 0 { return offset }
            }
        }
        return nil
    }

    static func isIdentifier(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    func string(_ range: Range<Int>) -> String { String(decoding: text[range], as: UTF8.self) }
    func codeString(_ range: Range<Int>) -> String { String(decoding: code[range], as: UTF8.self) }
}
