import Foundation
import MoultTestSupport
@testable import MoultXMLStore
import Testing

/// Moult's XML parser against a conforming one (Python's expat), on documents made by inserting the
/// constructs where parsers part ways (document type declarations with literals, comments and internal
/// subsets; processing instructions and XML declarations; CDATA sections; character and entity
/// references; line ends, white space in attribute values, control characters, bytes that are not
/// UTF-8) at random places of a small store: every document Moult accepts, expat accepts too and reads
/// to the same elements, attributes and text. Moult may refuse more than expat (an internal subset, a
/// non-ASCII name, an encoding other than UTF-8), never read a document otherwise.
///
/// The suite runs 3,000 documents in one expat process; `MOULT_XML_DIFFERENTIAL_INPUTS=N` (and
/// `MOULT_XML_DIFFERENTIAL_SEED`) runs more, as `Benchmarks/scripts/xml-parser-differential.sh` does.
@Suite struct XMLParserDifferentialTests {
    static let base = Array(
        """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

        <database>
            <databaseInfo>
                <version>134481920</version>
                <UUID>090C1ECA-A3D9-4191-B00C-29CD4EA95FB0</UUID>
                <nextObjectID>104</nextObjectID>
                <metadata></metadata>
            </databaseInfo>
            <object type="PERSON" id="z102">
                <attribute name="name" type="string">Ada &amp; "Grace" &lt;x&gt;</attribute>
                <attribute name="age" type="int16">36</attribute>
                <relationship name="pets" type="0/0" destination="PET" idrefs="z103 z104"></relationship>
            </object>
            <object type='PET' id='z103'><attribute name="name" type="string">Rex</attribute><relationship name="owner" type="1/1" destination="PERSON" idrefs="z102"/></object>
        </database>
        """.utf8)

    /// Pieces inserted at random places: each a construct, or a damaged one.
    static let pieces: [String] = [
        "<!-- a comment -->", "<!-- \" -->", "<!-- ' -->", "<!-- -- -->", "<!--->", "<!---->", "<!-- - -->", "<!-- --->", "<!-- <object> -->",
        "<?pi data?>", "<?pi \" ]>?>", "<?pi?>", "<??>", "<?xml version=\"1.0\"?>", "<?XML x?>", "<?xml-stylesheet href=\"a\"?>", "<? pi?>", "<?pi\tx?>",
        "<![CDATA[x]]>", "<![CDATA[<object>&amp;]]>", "<![CDATA[]]>", "<![CDATA[a]]b]]>", "<![CDATA[\r\n]]>", "<![CDATA[ ]]",
        "&#x41;", "&#65;", "&#X41;", "&#x0;", "&#0;", "&#xD;", "&#13;", "&#x9;", "&#1;", "&#xFFFE;", "&#xFFFF;", "&#xD800;", "&#x10FFFF;", "&#x110000;",
        "&#x+41;", "&#-1;", "&#x;", "&#;", "&lt;", "&amp;", "&quot;", "&apos;", "&gt;", "&foo;", "&lt", "&", "&#x0041;", "&#00065;",
        "]]>", "]]", "]", ">", "\"", "'", "<", "</", "/>", "=", "\r", "\r\n", "\n", "\t", " ", "\u{85}", "\u{2028}", "\u{A0}", "\u{7F}", "\u{1}", "\u{1F}", "\u{FFFE}", "\u{FFFF}",
        "\u{FEFF}", "é", "\u{10000}", "<a/>", "<a>", "</a>", "<a b='1'/>", "<a b=\"1\"c=\"2\"/>", "<a b=\"1\" b=\"2\"/>", "<a b/>", "<a b=1/>", "<1a/>", "<a\u{E9}/>", "<:a/>",
        "<!DOCTYPE database>", "<!DOCTYPE database [ ]>", "<!DOCTYPE database [ <!-- \" --> ]>", "<!DOCTYPE database SYSTEM 'a\"b'>",
        "<!DOCTYPE database PUBLIC \"-//A//B\" \"c\">", "<!DOCTYPE database PUBLIC \"{}\" \"c\">", "<!ELEMENT a ANY>", "<!ENTITY x \"y\">", "<!X>",
        " name=\"x\"", " name='\t\n'", " id=\"z105\"", " type=\"PERSON\r\n\"",
    ]

    /// Raw bytes inserted: not UTF-8, a surrogate's encoding, an overlong form, U+FFFE's bytes.
    static let rawBytes: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBE], [0xE2, 0x82], [0x00], [0x0B], [0xEF, 0xBB, 0xBF]]

    /// Document heads that replace the declaration and document type declaration.
    static let heads: [String] = [
        "", "<?xml version=\"1.0\"?>", "<?xml version='1.0' encoding='UTF-8' standalone='no'?>", "<?xml version=\"1.1\"?>",
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>", "<?xml encoding=\"UTF-8\" version=\"1.0\"?>", "<?xml version=\"1.0\" standalone=\"maybe\"?>",
        " <?xml version=\"1.0\"?>", "\u{FEFF}<?xml version=\"1.0\"?>", "\u{FEFF}", "<?xml version=\"1.0\"standalone=\"yes\"?>",
        "<!DOCTYPE database [ <!ENTITY x \"FAKE\"> ]>", "<!DOCTYPE database [ <!ATTLIST object type CDATA \"PET\"> ]>", "<!DOCTYPE database SYSTEM \"x\" >",
        "<!DOCTYPE database SYSTEM\"x\">", "<!DOCTYPE database PUBLIC \"p\">", "<!-- c --><!DOCTYPE database>", "<!DOCTYPE database><!DOCTYPE database>",
    ]

    /// A mutated document: a head, then one to three insertions (pieces or raw bytes) at random offsets.
    static func document(_ random: inout FuzzRandom) -> [UInt8] {
        var bytes = base
        if random.next(upTo: 3) == 0 {
            let bodyStart = bytes.firstIndex(of: UInt8(ascii: "\n"))! + 1
            let doctypeEnd = bytes[bodyStart...].firstIndex(of: UInt8(ascii: "\n"))! + 1
            let head = heads[random.next(upTo: heads.count)]
            bytes = Array(head.utf8) + (random.next(upTo: 2) == 0 ? Array(bytes[bodyStart..<doctypeEnd]) : [UInt8(ascii: "\n")]) + Array(bytes[doctypeEnd...])
        }
        for _ in 0..<(1 + random.next(upTo: 3)) {
            let insertion = random.next(upTo: 8) == 0 ? rawBytes[random.next(upTo: rawBytes.count)] : Array(pieces[random.next(upTo: pieces.count)].utf8)
            // Mostly between markup (after a '>'), where a construct is allowed; else anywhere.
            let boundaries = bytes.indices.filter { bytes[$0] == UInt8(ascii: ">") }.map { $0 + 1 }
            let offset = random.next(upTo: 4) == 0 ? random.next(upTo: bytes.count + 1) : boundaries[random.next(upTo: boundaries.count)]
            bytes.insert(contentsOf: insertion, at: offset)
        }
        return bytes
    }

    /// What Moult's parser reads: `S name`, `A name=value` (sorted), `T text` (adjacent text merged),
    /// `E name`, a line each, as expat's handlers are given them; nil when it refuses the document.
    /// With `chunkSize`, the document is read as from a file that many bytes at a time.
    static func moultReading(_ bytes: [UInt8], chunkSize: Int? = nil) -> [UInt8]? {
        let parser = chunkSize.map { XMLPullParser(bytes: bytes, chunkSize: $0) } ?? XMLPullParser(bytes: bytes)
        var out: [UInt8] = []
        var text: [UInt8] = []
        func flush() {
            if !text.isEmpty { out += Array("T ".utf8) + text + [0x0A] }
            text = []
        }
        do {
            while true {
                switch try parser.next() {
                case .start(let name, let attributes):
                    flush()
                    out += Array("S \(name)\n".utf8)
                    for key in attributes.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                        out += Array("A \(key)=".utf8) + Array(attributes[key]!.utf8) + [0x0A]
                    }
                case .text(let part): text += Array(part.utf8)
                case .end(let name):
                    flush()
                    out += Array("E \(name)\n".utf8)
                case .endOfDocument:
                    return out
                }
            }
        } catch {
            return nil
        }
    }

    /// Reads length-prefixed documents on standard input; writes `OK <hex of the reading>` or `ERR` a line each.
    static let expatScript = #"""
        import sys, struct, xml.parsers.expat
        data = sys.stdin.buffer.read()
        out = []
        i = 0
        while i < len(data):
            n = struct.unpack('>I', data[i:i + 4])[0]; doc = data[i + 4:i + 4 + n]; i += 4 + n
            parts = []; text = []
            def flush():
                if text: parts.append(b'T ' + ''.join(text).encode('utf-8', 'surrogatepass') + b'\n'); text.clear()
            def start(name, attrs):
                flush(); parts.append(('S ' + name + '\n').encode())
                for k in sorted(attrs, key=lambda s: s.encode('utf-8', 'surrogatepass')): parts.append(('A ' + k + '=').encode() + attrs[k].encode('utf-8', 'surrogatepass') + b'\n')
            def end(name):
                flush(); parts.append(('E ' + name + '\n').encode())
            p = xml.parsers.expat.ParserCreate()
            p.StartElementHandler = start; p.EndElementHandler = end; p.CharacterDataHandler = lambda t: text.append(t)
            try:
                p.Parse(doc, True); flush(); out.append('OK ' + b''.join(parts).hex())
            except Exception:
                out.append('ERR')
        sys.stdout.write('\n'.join(out) + '\n')
        """#

    /// Expat's readings of `documents`, in one process.
    static func expatReadings(_ documents: [[UInt8]], in directory: TemporaryDirectory) throws -> [[UInt8]?] {
        var input = Data()
        for document in documents {
            var length = UInt32(document.count).bigEndian
            input.append(Data(bytes: &length, count: 4))
            input.append(contentsOf: document)
        }
        let inputURL = directory.appending("documents.bin")
        try input.write(to: inputURL)
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["python3", "-c", expatScript]
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map { line in
            line.hasPrefix("OK ") ? Self.bytes(hex: line.dropFirst(3)) : nil
        }
    }

    static func bytes(hex: Substring) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    @Test func everyDocumentMoultAcceptsReadsAsExpatReadsIt() throws {
        let environment = ProcessInfo.processInfo.environment
        let total = environment["MOULT_XML_DIFFERENTIAL_INPUTS"].flatMap(Int.init) ?? 3_000
        var random = FuzzRandom(seed: environment["MOULT_XML_DIFFERENTIAL_SEED"].flatMap(UInt64.init) ?? 38)
        let directory = try TemporaryDirectory("xml-differential")
        defer { directory.remove() }
        var accepted = 0
        var refusedByMoultOnly = 0
        var different = 0
        var done = 0
        // The unmutated document first: both read it, to the same events.
        var first = true
        while done < total {
            let count = min(20_000, total - done)
            let documents = (0..<count).map { _ in
                defer { first = false }
                return first ? Self.base : Self.document(&random)
            }
            let expat = try Self.expatReadings(documents, in: directory)
            try #require(expat.count == documents.count)
            for (document, theirs) in zip(documents, expat) {
                let ours = Self.moultReading(document)
                // Read a few bytes at a time, every token crosses the end of the parser's block: the same reading.
                let chunkSize = 1 + document.count % 7
                #expect(Self.moultReading(document, chunkSize: chunkSize) == ours, "read otherwise \(chunkSize) bytes at a time")
                if let ours {
                    accepted += 1
                    if ours != theirs { different += 1 }
                    #expect(ours == theirs, "read otherwise than expat: \(String(decoding: document, as: UTF8.self).debugDescription)")
                } else if theirs != nil {
                    refusedByMoultOnly += 1
                }
            }
            done += count
        }
        // The mutations reach both outcomes: many documents read, many refused.
        #expect(accepted > total / 20 && accepted < total - total / 20, "\(accepted) of \(total) accepted")
        print("XML parser differential: \(total) documents, \(accepted) read by both alike, \(refusedByMoultOnly) refused by Moult only, \(different) read otherwise")
    }
}

extension FuzzRandom {
    /// A number in `0..<bound`.
    mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
