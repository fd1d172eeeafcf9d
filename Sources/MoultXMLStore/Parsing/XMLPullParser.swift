import Foundation
import MoultStore

/// A small streaming XML parser: the file is read in blocks and handed out one token at a time, so
/// memory holds one block and the token being read, whatever the size of the file.
///
/// It reads what Core Data's XML store needs (elements, attributes, text, CDATA, the five named entities
/// and character references) and skips the XML declaration, processing instructions, comments and the
/// document type declaration. Anything else (an undeclared entity, a tag left open, bytes that are not
/// UTF-8) is an error that says on which line.
///
/// The bytes are scanned a run at a time through a pointer into the block, a token is read again from
/// its start when it runs past the block's end (the block then grows or moves), and a token's name,
/// attributes and text stay in the block, or in scratch storage the parser reuses, until the next
/// token: ``nextToken()`` allocates nothing for a well-formed element. ``next()`` gives the same
/// tokens as values (names and texts as strings), for what is read once (a store's header).
///
/// ```swift
/// let parser = try XMLPullParser(url: url)
/// while true {
///     switch try parser.nextToken() {
///     case .start: print(parser.name, parser.attributeString(named: "id") ?? "")
///     case .text: print(parser.textString())
///     case .end: print("end of", parser.name)
///     case .endOfDocument: return
///     }
/// }
/// ```
final class XMLPullParser {
    /// A token as a value (``next()``).
    enum Event: Equatable {
        case start(name: String, attributes: [String: String])
        case text(String)
        case end(name: String)
        case endOfDocument
    }

    /// What ``nextToken()`` read; its name, attributes or text are the parser's until the next token.
    enum Token: Equatable {
        case start
        case text
        case end
        case endOfDocument
    }

    /// The deepest nesting read (a store nests five levels; a metadata property list a few more).
    static let maximumDepth = 256
    /// The largest text read as one value (a binary attribute's base64).
    static let maximumTextBytes = 1 << 30
    /// What is read from the file at a time (less after a seek, see `readSize`).
    private static let blockSize = 1 << 20

    let path: String?
    /// The byte offset in the input at which the token ``nextToken()`` returned last begins.
    @exclusivity(unchecked) private(set) var eventOffset: Int64 = 0

    // MARK: The block

    /// The bytes held: `storage[0..<end]`, of which `storage[position...]` are unread.
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var end = 0
    /// The bytes of the input before `storage`'s first (dropped as the file is read).
    @exclusivity(unchecked) private var consumed: Int64 = 0
    private let handle: FileHandle?
    /// Bytes in memory read as if from a file, `chunkSize` at a time (how tests cross block ends).
    private let source: [UInt8]?
    @exclusivity(unchecked) private var sourceOffset = 0
    private let chunkSize: Int
    @exclusivity(unchecked) private var atEndOfInput = false
    /// How much the next read asks for: small after a seek (one object is wanted), growing to a block.
    @exclusivity(unchecked) private var readSize = XMLPullParser.blockSize

    // MARK: Lines

    /// The line of `storage[countedTo]`: line feeds are counted when ``line`` is asked or the bytes dropped.
    @exclusivity(unchecked) private var lineAtCounted = 1
    @exclusivity(unchecked) private var countedTo = 0

    // MARK: The token

    /// A run of bytes: in the block (`storage`) or in `scratch`.
    struct Span {
        var inScratch: Bool
        var start: Int
        var count: Int
    }

    private struct AttributeSpan {
        var name: Span
        var value: Span
    }

    @exclusivity(unchecked) private var nameSpan = Span(inScratch: false, start: 0, count: 0)
    @exclusivity(unchecked) private var textSpan = Span(inScratch: false, start: 0, count: 0)
    @exclusivity(unchecked) private var attributeSpans: [AttributeSpan] = []
    /// Decoded text and attribute values (those holding references or line ends), and a pending end's name.
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    /// The names of the open elements, one after the other, and where each ends in `openBytes`.
    @exclusivity(unchecked) private var openBytes: [UInt8] = []
    @exclusivity(unchecked) private var openEnds: [Int] = []
    @exclusivity(unchecked) private var sawRoot = false
    /// The end of an empty element (`<a/>`) comes next; its name is `pendingName`.
    @exclusivity(unchecked) private var pendingEnd = false
    @exclusivity(unchecked) private var pendingName: [UInt8] = []
    @exclusivity(unchecked) private var sawDoctype = false
    @exclusivity(unchecked) private var sawByteOrderMark = false

    /// Reads the file at `url`, block by block.
    init(url: URL) throws(XMLStoreError) {
        let path = url.path(percentEncoded: false)
        self.path = path
        do throws(StoreError) {
            // (In a folder the run holds, there: HeldFolders.)
            handle = FileHandle(fileDescriptor: try FileOperations.openForReading(path), closeOnDealloc: true)
        } catch {
            throw XMLStoreError(.ioFailure, "cannot open the file: \(error.message)", path: path)
        }
        source = nil
        chunkSize = Self.blockSize
        capacity = Self.blockSize
        storage = .allocate(capacity: capacity)
    }

    /// Reads bytes in memory as if from a file, `chunkSize` at a time, into a block of 8 bytes that
    /// grows: every token's reading meets a block's end (for tests).
    init(bytes: [UInt8], path: String? = nil, chunkSize: Int) {
        self.path = path
        handle = nil
        source = bytes
        self.chunkSize = max(1, chunkSize)
        capacity = 8
        storage = .allocate(capacity: capacity)
    }

    /// Reads bytes already in memory.
    init(bytes: [UInt8], path: String? = nil) {
        self.path = path
        handle = nil
        source = nil
        chunkSize = 0
        atEndOfInput = true
        capacity = max(bytes.count, 1)
        storage = .allocate(capacity: capacity)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { storage.update(from: base, count: source.count) }
        }
        end = bytes.count
    }

    deinit {
        try? handle?.close()
        storage.deallocate()
    }

    // MARK: - Lines and errors

    /// The line the parser is at (from 1; unknown, and left as it was, after ``seek(toElementAt:inside:)``).
    var line: Int {
        if countedTo < position {
            lineAtCounted += Self.lineFeeds(in: storage + countedTo, count: position - countedTo)
            countedTo = position
        }
        return lineAtCounted
    }

    /// The line feeds among `count` bytes, eight at a time: a byte of `word ^ 0x0A…` is zero where a
    /// line feed is, and `((x & 0x7F…) + 0x7F…) | x` has its high bit clear exactly there.
    private static func lineFeeds(in bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        var lines = 0
        var index = 0
        let raw = UnsafeRawPointer(bytes)
        while index + 8 <= count {
            let x = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ 0x0A0A_0A0A_0A0A_0A0A
            let t = ((x & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F) | x
            lines &+= (~t & 0x8080_8080_8080_8080).nonzeroBitCount
            index += 8
        }
        while index < count {
            lines &+= bytes[index] == 0x0A ? 1 : 0
            index += 1
        }
        return lines
    }

    func error(_ message: String) -> XMLStoreError {
        XMLStoreError(.malformed, message, path: path, line: line)
    }

    // MARK: - Reading more

    /// Drops the bytes before `position` and reads more after `end`, growing the block when the unread
    /// bytes fill most of it (a token larger than a block is read again whole); false at the end of the input.
    private func refill() throws(XMLStoreError) -> Bool {
        guard !atEndOfInput, handle != nil || source != nil else { return false }
        _ = line
        let keep = end - position
        if position > 0 {
            (storage).update(from: storage + position, count: keep)
            consumed += Int64(position)
            countedTo -= position
            end = keep
            position = 0
        }
        var grown = false
        if capacity - end < capacity / 4 {
            guard capacity <= Self.maximumTextBytes + Self.blockSize else {
                throw error("a token is larger than \(Self.maximumTextBytes) bytes")
            }
            resize(to: capacity * 2)
            grown = true
        } else if capacity > 4 * Self.blockSize, end < Self.blockSize {
            resize(to: Self.blockSize * 2)
        }
        let want = grown ? capacity - end : min(capacity - end, readSize)
        readSize = min(readSize * 2, Self.blockSize)
        if let source {
            let count = min(want, chunkSize, source.count - sourceOffset)
            guard count > 0 else {
                atEndOfInput = true
                return false
            }
            source.withUnsafeBufferPointer { (storage + end).update(from: $0.baseAddress! + sourceOffset, count: count) }
            sourceOffset += count
            end += count
            return true
        }
        guard let handle else { return false }
        let count: Int
        do {
            count = try FileOperations.read(into: UnsafeMutableRawBufferPointer(start: storage + end, count: want), from: handle.fileDescriptor, path: path ?? "")
        } catch {
            throw XMLStoreError(.ioFailure, "reading the file failed: \(error.message)", path: path, line: line)
        }
        guard count > 0 else {
            atEndOfInput = true
            return false
        }
        end += count
        return true
    }

    private func resize(to newCapacity: Int) {
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        new.update(from: storage, count: end)
        storage.deallocate()
        storage = new
        capacity = newCapacity
    }

    // MARK: - Restarting at an offset

    /// Goes back (or forward) to an element that began at `offset` (an ``eventOffset`` read earlier),
    /// inside the elements `open` (outermost first): the next token is that element's start. Within
    /// the block in memory nothing is read again; elsewhere the file is read from there.
    ///
    /// - Throws: ``XMLStoreError`` (`.ioFailure`) when the file cannot be positioned, `.malformed` for
    ///   an offset past the input held in memory.
    func seek(toElementAt offset: Int64, inside open: [String]) throws(XMLStoreError) {
        if offset >= consumed, offset <= consumed + Int64(end) {
            position = Int(offset - consumed)
        } else if let handle {
            do {
                try handle.seek(toOffset: UInt64(max(0, offset)))
            } catch {
                throw XMLStoreError(.ioFailure, "positioning in the file failed: \(error.localizedDescription)", path: path)
            }
            end = 0
            position = 0
            consumed = offset
            atEndOfInput = false
            readSize = 1 << 14
        } else if source != nil {
            end = 0
            position = 0
            consumed = offset
            sourceOffset = Int(max(0, offset))
            atEndOfInput = false
        } else {
            throw XMLStoreError(.malformed, "no element begins at byte \(offset) of the input", path: path)
        }
        countedTo = position
        openBytes = []
        openEnds = []
        for name in open {
            openBytes += Array(name.utf8)
            openEnds.append(openBytes.count)
        }
        sawRoot = true
        pendingEnd = false
    }

    // MARK: - Tokens

    /// The next token; whitespace between elements comes as text, which the reader ignores.
    ///
    /// - Throws: ``XMLStoreError`` (`.malformed`) naming the line, or `.ioFailure`.
    func nextToken() throws(XMLStoreError) -> Token {
        if pendingEnd {
            pendingEnd = false
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: pendingName)
            nameSpan = Span(inScratch: true, start: 0, count: pendingName.count)
            return .end
        }
        while true {
            var cursor = Cursor(base: storage, p: position, end: end, atEnd: atEndOfInput)
            do throws(ScanError) {
                if let token = try scanToken(&cursor) {
                    position = cursor.p
                    return token
                }
                position = cursor.p
            } catch {
                switch error {
                case .needMore:
                    guard try refill() else {
                        atEndOfInput = true
                        continue
                    }
                case .failed(let failure): throw failure
                }
            }
        }
    }

    /// The next token as a value.
    func next() throws(XMLStoreError) -> Event {
        switch try nextToken() {
        case .start:
            var attributes: [String: String] = [:]
            for index in attributeSpans.indices { attributes[string(attributeSpans[index].name)] = string(attributeSpans[index].value) }
            return .start(name: name, attributes: attributes)
        case .text: return .text(textString())
        case .end: return .end(name: name)
        case .endOfDocument: return .endOfDocument
        }
    }

    // MARK: - The token read

    /// The name of the element a `.start` or `.end` token is of.
    var name: String { string(nameSpan) }

    /// Whether the element a `.start` or `.end` token is of has this name.
    func nameIs(_ expected: StaticString) -> Bool { equals(nameSpan, expected) }

    /// The text of a `.text` token.
    func textString() -> String { string(textSpan) }

    /// Whether a `.text` token is only XML's white space.
    var textIsSpace: Bool { withBytes(textSpan) { $0.allSatisfy(Self.isSpace) } }

    /// Calls `body` with the bytes of a `.text` token (valid UTF-8 of characters XML allows); they must
    /// not be kept.
    func withText<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R { try withBytes(textSpan, body) }

    /// The number of attributes of a `.start` token.
    var attributeCount: Int { attributeSpans.count }

    /// The position of a `.start` token's attribute of this name.
    func attributeIndex(_ name: StaticString) -> Int? {
        attributeSpans.indices.first { equals(attributeSpans[$0].name, name) }
    }

    /// The value of a `.start` token's attribute of this name, or nil.
    func attributeString(named name: StaticString) -> String? {
        attributeIndex(name).map { string(attributeSpans[$0].value) }
    }

    /// Calls `body` with the value of a `.start` token's attribute (by position); the bytes must not be kept.
    func withAttributeValue<R, E: Error>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try withBytes(attributeSpans[index].value, body)
    }

    /// The value of a `.start` token's attribute (by position).
    func attributeString(_ index: Int) -> String { string(attributeSpans[index].value) }

    private func withBytes<R, E: Error>(_ span: Span, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        if span.inScratch {
            let result: Result<R, E> = scratch.withUnsafeBufferPointer { all in
                do throws(E) {
                    return .success(try body(UnsafeBufferPointer(rebasing: all[span.start..<span.start + span.count])))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
        return try body(UnsafeBufferPointer(start: storage + span.start, count: span.count))
    }

    private func string(_ span: Span) -> String { withBytes(span) { String(decoding: $0, as: UTF8.self) } }

    private func equals(_ span: Span, _ expected: StaticString) -> Bool {
        guard span.count == expected.utf8CodeUnitCount else { return false }
        return withBytes(span) { bytes in
            let other = expected.utf8Start
            for index in 0..<bytes.count where bytes[index] != other[index] { return false }
            return true
        }
    }

    private func spansEqual(_ a: Span, _ b: Span) -> Bool {
        guard a.count == b.count else { return false }
        return withBytes(a) { first in withBytes(b) { second in first.elementsEqual(second) } }
    }

    /// XML's white space: space, tab, line feed, carriage return (not Unicode's other spaces).
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

// MARK: - Scanning

extension XMLPullParser {
    /// Where a token is being read: the block's bytes `base[p..<end]`; `atEnd` when no input follows them.
    struct Cursor {
        let base: UnsafeMutablePointer<UInt8>
        var p: Int
        let end: Int
        let atEnd: Bool
    }

    /// Why reading a token stopped: it runs past the bytes held (read more, then the token again from
    /// its start), or the input is not what XML allows.
    enum ScanError: Error {
        case needMore
        case failed(XMLStoreError)
    }

    /// Bit flags of ``characterClasses``.
    static let textStop: UInt8 = 1, valueStop: UInt8 = 2, nameCharacter: UInt8 = 4, nameStart: UInt8 = 8

    /// What each byte is: what ends a run of plain text (markup, a reference, `]`, a carriage return, a
    /// control character, a byte of a multi-byte character), of an attribute value (also quotes, tabs and
    /// line feeds, which are normalized), and what a name holds.
    nonisolated(unsafe) static let characterClasses: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for byte in 0..<256 {
            var flags: UInt8 = 0
            let isControl = byte < 0x20 || byte >= 0x80
            if isControl && byte != 0x09 && byte != 0x0A { flags |= textStop }
            if isControl { flags |= valueStop }
            switch UInt8(byte) {
            case UInt8(ascii: "<"), UInt8(ascii: "&"), UInt8(ascii: "]"): flags |= textStop
            default: break
            }
            switch UInt8(byte) {
            case UInt8(ascii: "<"), UInt8(ascii: "&"), UInt8(ascii: "\""), UInt8(ascii: "'"): flags |= valueStop
            default: break
            }
            switch UInt8(byte) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"):
                flags |= nameStart | nameCharacter
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): flags |= nameCharacter
            default: break
            }
            table[byte] = flags
        }
        return UnsafePointer(table)
    }()

    // MARK: Cursor steps

    @inline(__always)
    private func peek(_ c: inout Cursor) throws(ScanError) -> UInt8? {
        if c.p < c.end { return c.base[c.p] }
        if c.atEnd { return nil }
        throw .needMore
    }

    /// Whether the bytes at the cursor begin with `prefix` (at the end of the input, false when fewer remain).
    private func has(_ c: inout Cursor, _ prefix: StaticString) throws(ScanError) -> Bool {
        let count = prefix.utf8CodeUnitCount
        let available = min(count, c.end - c.p)
        let start = prefix.utf8Start
        for offset in 0..<available where c.base[c.p + offset] != start[offset] { return false }
        if available < count {
            if c.atEnd { return false }
            throw .needMore
        }
        return true
    }

    /// An error at the cursor.
    private func fail(_ c: Cursor, _ message: String) -> ScanError {
        position = c.p
        return .failed(error(message))
    }

    /// Skips XML white space; whether there was some.
    @discardableResult
    private func skipSpace(_ c: inout Cursor) throws(ScanError) -> Bool {
        let start = c.p
        while let byte = try peek(&c), Self.isSpace(byte) { c.p += 1 }
        return c.p > start
    }

    private func appendToScratch(_ c: Cursor, from start: Int, to end: Int) {
        guard end > start else { return }
        scratch.append(contentsOf: UnsafeBufferPointer(start: c.base + start, count: end - start))
    }

    private func blockString(_ c: Cursor, _ span: Span) -> String {
        String(decoding: UnsafeBufferPointer(start: c.base + span.start, count: span.count), as: UTF8.self)
    }

    /// The length of the character at the cursor, which is not plain ASCII text: a control character
    /// other than tab, line feed and carriage return is refused; a multi-byte character must be valid
    /// UTF-8 of a character XML 1.0 allows (not U+FFFE or U+FFFF).
    private func characterLength(_ c: inout Cursor) throws(ScanError) -> Int {
        let lead = c.base[c.p]
        if lead < 0x80 {
            guard lead >= 0x20 || lead == 0x09 || lead == 0x0A || lead == 0x0D else {
                throw fail(c, "\(XMLText.name(of: Unicode.Scalar(lead))), a character XML 1.0 does not allow")
            }
            return 1
        }
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        let count: Int
        switch lead {
        case 0xC2...0xDF: count = 2
        case 0xE0: (count, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE, 0xEF: count = 3
        case 0xED: (count, high) = (3, 0x9F)
        case 0xF0: (count, low) = (4, 0x90)
        case 0xF1...0xF3: count = 4
        case 0xF4: (count, high) = (4, 0x8F)
        default: throw fail(c, "the text is not valid UTF-8")
        }
        if c.end - c.p < count {
            if !c.atEnd { throw .needMore }
            throw fail(c, "the text is not valid UTF-8")
        }
        let second = c.base[c.p + 1]
        guard second >= low, second <= high else { throw fail(c, "the text is not valid UTF-8") }
        for offset in 2..<count where c.base[c.p + offset] & 0xC0 != 0x80 { throw fail(c, "the text is not valid UTF-8") }
        if lead == 0xEF, second == 0xBF, c.base[c.p + 2] >= 0xBE {
            throw fail(c, "\(XMLText.name(of: c.base[c.p + 2] == 0xBE ? "\u{FFFE}" : "\u{FFFF}")), a character XML 1.0 does not allow")
        }
        return count
    }

    /// Skips the character at the cursor, checked (see ``characterLength(_:)``).
    @inline(__always)
    private func skipCharacter(_ c: inout Cursor) throws(ScanError) {
        let byte = c.base[c.p]
        if byte >= 0x20, byte < 0x80 || byte == 0x09 || byte == 0x0A {
            c.p += 1
        } else {
            c.p += try characterLength(&c)
        }
    }

    // MARK: Tokens

    /// Reads one token from the cursor; nil for what is skipped (white space outside the root element,
    /// a byte order mark, a declaration, a comment, a processing instruction, the document type).
    private func scanToken(_ c: inout Cursor) throws(ScanError) -> Token? {
        eventOffset = consumed + Int64(c.p)
        let atStart = eventOffset == 0
        guard let byte = try peek(&c) else {
            if let unclosed = openName { throw fail(c, "the file ends inside <\(unclosed)>: it is truncated") }
            if !sawRoot { throw fail(c, "the file holds no element") }
            return .endOfDocument
        }
        if atStart, try has(&c, "\u{FEFF}") {
            // A UTF-8 byte order mark, which XML allows before the declaration.
            c.p += 3
            sawByteOrderMark = true
            return nil
        }
        if byte != UInt8(ascii: "<") {
            if openEnds.isEmpty {
                // Outside the root element only white space, written as it is (no reference).
                guard Self.isSpace(byte) else { throw fail(c, "text outside the root element") }
                while c.p < c.end, Self.isSpace(c.base[c.p]) { c.p += 1 }
                return nil
            }
            return try scanText(&c)
        }
        // Most markup is a tag: told by the byte after '<' without looking further.
        if c.end - c.p >= 2 {
            let second = c.base[c.p + 1]
            if Self.characterClasses[Int(second)] & Self.nameStart != 0 { return try scanStartTag(&c) }
            if second == UInt8(ascii: "/") { return try scanEndTag(&c) }
        }
        if try has(&c, "<?") {
            try scanProcessingInstruction(&c, atStart: atStart || (sawByteOrderMark && eventOffset == 3))
            return nil
        }
        if try has(&c, "<!--") {
            try skipComment(&c)
            return nil
        }
        if try has(&c, "<![CDATA[") {
            guard !openEnds.isEmpty else { throw fail(c, "CDATA outside the root element") }
            c.p += 9
            return try scanCDATA(&c)
        }
        if try has(&c, "<!DOCTYPE") {
            guard !sawRoot else { throw fail(c, "a document type declaration after the root element") }
            guard !sawDoctype else { throw fail(c, "a second document type declaration") }
            try scanDoctype(&c)
            sawDoctype = true
            return nil
        }
        if try has(&c, "<!") { throw fail(c, "'<!' that begins no comment, CDATA section or document type declaration") }
        if try has(&c, "</") { return try scanEndTag(&c) }
        return try scanStartTag(&c)
    }

    /// The name of the innermost open element.
    private var openName: String? {
        guard let last = openEnds.last else { return nil }
        let start = openEnds.count > 1 ? openEnds[openEnds.count - 2] : 0
        return String(decoding: openBytes[start..<last], as: UTF8.self)
    }

    // MARK: Text

    /// Text up to the next markup: in the block when it holds nothing to decode, else decoded into `scratch`.
    private func scanText(_ c: inout Cursor) throws(ScanError) -> Token {
        let classes = Self.characterClasses
        let start = c.p
        var run = c.p
        while run < c.end, classes[Int(c.base[run])] & Self.textStop == 0 { run += 1 }
        if run < c.end, c.base[run] == UInt8(ascii: "<") {
            c.p = run
            textSpan = Span(inScratch: false, start: start, count: run - start)
            return .text
        }
        scratch.removeAll(keepingCapacity: true)
        appendToScratch(c, from: start, to: run)
        c.p = run
        while let byte = try peek(&c), byte != UInt8(ascii: "<") {
            if classes[Int(byte)] & Self.textStop == 0 {
                var run = c.p
                while run < c.end, classes[Int(c.base[run])] & Self.textStop == 0 { run += 1 }
                appendToScratch(c, from: c.p, to: run)
                c.p = run
            } else if byte == UInt8(ascii: "&") {
                try appendReference(&c)
            } else if byte == 0x0D {
                // XML reads a line end (CR LF, or CR alone) as LF; a CR kept in a value is written `&#xD;`.
                c.p += 1
                if try peek(&c) != 0x0A { scratch.append(0x0A) }
            } else if byte == UInt8(ascii: "]") {
                if try has(&c, "]]>") { throw fail(c, "']]>' in text, which XML does not allow") }
                scratch.append(byte)
                c.p += 1
            } else {
                let length = try characterLength(&c)
                appendToScratch(c, from: c.p, to: c.p + length)
                c.p += length
            }
            if scratch.count > Self.maximumTextBytes { throw fail(c, "a text is larger than \(Self.maximumTextBytes) bytes") }
        }
        textSpan = Span(inScratch: true, start: 0, count: scratch.count)
        return .text
    }

    /// A CDATA section's text, past `<![CDATA[`.
    private func scanCDATA(_ c: inout Cursor) throws(ScanError) -> Token {
        scratch.removeAll(keepingCapacity: true)
        while true {
            if try has(&c, "]]>") {
                c.p += 3
                break
            }
            guard let byte = try peek(&c) else { throw fail(c, "a CDATA section never ends") }
            if byte == 0x0D {
                // A line end is a line feed, in a CDATA section too.
                c.p += 1
                if try peek(&c) != 0x0A { scratch.append(0x0A) }
            } else {
                let start = c.p
                try skipCharacter(&c)
                appendToScratch(c, from: start, to: c.p)
            }
            if scratch.count > Self.maximumTextBytes { throw fail(c, "a CDATA section is larger than \(Self.maximumTextBytes) bytes") }
        }
        textSpan = Span(inScratch: true, start: 0, count: scratch.count)
        return .text
    }

    /// Reads `&…;` and appends the character it stands for to `scratch`: one of XML's five entities, or a
    /// character reference (`&#65;`, `&#x41;`) to a character XML 1.0 allows.
    private func appendReference(_ c: inout Cursor) throws(ScanError) {
        c.p += 1
        let start = c.p
        while true {
            guard let byte = try peek(&c) else { throw fail(c, "the file ends inside an entity reference") }
            if byte == UInt8(ascii: ";") { break }
            guard c.p - start < 12 else { throw fail(c, "an entity reference does not end with ';'") }
            c.p += 1
        }
        let name = UnsafeBufferPointer(start: c.base + start, count: c.p - start)
        c.p += 1
        func named(_ entity: StaticString) -> Bool {
            name.count == entity.utf8CodeUnitCount && name.elementsEqual(UnsafeBufferPointer(start: entity.utf8Start, count: entity.utf8CodeUnitCount))
        }
        var value: UInt32?
        if named("lt") {
            value = 0x3C
        } else if named("gt") {
            value = 0x3E
        } else if named("amp") {
            value = 0x26
        } else if named("quot") {
            value = 0x22
        } else if named("apos") {
            value = 0x27
        } else {
            let isHex = name.count >= 2 && name[0] == UInt8(ascii: "#") && name[1] == UInt8(ascii: "x")
            let digits = name.dropFirst(isHex ? 2 : 1)
            var number: UInt32 = 0
            var valid = name.first == UInt8(ascii: "#") && !digits.isEmpty
            for digit in digits where valid {
                let part: UInt32
                switch digit {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): part = UInt32(digit - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f") where isHex: part = UInt32(digit - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F") where isHex: part = UInt32(digit - UInt8(ascii: "A") + 10)
                default:
                    valid = false
                    continue
                }
                // Past the last character, the number is too large whatever follows.
                number = min(number * (isHex ? 16 : 10) + part, 0x11_0000)
            }
            guard valid else {
                let text = String(decoding: name, as: UTF8.self)
                throw fail(c, "the reference '&\(text.prefix(12));' is neither one of XML's five entities nor a character reference (Core Data's store declares none)")
            }
            value = number
        }
        guard let value, XMLText.isCharacter(value), let scalar = Unicode.Scalar(value) else {
            throw fail(c, "the character reference '&\(String(decoding: name, as: UTF8.self));' is not a character XML 1.0 allows")
        }
        for byte in UTF8.encode(scalar)! { scratch.append(byte) }
    }

    // MARK: Names

    /// A name (of an element, an attribute, a processing instruction's target), in the block. A Core
    /// Data XML store's names are all ASCII: a name holding another character is refused.
    private func scanName(_ c: inout Cursor, what: @autoclosure () -> String) throws(ScanError) -> Span {
        let classes = Self.characterClasses
        let start = c.p
        while c.p < c.end, classes[Int(c.base[c.p])] & Self.nameCharacter != 0 { c.p += 1 }
        if c.p == c.end, !c.atEnd { throw .needMore }
        let count = c.p - start
        guard count <= 1024 else { throw fail(c, "a name is longer than 1024 bytes") }
        guard count > 0 else { throw fail(c, "a \(what()) without a name") }
        guard classes[Int(c.base[start])] & Self.nameStart != 0 else { throw fail(c, "a \(what()) that does not begin with a letter, '_' or ':'") }
        if c.p < c.end, c.base[c.p] >= 0x80 { throw fail(c, "a \(what()) holding a character outside ASCII, which no Core Data XML store has") }
        return Span(inScratch: false, start: start, count: count)
    }

    // MARK: Tags

    private func scanStartTag(_ c: inout Cursor) throws(ScanError) -> Token {
        c.p += 1
        let name = try scanName(&c, what: "tag")
        if openEnds.isEmpty, sawRoot { throw fail(c, "a second root element <\(blockString(c, name))>") }
        attributeSpans.removeAll(keepingCapacity: true)
        scratch.removeAll(keepingCapacity: true)
        var empty = false
        while true {
            let spaced = try skipSpace(&c)
            guard let byte = try peek(&c) else { throw fail(c, "the file ends inside the tag <\(blockString(c, name))>") }
            if byte == UInt8(ascii: ">") {
                c.p += 1
                break
            }
            if try has(&c, "/>") {
                c.p += 2
                empty = true
                break
            }
            guard spaced else { throw fail(c, "<\(blockString(c, name))> lacks a space before an attribute") }
            let tag = UnsafeBufferPointer(start: c.base + name.start, count: name.count)
            let attribute = try scanName(&c, what: "attribute of <\(String(decoding: tag, as: UTF8.self))>")
            try skipSpace(&c)
            guard try peek(&c) == UInt8(ascii: "=") else {
                throw fail(c, "the attribute '\(blockString(c, attribute))' of <\(blockString(c, name))> has no value")
            }
            c.p += 1
            try skipSpace(&c)
            for other in attributeSpans where other.name.count == attribute.count
                && memcmp(c.base + other.name.start, c.base + attribute.start, attribute.count) == 0
            {
                throw fail(c, "<\(blockString(c, name))> has the attribute '\(blockString(c, attribute))' twice")
            }
            guard attributeSpans.count < 64 else { throw fail(c, "<\(blockString(c, name))> has more than 64 attributes") }
            let value = try scanAttributeValue(&c, element: name)
            attributeSpans.append(AttributeSpan(name: attribute, value: value))
        }
        guard openEnds.count < Self.maximumDepth else { throw fail(c, "elements nest deeper than \(Self.maximumDepth) levels") }
        if openEnds.isEmpty { sawRoot = true }
        nameSpan = name
        let bytes = UnsafeBufferPointer(start: c.base + name.start, count: name.count)
        if empty {
            pendingEnd = true
            pendingName.removeAll(keepingCapacity: true)
            pendingName.append(contentsOf: bytes)
        } else {
            openBytes.append(contentsOf: bytes)
            openEnds.append(openBytes.count)
        }
        return .start
    }

    /// A quoted attribute value, normalized as XML does: a literal tab, line feed or carriage return (a
    /// CR LF pair once) is a space; a character reference stays the character it names. In the block
    /// when there is nothing to decode, else in `scratch`.
    private func scanAttributeValue(_ c: inout Cursor, element: Span) throws(ScanError) -> Span {
        guard let quote = try peek(&c), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw fail(c, "an attribute value of <\(blockString(c, element))> is not quoted")
        }
        c.p += 1
        let classes = Self.characterClasses
        let start = c.p
        var run = c.p
        while run < c.end, classes[Int(c.base[run])] & Self.valueStop == 0 { run += 1 }
        if run < c.end, c.base[run] == quote {
            c.p = run + 1
            return Span(inScratch: false, start: start, count: run - start)
        }
        let valueStart = scratch.count
        appendToScratch(c, from: start, to: run)
        c.p = run
        while true {
            guard let byte = try peek(&c) else { throw fail(c, "the file ends inside an attribute value of <\(blockString(c, element))>") }
            if byte == quote {
                c.p += 1
                return Span(inScratch: true, start: valueStart, count: scratch.count - valueStart)
            }
            switch byte {
            case UInt8(ascii: "<"): throw fail(c, "'<' inside an attribute value of <\(blockString(c, element))>")
            case UInt8(ascii: "&"): try appendReference(&c)
            case 0x0D:
                c.p += 1
                if try peek(&c) == 0x0A { c.p += 1 }
                scratch.append(0x20)
            case 0x09, 0x0A:
                c.p += 1
                scratch.append(0x20)
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                scratch.append(byte)
                c.p += 1
            default:
                if classes[Int(byte)] & Self.valueStop == 0 {
                    var run = c.p
                    while run < c.end, classes[Int(c.base[run])] & Self.valueStop == 0 { run += 1 }
                    appendToScratch(c, from: c.p, to: run)
                    c.p = run
                } else {
                    let length = try characterLength(&c)
                    appendToScratch(c, from: c.p, to: c.p + length)
                    c.p += length
                }
            }
            if scratch.count - valueStart > Self.maximumTextBytes {
                throw fail(c, "an attribute value is larger than \(Self.maximumTextBytes) bytes")
            }
        }
    }

    private func scanEndTag(_ c: inout Cursor) throws(ScanError) -> Token {
        c.p += 2
        let name = try scanName(&c, what: "end tag")
        try skipSpace(&c)
        guard try peek(&c) == UInt8(ascii: ">") else { throw fail(c, "the end tag </\(blockString(c, name))> does not end with '>'") }
        c.p += 1
        guard let last = openEnds.last else { throw fail(c, "the end tag </\(blockString(c, name))> closes nothing") }
        let first = openEnds.count > 1 ? openEnds[openEnds.count - 2] : 0
        let matches = last - first == name.count
            && openBytes.withUnsafeBufferPointer { open in memcmp(open.baseAddress! + first, c.base + name.start, name.count) == 0 }
        guard matches else { throw fail(c, "the end tag </\(blockString(c, name))> closes <\(openName ?? "")>") }
        openBytes.removeLast(name.count)
        openEnds.removeLast()
        nameSpan = name
        return .end
    }

    // MARK: Markup that is not an element

    /// `<?target …?>`: the XML declaration when it opens the file (read, and checked: version 1.0, UTF-8),
    /// any other processing instruction skipped (its target a name other than `xml`).
    private func scanProcessingInstruction(_ c: inout Cursor, atStart: Bool) throws(ScanError) {
        let startLine = line
        c.p += 2
        let target = try scanName(&c, what: "processing instruction's target")
        let bytes = UnsafeBufferPointer(start: c.base + target.start, count: target.count)
        if bytes.count == 3, bytes[0] | 0x20 == UInt8(ascii: "x"), bytes[1] | 0x20 == UInt8(ascii: "m"), bytes[2] | 0x20 == UInt8(ascii: "l") {
            guard atStart, bytes.elementsEqual("xml".utf8) else { throw fail(c, "an XML declaration that does not open the file") }
            return try scanDeclaration(&c)
        }
        if try has(&c, "?>") {
            c.p += 2
            return
        }
        guard let byte = try peek(&c), Self.isSpace(byte) else {
            throw fail(c, "the processing instruction <?\(blockString(c, target)) has no space after its target")
        }
        try skipCharacters(&c, through: "?>", what: "the processing instruction begun on line \(startLine)")
    }

    /// Skips checked characters (see ``characterLength(_:)``) through `terminator`.
    private func skipCharacters(_ c: inout Cursor, through terminator: StaticString, what: @autoclosure () -> String) throws(ScanError) {
        let start = c.p
        while true {
            if try has(&c, terminator) {
                c.p += terminator.utf8CodeUnitCount
                return
            }
            guard try peek(&c) != nil else { throw fail(c, "\(what()) never ends") }
            try skipCharacter(&c)
            if c.p - start > Self.maximumTextBytes { throw fail(c, "\(what()) is larger than \(Self.maximumTextBytes) bytes") }
        }
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`, past `<?xml`: the version must be 1.0 and
    /// the encoding, when given, UTF-8, the only one this parser reads.
    private func scanDeclaration(_ c: inout Cursor) throws(ScanError) {
        var fields: [(String, String)] = []
        while true {
            let spaced = try skipSpace(&c)
            if try has(&c, "?>") {
                c.p += 2
                break
            }
            guard spaced else { throw fail(c, "the XML declaration lacks a space before a field") }
            let name = blockString(c, try scanName(&c, what: "XML declaration field"))
            try skipSpace(&c)
            guard try peek(&c) == UInt8(ascii: "=") else { throw fail(c, "the XML declaration's \(name) has no value") }
            c.p += 1
            try skipSpace(&c)
            guard let quote = try peek(&c), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw fail(c, "the XML declaration's \(name) is not quoted")
            }
            c.p += 1
            let start = c.p
            while let byte = try peek(&c), byte != quote {
                guard byte >= 0x21, byte < 0x7F, byte != UInt8(ascii: "<"), c.p - start < 64 else {
                    throw fail(c, "the XML declaration's \(name) holds a character it may not")
                }
                c.p += 1
            }
            guard try peek(&c) == quote else { throw fail(c, "the file ends inside the XML declaration") }
            fields.append((name, blockString(c, Span(inScratch: false, start: start, count: c.p - start))))
            c.p += 1
        }
        let names = fields.map(\.0)
        guard names.first == "version", names == ["version", "encoding", "standalone"].filter(names.contains), Set(names).count == names.count else {
            throw fail(c, "the XML declaration's fields are not version, then encoding and standalone if given")
        }
        for (name, value) in fields {
            switch name {
            case "version": guard value == "1.0" else { throw fail(c, "XML version '\(value)': this parser reads XML 1.0") }
            case "encoding": guard value.lowercased() == "utf-8" else { throw fail(c, "the encoding '\(value)': an XML store is read as UTF-8 only") }
            default: guard value == "yes" || value == "no" else { throw fail(c, "standalone='\(value)', where yes or no is expected") }
            }
        }
    }

    /// `<!-- … -->`: no `--` inside.
    private func skipComment(_ c: inout Cursor) throws(ScanError) {
        let startLine = line
        c.p += 4
        try skipCharacters(&c, through: "--", what: "the comment begun on line \(startLine)")
        guard try peek(&c) == UInt8(ascii: ">") else { throw fail(c, "'--' inside the comment begun on line \(startLine)") }
        c.p += 1
    }

    /// `<!DOCTYPE name SYSTEM "…">` or `PUBLIC "…" "…"`, or with no identifier. An internal subset
    /// (`[ … ]`) is refused: Core Data's files have none, and what it may declare (entities, default
    /// attributes) would make the file read otherwise than as written.
    private func scanDoctype(_ c: inout Cursor) throws(ScanError) {
        let startLine = line
        c.p += 9
        guard try skipSpace(&c) else { throw fail(c, "<!DOCTYPE without a space before its name") }
        _ = try scanName(&c, what: "document type's name")
        if try skipSpace(&c), let byte = try peek(&c), byte == UInt8(ascii: "S") || byte == UInt8(ascii: "P") {
            let keyword = blockString(c, try scanName(&c, what: "external identifier"))
            switch keyword {
            case "SYSTEM":
                guard try skipSpace(&c) else { throw fail(c, "SYSTEM without a space before its literal") }
                try scanLiteral(&c, publicIdentifier: false)
            case "PUBLIC":
                guard try skipSpace(&c) else { throw fail(c, "PUBLIC without a space before its literal") }
                try scanLiteral(&c, publicIdentifier: true)
                guard try skipSpace(&c) else { throw fail(c, "PUBLIC's literals are not separated by a space") }
                try scanLiteral(&c, publicIdentifier: false)
            default:
                throw fail(c, "'\(keyword)' in the document type declaration, where SYSTEM or PUBLIC is expected")
            }
            try skipSpace(&c)
        }
        switch try peek(&c) {
        case UInt8(ascii: ">"): c.p += 1
        case UInt8(ascii: "["):
            throw fail(
                c,
                "the document type declaration has an internal subset, which a Core Data XML store never has (it could declare entities or default attributes)")
        case nil: throw fail(c, "the document type declaration begun on line \(startLine) never ends")
        default: throw fail(c, "the document type declaration begun on line \(startLine) holds something other than a name and an external identifier")
        }
    }

    /// A quoted literal of the document type declaration; a public identifier's characters are checked.
    private func scanLiteral(_ c: inout Cursor, publicIdentifier: Bool) throws(ScanError) {
        guard let quote = try peek(&c), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw fail(c, "a literal of the document type declaration is not quoted")
        }
        c.p += 1
        let start = c.p
        while let byte = try peek(&c), byte != quote {
            if publicIdentifier {
                guard Self.isPublicIdentifierCharacter(byte) else { throw fail(c, "a character a public identifier may not hold") }
                c.p += 1
            } else {
                try skipCharacter(&c)
            }
            if c.p - start > 1 << 16 { throw fail(c, "a literal of the document type declaration is longer than 64 KiB") }
        }
        guard try peek(&c) == quote else { throw fail(c, "the file ends inside the document type declaration") }
        c.p += 1
    }

    private static func isPublicIdentifierCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x0D, 0x0A, UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-'()+,./:=?;!*#@$_%".utf8.contains(byte)
        }
    }
}

@available(*, unavailable)
extension XMLPullParser: Sendable {}
