import Foundation
import MoultMapping
import MoultMigration
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

@testable import MoultMigration

/// Issue 40, item 4: a chain through a long history is a path found by trying inference only on the
/// edges the search explores (Benchmarks/scripts/long-history.py times `moult plan` on such a history;
/// the figures are in BENCHMARKS.md).
@Suite struct LongHistoryTests {
    /// `count` versions named as a real app's are (`History`, `2`, `3`, …): each adds an attribute to
    /// `Track`, and every tenth turns one the first version has from String into Integer 64, which no
    /// lightweight migration infers. In the names' order (the first version last), as a model folder lists them.
    static func history(_ count: Int) throws -> VersionedModel {
        let names = ["History"] + (2...count).map(String.init)
        let versions = try names.indices.map { index in
            var attributes = (0..<20).map { number in
                AttributeDescription(name: "b\(number)", type: number < index / 10 ? .integer64 : .string, isOptional: true)
            }
            attributes += (0..<index).map { AttributeDescription(name: "f\($0)", type: .string, isOptional: true) }
            return VersionedModel.Version(name: names[index], model: try ObjectModel(entities: [EntityDescription(name: "Track", attributes: attributes)]))
        }
        return try VersionedModel(
            name: "History", versions: versions.sorted { VersionedModel.naturalOrder($0.name, $1.name) }, currentVersionName: String(count))
    }

    /// The mapping of one retyping step (`b<n>` read as its integer value), naming its versions.
    static func retyping(_ index: Int, in model: VersionedModel) throws -> MappingModel {
        let from = index == 0 ? "History" : String(index + 1), to = String(index + 2)
        let source = model.version(named: from)!.model
        let retyped = "b\((index + 1) / 10 - 1)"
        let attributes = model.version(named: to)!.model.attributes(of: "Track").compactMap { attribute -> PropertyMapping? in
            guard source.attribute(named: attribute.name, of: "Track") != nil else { return nil }
            return PropertyMapping(
                attribute.name, attribute.name == retyped ? "FUNCTION($source.\(retyped), \"integerValue\")" : "$source.\(attribute.name)")
        }
        let entity = EntityMapping(name: "TrackToTrack", type: .transform, source: "Track", destination: "Track", attributes: attributes)
        return MappingModel(source: ModelReference(name: from), destination: ModelReference(name: to), entityMappings: [entity])
    }

    static func store(_ model: VersionedModel, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.appending("history.sqlite")
        let store = try SQLiteStore.create(at: url, model: model.version(named: "History")!.model)
        store.database.close()
        return url
    }

    /// 300 versions, the 29 retyping steps given as mappings (in no particular order), the rest
    /// inferred: the chain uses every mapping once and infers each stretch between two of them in one
    /// step; with one retyping mapping missing, it is refused naming the edge where it is stuck.
    @Test func aPathThroughThreeHundredVersions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let count = 300
        let unordered = try Self.history(count)
        let store = try Self.store(unordered, in: directory)
        let retypings = try stride(from: 9, to: count - 1, by: 10).map { try Self.retyping($0, in: unordered) }
        let given = retypings.reversed().map { $0 }
        // The mappings order 10, 11, … 300 (names would put 100 before 11); History, which none
        // names, is placed by hand (`--order History`), as names put it last.
        let model = try VersionOrder.explicit(["History"], in: VersionOrder.following(given, in: unordered))
        #expect(model.versions.map(\.name) == ["History"] + (2...count).map(String.init))
        let migration = try ProgressiveMigration(store: store, model: model, to: String(count), mappings: given)
        let steps = migration.steps
        #expect(steps.filter { !$0.inferred }.count == retypings.count)
        // Each stretch between two given mappings (and before the first, after the last): one inferred step.
        #expect(steps.filter(\.inferred).count == retypings.count + 1)
        #expect(steps.first?.from.name == "History" && steps.first?.to.name == "10" && steps.first?.inferred == true)
        #expect(steps[1].from.name == "10" && steps[1].to.name == "11" && !steps[1].inferred)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.to.name == $1.from.name })
        #expect(steps.last?.to.name == String(count))

        var missing = given
        missing.removeAll { $0.sourceModel.name == "150" }
        #expect {
            _ = try ProgressiveMigration(store: store, model: model, to: String(count), mappings: missing)
        } throws: { error in
            "\(error)".contains("no mapping model was given from 141 to 160") && "\(error)".contains("stuck at 150 → 151")
        }
    }

    /// No mapping at all, the order given by hand: the direct inference fails, the first stretch is
    /// found (History → 10), and the search is stuck at 10 → 11, where a String becomes an integer.
    @Test func withoutMappingsTheMissingEdgeIsNamed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let unordered = try Self.history(200)
        let store = try Self.store(unordered, in: directory)
        let model = try VersionOrder.explicit(["History"] + (2...200).map(String.init), in: unordered)
        #expect {
            _ = try ProgressiveMigration(store: store, model: model, to: "200")
        } throws: { error in
            "\(error)".contains("stuck at 10 → 11")
        }
        // Up to a version before the first retyping: one step straight across.
        let short = try ProgressiveMigration(store: store, model: model, to: "10")
        #expect(short.steps.map { "\($0.from.name)->\($0.to.name)" } == ["History->10"])
    }

    /// The search for the farthest version one inferred step reaches tries few edges: about 2 log₂ n on
    /// a history where every version up to a point is reachable; beyond an unreachable next version it
    /// goes on from the first reachable one (a change and its reversal).
    @Test func theSearchTriesFewEdges() {
        var tried: [(Int, Int)] = []
        let reach = ProgressiveMigration.farthestInferable(from: 0, toward: 999) { from, to in
            tried.append((from, to))
            return to <= 700
        }
        #expect(reach == 700)
        #expect(tried.count <= 2 * 10 + 2, "\(tried.count) edges tried")
        #expect(Set(tried.map { "\($0.0)-\($0.1)" }).count == tried.count)
        // The next version unreachable, the one after reachable (retyped, then retyped back).
        #expect(ProgressiveMigration.farthestInferable(from: 5, toward: 9) { _, to in to != 6 } == 9)
        // Backwards.
        #expect(ProgressiveMigration.farthestInferable(from: 9, toward: 0) { _, to in to >= 4 } == 4)
        #expect(ProgressiveMigration.farthestInferable(from: 3, toward: 9) { _, _ in false } == nil)
    }
}
