import Foundation
import MoultArchive

/// The XML property list inside an XML store's `<metadata>`: read from the pull parser, and written as
/// Core Data writes it (nested elements indented by four spaces, `<data>` content on its own line,
/// indented by one tab per level, as Core Foundation's property-list writer does).
enum PropertyListXML {
    // MARK: - Reading

    /// The text of a simple element whose start tag was just read, up to its end tag.
    static func text(of element: String, from parser: XMLPullParser) throws(XMLStoreError) -> String {
        var text = ""
        while true {
            switch try parser.next() {
            case .text(let part): text += part
            case .end: return text
            case .start(let name, _): throw parser.error("<\(element)> holds an element <\(name)> where text was expected")
            case .endOfDocument: throw parser.error("the file ends inside <\(element)>")
            }
        }
    }

    /// Reads `<plist>`'s one value and its end tag; the parser is past `<plist …>`.
    static func readPlist(from parser: XMLPullParser) throws(XMLStoreError) -> PropertyListValue {
        var value: PropertyListValue?
        while true {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text inside <plist>") }
            case .start(let name, _):
                guard value == nil else { throw parser.error("<plist> holds more than one value") }
                value = try readValue(named: name, from: parser)
            case .end:
                guard let value else { throw parser.error("<plist> holds no value") }
                return value
            case .endOfDocument:
                throw parser.error("the file ends inside <plist>")
            }
        }
    }

    /// Reads one value whose start tag `<name>` was just read, through its end tag.
    private static func readValue(named name: String, from parser: XMLPullParser) throws(XMLStoreError) -> PropertyListValue {
        switch name {
        case "dict": return try readDictionary(from: parser)
        case "array": return try readArray(from: parser)
        case "string": return .string(try text(of: name, from: parser))
        case "true", "false":
            guard try text(of: name, from: parser).isXMLSpace else { throw parser.error("<\(name)/> holds text") }
            return .bool(name == "true")
        case "integer":
            let text = try text(of: name, from: parser).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Int64(text) else { throw parser.error("<integer> holds '\(text.prefix(40))', not an integer") }
            return .integer(value)
        case "real":
            let text = try text(of: name, from: parser).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Double(text) else { throw parser.error("<real> holds '\(text.prefix(40))', not a number") }
            return .real(value)
        case "data":
            let text = try text(of: name, from: parser)
            guard let bytes = Base64.decode(text) else { throw parser.error("<data> does not hold base64") }
            return .data(bytes)
        case "date":
            let text = try text(of: name, from: parser).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let date = try? Date.ISO8601FormatStyle().parse(text) else { throw parser.error("<date> holds '\(text.prefix(40))', not a date") }
            return .date(date)
        default:
            throw parser.error("<\(name)> is not a property-list element")
        }
    }

    private static func readDictionary(from parser: XMLPullParser) throws(XMLStoreError) -> PropertyListValue {
        var result: [String: PropertyListValue] = [:]
        var key: String?
        while true {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text inside <dict>") }
            case .start("key", _):
                guard key == nil else { throw parser.error("two <key>s in a row in <dict>") }
                key = try text(of: "key", from: parser)
            case .start(let name, _):
                guard let current = key else { throw parser.error("a <\(name)> in <dict> without its <key>") }
                guard result[current] == nil else { throw parser.error("the key '\(current)' appears twice in <dict>") }
                result[current] = try readValue(named: name, from: parser)
                key = nil
            case .end:
                guard key == nil else { throw parser.error("the key '\(key ?? "")' has no value") }
                return .dictionary(result)
            case .endOfDocument:
                throw parser.error("the file ends inside <dict>")
            }
        }
    }

    private static func readArray(from parser: XMLPullParser) throws(XMLStoreError) -> PropertyListValue {
        var result: [PropertyListValue] = []
        while true {
            switch try parser.next() {
            case .text(let text):
                guard text.isXMLSpace else { throw parser.error("text inside <array>") }
            case .start(let name, _):
                result.append(try readValue(named: name, from: parser))
            case .end:
                return .array(result)
            case .endOfDocument:
                throw parser.error("the file ends inside <array>")
            }
        }
    }

    // MARK: - Writing

    /// The lines of `<plist>…</plist>` for a value, each indented by `indent` spaces and four more per level.
    static func lines(_ value: PropertyListValue, indent: Int) -> [String] {
        var lines = [String(repeating: " ", count: indent) + "<plist version=\"1.0\">"]
        append(value, depth: 0, indent: indent + 4, to: &lines)
        lines.append(String(repeating: " ", count: indent) + "</plist>")
        return lines
    }

    private static func append(_ value: PropertyListValue, depth: Int, indent: Int, to lines: inout [String]) {
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .dictionary(let dictionary):
            if dictionary.isEmpty { return lines.append(pad + "<dict></dict>") }
            lines.append(pad + "<dict>")
            for key in dictionary.keys.sorted() {
                lines.append(pad + "    <key>" + XMLText.escaped(key) + "</key>")
                append(dictionary[key]!, depth: depth + 1, indent: indent + 4, to: &lines)
            }
            lines.append(pad + "</dict>")
        case .array(let array):
            if array.isEmpty { return lines.append(pad + "<array></array>") }
            lines.append(pad + "<array>")
            for element in array { append(element, depth: depth + 1, indent: indent + 4, to: &lines) }
            lines.append(pad + "</array>")
        case .string(let string): lines.append(pad + "<string>" + XMLText.escaped(string) + "</string>")
        case .integer(let integer): lines.append(pad + "<integer>\(integer)</integer>")
        case .real(let real): lines.append(pad + "<real>\(real)</real>")
        case .bool(let bool): lines.append(pad + (bool ? "<true/>" : "<false/>"))
        case .date(let date): lines.append(pad + "<date>" + date.formatted(.iso8601) + "</date>")
        case .data(let bytes):
            // Core Foundation's form: the base64 on lines of its own, each indented by one tab per level.
            let tabs = String(repeating: "\t", count: depth)
            let text = Base64.encode(bytes)
            var line = pad + "<data>"
            var start = text.startIndex
            while start < text.endIndex {
                let end = text.index(start, offsetBy: 76, limitedBy: text.endIndex) ?? text.endIndex
                lines.append(line)
                line = tabs + text[start..<end]
                start = end
            }
            lines.append(line)
            lines.append(tabs + "</data>")
        case .uid(let uid): lines.append(pad + "<integer>\(uid)</integer>")
        case .null: lines.append(pad + "<string></string>")
        }
    }
}
