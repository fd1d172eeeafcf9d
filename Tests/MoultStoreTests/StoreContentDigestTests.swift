import Foundation
import MoultStore
import MoultTestSupport
import Testing

/// `StoreContentDigest`, the identity of a store's content: the same for the same pages however they
/// are laid over the main file and its `-wal` (a checkpoint changes nothing), and for a copy whatever its
/// times; another for any edit, whatever its times, size or change counter say.
@Suite struct StoreContentDigestTests {
    /// Runs Python's sqlite3 on a script (a connection `c` to `store` is open in it, in WAL mode with
    /// automatic checkpoints off).
    static func python(_ store: URL, _ script: String) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import sqlite3, shutil, sys, os
            path = sys.argv[1]
            c = sqlite3.connect(path, isolation_level=None)
            c.execute('pragma journal_mode=wal'); c.execute('pragma wal_autocheckpoint=0')
            \(script)
            """,
            store.path,
        ]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
    }

    static func digest(_ url: URL) throws -> StoreContentDigest { try StoreContentDigest(of: url) }

    @Test func aCheckpointKeepsTheDigestAndAnEditChangesIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        let frozen = directory.appending("frozen.sqlite")
        // Rows in the main file, an update in the -wal: both files copied while the log holds the update.
        try Self.python(
            store,
            """
            c.execute('create table t (a integer primary key, b text)')
            c.executemany('insert into t (b) values (?)', [('x' * 300,) for _ in range(2000)])
            c.execute('pragma wal_checkpoint(truncate)')
            c.execute("update t set b = 'in the log' where a = 7")
            shutil.copy(path, sys.argv[1].replace('s.sqlite', 'frozen.sqlite'))
            shutil.copy(path + '-wal', sys.argv[1].replace('s.sqlite', 'frozen.sqlite') + '-wal')
            """)
        let withLog = try Self.digest(frozen)
        #expect(FileManager.default.fileExists(atPath: frozen.path + "-wal"))
        // A copy, with other times: the same store.
        let copy = directory.appending("copy.sqlite")
        try FileManager.default.copyItem(at: frozen, to: copy)
        try FileManager.default.copyItem(atPath: frozen.path + "-wal", toPath: copy.path + "-wal")
        #expect(try Self.digest(copy) == withLog)
        // The log moved into the main file: other files, the same pages.
        try Self.python(copy, "c.execute('pragma wal_checkpoint(truncate)')")
        #expect((try? FileManager.default.attributesOfItem(atPath: copy.path + "-wal")[.size] as? Int) ?? 0 == 0)
        #expect(try Self.digest(copy) == withLog)
        // The -wal removed: the update is no longer part of the store.
        try FileManager.default.removeItem(atPath: frozen.path + "-wal")
        #expect(try Self.digest(frozen) != withLog)
        // An edit that keeps the size, its time put back.
        let before = try FileManager.default.attributesOfItem(atPath: copy.path)[.modificationDate] as? Date
        try Self.python(copy, "c.execute(\"update t set b = 'in the log!' where a = 7\"); c.execute('pragma wal_checkpoint(truncate)')")
        try FileManager.default.setAttributes([.modificationDate: before as Any], ofItemAtPath: copy.path)
        #expect(try Self.digest(copy) != withLog)
    }

    @Test func framesOfAnUncommittedOrOldLogAreNotPartOfTheStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        try Self.python(
            store,
            """
            c.execute('create table t (a integer primary key, b text)')
            c.executemany('insert into t (b) values (?)', [('y' * 100,) for _ in range(500)])
            shutil.copy(path, path.replace('s.sqlite', 'kept.sqlite')); shutil.copy(path + '-wal', path.replace('s.sqlite', 'kept.sqlite') + '-wal')
            """)
        let kept = directory.appending("kept.sqlite")
        let committed = try Self.digest(kept)
        #expect(committed == (try Self.digest(store)))
        // Bytes appended to the log that are no frame of it (a torn write): ignored, as SQLite ignores them.
        let wal = try FileHandle(forWritingTo: URL(filePath: kept.path + "-wal"))
        try wal.seekToEnd()
        try wal.write(contentsOf: Data(repeating: 0xAB, count: 5000))
        try wal.close()
        #expect(try Self.digest(kept) == committed)
    }

    @Test func aFileThatIsNotADatabaseIsHashedByItsBytesAndALinkIsReadWhereItPoints() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let xml = directory.appending("s.xml")
        try Data("<?xml version=\"1.0\"?><database/>".utf8).write(to: xml)
        let first = try Self.digest(xml)
        try Data("<?xml version=\"1.0\"?><database />".utf8).write(to: xml)
        #expect(try Self.digest(xml) != first)
        let link = directory.appending("l.xml")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: xml)
        #expect(try Self.digest(link) == Self.digest(xml))
        #expect(throws: StoreError.self) { try Self.digest(directory.appending("missing.sqlite")) }
    }
}
