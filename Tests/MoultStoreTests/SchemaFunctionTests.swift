import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// What a store's own schema (its triggers) may call among the functions Moult registers
/// (`faults/store-trigger-fires-on-metadata-write`): Core Data's trigger functions, which its stores'
/// triggers need; never Moult's own, which serve only the statements Moult runs.
@Suite struct SchemaFunctionTests {
    static func database(in directory: TemporaryDirectory) throws -> Database {
        let database = try Database(url: directory.appending("s.sqlite"), mode: .create)
        try database.executeScript("CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR, ZLOWER VARCHAR)")
        return database
    }

    /// A trigger calling `moult_refuse` fails with SQLite's "unsafe use" (the function is
    /// `SQLITE_DIRECTONLY`), not by running it; Moult's own statement still runs it.
    @Test func aTriggerCannotCallMoultsOwnFunctions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.database(in: directory)
        defer { database.close() }
        try database.executeScript(
            "CREATE TRIGGER t AFTER INSERT ON ZITEM BEGIN SELECT \(MoultFunctions.refuse)('run from the schema'); END")
        let fromSchema = #expect(throws: StoreError.self) { try database.execute("INSERT INTO ZITEM (ZNAME) VALUES ('a')") }
        #expect(fromSchema?.description.contains("unsafe use") == true, "\(String(describing: fromSchema))")
        #expect(fromSchema?.description.contains("run from the schema") == false)
        let direct = #expect(throws: StoreError.self) { try database.scalar("SELECT \(MoultFunctions.refuse)('run by Moult')") }
        #expect(direct?.description.contains("run by Moult") == true, "\(String(describing: direct))")
    }

    /// Core Data's trigger functions keep working from a trigger, on a connection that trusts the
    /// schema or not.
    @Test(arguments: ["ON", "OFF"])
    func aTriggerCanCallCoreDatasFunctions(trusted: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.database(in: directory)
        defer { database.close() }
        try database.executeScript("PRAGMA trusted_schema = \(trusted)")
        try database.executeScript("""
            CREATE TRIGGER t AFTER INSERT ON ZITEM BEGIN
              UPDATE ZITEM SET ZLOWER = NSCoreDataToLower(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK;
              SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZITEM', 1, NEW.Z_PK, 'lower', NSCoreDataNow());
            END
            """)
        try database.execute("INSERT INTO ZITEM (ZNAME) VALUES ('ÉLAN')")
        #expect(try database.scalar("SELECT ZLOWER FROM ZITEM") == .string("élan"))
    }
}
