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
            guard let byte = try peek() else {
                if let unclosed = open.last { throw error("the file ends inside <\(unclosed)>: it is truncated") }
                if !sawRoot { throw error("the file holds no element") }
                return .endOfDocument
            }
            if byte != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy(\.isWhitespace) else { throw error("text outside the root element") }
                    continue
                }
                return .text(text)
            }
            if try has("<?") {
                try skipPast("?>", what: "processing instruction")
            } else if try has("<!--") {
                try skipPast("-->", what: "comment")
            } else if try has("<![CDATA[") {
                guard !open.isEmpty else { throw error("CDATA outside the root element") }
                skip(9)
                return .text(try readCDATA())
            } else if try has("<!DOCTYPE") {
                guard !sawRoot else { throw error("a document type declaration after the root element") }
                try skipDoctype()
            } else if try has("</") {
                return try readEndTag()
            } else {
                return try readStartTag()
            }
        }
    }

    private func skipPast(_ terminator: StaticString, what: String) throws(XMLStoreError) {
        let startLine = line
        while true {
            if try has(terminator) {
                skip(terminator.utf8CodeUnitCount)
                return
            }
            guard try peek() != nil else { throw error("the \(what) begun on line \(startLine) never ends") }
            _ = advance()
        }
    }

    private func skipDoctype() throws(XMLStoreError) {
        let startLine = line
        var inSubset = false
        var quote: UInt8?
        skip(9)
        while let byte = try peek() {
            _ = advance()
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">"), !inSubset {
                return
            }
        }
        throw error("the document type declaration begun on line \(startLine) never ends")
    }

    private func readCDATA() throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        while true {
            if try has("]]>") {
                skip(3)
                return try string(bytes)
            }
            guard try peek() != nil else { throw error("a CDATA section never ends") }
            bytes.append(advance())
            if bytes.count > Self.maximumTextBytes { throw error("a CDATA section is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    private func readText() throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        while let byte = try peek(), byte != UInt8(ascii: "<") {
            // Plain text is copied a run at a time, up to the next markup, reference or carriage return.
            let start = position
            var end = position
            var newlines = 0
            buffer.withUnsafeBufferPointer { bytes in
                while end < bytes.count {
                    let byte = bytes[end]
                    if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") || byte == 0x0D { break }
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
                bytes.append(advance())
            }
            if bytes.count > Self.maximumTextBytes { throw error("a text is larger than \(Self.maximumTextBytes) bytes") }
        }
        return try string(bytes)
    }

    private func string(_ bytes: [UInt8]) throws(XMLStoreError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw error("the text is not valid UTF-8") }
        return text
    }

    /// Reads `&…;` and appends the character it stands for.
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
            if text.hasPrefix("#x") || text.hasPrefix("#X") {
                scalar = UInt32(text.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
            } else if text.hasPrefix("#") {
                scalar = UInt32(text.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
            } else {
                throw error("the entity '&\(text);' is not one XML defines (Core Data's store declares none)")
            }
        }
        guard let scalar, scalar.value != 0 else { throw error("the character reference '&\(text);' is not a character") }
        bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    // MARK: - Tags

    private func readName() throws(XMLStoreError) -> String {
        var bytes: [UInt8] = []
        while let byte = try peek(), !Self.endsName(byte) {
            bytes.append(advance())
            guard bytes.count <= 1024 else { throw error("a name is longer than 1024 bytes") }
        }
        guard !bytes.isEmpty else { throw error("a tag without a name") }
        return try string(bytes)
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "<"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
        default: false
        }
    }

    private func skipSpace() throws(XMLStoreError) {
        while let byte = try peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { _ = advance() }
    }

    private func readStartTag() throws(XMLStoreError) -> Event {
        _ = advance()
        let name = try readName()
        if open.isEmpty {
            guard !sawRoot else { throw error("a second root element <\(name)>") }
            sawRoot = true
        }
        var attributes: [String: String] = [:]
        while true {
            try skipSpace()
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
            let attribute = try readName()
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
            if byte == UInt8(ascii: "&") {
                try appendReference(to: &bytes)
            } else {
                bytes.append(advance())
            }
            if bytes.count > Self.maximumTextBytes { throw error("an attribute value is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    private func readEndTag() throws(XMLStoreError) -> Event {
        skip(2)
        let name = try readName()
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
