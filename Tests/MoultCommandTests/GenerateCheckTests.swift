import Foundation
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
