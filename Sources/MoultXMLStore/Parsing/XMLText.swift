import Foundation

/// Escaping of text and attribute values for the writer.
enum XMLText {
    /// `text` with `&`, `<`, `>` and `"` written as entities, and a carriage return (which an XML reader
    /// turns into a line feed) and DEL as character references.
    ///
    /// The text must hold only characters XML 1.0 can carry (see ``firstUnrepresentable(in:)``): the
    /// writer checks every value before this is called.
    static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\r": result += "&#xD;"
            case "\u{7F}": result += "&#x7F;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"")
            || byte == 0x0D || byte == 0x7F
    }

    /// Whether XML 1.0 can carry a character, raw or as a reference (its `Char` production: tab, line
    /// feed, carriage return, U+0020–U+D7FF, U+E000–U+FFFD, U+10000 and above; a Swift string holds no
    /// lone surrogate).
    static func isCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// The first character of `text` that no XML 1.0 file can hold (U+0000, the other C0 controls but
    /// tab, line feed and carriage return, U+FFFE, U+FFFF), or nil.
    static func firstUnrepresentable(in text: String) -> Unicode.Scalar? {
        // Only bytes below 0x20 and the lead byte 0xEF of U+FFFE/U+FFFF can start one.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0xEF }) else { return nil }
        return text.unicodeScalars.first { !isCharacter($0.value) }
    }

    /// How an unrepresentable character is named in a message: `U+0000`.
    static func name(of scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// Base64 as the XML store holds it: decoded strictly (only the alphabet, padding at the end, white
/// space anywhere), so that damaged text is an error rather than silently other bytes.
enum Base64 {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// The bytes `text` encodes, or nil when it is not base64.
    static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }

    /// The bytes the base64 text `utf8` encodes, or nil when it is not base64.
    static func decode(_ utf8: some Collection<UInt8>) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var count = 0
        var padding = 0
        for byte in utf8 {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "="):
                padding += 1
                guard padding <= 2 else { return nil }
                accumulator <<= 6
                count += 1
            default:
                let value = values[Int(byte)]
                guard value != 0xFF, padding == 0 else { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                count += 1
            }
            if count == 4 {
                result.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                if padding < 2 { result.append(UInt8(truncatingIfNeeded: accumulator >> 8)) }
                if padding < 1 { result.append(UInt8(truncatingIfNeeded: accumulator)) }
                accumulator = 0
                count = 0
                if padding > 0 { padding = 3 }
            }
        }
        // After padded group nothing may follow (padding was set to 3 to refuse more characters).
        guard count == 0 else { return nil }
        return result
    }

    /// The base64 text of `bytes`, on one line.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}

extension StringProtocol {
    /// Whether the text is only XML's white space (space, tab, line feed, carriage return), or empty.
    var isXMLSpace: Bool { utf8.allSatisfy(XMLPullParser.isSpace) }
}
