import Foundation
import MoultTestSupport
import Testing

/// The shared regression cases of the XML store, each run as its `cmd.sh` is written (in a scratch copy,
/// with the test build's `moult`), checked against what its `expected.txt` says.
@Suite(.serialized) struct XMLRegressionCaseTests {
    /// The line of the output that begins with `prefix` (after spaces), or "" when there is none.
    static func line(_ run: RegressionCase.Run, startingWith prefix: String) -> String {
        run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(prefix) } ?? ""
    }

    @Test func smallDoublesFloatsAndDecimalsComeBackIdentical() throws {
        let run = try RegressionCase("faults", "xml-small-doubles-become-zero").run()
        defer { run.remove() }
        #expect(run.output.contains("to xml: exit 0"), "\(run.output)")
        #expect(run.output.contains("back: exit 0"), "\(run.output)")
        // "  source (6.62607015e-34, 1e-45, 1e-130)  after SQLite->XML->SQLite (6.62607015e-34, 1e-45, 1e-130)"
        let pairs = run.lines(containing: "after SQLite->XML->SQLite")
        #expect(pairs.count == 5, "\(run.output)")
        for pair in pairs {
            let parts = pair.components(separatedBy: "after SQLite->XML->SQLite")
            let source = parts[0].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "source ", with: "")
            #expect(source == parts[1].trimmingCharacters(in: .whitespaces), "\(pair)")
        }
        #expect(pairs.first?.contains("(6.62607015e-34, 1e-45, 1e-130)") == true, "\(run.output)")
        #expect(run.output.contains("5e-324") && run.output.contains("2.2250738585072014e-308") && run.output.contains("1e-21"))
    }

    @Test func aStringXMLCannotCarryIsRefusedBeforeAnythingIsWritten() throws {
        let run = try RegressionCase("faults", "xml-nul-in-string-unreadable-output").run()
        defer { run.remove() }
        #expect(run.output.contains("convert --to xml: exit 65"), "\(run.output)")
        let work = run.scratch.appending(path: "w")
        let left = try FileManager.default.contentsOfDirectory(atPath: work.path)
        #expect(!left.contains("t.xml") && !left.contains { $0.contains("moult-tmp") }, "\(left)")
        // Whatever migrate writes, Moult reads back: a refusal (65), or exit 0 and a store inspect reads.
        let migrate = Self.line(run, startingWith: "generated store, migrate --output-type xml: exit")
        let inspect = Self.line(run, startingWith: "inspect of that XML store: exit")
        #expect(migrate.hasSuffix("exit 65") || (migrate.hasSuffix("exit 0") && inspect.hasSuffix("exit 0")), "\(run.output)")
        if migrate.hasSuffix("exit 65") { #expect(!left.contains("e.xml")) }
    }

    @Test func aDocumentTypeDeclarationWithAnInternalSubsetIsRefused() throws {
        let run = try RegressionCase("faults", "xml-doctype-quote-parser-differential").run()
        defer { run.remove() }
        #expect(run.output.contains("expat reads 5 objects"), "\(run.output)")
        #expect(run.output.contains("moult convert: exit 65"), "\(run.output)")
    }

    @Test func danglingReferencesAndDuplicateIdsAreRefusedNamingThem() throws {
        let run = try RegressionCase("faults", "xml-dangling-and-duplicate-ids").run()
        defer { run.remove() }
        #expect(run.output.contains("dangling to-one: convert exit 65"), "\(run.output)")
        let duplicate = Self.line(run, startingWith: "duplicate id: convert exit")
        #expect(duplicate.hasPrefix("duplicate id: convert exit 65"), "\(run.output)")
        #expect(duplicate.contains("used twice") && !duplicate.contains("moult-tmp") && !duplicate.contains("UNIQUE"), "\(duplicate)")
        // No store is left: the Person -> Address line reads nothing (sqlite3 finds no table).
        #expect(!Self.line(run, startingWith: "dangling to-one").contains("999"), "\(run.output)")
    }

    @Test func bothOrdersOfAnOrderedManyToManyAndEveryKeyComeBack() throws {
        let run = try RegressionCase("fidelity", "xml-ordered-many-to-many-order-lost").run()
        defer { run.remove() }
        let parts = run.output.components(separatedBy: "back:")
        #expect(parts.count == 2, "\(run.output)")
        let source = parts[0].components(separatedBy: "source:").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let back = parts[1].trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(source == "1|1|1|2\n1|2|2|3\n1|3|2|1\n2|2|1|1\n2|3|1|2", "\(run.output)")
        #expect(back == source, "\(run.output)")
    }

    @Test func externalBinaryDataIsCarriedInlineAndBack() throws {
        let run = try RegressionCase("faults", "convert-xml-loses-external-data").run()
        defer { run.remove() }
        #expect(run.output.contains("convert --to xml: exit 0"), "\(run.output)")
        let values = run.lines(containing: "XML value:")
        #expect(values.count == 2, "\(run.output)")
        #expect(values.contains { $0.hasSuffix("XML value: b'inline'") }, "\(values)")
        #expect(!values.contains { $0.contains("AAAAAAAA-0000") || $0.contains("b'\\x01") }, "\(values)")
        #expect(run.output.contains("convert back: exit 0"), "\(run.output)")
        // The file's 4,096 bytes, in the XML and back in SQLite.
        let work = run.scratch.appending(path: "w")
        let file = try Data(contentsOf: work.appending(path: ".s_SUPPORT/_EXTERNAL_DATA/AAAAAAAA-0000-4000-8000-000000000001"))
        let xml = try String(contentsOf: work.appending(path: "c.xml"), encoding: .utf8)
        #expect(xml.replacingOccurrences(of: "\n", with: "").contains(file.base64EncodedString()))
        // Back in SQLite, the 4 KiB value is a file again (under a new name), the small one in its row.
        let folder = work.appending(path: ".back_SUPPORT/_EXTERNAL_DATA")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == 1)
        #expect(try files.first.map { try Data(contentsOf: folder.appending(path: $0)) } == file)
        #expect(run.output.contains("1 reference(s) in the store, 0 with no file"), "\(run.output)")
        // `migrate --output-type xml` carries the file's bytes into its XML store too, and `verify` of it
        // passes: the values are compared by their bytes, not by the names of their files.
        #expect(run.output.contains("migrate --output-type xml: exit 0"), "\(run.output)")
        #expect(run.output.contains("verify of it: exit 0"), "\(run.output)")
        let migrated = try String(contentsOf: work.appending(path: "d.xml"), encoding: .utf8)
        #expect(migrated.replacingOccurrences(of: "\n", with: "").contains(file.base64EncodedString()))
    }
}
