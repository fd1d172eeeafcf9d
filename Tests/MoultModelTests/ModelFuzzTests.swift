import Foundation
import MoultTestSupport
import Testing

@testable import MoultModel

/// Fuzzing the model readers: `.xcdatamodel/contents` (Xcode's model XML) and `.xccurrentversion`
/// (a property list). Every input must end as a model or a categorized error (exit 65 or 74): a crash
/// kills the test process, an uncategorized or internal error or an input slower than the fuzzer's
/// limit is a finding and fails the test.
///
/// The suite runs a seeded smoke; `MOULT_FUZZ_ITERATIONS=1000000` runs the long one (CONTRIBUTING.md,
/// "Fuzzing: model XML and .xccurrentversion").
@Suite struct ModelFuzzTests {
    /// Raised when a model that was read cannot be read back from what the writer makes of it.
    struct RoundTripFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every file with this name under the fixtures (the regressions included) and `Datasets/`.
    static func files(named names: Set<String>) -> [[UInt8]] {
        var result: [[UInt8]] = []
        for root in [Fixtures.root, Fixtures.datasets] {
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            var urls: [URL] = []
            while let url = enumerator?.nextObject() as? URL {
                if names.contains(url.lastPathComponent) { urls.append(url) }
            }
            for url in urls.sorted(by: { $0.path < $1.path }) {
                if let data = try? Data(contentsOf: url) { result.append(Array(data)) }
            }
        }
        return result
    }

    static let modelTokens = [
        "<model ", "</model>", "<entity ", "</entity>", "<attribute ", "<relationship ", "<fetchedProperty ", "<fetchRequest ",
        "<fetchIndex ", "<fetchIndexElement ", "</fetchIndex>", "<uniquenessConstraints>", "<uniquenessConstraint>",
        "<constraint value=\"", "<userInfo>", "<entry key=\"", "<configuration ", "<memberEntity name=\"", "<elements>",
        "<element ", "name=\"", "parentEntity=\"", "attributeType=\"", "destinationEntity=\"", "inverseName=\"",
        "inverseEntity=\"", "toMany=\"YES\"", "ordered=\"YES\"", "optional=\"YES\"", "transient=\"YES\"", "isAbstract=\"YES\"",
        "minCount=\"", "maxCount=\"", "deletionRule=\"Cascade\"", "defaultValueString=\"", "defaultDateTimeInterval=\"",
        "versionHashModifier=\"", "elementID=\"", "derived=\"YES\"", "derivationExpression=\"", "Integer 16", "Integer 64",
        "Double", "Decimal", "Date", "Binary", "Transformable", "UUID", "URI", "Boolean", "String", "Undefined",
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>", "encoding=\"", "<!DOCTYPE ", "<!ENTITY ", "<!ELEMENT ",
        "<!ATTLIST ", "<!NOTATION ", "<![CDATA[", "]]>", "<!--", "-->", "<?", "?>", "&amp;", "&lt;", "&#x", "&#", ";", "\"",
        "'", "/>", ">", "<", "=", "YES", "NO", "-1", "99999999999999999999", "1e309", "nan",
    ]

    static let plistTokens = [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"x\">",
        "<plist version=\"1.0\">", "</plist>", "<dict>", "</dict>", "<dict/>", "<key>", "</key>", "_XCCurrentVersionName",
        "<string>", "</string>", "<string/>", ".xcdatamodel", "<array>", "</array>", "<integer>", "</integer>", "<real>",
        "<data>", "<date>", "<true/>", "<false/>", "bplist00", "<!ENTITY ", "<![CDATA[", "]]>", "<!--", "-->", "&#x",
        "&amp;", "\u{0}", "\u{FEFF}",
    ]

    @Test func modelXML() throws {
        let corpus = Self.files(named: ["contents"])
        #expect(corpus.count > 30)
        let report = Fuzzer(name: "model XML", corpus: corpus, dictionary: Self.modelTokens).run(smokeIterations: 400) { bytes in
            if let debugPath = ProcessInfo.processInfo.environment["MOULT_FUZZ_DEBUG_LAST"] { try? Data(bytes).write(to: URL(filePath: debugPath)) }
            let model = try ObjectModel(xcodeContents: Data(bytes), path: "fuzz/contents")
            for name in model.entityNamesInByteOrder { _ = try? model.versionHash(ofEntity: name) }
            // What was read is written back and read again: the writer must give the reader what it accepts.
            do {
                _ = try ObjectModel(xcodeContents: Data(model.xcodeContents().utf8), path: "fuzz/written")
            } catch {
                throw RoundTripFailure(description: "read, written, then refused: \(error)")
            }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[65, default: 0] > 0 && report.exitCodes[0, default: 0] > 0, "\(report)")
    }

    @Test func currentVersionFile() throws {
        var corpus = Self.files(named: [".xccurrentversion"])
        #expect(corpus.count >= 5)
        corpus.append(Array("<plist version=\"1.0\"><dict/></plist>".utf8))
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "Model 2.xcdatamodel"], format: .binary, options: 0)
        corpus.append(Array(binary))
        let report = Fuzzer(name: ".xccurrentversion", corpus: corpus, dictionary: Self.plistTokens).run(smokeIterations: 400) { bytes in
            _ = try VersionedModel.currentVersionName(inPropertyList: Data(bytes), file: "fuzz/.xccurrentversion")
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[65, default: 0] > 0 && report.exitCodes[0, default: 0] > 0, "\(report)")
    }
}
