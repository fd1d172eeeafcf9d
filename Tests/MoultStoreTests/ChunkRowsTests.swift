import Foundation
import MoultModel
@testable import MoultStore
import MoultTestSupport
import Testing

/// `ChunkRows`, the rows a `SELECT` on the second thread's connection made, inserted by another
/// connection through a `moult_chunk_rows` table: every value arrives with its type and its bytes,
/// so the insert writes the file an `INSERT … SELECT` on one connection writes.
@Suite struct ChunkRowsTests {
    /// Values of every SQLite type, and the edges of each: the extreme integers, a negative zero and
    /// the largest double, empty and non-ASCII text, text holding a NUL byte, an empty blob.
    static let values = [
        "NULL", "0", "-9223372036854775808", "9223372036854775807", "1.5", "-0.0", "1.7976931348623157e308", "''", "'é 日本 😀'",
        "CAST(x'610062' AS TEXT)", "x''", "x'00ff10'", "zeroblob(70000)",
    ]

    @Test func everyValueCrossesWithItsTypeAndBytes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try Database(url: directory.appending("first.sqlite"), mode: .create)
        let second = try Database(url: directory.appending("second.sqlite"), mode: .create)
        let selected = Self.values.enumerated().map { "SELECT \($0.offset + 1) AS k, \($0.element) AS v" }.joined(separator: " UNION ALL ")
        try first.executeScript("CREATE TABLE t (k INTEGER PRIMARY KEY, v); INSERT INTO t \(selected)")
        let select = try first.statement("SELECT k, v FROM t ORDER BY k")
        let rows = try ChunkRows(columns: 2)
        try select.fill(rows)
        #expect(rows.count == Self.values.count)
        #expect(rows.columns == 2)
        try second.executeScript("CREATE TABLE t (k INTEGER PRIMARY KEY, v)")
        try second.withChunkRows(rows) { table in
            try second.execute("INSERT INTO t (k, v) SELECT c0, c1 FROM temp.\(table)")
        }
        let described = "SELECT k, typeof(v), hex(v) FROM t ORDER BY k"
        let expected = try first.query(described) { [$0.int64(at: 0), $0.string(at: 1), $0.string(at: 2)] as [AnyHashable?] }
        let got = try second.query(described) { [$0.int64(at: 0), $0.string(at: 1), $0.string(at: 2)] as [AnyHashable?] }
        #expect(got == expected)
        #expect(got.map { $0[1] as? String } == ["null", "integer", "integer", "integer", "real", "real", "real", "text", "text", "text", "blob", "blob", "blob"])
        // The text with a NUL byte kept all three bytes.
        #expect(got[9][2] as? String == "610062")
        first.close()
        second.close()
    }

    /// Random rows of random values (every type, empty and large texts and blobs, any bytes in a
    /// blob): the rows' table gives back exactly what the `SELECT` gave, seed after seed.
    @Test(arguments: [1, 2, 3, 4, 5])
    func randomValuesCrossUnchanged(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("db.sqlite"), mode: .create)
        defer { database.close() }
        var generator = FuzzRandom(seed: seed)
        func value() -> Value {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: return .null
            case 1: return .int(Int64.random(in: Int64.min...Int64.max, using: &generator))
            case 2: return .double(Double.random(in: -1e300...1e300, using: &generator))
            case 3: return .string(String((0..<Int.random(in: 0..<40, using: &generator)).map { _ in "aé日😀\u{0}".randomElement(using: &generator)! }))
            case 4: return .data((0..<Int.random(in: 0..<3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            default: return .data([])
            }
        }
        try database.executeScript("CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c, d)")
        try database.write {
            for key in 1...400 {
                try database.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.int(Int64(key))] + (0..<4).map { _ in value() })
            }
        }
        let rows = try ChunkRows(columns: 5)
        try database.statement("SELECT k, a, b, c, d FROM t ORDER BY k").fill(rows)
        #expect(rows.count == 400)
        let described = (0..<5).map { "typeof(c\($0)), hex(c\($0))" }.joined(separator: ", ")
        let got = try database.withChunkRows(rows) { table in
            try database.query("SELECT \(described) FROM temp.\(table)") { row in (0..<10).map { row.string(at: $0) } }
        }
        let expected = try database.query("SELECT \(described.replacingOccurrences(of: "c0", with: "k").replacingOccurrences(of: "c1", with: "a").replacingOccurrences(of: "c2", with: "b").replacingOccurrences(of: "c3", with: "c").replacingOccurrences(of: "c4", with: "d")) FROM t ORDER BY k") { row in
            (0..<10).map { row.string(at: $0) }
        }
        #expect(got == expected)
    }

    /// Filling stops before the rows pass their limit in bytes, and says so; the statement is reset,
    /// ready to run again.
    @Test func fillingStopsAtTheLimit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("db.sqlite"), mode: .create)
        defer { database.close() }
        try database.executeScript("""
            CREATE TABLE t (k INTEGER PRIMARY KEY, v);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO t SELECT i, randomblob(1000) FROM n;
            """)
        let select = try database.statement("SELECT k, v FROM t ORDER BY k")
        let bounded = try ChunkRows(columns: 2)
        #expect(try select.fill(bounded, limit: 50_000) == false)
        // Each row holds 2 × 16 bytes of values and 1,000 of blob: 48 rows fit in 50,000 bytes.
        #expect(bounded.count == 48)
        let whole = try ChunkRows(columns: 2)
        #expect(try select.fill(whole, limit: 200_000) == true)
        #expect(whole.count == 100 && whole.byteCount == 100_000)
    }

    /// Rows whose only texts and blobs are empty (no byte held at all) give empty values, not NULL.
    @Test func emptyValuesStayEmpty() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("db.sqlite"), mode: .create)
        defer { database.close() }
        let rows = try ChunkRows(columns: 2)
        try database.statement("SELECT '', x''").fill(rows)
        #expect(rows.byteCount == 0)
        let got = try database.withChunkRows(rows) { table in
            try database.query("SELECT typeof(c0), length(c0), typeof(c1), length(c1) FROM temp.\(table)") { row in
                (0..<4).map { row.string(at: $0) ?? "nil" }
            }
        }
        #expect(got == [["text", "0", "blob", "0"]])
    }

    /// Inserted through the rows or by the `SELECT` itself, the file is the same byte for byte, and
    /// the rows' table is in the temp schema: the database's own schema does not change.
    @Test func insertingFromTheRowsWritesTheSameFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Database(url: directory.appending("source.sqlite"), mode: .create)
        try source.executeScript("""
            CREATE TABLE s (k INTEGER PRIMARY KEY, name, age);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO s SELECT i, 'person ' || i, CASE WHEN i % 7 = 0 THEN NULL ELSE i % 90 END FROM n;
            """)
        source.close()
        var files: [Data] = []
        for throughRows in [false, true] {
            let url = directory.appending("out-\(throughRows).sqlite")
            let database = try Database(url: url, mode: .create)
            try database.executeScript("CREATE TABLE d (k INTEGER PRIMARY KEY, name VARCHAR, age INTEGER)")
            try database.attachReadOnly(directory.appending("source.sqlite"), as: "src")
            let select = "SELECT ? + ROW_NUMBER() OVER (ORDER BY k) - 1, upper(name), age FROM src.s WHERE k > ? AND k <= ?"
            for lower in stride(from: Int64(0), to: 3000, by: 1000) {
                if throughRows {
                    let statement = try database.statement(select)
                    try statement.bind([.int(1), .int(lower), .int(lower + 1000)])
                    let rows = try ChunkRows(columns: 3)
                    try statement.fill(rows)
                    try database.write {
                        try database.withChunkRows(rows) { table in
                            try database.execute("INSERT INTO d SELECT ? + c0 - 1, c1, c2 FROM temp.\(table)", [.int(lower + 1)])
                        }
                    }
                } else {
                    try database.write { try database.execute("INSERT INTO d \(select)", [.int(lower + 1), .int(lower), .int(lower + 1000)]) }
                }
            }
            #expect(try database.query("SELECT name FROM sqlite_master ORDER BY name") { $0.string(at: 0) } == ["d"])
            try database.detach("src")
            database.close()
            files.append(try Data(contentsOf: url))
        }
        #expect(files[0] == files[1])
    }

    /// A `SELECT` that fails midway reports SQLite's error with the SQL, and the table refuses rows
    /// of another number of columns.
    @Test func failuresSayWhat() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(url: directory.appending("db.sqlite"), mode: .create)
        defer { database.close() }
        let failing = try database.statement(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i, CASE WHEN i = 4 THEN abs(-9223372036854775808) ELSE i END FROM n")
        let rows = try ChunkRows(columns: 2)
        #expect {
            try failing.fill(rows)
        } throws: { error in
            (error as? StoreError)?.message.contains("integer overflow") == true && (error as? StoreError)?.sql != nil
        }
        #expect(rows.count == 3)
        // Rows of three columns make the table of three; rows of two are refused there.
        let three = try ChunkRows(columns: 3)
        #expect(try database.withChunkRows(three) { table in try database.query("SELECT * FROM temp.\(table)") { _ in 1 } } == [])
        #expect(throws: StoreError.self) {
            try database.withChunkRows(rows) { _ in
                try database.execute("SELECT * FROM temp.moult_chunk_rows_3")
            }
        }
    }
}
