import Foundation

/// Escaping of text and attribute values for the writer.
enum XMLText {
    /// `text` with `&`, `<` and `>` written as entities, and the characters an XML reader would not give
    /// back as they are (a carriage return, control characters) as character references.
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
            case "\n", "\t": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "&#x" + String(scalar.value, radix: 16, uppercase: true) + ";"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"")
            || (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F
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
    static func decode(_ text: String) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var count = 0
        var padding = 0
        for byte in text.utf8 {
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
