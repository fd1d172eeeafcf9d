import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 39, item 4: generated stores obey their model (required one-to-ones on both sides, to-many
/// minimum and maximum counts, uniqueness), and `moult generate --check` says so, or names what fails.
@Suite struct GenerateCheckTests {
    static let rooms = Fixtures.packageRoot.appending(path: "Tests/GeneratorModels/Rooms.xcdatamodeld").path

    /// 40 objects over 3 entities once gave 14 rooms and 13 keys (a room without its required key), and
    /// rooms with one item of a minimum two.
    @Test(arguments: [7, 40, 41, 100])
    func aStoreOfAModelWithCardinalitiesKeepsThem(objects: Int) throws {
        let folder = try TemporaryDirectory("generate-check")
        defer { folder.remove() }
        let result = try MoultProcess.run(["generate", folder.appending("g.sqlite").path, "--model", Self.rooms, "--objects", String(objects), "--check"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("checked: the store keeps every rule of its version"), "\(result.standardOutput)")
    }

    static let clubs = Fixtures.packageRoot.appending(path: "Tests/GeneratorModels/Clubs.xcdatamodeld").path

    /// A many-to-many with counts on both sides (Person.clubs 2 to 4, Club.members at most 5) once left
    /// persons with one club; unique strings with a pattern once all took the same fallback value.
    @Test(arguments: [5, 12, 30, 101, 333])
    func aStoreOfAModelWithCountsOnBothSidesAndPatternsKeepsThem(objects: Int) throws {
        let folder = try TemporaryDirectory("generate-check")
        defer { folder.remove() }
        for seed in ["1", "2"] {
            let store = folder.appending("g\(seed).sqlite")
            let result = try MoultProcess.run(["generate", store.path, "--model", Self.clubs, "--objects", String(objects), "--seed", seed, "--check"])
            #expect(result.exitCode == 0, "\(objects) objects, seed \(seed): \(result.standardError)")
            #expect(result.standardOutput.contains("checked: the store keeps every rule of its version"), "\(result.standardOutput)")
        }
    }

    /// The model pairs of `moult generate-models` carry the rules (constraints, patterns, required
    /// to-ones, counts), and the generator keeps them in both versions of every pair.
    @Test func modelPairsCarryRulesThatGeneratedStoresKeep() throws {
        let folder = try TemporaryDirectory("generate-check")
        defer { folder.remove() }
        let count = 16
        #expect(try MoultProcess.run(["generate-models", folder.url.path, "--count", String(count), "--seed", "3"]).exitCode == 0)
        var seen: [String: Int] = [:]
        for pair in 0..<count {
            let model = folder.appending("Pair\(pair).xcdatamodeld")
            for version in ["v1", "v2"] {
                let contents = try String(contentsOf: model.appending(path: "\(version).xcdatamodel/contents"), encoding: .utf8)
                for feature in ["<uniquenessConstraint>", "regularExpressionString", "minCount"] where contents.contains(feature) {
                    seen[feature, default: 0] += 1
                }
                // A required to-one: written without optional="YES".
                let requiredToOne = contents.split(separator: "\n").contains {
                    $0.contains("<relationship ") && !$0.contains(#"optional="YES""#) && !$0.contains(#"toMany="YES""#)
                }
                if requiredToOne { seen["required to-one", default: 0] += 1 }
                let store = folder.appending("Pair\(pair)-\(version).sqlite")
                let result = try MoultProcess.run(
                    ["generate", store.path, "--model", model.path, "--model-version", version, "--objects", "45", "--seed", String(pair), "--check"])
                #expect(result.exitCode == 0, "pair \(pair) \(version): \(result.standardError)")
            }
        }
        for feature in ["<uniquenessConstraint>", "regularExpressionString", "minCount", "required to-one"] {
            #expect(seen[feature, default: 0] > 0, "no pair of the \(count) has \(feature)")
        }
    }

    /// An optional to-many may be empty whatever its minimum count (Core Data: "optional relationships
    /// may have zero objects"), not hold fewer than its minimum: Rooms' Room.items, 2 to 3.
    @Test func anOptionalToManyMayBeEmptyButNotUnderItsMinimum() throws {
        let folder = try TemporaryDirectory("generate-check")
        defer { folder.remove() }
        let model = try #require(try VersionedModel(contentsOf: URL(filePath: Self.rooms)).version(named: "v1")).model
        for (name, emptied, failures) in [("empty", "ZROOM = 1", 0), ("one", "Z_PK = (SELECT MIN(Z_PK) FROM ZITEM WHERE ZROOM = 1)", 1)] {
            let url = folder.appending("\(name).sqlite")
            #expect(try MoultProcess.run(["generate", url.path, "--model", Self.rooms, "--objects", "30"]).exitCode == 0)
            let store = try SQLiteStore(url: url, model: model, mode: .readWrite)
            #expect(try store.database.query("SELECT COUNT(*) FROM ZITEM WHERE ZROOM = 1") { $0.int64(at: 0) } == [2])
            try store.database.execute("UPDATE ZITEM SET ZROOM = NULL WHERE \(emptied)")
            store.database.close()
            let verified = try MoultProcess.run(["verify", url.path, url.path, "--model", Self.rooms])
            #expect(verified.standardOutput.contains("\(failures) failure(s)"), "\(name): \(verified.standardOutput)")
            #expect(verified.exitCode == (failures == 0 ? 0 : 67), "\(name): \(verified.standardError)")
        }
    }

    /// A rule broken on purpose is not a failure of the check; any other would be.
    @Test func theRuleBrokenOnPurposeIsExpected() throws {
        let folder = try TemporaryDirectory("generate-check")
        defer { folder.remove() }
        let model = Fixtures.datasets.appending(path: "Everything/Everything.xcdatamodeld").path
        let rules = try MoultProcess.run(["generate", "--list-rules", "--model", model, "--model-version", "v1"])
        let line = try #require(rules.standardOutput.split(separator: "\n").first { $0.hasSuffix("Book.pages maximum") })
        let result = try MoultProcess.run(
            ["generate", folder.appending("g.sqlite").path, "--model", model, "--model-version", "v1", "--objects", "60",
             "--break-rule", String(line.split(separator: " ")[0]), "--check"])
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("checked: the store keeps every rule of its version but the one it breaks on purpose"), "\(result.standardOutput)")
    }
}
