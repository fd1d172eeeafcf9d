import Foundation
import MoultModel
import MoultTestSupport
import Testing

/// `.xccurrentversion`: Xcode's `<dict/>` means "no choice" (the last version, said in a note); a bad
/// file stops only a reader that needs the current version.
@Suite struct CurrentVersionFileTests {
    /// A two-version `.xcdatamodeld` (v1, v2) with this `.xccurrentversion` (none when nil).
    static func bundle(in directory: TemporaryDirectory, currentVersion: [UInt8]?) throws -> URL {
        let v1 = try ObjectModel { Entity("Item") { Attribute("title", .string) } }
        let v2 = try ObjectModel {
            Entity("Item") {
                Attribute("title", .string)
                Attribute("note", .string)
            }
        }
        let url = directory.appending("Small.xcdatamodeld")
        try VersionedModel(name: "Small", versions: [.init(name: "v1", model: v1), .init(name: "v2", model: v2)], currentVersionName: "v1")
            .write(to: url)
        let file = url.appending(path: ".xccurrentversion")
        if let currentVersion { try Data(currentVersion).write(to: file) } else { try FileManager.default.removeItem(at: file) }
        return url
    }

    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n"
    static func plist(_ body: String) -> [UInt8] { Array((header + body + "\n</plist>\n").utf8) }

    @Test func theNamedVersionIsCurrentWithoutANote() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try VersionedModel(contentsOf: try Self.bundle(in: directory, currentVersion: Self.plist("<dict><key>_XCCurrentVersionName</key><string>v1.xcdatamodel</string></dict>")))
        #expect(model.currentVersionName == "v1" && model.currentVersionNote == nil)
    }

    @Test(arguments: ["<dict/>", "<dict></dict>", "<dict><key>other</key><string>x</string></dict>"])
    func anEmptyDictionaryChoosesAsAMissingFile(_ body: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try VersionedModel(contentsOf: try Self.bundle(in: directory, currentVersion: Self.plist(body)))
        #expect(model.currentVersionName == "v2")
        let note = try #require(model.currentVersionNote)
        #expect(note.contains("no _XCCurrentVersionName") && note.contains("'v2'"), "\(note)")
        let missing = try VersionedModel(contentsOf: try Self.bundle(in: directory, currentVersion: nil))
        #expect(missing.currentVersionName == "v2" && missing.currentVersionNote?.contains("no .xccurrentversion") == true)
    }

    /// Bad files: (label, bytes, a fragment of the error).
    static let bad: [(String, [UInt8], String)] = [
        ("truncated", Array("<plist><dict><key>".utf8), "malformed property list"),
        ("invalid UTF-8", plist("<dict><key>_XCCurrentVersionName</key><string>v\u{1}</string></dict>").map { $0 == 1 ? 0xE9 : $0 }, "invalid UTF-8"),
        ("invalid UTF-8 in a comment", plist("<!-- \u{1} --><dict/>").map { $0 == 1 ? 0xFF : $0 }, "invalid UTF-8"),
        ("a DTD declaration", Array("<!DOCTYPE plist [<!ENTITY e \"v1\">]><plist><dict/></plist>".utf8), "internal DTD subset"),
        ("not a dictionary", plist("<array/>"), "not a dictionary"),
        ("not a string", plist("<dict><key>_XCCurrentVersionName</key><integer>2</integer></dict>"), "not a version name"),
        ("an unknown version", plist("<dict><key>_XCCurrentVersionName</key><string>v9.xcdatamodel</string></dict>"), "'v9.xcdatamodel'"),
        ("binary garbage", Array("bplist00".utf8) + [0xFF, 0x00, 0x13], "malformed property list"),
        // A set holding a dictionary: PropertyListSerialization crashes (SIGSEGV) on these 45 bytes on Linux.
        ("a binary set of a dictionary", Array("bplist00".utf8) + [0xC1, 0x01, 0xD0, 0x08, 0x0A] + [UInt8](repeating: 0, count: 6) + [1, 1]
            + [0, 0, 0, 0, 0, 0, 0, 2] + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, 11], "a binary property list"),
        ("a CDATA name of a missing version", plist("<dict><key>_XCCurrentVersionName</key><string><![CDATA[v7]]></string></dict>"), "'v7.xcdatamodel'"),
    ]

    @Test(arguments: bad)
    func aBadFileStopsOnlyWhenTheCurrentVersionIsNeeded(_ label: String, _ bytes: [UInt8], _ fragment: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try Self.bundle(in: directory, currentVersion: bytes)
        #expect {
            _ = try VersionedModel(contentsOf: url)
        } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.category == .badInput && error.file?.hasSuffix("Small.xcdatamodeld/.xccurrentversion") == true
                && error.description.contains(fragment)
        }
        let lenient = try VersionedModel(contentsOf: url, requiringCurrentVersion: false)
        #expect(lenient.currentVersionName == "v2" && lenient.versions.count == 2, "\(label)")
        let note = try #require(lenient.currentVersionNote)
        #expect(note.contains(fragment) && note.contains("the last version, 'v2', is taken"), "\(label): \(note)")
    }
}
