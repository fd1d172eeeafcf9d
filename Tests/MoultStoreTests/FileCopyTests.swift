import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// `FileOperations.copyFile`, which makes in-place backups and a staged run's private copy of the store:
/// every byte at any size (across its megabyte buffer), the source's permissions, an existing file
/// replaced, never written through a symbolic link, and an error that names the file.
@Suite struct FileCopyTests {
    static func bytes(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    }

    @Test(arguments: [0, 1, 4096, (1 << 20) - 1, 1 << 20, (3 << 20) + 7])
    func copiesEveryByte(count: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let from = directory.appending("from.sqlite")
        let to = directory.appending("to.sqlite")
        try Self.bytes(count).write(to: from)
        try FileOperations.copyFile(from.path, toNew: to.path, durable: true)
        #expect(try Data(contentsOf: to) == Self.bytes(count))
    }

    @Test func keepsTheSourcesPermissionsAndReplacesAnExistingFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let from = directory.appending("private.sqlite")
        let to = directory.appending("backup.sqlite")
        try Self.bytes(10_000).write(to: from)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: from.path)
        try Data(repeating: 0xFF, count: 50_000).write(to: to)
        try FileOperations.copyFile(from.path, toNew: to.path, durable: false)
        #expect(try Data(contentsOf: to) == Self.bytes(10_000))
        // A store only its owner may read is not copied into one anyone may read. (An existing file
        // keeps its own permissions: copies are made under a fresh temporary name.)
        let fresh = directory.appending("fresh.sqlite")
        try FileOperations.copyFile(from.path, toNew: fresh.path, durable: false)
        let permissions = try FileManager.default.attributesOfItem(atPath: fresh.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)
    }

    @Test func refusesASymbolicLinkAndNamesAMissingSource() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let from = directory.appending("from.sqlite")
        let target = directory.appending("elsewhere.sqlite")
        let link = directory.appending("link.sqlite")
        try Self.bytes(100).write(to: from)
        try Data("keep".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(throws: StoreError.self) { try FileOperations.copyFile(from.path, toNew: link.path, durable: false) }
        #expect(try Data(contentsOf: target) == Data("keep".utf8))

        let missing = directory.appending("missing.sqlite")
        do {
            try FileOperations.copyFile(missing.path, toNew: directory.appending("copy.sqlite").path, durable: false)
            Issue.record("a missing source was copied")
        } catch {
            #expect(error.path == missing.path)
        }
    }
}
