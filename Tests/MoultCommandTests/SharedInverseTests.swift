import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// Issue 40, item 3: a version whose two relationships name one inverse that points back at only one of
/// them (Xcode compiled and shipped such models; Core Data loads them) is read with a warning, not
/// refused: the model's stores migrate. An inverse that points at a relationship that does not name it
/// back is still refused (HashCommandTests.inverseThatDoesNotPointBack).
@Suite struct SharedInverseTests {
    static let model = Fixtures.packageRoot.appending(path: "Tests/ChainModels/Shared.xcdatamodeld")

    @Test func readWithAWarning() throws {
        let versioned = try VersionedModel(contentsOf: Self.model)
        for version in versioned.versions {
            #expect(version.model.warnings == [
                "relationship 'Album.keyPhotos' names inverse 'Photo.album', which points back at 'Album.photos': Core Data accepts it, and so does Moult (both read the one link)"
            ])
        }
    }

    @Test func itsStoresMigrate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("s.sqlite")
        let created = try MoultProcess.run(["create", store.path, "--model", Self.model.appending(path: "s1.xcdatamodel").path])
        #expect(created.exitCode == 0, "\(created.standardError)")
        let database = try Database(url: store, mode: .readWrite)
        try database.executeScript(
            """
            INSERT INTO ZALBUM VALUES (1, 1, 1, 'a'); INSERT INTO ZPHOTO VALUES (1, 2, 1, 1, 'p'), (2, 2, 1, NULL, 'q');
            UPDATE Z_PRIMARYKEY SET Z_MAX = CASE Z_ENT WHEN 1 THEN 1 ELSE 2 END; PRAGMA wal_checkpoint(TRUNCATE)
            """)
        database.close()
        let output = directory.appending("o.sqlite")
        let migrated = try MoultProcess.run(["migrate", store.path, "--model", Self.model.path, "--output", output.path, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardError.contains("moult: warning: version s1: relationship 'Album.keyPhotos' names inverse 'Photo.album'"))
        let result = try Database(url: output, mode: .readOnly)
        defer { result.close() }
        let rows = try result.query("SELECT Z_PK, IFNULL(ZALBUM, 0), ZNAME FROM ZPHOTO ORDER BY Z_PK") { "\($0.int64(at: 0))|\($0.int64(at: 1))|\($0.string(at: 2) ?? "")" }
        #expect(rows == ["1|1|p", "2|0|q"])
    }
}
