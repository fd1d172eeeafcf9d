import Foundation
import MoultMapping
import MoultModel
import MoultTestSupport
import Testing

@Suite struct JSONFormatTests {
    static let every: MappingModel = MappingModel(
        source: ModelReference(name: "v1", path: "Model.xcdatamodeld/v1.xcdatamodel", entityVersionHashes: ["Person": VersionHash(bytes: Array(0..<32))!]),
        destination: ModelReference(name: "v2")
    ) {
        EntityMapping(name: "PersonToPerson", type: .copy, source: "Person", destination: "Person", order: 1) {
            PropertyMapping("name", "$source.name")
        }
        EntityMapping(name: "NoneToPet", type: .add, source: nil, destination: "Pet", order: 2) {}
        EntityMapping(name: "RobotToNone", type: .remove, source: "Robot", destination: nil) {}
        EntityMapping(name: "PersonToAdult", type: .transform, source: "Person", destination: "Adult", filter: "age >= 18", userInfo: ["note": "a \"quoted\"\nline"]) {
            PropertyMapping("size", "$source.#size", userInfo: ["k": "v"])
            PropertyMapping("celsius", "($source.temperature - 32.0) / 1.8")
            PropertyMapping("nickname")
            Relationship("trades", mapping: "TradeToTrade", sourceKeyPath: "trades")
        }
        EntityMapping(name: "AdultToCompany", type: .custom, source: "Adult", destination: "Company", policy: "AdultToCompanyPolicy") {}
        EntityMapping(name: "XToY", type: .undefined, source: "X", destination: "Y") {}
    }

    @Test func roundTripIsLossless() throws {
        let text = Self.every.jsonText()
        let read = try MappingModel(json: Data(text.utf8))
        #expect(read == Self.every)
        #expect(read.jsonText() == text)
    }

    @Test func fixtureMappingsRoundTrip() throws {
        for file in RecordedMappings.files {
            let mapping = try MappingModel(xcmappingModelAt: Fixtures.url(file))
            #expect(try MappingModel(json: mapping.jsonData()) == mapping, "\(file)")
        }
    }

    @Test func writtenFormIsReadable() {
        let text = Self.every.jsonText()
        #expect(text.contains(#"{ "name": "nickname" }"#))
        #expect(text.contains(#""filter": "age >= 18""#))
        #expect(text.hasPrefix("{\n  \"format\": \"moult-mapping/1\""))
    }

    private func error(_ json: String) -> MappingError? {
        do {
            _ = try MappingModel(json: Data(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func errorsNameTheJSONPath() {
        let badType = error(#"{"entityMappings": [{"name": "A", "type": "copy"}, {"name": "B", "type": "mutate"}]}"#)
        #expect(badType?.path == "$.entityMappings[1].type")
        #expect(badType?.message.contains("'mutate'") == true)
        let missingName = error(#"{"entityMappings": [{"type": "copy", "attributes": [{"value": "$source.x"}]}]}"#)
        #expect(missingName?.code == .malformedJSON)
        #expect(missingName?.path == "$.entityMappings[0]" || missingName?.path == "$.entityMappings[0].attributes[0]")
        let unknownKey = error(#"{"entityMappings": [{"name": "A", "type": "copy", "fliter": "x"}]}"#)
        #expect(unknownKey?.path == "$.entityMappings[0].fliter")
        let wrongKind = error(#"{"entityMappings": [{"name": "A", "type": "copy", "order": "first"}]}"#)
        #expect(wrongKind?.path == "$.entityMappings[0].order")
        let badHash = error(#"{"source": {"entityVersionHashes": {"Person": "xyz"}}, "entityMappings": []}"#)
        #expect(badHash?.path == "$.source.entityVersionHashes.Person")
        let notJSON = error("{ nope")
        #expect(notJSON?.code == .malformedJSON)
        let badFormat = error(#"{"format": "moult-mapping/9", "entityMappings": []}"#)
        #expect(badFormat?.path == "$.format")
    }
}
