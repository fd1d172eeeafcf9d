import Foundation

/// A small streaming XML parser: the file is read in blocks and handed out one event at a time, so
/// memory holds one block and the value being read, whatever the size of the file.
///
/// It reads what Core Data's XML store needs (elements, attributes, text, CDATA, the five named entities
/// and character references) and skips the XML declaration, processing instructions, comments and the
/// document type declaration. Anything else (an undeclared entity, a tag left open, bytes that are not
/// UTF-8) is an error that says on which line.
///
/// ```swift
/// let parser = try XMLPullParser(url: url)
/// while true {
///     switch try parser.next() {
///     case .start(let name, let attributes): …
///     case .text(let text): …
///     case .end(let name): …
///     case .endOfDocument: return
///     }
/// }
/// ```
final class XMLPullParser {
    enum Event: Equatable {
        case start(name: String, attributes: [String: String])
        case text(String)
        case end(name: String)
        case endOfDocument
    }

    /// The deepest nesting read (a store nests five levels; a metadata property list a few more).
    static let maximumDepth = 256
    /// The largest text read as one value (a binary attribute's base64).
    static let maximumTextBytes = 1 << 30

    /// The line the parser is at (from 1; unknown, and left as it was, after ``seek(toElementAt:inside:)``).
    private(set) var line = 1
    let path: String?
    /// The byte offset in the input at which the event ``next()`` returned last begins.
    private(set) var eventOffset: Int64 = 0

    private var buffer: [UInt8] = []
    private var position = 0
    /// The bytes of the input before `buffer`'s first (dropped as the file is read).
    private var consumed: Int64 = 0
    private let handle: FileHandle?
    private var atEndOfInput = false
    private var open: [String] = []
    private var sawRoot = false
    private var pendingEnd: String?
    private var sawDoctype = false
    private var sawByteOrderMark = false
    private static let blockSize = 1 << 16

    /// Reads the file at `url`, block by block.
    init(url: URL) throws(XMLStoreError) {
        let path = url.path(percentEncoded: false)
        self.path = path
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw XMLStoreError(.ioFailure, "cannot open the file: \(error.localizedDescription)", path: path)
        }
    }

    /// Reads bytes already in memory.
    init(bytes: [UInt8], path: String? = nil) {
        self.path = path
        buffer = bytes
        handle = nil
        atEndOfInput = true
    }

    deinit { try? handle?.close() }

    // MARK: - Bytes

    /// Makes at least `count` bytes available from `position`; false at the end of the input.
    private func ensure(_ count: Int) throws(XMLStoreError) -> Bool {
        while buffer.count - position < count {
            guard !atEndOfInput, let handle else { return false }
            if position > 0 {
                buffer.removeSubrange(0..<position)
                consumed += Int64(position)
                position = 0
            }
            let data: Data?
            do {
                data = try handle.read(upToCount: Self.blockSize)
            } catch {
                throw XMLStoreError(.ioFailure, "reading the file failed: \(error.localizedDescription)", path: path, line: line)
            }
            guard let data, !data.isEmpty else {
                atEndOfInput = true
                return buffer.count - position >= count
            }
            buffer.append(contentsOf: data)
        }
        return true
    }

    private func peek() throws(XMLStoreError) -> UInt8? {
        guard try ensure(1) else { return nil }
        return buffer[position]
    }

    private func advance() -> UInt8 {
        let byte = buffer[position]
        position += 1
        if byte == 0x0A { line += 1 }
        return byte
    }

    private func has(_ prefix: StaticString) throws(XMLStoreError) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard try ensure(count) else { return false }
        let start = prefix.utf8Start
        for offset in 0..<count where buffer[position + offset] != start[offset] { return false }
        return true
    }

    private func skip(_ count: Int) {
        for _ in 0..<count { _ = advance() }
    }

    func error(_ message: String) -> XMLStoreError {
        XMLStoreError(.malformed, message, path: path, line: line)
    }

    // MARK: - Restarting at an offset

    /// Goes back (or forward) to an element that began at `offset` (an ``eventOffset`` read earlier),
    /// inside the elements `open` (outermost first): the next event is that element's start. Within
    /// the block in memory nothing is read again; elsewhere the file is read from there.
    ///
    /// - Throws: ``XMLStoreError`` (`.ioFailure`) when the file cannot be positioned, `.malformed` for
    ///   an offset past the input held in memory.
    func seek(toElementAt offset: Int64, inside open: [String]) throws(XMLStoreError) {
        if offset >= consumed, offset <= consumed + Int64(buffer.count) {
            position = Int(offset - consumed)
        } else if let handle {
            do {
                try handle.seek(toOffset: UInt64(max(0, offset)))
            } catch {
                throw XMLStoreError(.ioFailure, "positioning in the file failed: \(error.localizedDescription)", path: path)
            }
            buffer = []
            position = 0
            consumed = offset
            atEndOfInput = false
        } else {
            throw XMLStoreError(.malformed, "no element begins at byte \(offset) of the input", path: path)
        }
        self.open = open
        sawRoot = true
        pendingEnd = nil
    }

    // MARK: - Events

    /// The next event; whitespace between elements comes as text, which the reader ignores.
    func next() throws(XMLStoreError) -> Event {
        if let name = pendingEnd {
            pendingEnd = nil
            return .end(name: name)
        }
        while true {
            eventOffset = consumed + Int64(position)
            let atStart = eventOffset == 0
            guard let byte = try peek() else {
                if let unclosed = open.last { throw error("the file ends inside <\(unclosed)>: it is truncated") }
                if !sawRoot { throw error("the file holds no element") }
                return .endOfDocument
            }
            if atStart, try has("\u{FEFF}") {
                // A UTF-8 byte order mark, which XML allows before the declaration.
                skip(3)
                sawByteOrderMark = true
                continue
            }
            if byte != UInt8(ascii: "<") {
                if open.isEmpty {
                    // Outside the root element only white space, written as it is (no reference).
                    guard Self.isSpace(byte) else { throw error("text outside the root element") }
                    _ = advance()
                    continue
                }
                return .text(try readText())
            }
            if try has("<?") {
                try readProcessingInstruction(atStart: atStart || (sawByteOrderMark && eventOffset == 3))
            } else if try has("<!--") {
                try skipComment()
            } else if try has("<![CDATA[") {
                guard !open.isEmpty else { throw error("CDATA outside the root element") }
                skip(9)
                return .text(try readCDATA())
            } else if try has("<!DOCTYPE") {
                guard !sawRoot else { throw error("a document type declaration after the root element") }
                guard !sawDoctype else { throw error("a second document type declaration") }
                sawDoctype = true
                try readDoctype()
            } else if try has("<!") {
                throw error("'<!' that begins no comment, CDATA section or document type declaration")
            } else if try has("</") {
                return try readEndTag()
            } else {
                return try readStartTag()
            }
        }
    }

    /// XML's white space: space, tab, line feed, carriage return (not Unicode's other spaces).
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    // MARK: - Markup that is not an element

    /// `<?target …?>`: the XML declaration when it opens the file (read, and checked: version 1.0, UTF-8),
    /// any other processing instruction skipped (its target a name other than `xml`).
    private func readProcessingInstruction(atStart: Bool) throws(XMLStoreError) {
        let startLine = line
        skip(2)
        let target = try readName(what: "processing instruction's target")
        if target.lowercased() == "xml" {
            guard atStart, target == "xml" else { throw error("an XML declaration that does not open the file") }
            return try readDeclaration()
        }
        if try has("?>") {
            skip(2)
            return
        }
        guard let byte = try peek(), Self.isSpace(byte) else { throw error("the processing instruction <?\(target) has no space after its target") }
        var content: [UInt8] = []
        while true {
            if try has("?>") {
                skip(2)
                _ = try string(content)
                return
            }
            guard try peek() != nil else { throw error("the processing instruction begun on line \(startLine) never ends") }
            content.append(advance())
            if content.count > Self.maximumTextBytes { throw error("a processing instruction is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`, past `<?xml`: the version must be 1.0 and
    /// the encoding, when given, UTF-8, the only one this parser reads.
    private func readDeclaration() throws(XMLStoreError) {
        var fields: [(String, String)] = []
        while true {
            let spaced = try skipSpace()
            if try has("?>") {
                skip(2)
                break
            }
            guard spaced else { throw error("the XML declaration lacks a space before a field") }
            let name = try readName(what: "XML declaration field")
            try skipSpace()
            guard try peek() == UInt8(ascii: "=") else { throw error("the XML declaration's \(name) has no value") }
            _ = advance()
            try skipSpace()
            guard let quote = try peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw error("the XML declaration's \(name) is not quoted")
            }
            _ = advance()
            var value: [UInt8] = []
            while let byte = try peek(), byte != quote {
                guard byte >= 0x21, byte < 0x7F, byte != UInt8(ascii: "<"), value.count < 64 else { throw error("the XML declaration's \(name) holds a character it may not") }
                value.append(advance())
            }
            guard try peek() == quote else { throw error("the file ends inside the XML declaration") }
            _ = advance()
            fields.append((name, String(decoding: value, as: UTF8.self)))
        }
        let names = fields.map(\.0)
        guard names.first == "version", names == ["version", "encoding", "standalone"].filter(names.contains), Set(names).count == names.count else {
            throw error("the XML declaration's fields are not version, then encoding and standalone if given")
        }
        for (name, value) in fields {
            switch name {
            case "version": guard value == "1.0" else { throw error("XML version '\(value)': this parser reads XML 1.0") }
            case "encoding": guard value.lowercased() == "utf-8" else { throw error("the encoding '\(value)': an XML store is read as UTF-8 only") }
            default: guard value == "yes" || value == "no" else { throw error("standalone='\(value)', where yes or no is expected") }
            }
        }
    }

    /// `<!-- … -->`: no `--` inside.
    private func skipComment() throws(XMLStoreError) {
        let startLine = line
        skip(4)
        var content: [UInt8] = []
        while true {
            if try has("--") {
                skip(2)
                guard try peek() == UInt8(ascii: ">") else { throw error("'--' inside the comment begun on line \(startLine)") }
                _ = advance()
                _ = try string(content)
                return
            }
            guard try peek() != nil else { throw error("the comment begun on line \(startLine) never ends") }
            content.append(advance())
            if content.count > Self.maximumTextBytes { throw error("a comment is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    /// `<!DOCTYPE name SYSTEM "…">` or `PUBLIC "…" "…"`, or with no identifier. An internal subset
    /// (`[ … ]`) is refused: Core Data's files have none, and what it may declare (entities, default
    /// attributes) would make the file read otherwise than as written.
    private func readDoctype() throws(XMLStoreError) {
        let startLine = line
        skip(9)
        guard try skipSpace() else { throw error("<!DOCTYPE without a space before its name") }
        _ = try readName(what: "document type's name")
        if try skipSpace(), let byte = try peek(), byte == UInt8(ascii: "S") || byte == UInt8(ascii: "P") {
            let keyword = try readName(what: "external identifier")
            switch keyword {
            case "SYSTEM":
                guard try skipSpace() else { throw error("SYSTEM without a space before its literal") }
                try readLiteral(publicIdentifier: false)
            case "PUBLIC":
                guard try skipSpace() else { throw error("PUBLIC without a space before its literal") }
                try readLiteral(publicIdentifier: true)
                guard try skipSpace() else { throw error("PUBLIC's literals are not separated by a space") }
                try readLiteral(publicIdentifier: false)
            default:
                throw error("'\(keyword)' in the document type declaration, where SYSTEM or PUBLIC is expected")
            }
            try skipSpace()
        }
        switch try peek() {
        case UInt8(ascii: ">"): _ = advance()
        case UInt8(ascii: "["):
            throw error("the document type declaration has an internal subset, which a Core Data XML store never has (it could declare entities or default attributes)")
        case nil: throw error("the document type declaration begun on line \(startLine) never ends")
        default: throw error("the document type declaration begun on line \(startLine) holds something other than a name and an external identifier")
        }
    }

    /// A quoted literal of the document type declaration; a public identifier's characters are checked.
    private func readLiteral(publicIdentifier: Bool) throws(XMLStoreError) {
        guard let quote = try peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw error("a literal of the document type declaration is not quoted")
        }
        _ = advance()
        var content: [UInt8] = []
        while let byte = try peek(), byte != quote {
            if publicIdentifier, !Self.isPublicIdentifierCharacter(byte) { throw error("a character a public identifier may not hold") }
            content.append(advance())
            if content.count > 1 << 16 { throw error("a literal of the document type declaration is longer than 64 KiB") }
        }
        guard try peek() == quote else { throw error("the file ends inside the document type declaration") }
        _ = advance()
        _ = try string(content)
    }

    private static func isPublicIdentifierCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x0D, 0x0A, UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-'()+,./:=?;!*#@$_%".utf8.contains(byte)
        }
    }

    private func readCDATA() throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        while true {
            if try has("]]>") {
                skip(3)
                return try string(bytes)
            }
            guard try peek() != nil else { throw error("a CDATA section never ends") }
            let byte = advance()
            if byte == 0x0D {
                // A line end is a line feed, in a CDATA section too.
                if try peek() != 0x0A { bytes.append(0x0A) }
            } else {
                bytes.append(byte)
            }
            if bytes.count > Self.maximumTextBytes { throw error("a CDATA section is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    // MARK: - Text

    private func readText() throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        while let byte = try peek(), byte != UInt8(ascii: "<") {
            // Plain text is copied a run at a time, up to the next markup, reference, `]` or carriage return.
            let start = position
            var end = position
            var newlines = 0
            buffer.withUnsafeBufferPointer { bytes in
                while end < bytes.count {
                    let byte = bytes[end]
                    if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") || byte == 0x0D || byte == UInt8(ascii: "]") { break }
                    if byte == 0x0A { newlines += 1 }
                    end += 1
                }
            }
            if end > start {
                bytes.append(contentsOf: buffer[start..<end])
                position = end
                line += newlines
                if bytes.count > Self.maximumTextBytes { throw error("a text is larger than \(Self.maximumTextBytes) bytes") }
                continue
            }
            if byte == UInt8(ascii: "&") {
                try appendReference(to: &bytes)
            } else if byte == 0x0D {
                // XML reads a line end (CR LF, or CR alone) as LF; a CR kept in a value is written `&#xD;`.
                _ = advance()
                if try peek() != 0x0A { bytes.append(0x0A) }
            } else {
                if byte == UInt8(ascii: "]"), try has("]]>") { throw error("']]>' in text, which XML does not allow") }
                bytes.append(advance())
            }
            if bytes.count > Self.maximumTextBytes { throw error("a text is larger than \(Self.maximumTextBytes) bytes") }
        }
        return try string(bytes)
    }

    /// The text of `bytes`: valid UTF-8 of characters XML 1.0 allows (no control character but tab, line
    /// feed and carriage return; no U+FFFE or U+FFFF).
    private func string(_ bytes: [UInt8]) throws(XMLStoreError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw error("the text is not valid UTF-8") }
        if let scalar = XMLText.firstUnrepresentable(in: text) { throw error("\(XMLText.name(of: scalar)), a character XML 1.0 does not allow") }
        return text
    }

    /// Reads `&…;` and appends the character it stands for: one of XML's five entities, or a character
    /// reference (`&#65;`, `&#x41;`) to a character XML 1.0 allows.
    private func appendReference(to bytes: inout [UInt8]) throws(XMLStoreError) {
        _ = advance()
        var name: [UInt8] = []
        while let byte = try peek(), byte != UInt8(ascii: ";") {
            guard name.count < 12 else { throw error("an entity reference does not end with ';'") }
            name.append(advance())
        }
        guard try peek() == UInt8(ascii: ";") else { throw error("the file ends inside an entity reference") }
        _ = advance()
        let text = String(decoding: name, as: UTF8.self)
        let scalar: Unicode.Scalar?
        switch text {
        case "lt": scalar = "<"
        case "gt": scalar = ">"
        case "amp": scalar = "&"
        case "quot": scalar = "\""
        case "apos": scalar = "'"
        default:
            let isHex = text.hasPrefix("#x")
            let digits = text.utf8.dropFirst(isHex ? 2 : 1)
            guard text.hasPrefix("#"), !digits.isEmpty,
                digits.allSatisfy({ isHex ? Self.isHexDigit($0) : ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) })
            else {
                throw error("the reference '&\(text.prefix(12));' is neither one of XML's five entities nor a character reference (Core Data's store declares none)")
            }
            scalar = UInt32(String(decoding: digits, as: UTF8.self), radix: isHex ? 16 : 10).flatMap(Unicode.Scalar.init)
        }
        guard let scalar, XMLText.isCharacter(scalar.value) else { throw error("the character reference '&\(text);' is not a character XML 1.0 allows") }
        bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    // MARK: - Names

    /// A name (of an element, an attribute, a processing instruction's target). A Core Data XML store's
    /// names are all ASCII: a name holding another character is refused.
    private func readName(what: String) throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        // A run of name characters at a time (a name holds no line end).
        while try ensure(1) {
            let start = position
            var end = position
            buffer.withUnsafeBufferPointer { bytes in
                while end < bytes.count, Self.isNameCharacter(bytes[end]) { end += 1 }
            }
            bytes.append(contentsOf: buffer[start..<end])
            position = end
            guard bytes.count <= 1024 else { throw error("a name is longer than 1024 bytes") }
            if end < buffer.count { break }
        }
        guard let first = bytes.first else { throw error("a \(what) without a name") }
        guard Self.isNameStart(first) else { throw error("a \(what) that does not begin with a letter, '_' or ':'") }
        if let byte = try peek(), byte >= 0x80 { throw error("a \(what) holding a character outside ASCII, which no Core Data XML store has") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"): true
        default: false
        }
    }

    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: isNameStart(byte)
        }
    }

    /// Skips XML white space; whether there was some.
    @discardableResult
    private func skipSpace() throws(XMLStoreError) -> Bool {
        var skipped = false
        while let byte = try peek(), Self.isSpace(byte) {
            _ = advance()
            skipped = true
        }
        return skipped
    }

    // MARK: - Tags

    private func readStartTag() throws(XMLStoreError) -> Event {
        _ = advance()
        let name = try readName(what: "tag")
        if open.isEmpty {
            guard !sawRoot else { throw error("a second root element <\(name)>") }
            sawRoot = true
        }
        var attributes: [String: String] = [:]
        while true {
            let spaced = try skipSpace()
            guard let byte = try peek() else { throw error("the file ends inside the tag <\(name)>") }
            if byte == UInt8(ascii: ">") {
                _ = advance()
                break
            }
            if try has("/>") {
                skip(2)
                pendingEnd = name
                break
            }
            guard spaced else { throw error("<\(name)> lacks a space before an attribute") }
            let attribute = try readName(what: "attribute of <\(name)>")
            try skipSpace()
            guard try peek() == UInt8(ascii: "=") else { throw error("the attribute '\(attribute)' of <\(name)> has no value") }
            _ = advance()
            try skipSpace()
            guard attributes[attribute] == nil else { throw error("<\(name)> has the attribute '\(attribute)' twice") }
            guard attributes.count < 64 else { throw error("<\(name)> has more than 64 attributes") }
            attributes[attribute] = try readAttributeValue(of: name)
        }
        guard open.count < Self.maximumDepth else { throw error("elements nest deeper than \(Self.maximumDepth) levels") }
        if pendingEnd == nil { open.append(name) }
        return .start(name: name, attributes: attributes)
    }

    /// A quoted attribute value, normalized as XML does: a literal tab, line feed or carriage return (a
    /// CR LF pair once) is a space; a character reference stays the character it names.
    private func readAttributeValue(of element: String) throws(XMLStoreError) -> String {
        guard let quote = try peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw error("an attribute value of <\(element)> is not quoted")
        }
        _ = advance()
        var bytes: [UInt8] = []
        while true {
            guard let byte = try peek() else { throw error("the file ends inside an attribute value of <\(element)>") }
            if byte == quote {
                _ = advance()
                return try string(bytes)
            }
            if byte == UInt8(ascii: "<") { throw error("'<' inside an attribute value of <\(element)>") }
            // Plain bytes a run at a time, up to the quote, markup, a reference or white space to normalize.
            let start = position
            var end = position
            buffer.withUnsafeBufferPointer { bytes in
                while end < bytes.count {
                    let byte = bytes[end]
                    if byte == quote || byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") || byte == 0x0D || byte == 0x0A || byte == 0x09 { break }
                    end += 1
                }
            }
            if end > start {
                bytes.append(contentsOf: buffer[start..<end])
                position = end
            } else if byte == UInt8(ascii: "&") {
                try appendReference(to: &bytes)
            } else if byte == 0x0D {
                _ = advance()
                if try peek() == 0x0A { _ = advance() }
                bytes.append(0x20)
            } else if byte == 0x09 || byte == 0x0A {
                _ = advance()
                bytes.append(0x20)
            } else {
                bytes.append(advance())
            }
            if bytes.count > Self.maximumTextBytes { throw error("an attribute value is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    private func readEndTag() throws(XMLStoreError) -> Event {
        skip(2)
        let name = try readName(what: "end tag")
        try skipSpace()
        guard try peek() == UInt8(ascii: ">") else { throw error("the end tag </\(name)> does not end with '>'") }
        _ = advance()
        guard let last = open.last else { throw error("the end tag </\(name)> closes nothing") }
        guard last == name else { throw error("the end tag </\(name)> closes <\(last)>") }
        open.removeLast()
        return .end(name: name)
    }
}

@available(*, unavailable)
extension XMLPullParser: Sendable {}
