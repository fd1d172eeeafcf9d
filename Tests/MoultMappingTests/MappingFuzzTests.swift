import Foundation
@testable import MoultMapping
import MoultTestSupport
import Testing

/// Fuzzing of the mapping readers, with the real mapping models as corpus: Xcode's `xcmapping.xml`
/// (XML store, archived expressions, embedded models), the archived expressions alone, and Moult's
/// JSON format. Every input must end in a mapping model or a categorized error (exit code 65 here),
/// never a trap, an uncategorized error or a hang. `MOULT_FUZZ_ITERATIONS` and `MOULT_FUZZ_SEED`
/// make a long run (CONTRIBUTING.md).
@Suite struct MappingFuzzTests {
    /// The fixture mapping models small enough to seed a fuzzer (all but XCServerCoreData's two).
    static var seedFiles: [String] { RecordedMappings.files.filter { Fixtures.isFuzzSeed(Fixtures.url($0)) } }

    static var xcmappingFiles: [[UInt8]] {
        seedFiles.compactMap { try? Array(Data(contentsOf: Fixtures.url($0))) }
    }

    /// Every `valueexpressiondata` and `userinfodata` archive of the fixture mapping models.
    static var expressionArchives: [[UInt8]] {
        seedFiles.flatMap { file -> [[UInt8]] in
            let text = (try? String(contentsOf: Fixtures.url(file), encoding: .utf8)) ?? ""
            return ["valueexpressiondata", "userinfodata"].flatMap { name in
                text.components(separatedBy: "<attribute name=\"\(name)\" type=\"binary\">").dropFirst().compactMap { part in
                    part.components(separatedBy: "</attribute>").first.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }.map(Array.init)
                }
            }
        }
    }

    /// Moult's JSON format: the People mappings and every fixture mapping model converted.
    static var jsonMappings: [[UInt8]] {
        let people = (1...4).compactMap { try? Array(Data(contentsOf: Fixtures.datasets.appending(path: "People/Mappings/v\($0)-to-v\($0 + 1).json"))) }
        let converted = seedFiles.compactMap { file in
            (try? MappingModel(xcmappingModelAt: Fixtures.url(file)))?.jsonText()
        }
        return people + converted.map { Array($0.utf8) }
    }

    @Test func corporaAreTheFixtures() {
        #expect(Self.xcmappingFiles.count == 20)
        #expect(Self.expressionArchives.count >= 8)
        #expect(Self.jsonMappings.count == 24)
    }

    @Test func xcmappingReaderNeverTrapsOrHangs() {
        let dictionary = [
            "<object type=\"XDDEVENTITYMAPPING\" id=\"z9\">", "</object>", "idrefs=\"", "<attribute name=\"", "type=\"binary\">",
            "</attribute>", "mappingtypename", "mappingnumber", "valueexpressiondata", "sourcemodeldata", "&lt;", "&#x0;", "YnBsaXN0MDA",
        ]
        let report = Fuzzer(name: "xcmapping.xml", corpus: Self.xcmappingFiles, dictionary: dictionary).run(smokeIterations: 200) { bytes in
            _ = try MappingModel(xcmappingXML: Data(bytes))
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= Self.xcmappingFiles.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    @Test func archivedExpressionReaderNeverTrapsOrHangs() {
        let dictionary = ["NSKeyPathExpression", "NSFunctionExpression", "NSOperand", "NSArguments", "NS.objects", "$source", "\u{81}"]
        let report = Fuzzer(name: "archived expression", corpus: Self.expressionArchives, dictionary: dictionary).run(smokeIterations: 300) { bytes in
            let archive = try ArchivedExpression(archive: bytes)
            do {
                _ = try archive.text()
            } catch {
                _ = try archive.stringDictionary()
            }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= Self.expressionArchives.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }

    @Test func jsonReaderNeverTrapsOrHangs() {
        let dictionary = [
            "\"entityMappings\"", "\"type\"", "\"transform\"", "\"attributes\"", "\"value\"", "\"entityVersionHashes\"", "null", "[]", "{}",
            "\\u0000", "\\ud800", "1e999",
        ]
        let report = Fuzzer(name: "JSON mapping", corpus: Self.jsonMappings, dictionary: dictionary).run(smokeIterations: 300) { bytes in
            let mapping = try MappingModel(json: Data(bytes))
            // What reads must write and read back to the same mapping.
            let again = try MappingModel(json: mapping.jsonData())
            if again != mapping { throw MappingRoundTripMismatch() }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= Self.jsonMappings.count)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}

/// A JSON mapping that read back different after a write: a finding (uncategorized on purpose).
struct MappingRoundTripMismatch: Error {}
