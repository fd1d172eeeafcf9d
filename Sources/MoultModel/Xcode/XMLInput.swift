public import Foundation

/// The check every XML file goes through before Foundation's `XMLParser` (or
/// `PropertyListSerialization`) sees it.
///
/// On Linux, Foundation's `XMLParser` ends the process (SIGILL) when a name, a comment, a processing
/// instruction or a declaration holds bytes that are not UTF-8, and crashes (SIGSEGV) on a DTD's
/// `<!NOTATION>` declaration, on an unparsed entity (`<!ENTITY … NDATA …>`), on a `NOTATION`
/// attribute type in an `<!ATTLIST>` and on a processing instruction without data (`<?p?>`); it also
/// takes time quadratic in the number of attributes of one element. None of these has a place in the files Xcode writes (UTF-8, no internal DTD subset, a few
/// attributes per element), so an input that has one is refused here, with where it is, before any
/// parser runs:
///
/// - bytes that are not well-formed UTF-8 (Unicode's table 3-7: no overlong forms, no surrogates,
///   nothing above U+10FFFF);
/// - an XML declaration naming another encoding than UTF-8 (or its ASCII subset);
/// - a markup declaration (`<!ENTITY`, `<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`) anywhere, or an
///   internal DTD subset (`<!DOCTYPE name [ … ]>`);
/// - a processing instruction with a target and no data (`<?p?>`);
/// - more than ``maximumAttributesPerElement`` attributes on one element.
///
/// The check is one linear pass over the bytes.
///
/// ```swift
/// if let problem = XMLInput.problem(in: data) { print("line \(problem.line): \(problem.message)") }
/// try XMLInput.check(data, file: path)  // throws ModelError, exit code 65
/// ```
public enum XMLInput {
    /// The most attributes one element may have. Xcode's elements have a few dozen at most.
    public static let maximumAttributesPerElement = 1_000

    /// What is wrong with an input, and where.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// Whether the bytes are not UTF-8, or the XML holds something Core Data files never do.
        public enum Kind: Sendable, Hashable {
            case invalidUTF8
            case unsupportedMarkup
        }

        public var kind: Kind
        /// What is wrong, with the byte offset, line and column in words.
        public var message: String
        /// The offset of the first offending byte, from 0.
        public var offset: Int
        /// The line of that byte, from 1.
        public var line: Int
        /// The column of that byte on its line, in bytes, from 1.
        public var column: Int

        public var description: String { message }
    }

    /// Checks the bytes of an XML file.
    ///
    /// - Parameters:
    ///   - data: The whole file.
    ///   - file: The file's path, for the error.
    /// - Throws: ``ModelError`` (`.invalidUTF8` or `.malformedXML`, a bad input) naming the file and
    ///   the line, with the byte offset in the message.
    public static func check(_ data: Data, file: String) throws(ModelError) {
        if let problem = problem(in: data) {
            let code: ModelError.Code = problem.kind == .invalidUTF8 ? .invalidUTF8 : .malformedXML
            throw ModelError(code, problem.message, file: file, line: problem.line)
        }
    }

    /// The first problem in the bytes of an XML file, or nil when Foundation's parsers can be given it.
    public static func problem(in data: Data) -> Problem? {
        data.withUnsafeBytes { raw in
            problem(in: raw.bindMemory(to: UInt8.self))
        }
    }

    /// The first problem in `bytes`, or nil.
    public static func problem(in bytes: UnsafeBufferPointer<UInt8>) -> Problem? {
        if let offset = firstInvalidUTF8(bytes) {
            let shown = bytes[offset..<min(bytes.count, offset + 4)].map { String(format: "%02X", $0) }.joined(separator: " ")
            return located(
                "byte \(offset)", "is not UTF-8 (bytes \(shown)): Core Data files are UTF-8, and Foundation's XML parser cannot take such bytes",
                offset, in: bytes, kind: .invalidUTF8)
        }
        return structuralProblem(bytes)
    }

    // MARK: - UTF-8

    /// The offset of the first byte that does not belong to a well-formed UTF-8 sequence.
    static func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        UTF8Validation.firstInvalid(UnsafeRawBufferPointer(bytes))
    }

    // MARK: - Structure

    private static let markupDeclarations = ["<!ENTITY", "<!ELEMENT", "<!ATTLIST", "<!NOTATION"].map { Array($0.utf8) }
    private static let acceptedEncodings: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii"]

    /// Markup declarations, an internal subset, another encoding, or too many attributes on an element.
    private static func structuralProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> Problem? {
        let count = bytes.count
        if let declared = declaredEncoding(bytes), !acceptedEncodings.contains(declared.name.lowercased()) {
            return located(
                "the XML declaration names the encoding '\(declared.name)'", "at byte \(declared.offset): Moult reads UTF-8 XML only, which Xcode writes",
                declared.offset, in: bytes)
        }
        var index = 0
        while index < count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            // Declarations have effect only in an internal subset (refused below); refused anywhere else too.
            if index + 1 < count, bytes[index + 1] == UInt8(ascii: "!") {
                for keyword in markupDeclarations where matches(keyword, in: bytes, at: index) {
                    let name = String(decoding: keyword, as: UTF8.self)
                    return located(
                        "a DTD declaration '\(name)' at byte \(index)", "is not part of a Core Data file (Foundation's XML parser crashes on some)",
                        index, in: bytes)
                }
                if matches(Array("<!--".utf8), in: bytes, at: index) {
                    index = find(Array("-->".utf8), in: bytes, from: index + 4).map { $0 + 3 } ?? count
                } else if matches(Array("<![CDATA[".utf8), in: bytes, at: index) {
                    index = find(Array("]]>".utf8), in: bytes, from: index + 9).map { $0 + 3 } ?? count
                } else if matches(Array("<!DOCTYPE".utf8), in: bytes, at: index) {
                    if let subset = internalSubset(bytes, from: index + 9) {
                        return located(
                            "an internal DTD subset ('<!DOCTYPE … [') at byte \(subset)", "is not part of a Core Data file",
                            subset, in: bytes)
                    }
                    index += 9
                } else {
                    index += 2
                }
                continue
            }
            if index + 1 < count, bytes[index + 1] == UInt8(ascii: "?") {
                // A processing instruction with a target and no data (`<?p?>`): XMLParser crashes on one.
                var end = index + 2
                while end < count, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "?")].contains(bytes[end]) { end += 1 }
                if end > index + 2, end + 1 < count, bytes[end] == UInt8(ascii: "?"), bytes[end + 1] == UInt8(ascii: ">") {
                    let target = String(decoding: bytes[(index + 2)..<end], as: UTF8.self)
                    return located(
                        "a processing instruction with no data ('<?\(target)?>') at byte \(index)",
                        "is not part of a Core Data file (Foundation's XML parser crashes on one)", index, in: bytes)
                }
                index = find(Array("?>".utf8), in: bytes, from: index + 2).map { $0 + 2 } ?? count
                continue
            }
            // A tag: count its attributes (each has one '=' outside the quoted values).
            let start = index
            var attributes = 0
            var quote: UInt8?
            index += 1
            scan: while index < count {
                let byte = bytes[index]
                if let open = quote {
                    if byte == open { quote = nil }
                } else {
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
                    case UInt8(ascii: "="): attributes += 1
                    case UInt8(ascii: ">"), UInt8(ascii: "<"): break scan
                    default: break
                    }
                }
                index += 1
            }
            if attributes > maximumAttributesPerElement {
                return located(
                    "an element with \(attributes) attributes at byte \(start)",
                    "(at most \(maximumAttributesPerElement)): this is not a Core Data file", start, in: bytes)
            }
            if index < count, bytes[index] == UInt8(ascii: ">") { index += 1 }
        }
        return nil
    }

    /// The offset of the `[` opening an internal subset after `<!DOCTYPE`, skipping quoted literals.
    private static func internalSubset(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                return index
            } else if byte == UInt8(ascii: ">") {
                return nil
            }
            index += 1
        }
        return nil
    }

    /// The `encoding` of an XML declaration at the start of the file (after a byte-order mark).
    private static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> (name: String, offset: Int)? {
        var start = 0
        if matches([0xEF, 0xBB, 0xBF], in: bytes, at: 0) { start = 3 }
        guard matches(Array("<?xml".utf8), in: bytes, at: start),
            let end = find(Array("?>".utf8), in: bytes, from: start + 5),
            let key = find(Array("encoding".utf8), in: bytes, from: start + 5), key < end
        else { return nil }
        var index = key + 8
        while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == UInt8(ascii: "=") {
            index += 1
        }
        guard index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        var close = index + 1
        while close < end, bytes[close] != quote { close += 1 }
        return (String(decoding: bytes[(index + 1)..<close], as: UTF8.self), index + 1)
    }

    // MARK: - Helpers

    private static func matches(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        guard offset >= 0, offset + pattern.count <= bytes.count else { return false }
        for (index, byte) in pattern.enumerated() where bytes[offset + index] != byte { return false }
        return true
    }

    private static func find(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let first = pattern.first, start < bytes.count else { return nil }
        var index = start
        while index + pattern.count <= bytes.count {
            if bytes[index] == first, matches(pattern, in: bytes, at: index) { return index }
            index += 1
        }
        return nil
    }

    /// A problem at `offset`, its message saying the line and column.
    private static func located(
        _ what: String, _ rest: String, _ offset: Int, in bytes: UnsafeBufferPointer<UInt8>, kind: Problem.Kind = .unsupportedMarkup
    ) -> Problem {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        let column = offset - lineStart + 1
        return Problem(kind: kind, message: "\(what) (line \(line), column \(column)) \(rest)", offset: offset, line: line, column: column)
    }
}
