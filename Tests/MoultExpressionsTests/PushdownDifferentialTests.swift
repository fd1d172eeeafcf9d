import Foundation
import MoultModel
import MoultTestSupport
import Testing
@testable import MoultExpressions

/// Random predicates over random rows: wherever the pushdown compiler accepts a predicate, SQLite
/// (the `sqlite3` shell, run once for all predicates on an in-memory database) and the Swift
/// evaluator must select exactly the same rows.
@Suite struct PushdownDifferentialTests {
    static let keys = ["i", "j", "r", "s", "t", "d", "f"]
    static let columns: [String: SQLColumn] = [
        "i": SQLColumn(name: "ZI", type: .integer64), "j": SQLColumn(name: "ZJ", type: .integer32),
        "r": SQLColumn(name: "ZR", type: .double), "s": SQLColumn(name: "ZS", type: .string),
        "t": SQLColumn(name: "ZT", type: .string), "d": SQLColumn(name: "ZD", type: .date),
        "f": SQLColumn(name: "ZF", type: .boolean),
    ]
    static let schema = KeySchema(keys: keys)

    static let integers: [Int64] = [0, 1, -1, 2, 3, 17, 18, -5, 100, 1 << 53, (1 << 53) + 1, .max, .min, .max - 1]
    static let doubles: [Double] = [0, -0.0, 0.5, 1, 1.5, -2.5, 2, 3, 17.5, 18, 1.8, 32, 1e15, 9007199254740992, -1e300, 1e300]
    static let strings: [String] = [
        "", "a", "A", "ab", "abc", "b", "B", "Ab", "é", "e\u{301}", "É", "ß", "SS", "日本", "日本語", "a*b", "a?c", "[x]",
        "K", "\u{212A}", "Zoë", "zoe", "🙂", "a b", "x%y", "_", "abcabc", "'q'",
    ]

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func literal(_ value: Value) -> String {
        switch value {
        case .int(let i): return String(i)
        case .double(let d): return d.isInfinite ? (d > 0 ? "1e999" : "-1e999") : "\(d)"
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .null: return "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .date(let date): return "\(date.timeIntervalSinceReferenceDate)"
        default: fatalError("no literal for \(value)")
        }
    }

    static func randomRow(_ g: inout Generator) -> [String: Value] {
        func maybe(_ value: Value) -> Value { Int.random(in: 0..<5, using: &g) == 0 ? .null : value }
        return [
            "i": maybe(.int(integers.randomElement(using: &g)!)),
            "j": maybe(.int(Int64.random(in: -3...20, using: &g))),
            "r": maybe(.double(doubles.randomElement(using: &g)!)),
            "s": maybe(.string(strings.randomElement(using: &g)!)),
            "t": maybe(.string(strings.randomElement(using: &g)!)),
            "d": maybe(.date(Date(timeIntervalSinceReferenceDate: doubles.randomElement(using: &g)!))),
            "f": maybe(.bool(Bool.random(using: &g))),
        ]
    }

    static func randomNumberTerm(_ g: inout Generator, depth: Int) -> String {
        let choice = Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &g)
        switch choice {
        case 0: return "i"
        case 1: return "j"
        case 2: return "r"
        case 3: return "f"
        case 4: return String(integers.randomElement(using: &g)!)
        case 5: return "\(doubles.randomElement(using: &g)!)"
        case 6: return "-" + randomNumberTerm(&g, depth: depth - 1)
        default:
            let op = ["+", "-", "*", "/", "**"].randomElement(using: &g)!
            return "(\(randomNumberTerm(&g, depth: depth - 1)) \(op) \(randomNumberTerm(&g, depth: depth - 1)))"
        }
    }

    static func randomString(_ g: inout Generator) -> String {
        var text = ""
        ExpressionNode.writeString(strings.randomElement(using: &g)!, to: &text)
        return text
    }

    static func randomComparison(_ g: inout Generator) -> String {
        let options = ["", "", "", "", "[c]", "[d]", "[cd]"].randomElement(using: &g)!
        let ordering = ["==", "!=", "<", "<=", ">", ">="]
        switch Int.random(in: 0..<12, using: &g) {
        case 0, 1:
            return "\(randomNumberTerm(&g, depth: 2)) \(ordering.randomElement(using: &g)!) \(randomNumberTerm(&g, depth: 2))"
        case 2:
            let column = ["s", "t"].randomElement(using: &g)!
            let other = Bool.random(using: &g) ? randomString(&g) : (column == "s" ? "t" : "s")
            return "\(column) \(ordering.randomElement(using: &g)!)\(options) \(other)"
        case 3:
            let op = ["CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES"].randomElement(using: &g)!
            var pattern = randomString(&g)
            if op == "LIKE" {
                pattern = "\"" + ["*", "?", "a*", "*b", "?b*", "a?c", "\\\\*", "[x]", "日*", "*\u{301}"].randomElement(using: &g)! + "\""
            }
            return "\(["s", "t"].randomElement(using: &g)!) \(op)\(options) \(pattern)"
        case 4:
            return "\(Self.keys.randomElement(using: &g)!) \(["==", "!="].randomElement(using: &g)!) nil"
        case 5:
            let low = Int.random(in: -3...10, using: &g)
            return "\(["i", "j", "r"].randomElement(using: &g)!) BETWEEN {\(low), \(low + Int.random(in: -1...8, using: &g))}"
        case 6:
            let members = (0..<Int.random(in: 0...3, using: &g)).map { _ in String(Int64.random(in: -2...5, using: &g)) }
            return "\(["i", "j", "r", "f"].randomElement(using: &g)!) IN {\(members.joined(separator: ", "))}"
        case 7:
            let members = (0..<Int.random(in: 1...3, using: &g)).map { _ in randomString(&g) }
            return "s IN {\(members.joined(separator: ", "))}"
        case 8:
            let seconds = doubles.randomElement(using: &g)!
            return "d \(ordering.randomElement(using: &g)!) CAST(\(seconds), \"NSDate\")"
        case 9:
            return "d \(ordering.randomElement(using: &g)!) d"
        case 10:
            // Kinds that do not mix: the compiler must decline (or the evaluator agrees).
            return "\(Self.keys.randomElement(using: &g)!) \(ordering.randomElement(using: &g)!) \(Self.keys.randomElement(using: &g)!)"
        default:
            return ["TRUEPREDICATE", "FALSEPREDICATE", "f == YES", "f != NO"].randomElement(using: &g)!
        }
    }

    static func randomPredicate(_ g: inout Generator, depth: Int) -> String {
        guard depth > 0 else { return randomComparison(&g) }
        switch Int.random(in: 0..<6, using: &g) {
        case 0: return "(\(randomPredicate(&g, depth: depth - 1)) AND \(randomPredicate(&g, depth: depth - 1)))"
        case 1: return "(\(randomPredicate(&g, depth: depth - 1)) OR \(randomPredicate(&g, depth: depth - 1)))"
        case 2: return "NOT (\(randomPredicate(&g, depth: depth - 1)))"
        default: return randomComparison(&g)
        }
    }

    /// Runs a script in the `sqlite3` shell on an in-memory database; returns its standard output.
    static func runSQLite(_ script: String) throws -> String {
        let directory = try TemporaryDirectory("moult-pushdown")
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let scriptURL = directory.appending("script.sql")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-batch", ":memory:", ".read \(scriptURL.path)"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 failed: \(errorText)")
        #expect(errorText.isEmpty, "sqlite3 reported: \(errorText)")
        return String(decoding: data, as: UTF8.self)
    }

    static func createTable(_ rows: [TestRecord]) -> String {
        var script = "CREATE TABLE T (K INTEGER PRIMARY KEY, ZI INTEGER, ZJ INTEGER, ZR FLOAT, ZS VARCHAR, ZT VARCHAR, ZD TIMESTAMP, ZF INTEGER);\n"
        for row in rows {
            let values = Self.keys.map { Self.literal(row.value(forKey: $0)) }
            script += "INSERT INTO T VALUES (\(row.objectID.primaryKey), \(values.joined(separator: ", ")));\n"
        }
        return script
    }

    static func inline(_ fragment: SQLFragment) -> String {
        var sql = ""
        var arguments = fragment.arguments.makeIterator()
        for character in fragment.sql {
            if character == "?" { sql += Self.literal(arguments.next()!) } else { sql.append(character) }
        }
        return sql
    }

    /// Random value expressions (arithmetic over numeric columns, `uppercase:`/`lowercase:` of
    /// strings): where pushed down, SQLite computes the same value (same type; doubles within
    /// printing precision) on every row, except rows the fallback condition sends to Swift.
    @Test func valueExpressionsAgree() throws {
        var g = Generator(state: 77)
        let rows = (0..<60).map { index in TestRecord(id: Int64(index), schema: Self.schema, Self.randomRow(&g)) }
        let compiler = ExpressionCompiler(schema: Self.schema)
        let pushdown = SQLPushdown(columns: Self.columns)
        var script = Self.createTable(rows)
        var expected: [Int: (text: String, values: [Value])] = [:]
        for index in 0..<1500 {
            let text: String
            switch Int.random(in: 0..<8, using: &g) {
            case 0: text = "uppercase:(\(["s", "t"].randomElement(using: &g)!))"
            case 1: text = "lowercase:(\(["s", "t"].randomElement(using: &g)!))"
            case 2: text = "TERNARY(\(Self.randomComparison(&g)), \(Self.randomNumberTerm(&g, depth: 1)), \(Self.randomNumberTerm(&g, depth: 1)))"
            default: text = Self.randomNumberTerm(&g, depth: 3)
            }
            let node = try ExpressionNode(parsing: text)
            guard let fragment = pushdown.expression(node) else { continue }
            let compiled = try compiler.compile(node)
            var values: [Value] = []
            for row in rows {
                do { values.append(try compiled.evaluate(on: row)) } catch {
                    Issue.record("pushed down, but the evaluator throws: \(text): \(error)")
                    values.append(.null)
                }
            }
            expected[index] = (text, values)
            let fallback = fragment.fallbackCondition.map { "coalesce(\(Self.inline($0)), 0)" } ?? "0"
            let value = "(\(Self.inline(fragment.value)))"
            script += "SELECT \(index) || '|' || K || '|' || \(fallback) || '|' || typeof(\(value)) || '|' || "
                + "CASE typeof(\(value)) WHEN 'real' THEN printf('%!.17g', \(value)) ELSE coalesce(\(value), '') END FROM T ORDER BY K;\n"
        }
        var mismatches = 0
        var checked = 0
        for line in try Self.runSQLite(script).split(separator: "\n") {
            let parts = line.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 5, let index = Int(parts[0]), let row = Int(parts[1]), let entry = expected[index] else { continue }
            if parts[2] == "1" { continue }
            checked += 1
            let swift = entry.values[row]
            let agrees: Bool
            switch (swift, parts[3]) {
            case (.null, "null"): agrees = true
            case (.int(let i), "integer"): agrees = String(i) == parts[4]
            case (.bool(let b), "integer"): agrees = (b ? "1" : "0") == parts[4]
            case (.double(let d), "real"):
                let sqlite = parts[4] == "Inf" ? .infinity : parts[4] == "-Inf" ? -.infinity : Double(parts[4]) ?? .nan
                agrees = d == sqlite || abs(d - sqlite) <= 1e-15 * max(abs(d), abs(sqlite))
            case (.string(let s), "text"): agrees = s == parts[4]
            default: agrees = false
            }
            if !agrees {
                mismatches += 1
                if mismatches <= 10 { Issue.record("disagree on \(entry.text), row \(row): SQLite \(parts[3]) \(parts[4]), Swift \(swift)") }
            }
        }
        #expect(mismatches == 0)
        #expect(checked > 10_000)
    }

    @Test func sqliteAndSwiftAgree() throws {
        var g = Generator(state: 20_261_122)
        let rowCount = 60
        let rows = (0..<rowCount).map { index in TestRecord(id: Int64(index), schema: Self.schema, Self.randomRow(&g)) }
        let compiler = ExpressionCompiler(schema: Self.schema)
        let pushdown = SQLPushdown(columns: Self.columns)

        var script = Self.createTable(rows)
        var expected: [Int: String] = [:]
        var texts: [Int: String] = [:]
        var accepted = 0
        var declined = 0
        for index in 0..<4000 {
            let text = Self.randomPredicate(&g, depth: 3)
            let node = try PredicateNode(parsing: text)
            guard let fragment = pushdown.predicate(node) else {
                declined += 1
                continue
            }
            accepted += 1
            let compiled = try compiler.compile(node)
            var matching: [String] = []
            for row in rows {
                do {
                    if try compiled.evaluate(on: row) { matching.append(String(row.objectID.primaryKey)) }
                } catch {
                    Issue.record("pushed down, but the evaluator throws: \(text) → \(fragment): \(error)")
                }
            }
            expected[index] = matching.joined(separator: ",")
            texts[index] = "\(text)\n  SQL: \(fragment)"
            let sql = Self.inline(fragment)
            script += "SELECT \(index) || ':' || coalesce((SELECT group_concat(K, ',') FROM (SELECT K FROM T WHERE \(sql) ORDER BY K)), '');\n"
        }

        let data = try Self.runSQLite(script)
        var seen = 0
        var mismatches = 0
        for line in data.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let swift = expected[index] else { continue }
            seen += 1
            if String(parts[1]) != swift {
                mismatches += 1
                if mismatches <= 10 { Issue.record("disagree on \(texts[index]!)\n  SQLite: \(parts[1])\n  Swift:  \(swift)") }
            }
        }
        #expect(seen == accepted)
        #expect(mismatches == 0)
        // The generator must exercise both sides.
        #expect(accepted > 1000)
        #expect(declined > 200)
    }
}
