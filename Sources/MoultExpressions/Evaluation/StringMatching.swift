import Foundation
import MoultModel

/// A compiled `LIKE` pattern: `*` matches any run of characters (Unicode scalars), `?` exactly one,
/// `\` makes the next character literal. The whole string must match.
struct LikePattern: Sendable {
    enum Element: Sendable, Equatable {
        case literal(Unicode.Scalar)
        case one
        case any
    }

    let elements: [Element]
    let options: StringComparisonOptions

    init(_ pattern: String, options: StringComparisonOptions) {
        self.options = options
        var elements: [Element] = []
        var escaped = false
        for scalar in fold(pattern, options).unicodeScalars {
            if escaped {
                elements.append(.literal(scalar))
                escaped = false
                continue
            }
            switch scalar {
            case "\\": escaped = true
            case "*": if elements.last != .any { elements.append(.any) }
            case "?": elements.append(.one)
            default: elements.append(.literal(scalar))
            }
        }
        if escaped { elements.append(.literal("\\")) }
        self.elements = elements
    }

    /// Whether the whole string matches. Linear in practice, O(n·m) at worst; never exponential.
    func matches(_ string: String) -> Bool {
        let scalars = Array(fold(string, options).unicodeScalars)
        var s = 0
        var p = 0
        var starPattern = -1
        var starString = 0
        while s < scalars.count {
            if p < elements.count {
                switch elements[p] {
                case .one:
                    s += 1; p += 1; continue
                case .literal(let scalar) where scalar == scalars[s]:
                    s += 1; p += 1; continue
                case .any:
                    starPattern = p; starString = s; p += 1; continue
                default: break
                }
            }
            guard starPattern >= 0 else { return false }
            p = starPattern + 1
            starString += 1
            s = starString
        }
        while p < elements.count, elements[p] == .any { p += 1 }
        return p == elements.count
    }
}

/// A compiled `MATCHES` regular expression (ICU syntax, through NSRegularExpression), matched
/// against the whole string as NSPredicate's MATCHES does.
struct RegexPattern: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe.
    let regex: NSRegularExpression
    let options: StringComparisonOptions

    init(_ pattern: String, options: StringComparisonOptions) throws(ExpressionError) {
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        do {
            // Validate the pattern alone first: anchoring a malformed one could hide its error.
            _ = try NSRegularExpression(pattern: pattern, options: regexOptions)
            let closeQuote = pattern.contains("\\Q") ? "\\E" : ""
            regex = try NSRegularExpression(pattern: "\\A(?:" + pattern + closeQuote + ")\\z", options: regexOptions)
        } catch {
            throw ExpressionError(.syntax, "invalid regular expression \"\(pattern)\": \(error)")
        }
        self.options = options.subtracting(.caseInsensitive)
    }

    func matches(_ string: String) -> Bool {
        let subject = fold(string, options)
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }
}

enum StringOperations {
    /// `CONTAINS`, `BEGINSWITH`, `ENDSWITH` on strings, literally (by scalars) after folding.
    /// An empty needle matches nothing, as NSString's `rangeOfString:` finds nothing for it.
    static func test(_ op: ComparisonOperator, _ haystack: String, _ needle: String, options: StringComparisonOptions) -> Bool {
        var h = fold(haystack, options)
        let n = Array(fold(needle, options).utf8)
        return h.withUTF8 { test(op, $0, n) }
    }

    /// The same on UTF-8 bytes.
    static func test(_ op: ComparisonOperator, _ h: UnsafeBufferPointer<UInt8>, _ n: [UInt8]) -> Bool {
        guard !n.isEmpty, n.count <= h.count else { return false }
        switch op {
        case .beginsWith: return h[0..<n.count].elementsEqual(n)
        case .endsWith: return h[(h.count - n.count)..<h.count].elementsEqual(n)
        default:
            // UTF-8 is self-synchronising: a byte match of a whole valid needle is a scalar match.
            let last = h.count - n.count
            var start = 0
            while start <= last {
                if h[start] == n[0] && h[start..<start + n.count].elementsEqual(n) { return true }
                start += 1
            }
            return false
        }
    }
}
