import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// SQLite opens its files by path: `Database` resolves the store's folder and a link at the store's name
/// once, then opens with `SQLITE_OPEN_NOFOLLOW`, so that no link is followed after that: not at the
/// store, not at a companion (`-wal`, `-shm`, `-journal`) SQLite would create or write.
@Suite struct DatabaseLinkTests {
    /// A rollback-journal database with one row, `t(a) = 1`, at `name` in `directory`.
    static func database(_ name: String, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.appending(name)
        let database = try Database(url: url, mode: .create)
        try database.executeScript("PRAGMA journal_mode = DELETE; CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        database.close()
        return url
    }

    static func count(_ url: URL, mode: Database.OpenMode = .readOnly) throws -> Value? {
        let database = try Database(url: url, mode: mode)
        defer { database.close() }
        return try database.scalar("SELECT COUNT(*) FROM t")
    }

    @Test func aStoreNamedThroughALinkIsOpenedWhereItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.database("real.sqlite", in: directory)
        let link = directory.appending("link.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: store)
        #expect(try Self.count(link) == .int(1))
        let database = try Database(url: link, mode: .readWrite)
        try database.execute("INSERT INTO t VALUES (2)")
        database.close()
        #expect(try Self.count(store) == .int(2))
        #expect(FileOperations.isSymbolicLink(link.path))
        // A folder named through a link is reached as any path the user gives.
        let folderLink = directory.appending("folder-link")
        try FileManager.default.createSymbolicLink(at: folderLink, withDestinationURL: directory.url)
        #expect(try Self.count(folderLink.appending(path: "real.sqlite"), mode: .readWrite) == .int(2))
    }

    /// A link at a companion's name: SQLite refuses to open it; what it leads to is neither written nor
    /// made.
    @Test(arguments: ["-journal", "-wal"])
    func aLinkAtACompanionIsNeverFollowed(suffix: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.database("s.sqlite", in: directory)
        let victim = directory.appending("victim.txt")
        let missing = directory.appending("made-through-a-link.txt")
        try Data("another program's file".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: URL(filePath: store.path + suffix), withDestinationURL: suffix == "-wal" ? victim : missing)
        var failure: StoreError?
        do {
            let database = try Database(url: store, mode: .readWrite)
            defer { database.close() }
            try database.executeScript(suffix == "-wal" ? "PRAGMA journal_mode = WAL; INSERT INTO t VALUES (3)" : "INSERT INTO t VALUES (3)")
        } catch {
            failure = error
        }
        #expect(failure != nil, "the write went through a link at \(suffix)")
        #expect(failure?.message.contains("symbolic link") == true || failure?.message.contains("unable to open") == true, "\(String(describing: failure))")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "another program's file")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    /// A new database is never created through a link at its name, even one that leads nowhere.
    @Test func aNewDatabaseIsNeverCreatedThroughALink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.appending("elsewhere.sqlite")
        let link = directory.appending("new.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(throws: StoreError.self) { try Database(url: link, mode: .create) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }
}
