/// Conditions joined into one SQL condition without exceeding SQLite's expression depth.
///
/// SQLite parses `a AND b AND c …` as a chain whose depth grows with every term, and refuses a tree
/// deeper than 1,000 ("Expression tree is too large"). An entity of a thousand attributes makes such a
/// chain of rules; joined as a balanced tree, its depth is the logarithm of the count.
///
/// ```swift
/// SQLTerms.joined(["a", "b", "c", "d"], by: "AND")   // ((a) AND (b)) AND ((c) AND (d))
/// ```
public enum SQLTerms {
    /// The terms joined by `operator` (`AND`, `OR`), each in parentheses, as a balanced tree; `empty`
    /// when there are none.
    public static func joined(_ terms: [String], by operator: String, empty: String = "1") -> String {
        guard !terms.isEmpty else { return empty }
        return balanced(terms[...], by: `operator`)
    }

    private static func balanced(_ terms: ArraySlice<String>, by operator: String) -> String {
        if terms.count == 1 { return "(\(terms[terms.startIndex]))" }
        let middle = terms.startIndex + terms.count / 2
        return "(\(balanced(terms[..<middle], by: `operator`)) \(`operator`) \(balanced(terms[middle...], by: `operator`)))"
    }
}
