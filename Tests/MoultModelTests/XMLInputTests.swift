import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// The check before Foundation's XML parser: every input that made `XMLParser` trap (SIGILL) or crash
/// (SIGSEGV) on Linux, found by probing it, is refused with where it is; what Xcode writes passes.
@Suite struct XMLInputTests {
    static func read(_ text: [UInt8]) throws(ModelError) -> ObjectModel {
        try ObjectModel(xcodeContents: Data(text), path: "probe/contents")
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Inputs that crash `XMLParser` unchecked, the error code, and a fragment of the message.
    static let crashing: [(String, [UInt8], ModelError.Code, String)] = [
        ("bad byte in an element name", bytes("<model><a") + [0xE5] + bytes("/></model>"), .invalidUTF8, "byte 9 (line 1, column 10)"),
        ("bad byte in an attribute name", bytes("<model a") + [0xE9] + bytes("=\"1\"/>"), .invalidUTF8, "byte 8"),
        ("bad byte in a comment", bytes("<model><!-- ") + [0xFF] + bytes(" --></model>"), .invalidUTF8, "(bytes FF 20 2D 2D)"),
        ("bad byte in a PI target", bytes("<?p") + [0xC0] + bytes(" d?><model/>"), .invalidUTF8, "byte 3"),
        ("bad byte in an undeclared entity reference", bytes("<model>&u") + [0xE9] + bytes(";</model>"), .invalidUTF8, "byte 9"),
        ("an overlong form", bytes("<model><a") + [0xC0, 0xAF] + bytes("/></model>"), .invalidUTF8, "byte 9"),
        ("a UTF-8 encoded surrogate", bytes("<model><a") + [0xED, 0xA0, 0x80] + bytes("/></model>"), .invalidUTF8, "byte 9"),
        ("a code point above U+10FFFF", bytes("<model><a") + [0xF4, 0x90, 0x80, 0x80] + bytes("/></model>"), .invalidUTF8, "byte 9"),
        ("a sequence cut by the end", bytes("<model/>\n") + [0xE2, 0x82], .invalidUTF8, "line 2, column 1"),
        ("a UTF-16 byte-order mark", [0xFF, 0xFE] + bytes("<\0m\0/\0>\0"), .invalidUTF8, "byte 0"),
        ("a notation declaration (SIGSEGV)", bytes("<!DOCTYPE m [<!NOTATION n SYSTEM \"x\">]><model/>"), .malformedXML, "internal DTD subset"),
        ("an unparsed entity (SIGSEGV)", bytes("<!DOCTYPE m [<!ENTITY u SYSTEM \"x\" NDATA n>]><model/>"), .malformedXML, "internal DTD subset"),
        ("a NOTATION attribute type (SIGSEGV)", bytes("<!DOCTYPE m [<!ATTLIST m c NOTATION (n) #IMPLIED>]><model/>"), .malformedXML, "internal DTD subset"),
        ("an element declaration", bytes("<!DOCTYPE m [<!ELEMENT m ANY>]><model/>"), .malformedXML, "internal DTD subset"),
        ("an empty internal subset", bytes("<!DOCTYPE model [ ]><model/>"), .malformedXML, "internal DTD subset"),
        ("a declaration outside a DOCTYPE", bytes("<model/><!ENTITY e \"x\">"), .malformedXML, "'<!ENTITY' at byte 8"),
        ("a notation outside a DOCTYPE", bytes("<!NOTATION n SYSTEM \"x\"><model/>"), .malformedXML, "'<!NOTATION' at byte 0"),
        ("another encoding", bytes("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><model/>"), .malformedXML, "'ISO-8859-1'"),
        ("a PI without data before the root (SIGSEGV, found by fuzzing)", bytes("<?pe0d?><"), .malformedXML, "('<?pe0d?>') at byte 0"),
        ("a PI without data in content (SIGSEGV)", bytes("<model><?xml?></model>"), .malformedXML, "('<?xml?>') at byte 7"),
        ("a PI without data after the root (SIGSEGV)", bytes("<model/>\n<?p?>"), .malformedXML, "(line 2, column 1)"),
        ("an attribute flood", bytes("<model " + (0..<1_001).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>"), .malformedXML, "1001 attributes"),
    ]

    @Test(arguments: crashing)
    func crashingInputsAreRefused(_ label: String, _ input: [UInt8], _ code: ModelError.Code, _ fragment: String) {
        do {
            _ = try Self.read(input)
            Issue.record("\(label): read without an error")
        } catch {
            #expect(error.code == code, "\(label): \(error)")
            #expect(error.category == .badInput)
            #expect(error.file == "probe/contents" && error.line != nil, "\(label): \(error)")
            #expect(error.message.contains(fragment), "\(label): \(error.message)")
        }
    }

    @Test func theProblemSaysTheOffsetLineAndColumn() throws {
        let input = Data(Self.bytes("<model>\n  <entity name=\"A") + [0x80] + Self.bytes("\"/>\n</model>"))
        let problem = try #require(XMLInput.problem(in: input))
        #expect(problem.kind == .invalidUTF8)
        #expect(problem.offset == 25 && problem.line == 2 && problem.column == 18)
    }

    @Test func whatXcodeWritesPasses() throws {
        let valid: [String] = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"x\"><entity name=\"Caf\u{E9}\"/></model>",
            "\u{FEFF}<?xml version='1.0' encoding='utf-8'?><model/>",
            "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\"><database/>",
            "<model><!-- <!ENTITY inside a comment is text --></model>",
            "<model a=\"x > y\" b='<!-- not a comment -->'/>",
            "<model><![CDATA[ <a b=\"1\"> \u{1F600} ]]></model>",
            "<?p ?><model><?q\tdata?></model>",
        ]
        for text in valid {
            #expect(XMLInput.problem(in: Data(text.utf8)) == nil, "\(text)")
        }
        // Every XML file in the fixtures passes: models, mapping models, .xccurrentversion files.
        var checked = 0
        for file in try Self.xmlFiles() {
            #expect(XMLInput.problem(in: try Data(contentsOf: file)) == nil, "\(file.path)")
            checked += 1
        }
        #expect(checked > 40)
    }

    static func xmlFiles() throws -> [URL] {
        var files: [URL] = []
        for root in [Fixtures.root, Fixtures.datasets] {
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                guard !url.path.contains("/regressions/") else { continue }
                if ["contents", "xcmapping.xml", ".xccurrentversion"].contains(url.lastPathComponent) { files.append(url) }
            }
        }
        return files
    }
}
