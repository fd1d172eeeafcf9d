import MoultMapping
import MoultModel
import Testing

@testable import MoultMapping

/// The order of versions a chain follows, from the mapping models (issue 40, item 4).
@Suite struct VersionOrderTests {
    /// Versions named as a real app's are (`CyfaceModel`, `2`, …): each adds an attribute to `Track`, so
    /// every version has its own hashes. Listed in the names' order, which puts the first version last.
    static func cyface(_ count: Int = 4) throws -> VersionedModel {
        let names = ["CyfaceModel"] + (2...count).map(String.init)
        let versions = try names.enumerated().map { index, name in
            let attributes = (0...index).map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) }
            return VersionedModel.Version(name: name, model: try ObjectModel(entities: [EntityDescription(name: "Track", attributes: attributes)]))
        }
        return try VersionedModel(name: "Cyface", versions: versions.sorted { VersionedModel.naturalOrder($0.name, $1.name) }, currentVersionName: String(count))
    }

    static func mapping(_ from: String, _ to: String, in model: VersionedModel) throws -> MappingModel {
        try MappingModel.inference(from: from, to: to, in: model).mapping
    }

    static func names(_ model: VersionedModel) -> [String] { model.versions.map(\.name) }

    @Test func everyMappingGoesForwards() throws {
        let model = try Self.cyface()
        #expect(Self.names(model) == ["2", "3", "4", "CyfaceModel"])
        let all = try [("CyfaceModel", "2"), ("2", "3"), ("3", "4")].map { try Self.mapping($0, $1, in: model) }
        #expect(Self.names(VersionOrder.following(all, in: model)) == ["CyfaceModel", "2", "3", "4"])
        // One mapping is enough to place the first version; the rest keep the names' order.
        let one = try Self.mapping("CyfaceModel", "2", in: model)
        #expect(Self.names(VersionOrder.following([one], in: model)) == ["CyfaceModel", "2", "3", "4"])
        // A mapping that goes down (4 → 2) puts 4 before 2, the rest as late as names put them.
        let down = try Self.mapping("4", "2", in: model)
        #expect(Self.names(VersionOrder.following([down], in: model)) == ["4", "2", "3", "CyfaceModel"])
        // Mappings the names' order already follows change nothing.
        let forwards = try Self.mapping("2", "3", in: model)
        #expect(VersionOrder.following([forwards], in: model) == model)
        #expect(VersionOrder.following([], in: model) == model)
    }

    /// Mappings up and down (a folder with both) go round in a circle: the ones going backwards in the
    /// names' order are left out.
    @Test func aCircleKeepsTheForwardMappings() throws {
        let model = try Self.cyface()
        let mappings = try [("CyfaceModel", "2"), ("2", "CyfaceModel"), ("3", "4"), ("4", "3")].map { try Self.mapping($0, $1, in: model) }
        #expect(Self.names(VersionOrder.following(mappings, in: model)) == ["2", "3", "4", "CyfaceModel"])
    }

    @Test func explicitOrder() throws {
        let model = try Self.cyface()
        #expect(Self.names(try VersionOrder.explicit(["CyfaceModel", "2"], in: model)) == ["CyfaceModel", "2", "3", "4"])
        #expect(Self.names(try VersionOrder.explicit(["4.xcdatamodel", "3"], in: model)) == ["4", "3", "2", "CyfaceModel"])
        #expect(throws: MappingError.self) { try VersionOrder.explicit(["CyfaceModel", "5"], in: model) }
        #expect(throws: MappingError.self) { try VersionOrder.explicit(["2", "2"], in: model) }
    }

    /// Hundreds of versions, each mapped to the next, listed in the reverse of their order: ordered
    /// in one pass over the mappings (linear in versions × mappings, no inference).
    @Test func longHistories() throws {
        let count = 400
        let edges = (0..<(count - 1)).map { (from: count - 1 - $0, to: count - 2 - $0) }
        #expect(VersionOrder.linearOrder(count: count, edges: edges) == Array((0..<count).reversed()))
        #expect(VersionOrder.linearOrder(count: 3, edges: [(0, 1), (1, 2), (2, 0)]) == nil)
    }
}
