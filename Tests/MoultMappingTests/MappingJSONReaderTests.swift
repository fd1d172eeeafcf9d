import Foundation
@testable import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

/// The reader of JSON mappings' bytes (`MappingJSONReader`) against Foundation's `JSONDecoder`, which
/// `MappingModel(json:)` used alone before: every document the reader takes, the decoder reads to the
/// same mapping model; every document it leaves (anything malformed among them) is the decoder's, with
/// the decoder's error, path and message.
@Suite struct MappingJSONReaderTests {
    /// The repository's JSON mappings (the People dataset, the chain models' and the regression
    /// fixtures'), every fixture Xcode mapping model written as JSON, and one with every field.
    static var documents: [(label: String, bytes: [UInt8])] {
        let root = Fixtures.packageRoot
        let files = [
            "Datasets/People/Mappings/v1-to-v2.json", "Datasets/People/Mappings/v2-to-v3.json", "Datasets/People/Mappings/v3-to-v4.json",
            "Datasets/People/Mappings/v4-to-v5.json", "Datasets/People/BuiltinPolicy/v4-to-v5.json", "Tests/ChainModels/Cyface-CyfaceModel-to-2.json",
            "Tests/ChainModels/Regions-r1-to-r2.json", "Tests/Fixtures/regressions/mappings/json_filter_and_chain/mapping.json",
            "Tests/Fixtures/regressions/mappings/json_long_keypath_segv/mapping.json",
            "Tests/Fixtures/regressions/mappings/json_long_keypath_slow/mapping.json",
        ]
        let read = files.compactMap { file in (try? Data(contentsOf: root.appending(path: file))).map { (file, Array($0)) } }
        let converted = RecordedMappings.files.compactMap { file in
            (try? MappingModel(xcmappingModelAt: Fixtures.url(file))).map { ("\(file) as JSON", Array($0.jsonText().utf8)) }
        }
        return read + converted + [("every field", Array(JSONFormatTests.every.jsonText().utf8))]
    }

    @Test func readsTheRepositorysMappingsAsTheDecoderDoes() throws {
        let documents = Self.documents
        // 10 files, each mapping model of the fixtures (`RecordedMappings`) as JSON, and one with every field.
        #expect(documents.count == 11 + RecordedMappings.files.count)
        for (label, bytes) in documents {
            let read = try #require(MappingJSONReader.model(in: Data(bytes)), "\(label)")
            #expect(try MappingModel.decoded(json: Data(bytes)) == read, "\(label)")
        }
    }

    /// Written by hand, as people write them: other spacing, keys in another order, escapes, an
    /// empty object or array, integers.
    @Test func readsOtherSpellingsOfTheSameDocument() throws {
        let texts = [
            #"{"entityMappings":[]}"#,
            "\t{ \"entityMappings\" : [ ] , \"format\" : \"moult-mapping/1\" }\r\n",
            #"{"entityMappings": [{"type": "copy", "name": "A\u00e9\ud83d\ude00\n\"\\\/", "order": -12, "source": "A", "destination": "A"}], "inferRest": false}"#,
            #"{"source": {}, "destination": {"name": "v2", "path": "M.xcdatamodeld/v2.xcdatamodel"}, "entityMappings": [{"name": "B", "type": "transform", "source": "B", "destination": "B", "attributes": [{"value": "$source.x", "name": "x", "userInfo": {}}], "relationships": [], "userInfo": {"k": "é", "e\u0301x": "y"}}], "inferRest": true}"#,
            #"{"entityMappings": [{"name": "C", "type": "custom", "order": 0, "policy": "P", "builtinPolicy": "unique(key: x)", "filter": "x > 1"}]}"#,
        ]
        for text in texts {
            let read = try #require(MappingJSONReader.model(in: Data(text.utf8)), "\(text)")
            #expect(try MappingModel.decoded(json: Data(text.utf8)) == read, "\(text)")
        }
    }

    /// Documents the reader leaves to the decoder: malformed ones get the decoder's error; the others
    /// (an escaped key, a null, a number written otherwise) read as the decoder reads them.
    @Test func leavesEverythingElseToTheDecoder() {
        let texts = [
            "", "{", "{ nope", "[]", "null", "\u{FEFF}{\"entityMappings\": []}", #"{"entityMappings": []} x"#, #"{"entityMappings": [],}"#,
            #"{"entityMappings": [], "entityMappings": []}"#, #"{"format": "moult-mapping/9", "entityMappings": []}"#,
            #"{"format": null, "entityMappings": []}"#, #"{"entityMappings": null}"#, #"{"entityM\u0061ppings": []}"#, #"{"inferRest": 1, "entityMappings": []}"#,
            #"{"entityMappings": [{"name": "A", "type": "mutate"}]}"#, #"{"entityMappings": [{"name": "A", "type": "copy", "fliter": "x"}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "order": "first"}]}"#, #"{"entityMappings": [{"name": "A", "type": "copy", "order": 1.0}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "order": 1e2}]}"#, #"{"entityMappings": [{"name": "A", "type": "copy", "order": 01}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "order": 9223372036854775808}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "order": -}]}"#, #"{"entityMappings": [{"type": "copy"}]}"#,
            #"{"entityMappings": [{"name": "A\ud800", "type": "copy"}]}"#, #"{"entityMappings": [{"name": "A\x", "type": "copy"}]}"#,
            "{\"entityMappings\": [{\"name\": \"A\u{1}\", \"type\": \"copy\"}]}",
            #"{"entityMappings": [{"name": "A", "type": "copy", "userInfo": {"k": "a", "k": "b"}}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "userInfo": {"é": "a", "e\u0301": "b"}}]}"#,
            #"{"entityMappings": [{"name": "A", "type": "copy", "attributes": [{"value": "$source.x"}]}]}"#,
            #"{"source": {"entityVersionHashes": {"Person": "xyz"}}, "entityMappings": []}"#,
            #"{"source": {"entityVersionHashes": null}, "entityMappings": []}"#,
        ]
        for text in texts {
            #expect(MappingJSONReader.model(in: Data(text.utf8)) == nil, "\(text)")
            #expect(Self.outcome(of: Array(text.utf8)) == Self.decoderOutcome(of: Array(text.utf8)), "\(text)")
        }
        // Not UTF-8 in a string.
        let bytes = Array(#"{"entityMappings": [{"name": "A"#.utf8) + [0xFF] + Array(#"", "type": "copy"}]}"#.utf8)
        #expect(MappingJSONReader.model(in: Data(bytes)) == nil)
        #expect(Self.outcome(of: bytes) == Self.decoderOutcome(of: bytes))
    }

    /// Mutated documents: whenever the reader takes one, the decoder reads it to the same mapping model;
    /// `MappingModel(json:)` ends as the decoder alone does. A mismatch is an uncategorized finding.
    @Test func agreesWithTheDecoderOnMutatedDocuments() {
        let dictionary = [
            "\"entityMappings\"", "\"attributes\"", "\"userInfo\"", "\"order\"", "\"type\"", "\"copy\"", "null", "[]", "{}", "{\"k\": \"v\"}", ",", ":",
            "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\u0000", "\\/", "\\\"", "é", "e\u{301}", "\u{212A}", "-0", "01", "1.0", "1e2", "-",
            "9223372036854775807", "9223372036854775808", "\"order\": 3, ", "\"name\": \"x\", ", "\"n\\u0061me\"", " ", "\t", "\r\n", "\u{FEFF}",
        ]
        let corpus = Self.documents.map(\.bytes)
        var taken = 0
        let report = Fuzzer(name: "JSON mapping reader", corpus: corpus, dictionary: dictionary).run(smokeIterations: 2_000) { bytes in
            let decoded = Self.decoderOutcome(of: bytes)
            if let read = MappingJSONReader.model(in: Data(bytes)) {
                taken += 1
                guard case .success(let model) = decoded, model == read else { throw ReaderDisagrees(detail: "\(decoded)") }
            }
            guard Self.outcome(of: bytes) == decoded else { throw ReaderDisagrees(detail: "MappingModel(json:) differs") }
            if case .failure(let error) = decoded { throw error }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.findingCount == 0)
        #expect(taken > corpus.count)
        #expect(report.exitCodes[65, default: 0] > 0)
    }

    static func outcome(of bytes: [UInt8]) -> Result<MappingModel, MappingError> {
        Result { () throws(MappingError) in try MappingModel(json: Data(bytes)) }
    }

    static func decoderOutcome(of bytes: [UInt8]) -> Result<MappingModel, MappingError> {
        Result { () throws(MappingError) in try MappingModel.decoded(json: Data(bytes)) }
    }
}

/// The reader took a document the decoder reads otherwise, or refuses (uncategorized on purpose: a finding).
private struct ReaderDisagrees: Error {
    var detail: String
}
