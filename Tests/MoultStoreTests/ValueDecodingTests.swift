import Foundation
import MoultModel
import MoultStore
import MoultTestSupport
import Testing

/// A column holding a value of another storage class than its attribute's type is converted as SQLite
/// converts it for Core Data, or refused with an invalid value naming the column: never a trap.
@Suite struct ValueDecodingTests {
    /// Decodes the single value of `SELECT <sql> AS ZCOLUMN` as `type`.
    static func decode(_ sql: String, as type: AttributeType) throws -> Value {
        let directory = try TemporaryDirectory("moult-values")
        defer { directory.remove() }
        let database = try Database(url: directory.appending("v.sqlite"), mode: .create)
        defer { database.close() }
        let statement = try database.makeStatement("SELECT \(sql) AS ZCOLUMN")
        try statement.bind([])
        #expect(try statement.step())
        return try statement.value(at: 0, as: type)
    }

    static func refusal(_ sql: String, as type: AttributeType) throws -> StoreError {
        do {
            let value = try decode(sql, as: type)
            throw FixtureError(message: "\(sql) as \(type.rawValue) decoded as \(value)")
        } catch let error as StoreError {
            return error
        }
    }

    @Test(arguments: [
        ("41.9", AttributeType.integer16, Value.int(41)),
        ("-41.9", .integer32, .int(-41)),
        ("4.5e15", .integer64, .int(4_500_000_000_000_000)),
        ("32767", .integer16, .int(32767)),
        ("0.5", .boolean, .bool(true)),
        ("0", .boolean, .bool(false)),
        ("7", .double, .double(7)),
        ("9e999", .double, .double(.infinity)),
        ("12", .decimal, .decimal(12)),
        ("'3.25'", .decimal, .decimal(Decimal(string: "3.25")!)),
        ("1e-300", .decimal, .decimal(0)),
        ("1234", .string, .string("1234")),
        ("'6BA7B810-9DAD-11D1-80B4-00C04FD430C8'", .uuid, .uuid(UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!)),
        ("x'0102'", .binary, .data([1, 2])),
        ("NULL", .integer16, .null),
    ])
    func convertedAsSQLiteWouldForCoreData(sql: String, type: AttributeType, expected: Value) throws {
        #expect(try Self.decode(sql, as: type) == expected)
    }

    @Test(arguments: [
        ("1e308", AttributeType.integer64, "holds the real 1e+308, outside any integer's range"),
        ("9e999", .integer16, "holds the real inf"),
        ("-9.3e18", .integer64, "outside any integer's range"),
        ("40000", .integer16, "outside Integer 16's range -32768…32767"),
        ("3000000000", .integer32, "outside Integer 32's range"),
        ("'forty'", .integer32, "holds text"),
        ("x'00'", .double, "holds a blob of 1 bytes"),
        ("'x'", .boolean, "holds text"),
        ("9e999", .decimal, "holds the real inf"),
        ("1e200", .decimal, "beyond the range of a Decimal"),
        ("'abc'", .decimal, "text that is not a decimal number"),
        ("9e999", .date, "holds the real inf"),
        ("'2020-01-01'", .date, "holds text"),
        ("x'FF'", .string, "a blob of 1 bytes where Core Data stores text"),
        ("x'414243'", .string, "a blob of 3 bytes where Core Data stores text"),
        ("CAST(x'C328' AS TEXT)", .uri, "text that is not valid UTF-8"),
        ("'not a uuid'", .uuid, "text that is not a UUID"),
        ("x'0102'", .uuid, "a blob that is not 16 bytes"),
        ("12", .uuid, "holds the integer 12"),
    ])
    func refusedWithTheColumnNamed(sql: String, type: AttributeType, message: String) throws {
        let error = try Self.refusal(sql, as: type)
        #expect(error.code == .invalidValue)
        #expect(error.category == .badInput)
        #expect(error.message.contains("column ZCOLUMN"), "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.message.contains(type.rawValue), "\(error)")
    }
}
