/// What a store's `CREATE TABLE` for an entity table declares beyond the columns Core Data lays out
/// today (`Z_PK INTEGER PRIMARY KEY`, then a name and a type per column): its table constraints and
/// column constraints, as the statement writes them.
///
/// Older Core Data wrote a uniqueness constraint as a table constraint (framework 637, iOS 10:
/// `CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY)` inside `CREATE TABLE`), where it now writes a
/// `Z_<Entity>_UNIQUE_…` index. SQLite cannot drop a column such a constraint names, and a table
/// altered where it stands keeps its constraint whatever the new version says: an in-place step by SQL
/// rebuilds such a table, as Core Data does, whenever it changes it.
///
/// ```swift
/// let declaration = TableDeclaration(sql: """
///     CREATE TABLE ZCONTINENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCODE INTEGER,
///     CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY))
///     """)
/// declaration.constraints  // ["CONSTRAINT ZCODE_ZDUMMY UNIQUE (ZCODE, ZDUMMY)"]
/// ```
public struct TableDeclaration: Sendable, Hashable {
    /// Each table constraint (`CONSTRAINT A UNIQUE (…)`, `UNIQUE (…)`, `CHECK (…)`, …) and each column's
    /// constraints beyond its type (`ZCODE: UNIQUE`, `ZNAME: NOT NULL DEFAULT 'x'`), in the statement's
    /// order. `Z_PK`'s `PRIMARY KEY` is Core Data's layout, not listed.
    public var constraints: [String]

    /// Reads a `CREATE TABLE` statement. A statement it cannot follow (no parenthesised column list)
    /// gives no constraint: whether the store has its layout's columns is checked elsewhere.
    public init(sql: String) {
        constraints = []
        guard let parts = Self.columnList(of: sql) else { return }
        for part in parts {
            let words = Self.words(of: part)
            guard let first = words.first else { continue }
            if Self.tableConstraintStarts.contains(first.uppercased()) {
                constraints.append(part)
                continue
            }
            // A column: its name, its type (words, and a parenthesised size), then its constraints.
            guard let start = words.dropFirst().firstIndex(where: { Self.columnConstraintStarts.contains($0.uppercased()) }) else { continue }
            let clause = words[start...].joined(separator: " ")
            let name = Self.unquoted(first)
            if name.uppercased() == "Z_PK", clause.uppercased() == "PRIMARY KEY" { continue }
            constraints.append("\(name): \(clause)")
        }
    }

    // MARK: - Reading the statement

    /// The words that start a table constraint.
    private static let tableConstraintStarts: Set<String> = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
    /// The words that start a column constraint (after the column's name and type).
    private static let columnConstraintStarts: Set<String> = [
        "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED", "AS",
    ]

    /// The top-level parts of the parenthesised list after the table's name, trimmed; nil when there is
    /// no such list (`CREATE TABLE … AS SELECT`).
    private static func columnList(of sql: String) -> [String]? {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        var started = false
        for character in sql {
            if let open = quote {
                if started { current.append(character) }
                // A doubled quote closes and opens again: the same text either way.
                if character == closing(open) { quote = nil }
                continue
            }
            switch character {
            case "\"", "'", "`", "[":
                quote = character
                if started { current.append(character) }
            case "(":
                depth += 1
                if depth == 1 && !started {
                    started = true
                } else if started {
                    current.append(character)
                }
            case ")":
                depth -= 1
                if started && depth == 0 {
                    parts.append(current)
                    return parts.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
                }
                if started { current.append(character) }
            case "," where started && depth == 1:
                parts.append(current)
                current = ""
            default:
                if started { current.append(character) }
            }
        }
        return nil
    }

    private static func closing(_ open: Character) -> Character { open == "[" ? "]" : open }

    /// The words of one part: names (quoted ones whole), keywords, and parenthesised groups whole.
    private static func words(of part: String) -> [String] {
        var words: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        for character in part {
            if let open = quote {
                current.append(character)
                if character == closing(open) { quote = nil }
                continue
            }
            switch character {
            case "\"", "'", "`", "[":
                quote = character
                current.append(character)
            case "(":
                if depth == 0, !current.isEmpty {
                    words.append(current)
                    current = ""
                }
                depth += 1
                current.append(character)
            case ")":
                depth -= 1
                current.append(character)
                if depth == 0 {
                    words.append(current)
                    current = ""
                }
            case _ where character.isWhitespace && depth == 0:
                if !current.isEmpty { words.append(current) }
                current = ""
            default:
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// A name without its quotes (`"ZNAME"` → `ZNAME`).
    private static func unquoted(_ word: String) -> String {
        guard let first = word.first, "\"`[".contains(first), word.count >= 2 else { return word }
        return String(word.dropFirst().dropLast())
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let characters = Array(self)
        guard let start = characters.firstIndex(where: { !$0.isWhitespace }), let end = characters.lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return String(characters[start...end])
    }
}
