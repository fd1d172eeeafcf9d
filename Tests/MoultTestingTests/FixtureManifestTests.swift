import Foundation
import MoultModel
import MoultTestSupport
@testable import MoultTesting
import Testing

/// The checksum manifest of frozen fixtures: what reads, what is refused (with its line), a changed
/// fixture refused by name, and a fuzz harness on the shared `Fuzzer`.
@Suite struct FixtureManifestTests {
    static let hash = String(repeating: "ab", count: 32)
    static let valid = "moult-fixtures 1\n# a comment\n\(hash)\tCoreDataMigration_Example 2\tstore 2.sqlite\n\(hash)\tv1\t.v1_SUPPORT/_EXTERNAL_DATA/F00\n\(hash)\tv1\tv1.sqlite-wal\n"

    @Test func readsWhatItWritesAndListsTheStores() throws {
        let manifest = try FixtureManifest(bytes: Array(Self.valid.utf8), file: "m")
        #expect(manifest.entries.count == 3)
        #expect(manifest.stores.map(\.path) == ["store 2.sqlite"])
        #expect(manifest.stores.map(\.version) == ["CoreDataMigration_Example 2"])
        #expect(try FixtureManifest(bytes: Array(manifest.text.utf8), file: "m") == manifest)
    }

    @Test(arguments: [
        ("", "m:1: expected the header"),
        ("moult-fixtures 2\n", "m:1: expected the header"),
        ("moult-fixtures 1\n\(hash) v1 v1.sqlite\n", "m:2: expected 'SHA-256<tab>VERSION<tab>PATH'"),
        ("moult-fixtures 1\n\(hash.uppercased())\tv1\tv1.sqlite\n", "is not a SHA-256"),
        ("moult-fixtures 1\n\(hash)\t\tv1.sqlite\n", "m:2: the version is empty"),
        ("moult-fixtures 1\n\(hash)\tv1\t../v1.sqlite\n", "is not a path inside the fixtures folder"),
        ("moult-fixtures 1\n\(hash)\tv1\t/etc/passwd\n", "is not a path inside the fixtures folder"),
        ("moult-fixtures 1\n\(hash)\tv1\ta//b\n", "is not a path inside the fixtures folder"),
        ("moult-fixtures 1\n\(hash)\tv1\ta\n\(hash)\tv2\ta\n", "m:3: 'a' is listed twice"),
    ])
    func refusesWhatItCannotTrustWithTheLine(text: String, message: String) {
        #expect {
            _ = try FixtureManifest(bytes: Array(text.utf8), file: "m")
        } throws: { error in
            (error as? FixtureError).map { $0.description.contains(message) && $0.category == .badInput } ?? false
        }
    }

    @Test func refusesTextThatIsNotUTF8() {
        #expect(throws: FixtureError.self) { _ = try FixtureManifest(bytes: Array("moult-fixtures 1\n".utf8) + [0xFF, 0xFE], file: "m") }
    }

    @Test func namesAChangedOrMissingFixture() throws {
        let folder = try TemporaryDirectory("manifest")
        defer { folder.remove() }
        let file = folder.appending("v1.sqlite")
        try Data("store".utf8).write(to: file)
        let manifest = FixtureManifest(entries: [.init(sha256: try FixtureManifest.sha256(of: file), version: "v1", path: "v1.sqlite")])
        #expect(manifest.entries[0].sha256.count == 64)
        try manifest.check(in: folder.url)
        try Data("stork".utf8).write(to: file)
        #expect { try manifest.check(in: folder.url) } throws: { ($0 as? FixtureError)?.message.contains("fixture v1.sqlite (version v1) changed since it was frozen") ?? false }
        try FileManager.default.removeItem(at: file)
        #expect { try manifest.check(in: folder.url) } throws: { ($0 as? FixtureError)?.message.contains("cannot be read") ?? false }
    }

    /// A store in a subfolder is a store; its support folder's files are not.
    @Test func aStoreInASubfolderIsListedAsAStore() throws {
        let text = "moult-fixtures 1\n\(Self.hash)\tv1\t2024/v1.sqlite\n\(Self.hash)\tv1\t2024/.v1_SUPPORT/_EXTERNAL_DATA/F00\n"
        #expect(try FixtureManifest(bytes: Array(text.utf8), file: "m").stores.map(\.path) == ["2024/v1.sqlite"])
    }

    /// Nothing unlisted beside a fixture: a `-wal` (listed or not), a file in its support folder, a
    /// store nobody listed.
    @Test func refusesWhatIsBesideAFixtureUnlisted() throws {
        let folder = try TemporaryDirectory("manifest")
        defer { folder.remove() }
        let file = folder.appending("v1.sqlite")
        try Data("store".utf8).write(to: file)
        let manifest = FixtureManifest(entries: [.init(sha256: try FixtureManifest.sha256(of: file), version: "v1", path: "v1.sqlite")])
        try manifest.check(in: folder.url)
        let cases: [(String, String)] = [
            ("v1.sqlite-wal", "fixture v1.sqlite has a v1.sqlite-wal beside it"),
            (".v1_SUPPORT/_EXTERNAL_DATA/F00", ".v1_SUPPORT/_EXTERNAL_DATA/F00 is in a fixture's support folder"),
            ("sub/v2.sqlite", "sub/v2.sqlite is a store in the fixtures folder that fixtures.manifest does not list"),
        ]
        for (path, message) in cases {
            let extra = folder.appending(path)
            try FileManager.default.createDirectory(at: extra.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("x".utf8).write(to: extra)
            #expect { try manifest.check(in: folder.url) } throws: { ($0 as? FixtureError)?.message.contains(message) ?? false }
            try FileManager.default.removeItem(at: extra)
        }
        // A README beside the fixtures is no store: it is left alone.
        try Data("notes".utf8).write(to: folder.appending("README.md"))
        try manifest.check(in: folder.url)
        // A listed -wal is refused too: a fixture is one checkpointed file.
        let wal = folder.appending("v1.sqlite-wal")
        try Data("x".utf8).write(to: wal)
        let listed = FixtureManifest(entries: manifest.entries + [.init(sha256: try FixtureManifest.sha256(of: wal), version: "v1", path: "v1.sqlite-wal")])
        #expect { try listed.check(in: folder.url) } throws: { ($0 as? FixtureError)?.message.contains("a fixture is one checkpointed store file") ?? false }
    }

    @Test func manifestReaderNeverTrapsOrHangs() {
        let corpus = [Self.valid, "moult-fixtures 1\n", FixtureManifest(entries: [.init(sha256: Self.hash, version: "v 1", path: "a b")]).text].map { Array($0.utf8) }
        let dictionary = ["moult-fixtures 1", "\t", "\n", "\r\n", "#", "../", "/", "\u{0}", Self.hash, ".sqlite-wal", "_SUPPORT/_EXTERNAL_DATA/", "\u{FEFF}"]
        let report = Fuzzer(name: "fixture manifest", corpus: corpus, dictionary: dictionary).run(smokeIterations: 400) { bytes in
            let manifest = try FixtureManifest(bytes: bytes, file: "fuzz")
            // What reads must write and read back the same.
            let again = try FixtureManifest(bytes: Array(manifest.text.utf8), file: "fuzz")
            if again != manifest { throw FixtureError("round trip changed the manifest") }
        }
        for finding in report.findings { Issue.record(Comment(rawValue: finding)) }
        #expect(report.exitCodes[0, default: 0] >= 3)
        #expect(Set(report.exitCodes.keys).isSubset(of: [0, 65]))
    }
}
