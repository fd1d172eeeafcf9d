import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// Issue 40, item 3: one version that cannot be read (here a first version in Xcode 3's `elements`
/// format) stops only a migration that needs it, with bad input (65), not I/O (74); the other stores of
/// the model migrate, with a warning.
@Suite struct UnreadableVersionTests {
    static let model = Fixtures.packageRoot.appending(path: "Tests/ChainModels/Elements.xcdatamodeld")

    @Test func setAsideOnlyWhenAsked() throws {
        #expect {
            try VersionedModel(contentsOf: Self.model)
        } throws: { error in
            (error as? ModelError)?.code == .unsupportedFormat && (error as? ModelError)?.category == .badInput
                && "\(error)".contains("Xcode 3's format")
        }
        let lenient = try VersionedModel(contentsOf: Self.model, settingAsideUnreadableVersions: true)
        #expect(lenient.versions.map(\.name) == ["Elements 2", "Elements 3"])
        #expect(lenient.unreadableVersions.keys.sorted() == ["Elements"])
        #expect(lenient.currentVersionName == "Elements 3")
    }

    @Test func onlyAStepThatNeedsItIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", Self.model.appending(path: "Elements 2.xcdatamodel").path])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model.path, "--output", directory.appending("o.sqlite").path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardError.contains("moult: warning: version Elements of the model cannot be read, so no step goes through it"))
        // The target, or the store's own version, cannot be read: 65, saying why.
        let toIt = try MoultProcess.run(["plan", store.path, "--model", Self.model.path, "--to", "Elements"])
        #expect(toIt.exitCode == 65 && toIt.standardError.contains("Xcode 3's format"), "\(toIt.standardError)")
        let other = directory.appending("other.sqlite")
        let otherCreated = try MoultProcess.run([
            "create", other.path, "--model", Fixtures.packageRoot.appending(path: "Tests/ChainModels/Cyface.xcdatamodeld/3.xcdatamodel").path,
        ])
        #expect(otherCreated.exitCode == 0)
        let atNone = try MoultProcess.run(["migrate", other.path, "--model", Self.model.path, "--output", directory.appending("o2.sqlite").path])
        #expect(atNone.exitCode == 65, "\(atNone.standardError)")
        #expect(atNone.standardError.contains("no version of the model that can be read matches the store"), "\(atNone.standardError)")
        // `hash` reads every version: the one it cannot read is bad input (65), no longer I/O (74).
        let hashed = try MoultProcess.run(["hash", Self.model.path])
        #expect(hashed.exitCode == 65)
    }
}
