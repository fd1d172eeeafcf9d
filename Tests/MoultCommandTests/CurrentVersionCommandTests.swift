import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// `.xccurrentversion` from the command line (issue 10, item 8): Xcode's `<dict/>` is no error and the
/// output says which version was taken; a bad file never stops `hash`, or a command given the version.
@Suite struct CurrentVersionCommandTests {
    static func contents(_ attributes: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Item" representedClassName="Item" syncable="YES">
                \(attributes)
            </entity>
        </model>
        """
    }

    /// `Small.xcdatamodeld` with v1 (title) and v2 (title, optional note), and this `.xccurrentversion`.
    static func bundle(in directory: TemporaryDirectory, currentVersion: String) throws -> URL {
        let url = directory.appending("Small.xcdatamodeld")
        let versions = [
            "v1": #"<attribute name="title" optional="YES" attributeType="String"/>"#,
            "v2": #"<attribute name="title" optional="YES" attributeType="String"/><attribute name="note" optional="YES" attributeType="String"/>"#,
        ]
        for (name, attributes) in versions {
            let folder = url.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(contents(attributes).utf8).write(to: folder.appending(path: "contents"))
        }
        try setCurrentVersion(currentVersion, in: url)
        return url
    }

    static func setCurrentVersion(_ body: String, in bundle: URL) throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            \(body)
            </plist>
            """
        try Data(plist.utf8).write(to: bundle.appending(path: ".xccurrentversion"))
    }

    @Test func anEmptyDictionaryTakesTheLastVersionAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = try Self.bundle(in: directory, currentVersion: "<dict/>")
        let hash = try MoultProcess.run(["hash", bundle.path])
        #expect(hash.exitCode == 0, "\(hash.standardError)")
        #expect(hash.standardOutput.contains("v2 (current)"))
        #expect(hash.standardOutput.contains("current version: v2 (.xccurrentversion names no version (no _XCCurrentVersionName): the last version, 'v2', is taken as current)"), "\(hash.standardOutput)")
        let json = try MoultProcess.run(["hash", bundle.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect((object["currentVersionNote"] as? String)?.contains("the last version, 'v2'") == true)

        let store = directory.appending("s.sqlite")
        let create = try MoultProcess.run(["create", store.path, "--model", bundle.path])
        #expect(create.exitCode == 0, "\(create.standardError)")
        #expect(create.standardOutput.contains("version v2; .xccurrentversion names no version"), "\(create.standardOutput)")
        // migrate and plan without --to take the same version, and say so on standard error.
        for command in ["plan", "migrate"] {
            let arguments = [command, store.path, "--model", bundle.path] + (command == "migrate" ? ["--output", directory.appending("o.sqlite").path] : [])
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 0, "\(command): \(result.standardError)")
            #expect(result.standardOutput.contains("already at version v2"), "\(command): \(result.standardOutput)")
            #expect(result.standardError.contains("moult: note: .xccurrentversion names no version (no _XCCurrentVersionName): the last version, 'v2', is taken as current"), "\(command): \(result.standardError)")
        }
    }

    @Test func aBadFileDoesNotStopHashOrACommandGivenTheVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bundle = try Self.bundle(in: directory, currentVersion: "<dict><key>_XCCurrentVersionName</key><string>v1.xcdatamodel</string></dict>")
        let store = directory.appending("v1.sqlite")
        #expect(try MoultProcess.run(["create", store.path, "--model", bundle.path]).exitCode == 0)
        // Now the file is broken: not a property list, and not UTF-8.
        try Data([0x3C, 0x70, 0xFF, 0xFE] + Array("<dict/>".utf8)).write(to: bundle.appending(path: ".xccurrentversion"))

        let hash = try MoultProcess.run(["hash", bundle.path, "--json"])
        #expect(hash.exitCode == 0, "\(hash.standardError)")
        #expect(hash.standardOutput.contains("is not UTF-8"), "\(hash.standardOutput)")
        let plan = try MoultProcess.run(["plan", store.path, "--model", bundle.path, "--to", "v2"])
        #expect(plan.exitCode == 0, "\(plan.standardError)")
        #expect(!plan.standardError.contains(".xccurrentversion"), "\(plan.standardError)")

        // Without the version, the current one is needed: the file's problem is the error.
        for arguments in [["plan", store.path, "--model", bundle.path], ["create", directory.appending("x.sqlite").path, "--model", bundle.path]] {
            let result = try MoultProcess.run(arguments)
            #expect(result.exitCode == 65, "\(arguments[0]): \(result.standardError)")
            #expect(result.standardError.contains("Small.xcdatamodeld/.xccurrentversion:1: invalid UTF-8: byte 2"), "\(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("x.sqlite").path))
    }

    @Test func aSubEntityListingAnInheritedManyToManyAgainGetsOneJoinTable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tags = #"<relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="owners" inverseEntity="Tag"/>"#
        func model(sub: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Base" representedClassName="Base" syncable="YES">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    \(tags)
                </entity>
                <entity name="Sub" representedClassName="Sub" parentEntity="Base" syncable="YES">
                    \(sub)
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <relationship name="owners" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Base" inverseName="tags" inverseEntity="Base"/>
                </entity>
            </model>
            """
        }
        let same = directory.appending("Same.xcdatamodel")
        try FileManager.default.createDirectory(at: same, withIntermediateDirectories: true)
        try Data(model(sub: tags).utf8).write(to: same.appending(path: "contents"))
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", same.path])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readOnly)
        let joinTables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')") {
            $0.string(at: 0) ?? ""
        }
        database.close()
        #expect(joinTables.count == 1, "\(joinTables)")

        let different = directory.appending("Different.xcdatamodel")
        try FileManager.default.createDirectory(at: different, withIntermediateDirectories: true)
        try Data(model(sub: tags.replacingOccurrences(of: "toMany=\"YES\"", with: "toMany=\"YES\" ordered=\"YES\"")).utf8)
            .write(to: different.appending(path: "contents"))
        let refused = try MoultProcess.run(["create", directory.appending("d.sqlite").path, "--model", different.path])
        #expect(refused.exitCode == 65, "\(refused.standardError)")
        for fragment in ["Different.xcdatamodel/contents:", "conflicting property", "'Sub.tags'", "'Base.tags'"] {
            #expect(refused.standardError.contains(fragment), "missing '\(fragment)' in \(refused.standardError)")
        }
    }
}
