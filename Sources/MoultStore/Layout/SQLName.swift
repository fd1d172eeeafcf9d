/// An SQL identifier (a table, column, index or trigger name) as it goes into SQL text.
///
/// Every identifier Moult writes into SQL goes through ``quoted(_:)``. A plain name (ASCII letters,
/// digits and underscores, not starting with a digit, not an SQLite keyword) is written bare, exactly
/// as Core Data writes its schema (`CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, …)`), so the
/// schema text matches Core Data's; any other name is double-quoted with its quotes doubled, so no name
/// can change the meaning of the statement.
///
/// The SQL of an in-place migration quotes every identifier, plain or not (`quoted(_:always:)`).
///
/// ```swift
/// SQLName.quoted("ZPERSON")                // ZPERSON
/// SQLName.quoted("Z_A_1.5")                // "Z_A_1.5"
/// SQLName.quoted("ORDER")                  // "ORDER"
/// SQLName.quoted("ZPERSON", always: true)  // "ZPERSON"
/// ```
public enum SQLName {
    /// The identifier as SQL text: bare when plain, else double-quoted.
    public static func quoted(_ name: String) -> String {
        quoted(name, always: false)
    }

    /// The identifier as SQL text: double-quoted when `always` or when it is not plain, else bare.
    ///
    /// Every `"` is doubled, scalar by scalar as SQLite reads the text: one followed by a combining mark
    /// (a single `Character` with it) is doubled too.
    static func quoted(_ name: String, always: Bool) -> String {
        guard always || !isPlain(name) else { return name }
        var text = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar == "\"" { text.append(scalar) }
            text.append(scalar)
        }
        return "\"" + String(text) + "\""
    }

    /// Whether `name` can be written without quotes.
    public static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                continue
            default: return false
            }
        }
        return !keywords.contains(name.uppercased())
    }

    /// SQLite's keywords (https://sqlite.org/lang_keywords.html).
    static let keywords: Set<String> = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC", "ATTACH",
        "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST", "CHECK", "COLLATE", "COLUMN",
        "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME",
        "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT", "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT",
        "DO", "DROP", "EACH", "ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL",
        "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB", "GROUP", "GROUPS",
        "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED", "INITIALLY", "INNER", "INSERT", "INSTEAD",
        "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH", "MATERIALIZED",
        "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS",
        "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE", "RANGE", "RECURSIVE",
        "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RESTRICT", "RETURNING", "RIGHT",
        "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET", "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO",
        "TRANSACTION", "TRIGGER", "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW",
        "VIRTUAL", "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
    ]
}
